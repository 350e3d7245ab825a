#!/usr/bin/perl
# A second real MCP peer: a stdio server from npm, the official
# @modelcontextprotocol/server-filesystem, bridged to Streamable HTTP by
# supergateway.  supergateway listens on every interface, so the test runs
# in a private network namespace with only loopback up (unshare -n, as
# root), nginx and the scripted model with it.  The model lists a folder
# and reads a file through the module.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use POSIX ();

my $root = AgentTest::root();
my $gw = "$root/build/mcp-gw";

if (!$ENV{AGENT_NETNS}) {
    plan skip_all => 'needs root for a private network namespace (unshare -n)'
        if $> != 0;

    if (!-x "$gw/node_modules/.bin/supergateway") {
        system('sh', '-c', "mkdir -p $gw && npm install --prefix $gw "
               . 'supergateway@4.0.0 '
               . '@modelcontextprotocol/server-filesystem '
               . '--no-audit --no-fund --loglevel=error >/dev/null 2>&1');
    }
    plan skip_all => 'supergateway could not be installed from npm'
        unless -x "$gw/node_modules/.bin/supergateway";

    system('unshare', '-n', 'true') == 0
        or plan skip_all => 'unshare -n is not allowed here';

    # the same test again, inside the namespace, loopback up
    exec('unshare', '-n', '--', 'sh', '-c',
         'ip link set lo up && AGENT_NETNS=1 exec "$@"', 'sh',
         $^X, $0) or die "unshare: $!";
}

# make test-pg: the server's loopback is not this namespace's, its socket
# file is
$ENV{AGENT_PG} = $ENV{AGENT_PG_SOCKET} if $ENV{AGENT_PG_SOCKET};

my $t = AgentTest->new;
my $files = $t->dir . '/files';
mkdir $files;
open my $fh, '>', "$files/note.txt" or die;
print $fh "hello from the file\n";
close $fh;

my $port = AgentTest::free_port();
my $pid = fork() // die;
if ($pid == 0) {
    open STDOUT, '>>', $t->dir . '/gateway.log';
    open STDERR, '>&', \*STDOUT;
    exec('node', "$gw/node_modules/.bin/supergateway", '--stdio',
         "node $gw/node_modules/\@modelcontextprotocol/server-filesystem/"
         . "dist/index.js $files",
         '--outputTransport', 'streamableHttp', '--port', $port,
         '--stateful') or POSIX::_exit(1);
}
END { kill 'TERM', $pid if $pid }

ok(AgentTest::wait_for(sub {
    IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port) }, 20),
   'supergateway listens, in the namespace');

my $mock = $t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my @res = grep { $_->{role} eq 'tool' } @m[$u .. $#m];
    return { text => 'read: ' . join(' | ', map { $_->{content} } @res) }
        if @res;
    my %names = map { $_->{function}{name} => 1 } @{ $req->{tools} // [] };
    my $read = $names{read_text_file} ? 'read_text_file' : 'read_file';
    return { tools => [
        [ 'l', 'list_directory', encode_json({ path => $files }) ],
        [ 'r', $read, encode_json({ path => "$files/note.txt" }) ] ] };
});

$t->run($t->conf(http => <<"HTTP", location => 'agent_use_graph files;'));
agent_prompts $root/prompts;
agent_mcp fs url=http://127.0.0.1:$port/mcp timeout=20s;
agent_graph files {
    node agent llm prompt=react_system.md tools=fs.*;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
HTTP

my $sid = $t->session;
my $r = $t->turn($sid, 'what is in my files?', timeout => 40);
is($r->{types}[-1], 'end', 'the turn ends') or diag explain $r->{events}[-1];

my @reqs = $mock->requests;
my %offered = map { $_->{function}{name} => 1 } @{ $reqs[0]{body}{tools} };
ok($offered{list_directory}, 'the filesystem server\'s tools are offered')
    or diag explain [ sort keys %offered ];

my %res = map { $_->{id} => $_->{content} }
          grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
like(ref $res{l} ? encode_json($res{l}) : $res{l} // '', qr/note\.txt/,
     'list_directory through the gateway names the file');
like(ref $res{r} ? encode_json($res{r}) : $res{r} // '',
     qr/hello from the file/, 'and the file is read');
like($t->slurp('error.log'), qr/MCP server "fs": \d+ tools/,
     'the session started and listed');

$t->check_log;
done_testing;
