#!/usr/bin/perl
# Seed 004 as its users know it: conf/graphs/sql_assistant_models.conf
# declares its models with its aliases (qwen -> qwen3-8b, gpt_oss and
# gpt-oss -> gpt-oss-20b, deepseek -> deepseek-chat); a session without a
# model and without a usable default gets a clear error; the tools'
# prompts are files under prompts/ (ask_database.md, ask_analyst.md,
# json_fixer.md), rendered over the run's channels.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $root = AgentTest::root();
my $t = AgentTest->new;

my $db = $t->dir . '/shop.db';
system('sqlite3', $db, 'CREATE TABLE sales (region TEXT, total REAL); '
       . "INSERT INTO sales VALUES ('north', 10), ('south', 32);") == 0
    or die 'sqlite3 failed';

my $mock = $t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    return { text => 'SELECT region, total FROM sales ORDER BY region' }
        if $m[0]{content} =~ /^You write one SQLite SELECT/;
    my ($result) = grep { $_->{role} eq 'tool' } @m;
    return { text => "done: $result->{content}" } if $result;
    return { tools => [[ 'c1', 'ask_database', '{"query": "totals"}' ]] };
});

# the models file as shipped, its URLs pointed at the scripted provider
my $models = AgentTest::slurp_file("$root/conf/graphs/sql_assistant_models.conf");
$models =~ s{url=\S+}{url=http://127.0.0.1:%%MOCK%%/v1/chat/completions}g;
my $conf = $t->graph_conf('sql_assistant',
                          http => "agent_database shop $db;\n$models",
                          location => 'agent_databases shop; '
                          . 'agent_use_database shop; '
                          . 'agent_models gpt-oss-20b qwen3-8b '
                          . 'deepseek-chat;');
$conf =~ s/^(worker_processes)/env DEEPSEEK_API_KEY=;\n$1/m;
$t->run($conf);

my $sid = $t->session;
my $m = $t->http('GET', "/api/chat/$sid/model")->{json};
is_deeply($m, { thread_id => $sid, model => 'gpt-oss-20b',
                models => { 'gpt-oss-20b' => JSON::PP::true,
                            'qwen3-8b' => JSON::PP::true,
                            'deepseek-chat' => JSON::PP::false } },
          'GET /model: the seed\'s models, DeepSeek without its key');

for my $alias (qw(qwen gpt_oss gpt-oss deepseek)) {
    my $want = { qwen => 'qwen3-8b', gpt_oss => 'gpt-oss-20b',
                 'gpt-oss' => 'gpt-oss-20b',
                 deepseek => 'deepseek-chat' }->{$alias};
    my $r = $t->http('POST', "/api/chat/$sid/model", { name => $alias });
    is($r->{json}{model}, $want, "alias $alias -> $want");
}

my $r = $t->http('POST', "/api/chat/$sid/model", { name => 'qwen' });
is_deeply($t->http('GET', "/api/chat/$sid/connection")->{json},
          { thread_id => $sid, database => undef, databases => ['shop'] },
          'GET /connection: the databases a picker offers');
is($t->http('POST', "/api/chat/$sid/connection", { database => 'shop' })
     ->{status}, 200, 'the database connected');
is($t->http('GET', "/api/chat/$sid/connection")->{json}{database}, 'shop',
   'GET /connection: the session\'s database');
$r = $t->turn($sid, 'what are the totals?');
is($r->{types}[-1], 'end', 'a turn with qwen');
my @reqs = $mock->requests;
is($reqs[0]{body}{model}, 'qwen/qwen3-8b',
   'the provider is asked for LM Studio\'s name of the model');

# the tool's prompt is prompts/ask_database.md, db_schema rendered into it
my ($ask) = grep { $_->{body}{messages}[0]{content} =~ /^You write one SQLite/ }
            @reqs;
my $file = AgentTest::slurp_file("$root/prompts/ask_database.md");
my ($head) = $file =~ /\A(.*?)\{\{db_schema\}\}/s;
ok($ask && index($ask->{body}{messages}[0]{content}, $head) == 0,
   'ask_database asks with prompts/ask_database.md');
like($ask->{body}{messages}[0]{content}, qr/sales/,
     'with the database\'s schema in place of {{db_schema}}');
unlike($ask->{body}{messages}[0]{content}, qr/\{\{/, 'nothing left unrendered');

# a session whose model was never chosen, and a default that cannot run
my $t2 = AgentTest->new;
$t2->mock(sub { { text => 'hello' } });
my $c2 = $t2->graph_conf('sql_assistant',
                         http => "agent_model deepseek-chat provider=openai "
                                 . "url=http://127.0.0.1:%%MOCK%%/v1 "
                                 . "key_env=DEEPSEEK_API_KEY alias=deepseek;\n"
                                 . "agent_model qwen3-8b provider=openai "
                                 . "url=http://127.0.0.1:%%MOCK%%/v1/chat/"
                                 . "completions;",
                         location => 'agent_models deepseek-chat qwen3-8b;');
$c2 =~ s/^(worker_processes)/env DEEPSEEK_API_KEY=;\n$1/m;
$t2->run($c2);
my $s2 = $t2->session;
$r = $t2->http('POST', "/api/chat/$s2/message", { message => 'hi' });
is($r->{status}, 409, 'no model chosen, no usable default: 409');
like($r->{json}{error}, qr/no model is chosen for this session.*POST \/\{id\}\/model/,
     'a clear error that says how to choose one');
$r = $t2->http('POST', "/api/chat/$s2/model", { name => 'qwen3-8b' });
$r = $t2->turn($s2, 'hi');
is($r->{types}[-1], 'end', 'once one is chosen, the turn runs');
$t2->check_log;

# the prompt files are needed where the tools are bound
my $t3 = AgentTest->new;
my $c3 = $t3->conf(http => "agent_prompts " . $t3->dir . ";\n"
                   . "include $root/conf/graphs/sql_assistant.conf;\n"
                   . "agent_use_graph sql_assistant;");
system('cp', "$root/prompts/sql_assistant.md", $t3->dir . '/');
$t3->write_conf($c3);
my ($ok, $out) = $t3->test_conf;
ok(!$ok, 'nginx -t fails without the tool prompts');
like($out, qr/cannot open the prompt template ".*ask_database\.md"/,
     'and names the file');

$t->check_log;
done_testing;
