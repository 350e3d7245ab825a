#!/usr/bin/perl
# The A2A TCK (a2aproject/a2a-tck, ../shared/a2a-tck or $A2A_TCK) against
# agent_a2a: nginx with the module and a scripted model (t/lib), the kit's
# mandatory tests (-m "mandatory or mandatory_protocol or
# mandatory_jsonrpc", as its run_tck.py --category mandatory selects them)
# and its transport equivalence tests (tests/optional/multi_transport:
# JSON-RPC and HTTP+JSON answer alike), over JSON-RPC and REST
# (A2A_TCK_TRANSPORTS=jsonrpc for the first alone), its failures compared
# with the known exceptions of t/conformance/a2a-tck.exceptions. Exit 0
# when every failure is listed.

use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use AgentTest;
use Test::More;

my $root = "$FindBin::Bin/../..";
my $tck = $ENV{A2A_TCK} // "$root/../shared/a2a-tck";

plan(skip_all => "no A2A TCK at $tck (set A2A_TCK)")
    unless -f "$tck/tests/conftest.py";
plan(skip_all => 'the TCK needs python3-pytest, python3-httpx (Debian)')
    if system('/usr/bin/python3 -c "import pytest, httpx, requests" '
              . '2>/dev/null');

# the exceptions: blocks of "test:", "reason:", "spec:" lines
my (%known, $cur);
open my $ex, '<', "$FindBin::Bin/a2a-tck.exceptions" or die $!;
while (<$ex>) {
    next if /^\s*(#|$)/;
    if (/^test:\s*(\S+)/) {
        $cur = $known{$1} = {};
    } elsif (/^(reason|spec):\s*(.+)/ && $cur) {
        $cur->{$1} .= $2;
    } elsif (/^\s+(.+)/ && $cur) {
        (my $k) = grep { $cur->{$_} } qw(spec reason);
        $cur->{$k} .= " $1" if $k;
    }
}
close $ex;
ok(!grep({ !$known{$_}{reason} || !$known{$_}{spec} } keys %known),
   'each known exception gives its reason and the spec text');

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    return { text => 'Hello from nginx: ' . AgentTest::last_user($req) };
});

my $conf = $t->conf(http => <<'HTTP');
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
HTTP
# the agent at the host's root: the kit reads the card there (A2A's
# well-known URI), and its REST client joins each route to the root
# ("/message:send"), not below the card's URL
$conf =~ s{(location /api/chat/)}{location / { agent_a2a;
        agent_use_graph chat; }
    $1};
$t->run($conf);

my $dir = $t->dir;
my $url = 'http://127.0.0.1:' . $t->port . '/';

# the kit read-only: no caches, no bytecode, its reports in our temp dir
my $pid = fork // die "fork: $!";
if (!$pid) {
    chdir $tck or die "$tck: $!";
    $ENV{PYTHONDONTWRITEBYTECODE} = 1;
    $ENV{PYTHONPATH} = $tck;
    open STDOUT, '>', "$dir/tck.out" or die;
    open STDERR, '>&', \*STDOUT or die;
    exec 'timeout', '900', '/usr/bin/python3', '-m', 'pytest',
         'tests/mandatory/', 'tests/optional/multi_transport/',
         "--sut-url=$url", '--test-scope=all', '--tb=short', '-q',
         '-m', 'mandatory or mandatory_protocol or mandatory_jsonrpc'
               . ' or transport_equivalence',
         '--transports', $ENV{A2A_TCK_TRANSPORTS} // 'jsonrpc,rest',
         '-p', 'no:cacheprovider',
         "--basetemp=$dir/pytest", "--junitxml=$dir/tck.xml",
         '-o', 'junit_family=xunit1';
    die "python3: $!";
}
waitpid $pid, 0;

my $xml = $t->slurp("tck.xml") // '';
ok(length $xml, 'the kit ran') or diag($t->slurp("tck.out"));

# each test case: passed, or failed (a failure or an error), or skipped
my (@failed, $passed, $skipped);
while ($xml =~ m{<testcase\b([^>]*?)(/>|>(.*?)</testcase>)}gs) {
    my ($attr, $body) = ($1, $3 // '');
    my ($class) = $attr =~ /classname="([^"]*)"/;
    my ($name) = $attr =~ /\bname="([^"]*)"/;
    # pytest's node id: tests/.../test_x.py::Class::test_y
    my @p = split /\./, $class;
    my ($m) = grep { $p[$_] =~ /^test_/ } reverse 0 .. $#p;
    my $id = join('/', @p[0 .. $m]) . '.py'
             . join('', map { "::$_" } @p[$m + 1 .. $#p], $name);
    $id =~ s/&quot;/"/g;
    $id =~ s/&amp;/&/g;
    if ($body =~ /<(failure|error)\b/) {
        push @failed, $id;
    } elsif ($body =~ /<skipped\b/) {
        $skipped++;
    } else {
        $passed++;
    }
}

my @ours = grep { !$known{$_} } @failed;
my %f = map { $_ => 1 } @failed;
my @stale = grep { !$f{$_} } sort keys %known;
diag(sprintf 'the A2A TCK (mandatory, equivalence): %d passed, %d failed '
     . '(%d known exceptions), %d skipped', $passed // 0, scalar @failed,
     scalar(@failed) - scalar(@ours), $skipped // 0);
is_deeply(\@ours, [], 'every failure of the kit is a known exception')
    or diag($t->slurp("tck.out"));
diag("known exception that passed now (drop it): $_") for @stale;

$t->stop;
$t->check_log;
done_testing;
