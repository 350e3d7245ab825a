#!/usr/bin/perl
# Seed 004 as conf/graphs/sql_assistant.conf: an assistant with the tools
# ask_database (SQL written by the model from db_schema, run read-only on
# the session's database, the rows into sql_result) and ask_analyst (a
# Vega-Lite spec, checked as JSON, fixed at most three times).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;

my $db = $t->dir . '/shop.db';
system('sqlite3', $db, 'CREATE TABLE sales (region TEXT, total REAL); '
       . "INSERT INTO sales VALUES ('north', 10), ('south', 32);") == 0
    or die 'sqlite3 failed';

my $spec = '{"mark": "bar", "data": {"values": []}, '
         . '"encoding": {"x": {"field": "region"}}}';

my $mock = $t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $system = $m[0]{content};
    my $q = AgentTest::last_user($req);

    if ($system =~ /^You write one SQLite SELECT/) {
        return { text => "```sql\nSELECT region, total FROM sales "
                         . "ORDER BY region\n```" } if $q =~ /totals/;
        return { text => 'SELECT nope FROM sales' } if $q =~ /broken/;
        return { text => 'DROP TABLE sales' };
    }

    # the fixer asks with prompts/json_fixer.md in the tool prompt's place
    if ($system =~ /^You write a Vega-Lite|^You fix JSON/) {
        my $fixes = $q =~ /^This is not a valid JSON object/ ? 1 : 0;
        return { text => 'never JSON' }
            if $fixes != ($system =~ /^You fix JSON/ ? 1 : 0);
        return { text => $spec } if $q =~ /bar chart/ && !$fixes;
        return { text => '{"mark": "bar", oops' } if $q =~ /sloppy/ && !$fixes;
        return { text => $spec } if $fixes && $q =~ /oops/;
        return { text => 'never JSON' };
    }

    # the assistant: a tool first, then an answer from its result
    my ($last_user) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my @after = @m[$last_user + 1 .. $#m];
    my ($result) = grep { $_->{role} eq 'tool' } @after;

    return { text => 'Hello! Connect a database and ask.' } if $q eq 'hi';

    if (!$result) {
        my $tool = $q =~ /chart|sloppy|never/ ? 'ask_analyst' : 'ask_database';
        return { tools => [[ 'call1', $tool,
                             encode_json({ query => $q }) ]] };
    }

    return { text => "From the tool: $result->{content}" };
});

$t->run($t->graph_conf('sql_assistant', http => "agent_database shop $db;",
                      location => 'agent_databases shop;'));

my $sid = $t->session;

sub state { $t->http('GET', "/api/sessions/$sid/state")->{json}{values} }

sub result {
    my ($r) = @_;
    my ($res) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
    return $res ? $res->{content} : undef;
}

# 1. no tool: the assistant answers
my $r = $t->turn($sid, 'hi');
is_deeply(AgentTest::plain($r), [qw(start end)], 'plain: no tool');
is(state()->{db_schema}, '(no database connected)', 'plain: the default');

# 2. ask_database, with the schema of the connected database
is($t->http('POST', "/api/chat/$sid/connection",
            { database => 'shop' })->{status}, 200, 'connected');
is(state()->{db_schema}[0]{name}, 'sales', 'db_schema in the state');

$r = $t->turn($sid, 'What are the totals by region?');
is_deeply(AgentTest::plain($r), [qw(start tool_start tool_result end)],
          'ask_database: the events');
is_deeply(result($r)->{rows}, [['north', 10], ['south', 32]],
          'ask_database: the rows');
is_deeply(state()->{sql_result}{rows}, [['north', 10], ['south', 32]],
          'ask_database: sql_result updated');
my ($sqlreq) = grep { $_->{body}{messages}[0]{content} =~ /^You write one/ }
               $mock->requests;
like($sqlreq->{body}{messages}[0]{content}, qr/"name":"sales"/,
     'ask_database: the model saw db_schema');
like($r->{events}[-1]{full_response}, qr/^From the tool: .*south/,
     'ask_database: the answer uses the rows');
my ($asst) = grep { $_->{body}{messages}[0]{content} =~ /^ASSISTANT/ }
             reverse $mock->requests;
like($asst->{body}{messages}[0]{content}, qr/last query result:\n\{"columns"/,
     'the next assistant call sees sql_result');

# 3. SQL that fails: a tool message says so, the turn goes on
$r = $t->turn($sid, 'broken question');
like(result($r)->{error}, qr/^The query failed: no such column: nope/,
     'ask_database: a failure is a tool result');
is($r->{types}[-1], 'end', 'ask_database: the turn still ends');

# 4. a writing statement from the model is refused, nothing changes
$r = $t->turn($sid, 'please clean up');
like(result($r)->{error}, qr/only reading is allowed/,
     'ask_database: no writes');
is(`sqlite3 $db 'SELECT COUNT(*) FROM sales'`, "2\n", 'the table is intact');

# 5. ask_analyst: a Vega-Lite spec
$r = $t->turn($sid, 'a bar chart of that');
is_deeply(result($r), { type => 'vega_lite_spec',
                        spec => decode_json($spec) },
          'ask_analyst: the spec');

# 6. invalid JSON, fixed by the model
my $before = scalar $mock->requests;
$r = $t->turn($sid, 'sloppy chart');
is(result($r)->{type}, 'vega_lite_spec', 'ask_analyst: fixed');
is(scalar($mock->requests) - $before, 4,
   'ask_analyst: assistant, spec, fix, assistant');

# 7. never valid: three fixes, then an error result
$before = scalar $mock->requests;
$r = $t->turn($sid, 'never a chart');
like(result($r)->{error}, qr/not valid JSON/, 'ask_analyst: gives up');
is(scalar($mock->requests) - $before, 6,
   'ask_analyst: one try and three fixes');

$t->check_log;
done_testing;
