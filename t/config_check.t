#!/usr/bin/perl
# Configuration: a good one passes "nginx -t"; each bad one fails it with a
# message that names the directive, the file and the line.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
my $conf = $t->conf;

$t->write_conf($conf);
my ($ok, $out) = $t->test_conf;
ok($ok, 'the test config passes nginx -t') or diag($out);

sub bad {
    my ($name, $edit, $re) = @_;
    my $c = $conf;
    $edit->() for $c;
    $t->write_conf($c);
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, "$name: nginx -t fails");
    like($out, $re, "$name: the message says why");
    like($out, qr{in \S+/nginx\.conf:\d+}, "$name: file and line");
}

bad('unknown provider', sub { s/provider=openai/provider=acme/ },
    qr/invalid value "acme" in "provider=acme" of agent_model "[^"]+": unknown provider/);
bad('url missing', sub { s{url=\S+}{} }, qr/agent_model.*url=/);
bad('rounds not a number', sub {
        s/(agent_chat;)/$1 agent_max_tool_rounds lots;/ },
    qr/"agent_max_tool_rounds" directive invalid number/);
bad('rounds zero', sub {
        s/(agent_chat;)/$1 agent_max_tool_rounds 0;/ },
    qr/value must be between 1 and 1000 in \S+nginx.conf:\d+/);
bad('unknown database', sub {
        s/(agent_chat;)/$1 agent_use_database nope;/ },
    qr/agent_use_database: unknown database "nope"/);
bad('missing prompt folder', sub {
        s{(agent_resources_dir)}{agent_prompts %%DIR%%/nowhere;\n    $1} },
    qr/agent_prompts: cannot open the prompt template .*react_system\.md/);
bad('missing database file', sub {
        s{(agent_resources_dir)}{agent_database shop %%DIR%%/none.db;\n    $1} },
    qr/agent_database "shop": cannot read/);
bad('chat without a model', sub { s/agent_model [^\n]*\n// },
    qr/agent_chat.*needs at least one agent_model/);
bad('duplicate model', sub {
        s/(agent_model [^\n]*\n)/$1$1/ }, qr/duplicate model name/);

# a PostgreSQL URL that does not parse: the message never shows its password
# (libpq's own reasons quote the whole URL, or the token it could not read)
for my $url ('postgresql://ann:s3cr3t-pw@[db.example/agent',
             'postgresql://ann:s3cr3t-pw@[::1]x/agent',
             'postgresql://ann:s3cr3t%zz-pw@db.example/agent') {
    my $c = $conf;
    $c =~ s{agent_checkpoint_db \S+;}{agent_checkpoint_db "$url";};
    $t->write_conf($c);
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, "a bad PostgreSQL URL fails nginx -t: $url");
    unlike($out, qr/s3cr3t/, 'and its password is not in the message')
        or diag $out;
    like($out, qr{postgresql://ann:\*\*\*\@\S*db\.example|"postgresql://ann:\*\*\*\@\[::1\]x/agent"},
         'but masked')
        or diag $out;
}

# agent_limit takes limit_req's bare unit: 2/m is 2/1m
for my $rate (qw(2/m 5/s 100/h 1000/d 3/1m)) {
    my $c = $conf;
    $c =~ s{(agent_chat;)}{$1 agent_limit zone=u turns=$rate tokens=$rate;};
    $c =~ s{(agent_resources_dir)}{agent_limit_zone u key=\$remote_addr size=1m;\n    $1};
    $t->write_conf($c);
    my ($ok, $out) = $t->test_conf;
    ok($ok, "agent_limit turns=$rate passes nginx -t") or diag $out;
}
bad('a rate of an unknown unit', sub {
        s{(agent_chat;)}{$1 agent_limit zone=u turns=2/x;};
        s{(agent_resources_dir)}{agent_limit_zone u key=\$remote_addr size=1m;\n    $1} },
    qr/invalid value "2\/x" in "turns=2\/x" of agent_limit: N\/PERIOD/);

# agent_mcp, agent_tool and agent_checkpoint_db read KEY=VALUE words as the
# node lines do: the same two messages
bad('agent_mcp: an unknown parameter', sub {
        s{(agent_resources_dir)}{agent_mcp m url=http://127.0.0.1:1/mcp colour=red;\n    $1} },
    qr/unknown parameter "colour" of agent_mcp "m"/);
bad('agent_mcp: max_size below 1k', sub {
        s{(agent_resources_dir)}{agent_mcp m url=http://127.0.0.1:1/mcp max_size=512;\n    $1} },
    qr/invalid value "512" in "max_size=512" of agent_mcp "m": a size of at least 1024/);
bad('agent_mcp: headers without a colon', sub {
        s{(agent_resources_dir)}{agent_mcp m url=http://127.0.0.1:1/mcp headers=X-A;\n    $1} },
    qr/invalid value "X-A" in "headers=X-A" of agent_mcp "m"/);
bad('agent_tool: a timeout of 0', sub {
        s{(agent_resources_dir)}{agent_tool t location=/t timeout=0;\n    $1} },
    qr/invalid value "0" in "timeout=0" of agent_tool "t"/);
bad('agent_tool: a word that is no KEY=VALUE', sub {
        s{(agent_resources_dir)}{agent_tool t location=/t schema;\n    $1} },
    qr/unknown parameter "schema" of agent_tool "t"/);
bad('agent_a2a in a regex location', sub {
        s{(location /api/chat/)}{location ~ ^/a2a/ { agent_a2a; }\n        $1} },
    qr/agent_a2a needs a prefix location/);
if ($ENV{AGENT_PG}) {
    bad('agent_checkpoint_db: pool=65', sub {
            s{(agent_checkpoint_db \S+);}{$1 pool=65;} },
        qr/invalid value "65" in "pool=65" of agent_checkpoint_db: a number from 1 to 64/);
    bad('agent_checkpoint_db: an unknown parameter', sub {
            s{(agent_checkpoint_db \S+);}{$1 colour=red;} },
        qr/unknown parameter "colour" of agent_checkpoint_db/);
}

# a prompts folder of one's own need not hold the built-in graph's prompt
# while no location runs that graph
mkdir $t->dir . '/own';
{
    open my $fh, '>', $t->dir . '/own/mine.md' or die;
    print $fh "My own prompt.\n";
    close $fh;
}
my $own = $t->conf(http => <<'HTTP', location => 'agent_use_graph mine;');
agent_prompts own;
agent_graph mine {
    node agent llm prompt=mine.md;
    edge START agent;
    edge agent END;
}
HTTP
$t->write_conf($own);
($ok, $out) = $t->test_conf;
ok($ok, 'agent_prompts without react_system.md: nginx -t passes while no '
        . 'location runs the react graph') or diag $out;
{
    my $c = $own;
    $c =~ s{agent_use_graph mine;}{};
    $t->write_conf($c);
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, 'a location that runs the react graph: nginx -t fails');
    like($out, qr/agent_prompts: cannot open the prompt template .*own\/react_system\.md/,
         'naming the file it needs') or diag $out;
}

# a prompt folder with the template is used
mkdir $t->dir . '/prompts';
open my $fh, '>', $t->dir . '/prompts/react_system.md' or die;
print $fh "Custom prompt. Files: {{csv_metadata}} DB: {{db_schema}}\n";
close $fh;

my $mock = $t->mock(sub { { text => 'fine' } });
my $c = $t->conf(http => 'agent_prompts prompts;');
$t->run($c);
my $sid = $t->session;
my $r = $t->turn($sid, 'hi');
is($r->{types}[-1], 'end', 'turn with a custom prompt');
my ($req) = $mock->requests;
like($req->{body}{messages}[0]{content},
     qr/^Custom prompt\. Files: \(none uploaded\) DB: \(none\)/,
     'the template, relative to the prefix, rendered');

$t->stop;

# the module loaded with no agent_checkpoint_db: no store is chosen, and
# a worker that exits closes none (a store's pointer is NULL then)
$t->run(<<'CONF');
load_module %%MODULE%%;
%%USER%%
worker_processes 2;
error_log %%DIR%%/error.log info;
pid %%DIR%%/nginx.pid;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %%DIR%%/body;
    server {
        listen 127.0.0.1:%%PORT%%;
        location / { return 204; }
    }
}
CONF
$t->stop;
unlike($t->slurp('error.log'), qr/exited on signal/,
       'no store: the workers exit cleanly');

$t->check_log;
done_testing;
