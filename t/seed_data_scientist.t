#!/usr/bin/perl
# Seed 002 as conf/graphs/data_scientist.conf: plan -> code -> evaluate ->
# explain, with retries and an error node, SQL where the seed wrote Python.
# The five example flows of the seed's document, one each.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;

# the question decides the plan; the role is in the system prompt
my %plans = (
    'average age'   => [1, 1, 'SELECT AVG(age) FROM csv_data'],
    'histogram'     => [1, 0, 'SELECT age, COUNT(*) FROM csv_data GROUP BY age',
                        1],
    'correlation'   => [1, 1, 'SELECT COUNT(*) FROM csv_data'],
    'impossible'    => [1, 0, 'SELECT x FROM nowhere'],
    'p-value'       => [0, 0, ''],
);

my $mock = $t->mock(sub {
    my ($req) = @_;
    my $system = $req->{messages}[0]{content};
    my $q = AgentTest::last_user($req);
    my $p = $plans{$q} // [0, 0, ''];

    if ($system =~ /^PLANNER/) {
        return { text => encode_json({ needs_code => $p->[0] ? \1 : \0,
                                       needs_evaluation => $p->[1] ? \1 : \0,
                                       needs_chart => $p->[3] ? \1 : \0,
                                       needs_explanation => \1,
                                       reasoning => "plan for $q" }) };
    }

    if ($system =~ /^SQL WRITER/) {
        # the correlation fails twice (bad column names), then works
        if ($q eq 'correlation') {
            my ($prev) = $system =~ /previous attempt, if any:\n(.*)\n/;
            return { text => 'SELECT corr_x FROM csv_data' } if !$prev;
            return { text => 'SELECT corr_y FROM csv_data' }
                if $prev =~ /corr_x/;
        }
        return { text => "```sql\n$p->[2]\n```" };
    }

    if ($system =~ /^You write a Vega-Lite/) {
        # ask_analyst: a bar chart of the rows it was given
        my ($rows) = $system =~ /"rows":(\[.*?\]\])/s;
        my $values = [ map { { age => $_->[0], n => $_->[1] } }
                       @{ decode_json($rows // '[]') } ];
        return { text => encode_json({ mark => 'bar',
                                       data => { values => $values } }) };
    }

    if ($system =~ /^EVALUATOR/) {
        my ($res) = $system =~ /Its result:\n(.*)/s;
        return { text => "Evaluated: $res" };
    }

    if ($system =~ /^EXPLAINER/) {
        return { text => "Explained ($q)" };
    }

    return { status => 500 };
});

$t->run($t->graph_conf('data_scientist'));

my $sid = $t->session;
my $csv = "name,age\n" . join('', map { "p$_," . (20 + $_ % 3) . "\n" } 1 .. 9);
is($t->http('POST', "/api/sessions/$sid/resources?name=people.csv", $csv,
            'Content-Type' => 'text/csv')->{status}, 201, 'CSV uploaded');

sub nodes {
    my ($r) = @_;
    return [ map { $_->{name} }
             grep { $_->{type} eq 'node' && $_->{status} eq 'start' }
             @{ $r->{events} } ];
}

sub state { $t->http('GET', "/api/sessions/$sid/state")->{json}{values} }

# the seed's output package, as typed events: name => data
sub typed {
    my ($r, $name) = @_;
    return map { $_->{data} } grep { $_->{type} eq $name } @{ $r->{events} };
}

# 1. simple analysis: plan, code, success, evaluate, explain
my $r = $t->turn($sid, 'average age');
is_deeply(nodes($r), [qw(load_data plan code execute evaluate explain)],
          'example 1: the path');
is($r->{events}[-1]{full_response}, 'Explained (average age)',
   'example 1: the explanation is the answer');
my $s = state();
is($s->{attempts}, 1, 'example 1: one attempt');
is_deeply($s->{sql_result}{rows}, [[21]], 'example 1: the SQL result');
is_deeply([ map { $_->{needs_code} } typed($r, 'plan') ], [JSON::PP::true],
          'example 1: the plan streamed');
is_deeply([ typed($r, 'sql') ], ['```sql' . "\nSELECT AVG(age) FROM csv_data\n```"],
          'example 1: the SQL streamed as the model wrote it');
my ($res) = typed($r, 'result');
is_deeply([ $res->{query}, $res->{ok}, $res->{result}{rows}, $res->{error} ],
          [ 'SELECT AVG(age) FROM csv_data', JSON::PP::true, [[21]], undef ],
          'example 1: the result table streamed');
like((typed($r, 'evaluation'))[0], qr/^Evaluated/,
     'example 1: the evaluation streamed');
my @order = grep { /^(plan|sql|result|evaluation|chunk)$/ } @{ $r->{types} };
is_deeply([ grep { $_ ne 'chunk' } @order ], [qw(plan sql result evaluation)],
          'example 1: in the order the steps ran');
is($order[-1], 'chunk', 'example 1: the explanation streams last');
like($s->{evaluation}, qr/Evaluated: .*21/, 'example 1: evaluated from it');
is($s->{ok}, JSON::PP::true, 'example 1: ok');

# 2. visualization: no evaluation
$r = $t->turn($sid, 'histogram');
is_deeply(nodes($r), [qw(load_data plan code execute chart explain)],
          'example 2: the path, a chart drawn');
$s = state();
is($s->{evaluation}, undef, 'example 2: no evaluation this turn');
is(scalar @{ $s->{sql_result}{rows} }, 3, 'example 2: three groups');
my ($chart) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is($chart->{content}{type}, 'vega_lite_spec',
   'example 2: ask_analyst\'s spec as a tool_result');
is(scalar @{ $chart->{content}{spec}{data}{values} }, 3,
   'example 2: a chart of the three groups');
is_deeply($s->{chart}, $chart->{content}, 'example 2: the chart in the state');

# 3. code retry: fails twice, succeeds on the third
$r = $t->turn($sid, 'correlation');
is_deeply(nodes($r), [qw(load_data plan code execute code execute code
                         execute evaluate explain)], 'example 3: the path');
$s = state();
is($s->{attempts}, 3, 'example 3: three attempts');
is($s->{error}, undef, 'example 3: no error left');
is_deeply([ map { $_->{code} } @{ $s->{failed_attempts} } ],
          [ 'SELECT corr_x FROM csv_data', 'SELECT corr_y FROM csv_data' ],
          'example 3: the failed attempts kept');
like($s->{failed_attempts}[1]{error}, qr/no such column: corr_y/,
     'example 3: with their errors');
my @tries = typed($r, 'result');
is_deeply([ map { $_->{ok} ? 1 : 0 } @tries ], [0, 0, 1],
          'example 3: each attempt streamed as it ended');
my @sql = grep { $_->{body}{messages}[0]{content} =~ /^SQL WRITER/ }
          $mock->requests;
like($sql[-1]{body}{messages}[0]{content}, qr/no such column: corr_y/,
     'example 3: the last error went into the retry prompt');

# 4. max retries: three failures, the error node answers
$r = $t->turn($sid, 'impossible');
is_deeply(nodes($r), [qw(load_data plan code execute code execute code
                         execute error)], 'example 4: the path');
like($r->{events}[-1]{full_response},
     qr/^Code execution failed after 3 attempts\. Final error: .*no such/,
     'example 4: the error node\'s answer');
is($r->{text}, $r->{events}[-1]{full_response},
   'example 4: streamed as one chunk');
is(state()->{ok}, JSON::PP::false, 'example 4: not ok');

# 5. conceptual question: no code
$r = $t->turn($sid, 'p-value');
is_deeply(nodes($r), [qw(load_data plan explain)], 'example 5: the path');
$s = state();
is($s->{attempts}, 0, 'example 5: attempts start at 0 each turn');
is($s->{code}, undef, 'example 5: no code this turn');
is($r->{events}[-1]{full_response}, 'Explained (p-value)',
   'example 5: the answer');

# a follow-up: plan and code see the conversation, as the seed's do
$r = $t->turn($sid, 'and by city?');
my ($plan_req) = grep { $_->{body}{messages}[0]{content} =~ /^PLANNER/ }
                 reverse $mock->requests;
my @said = map { $_->{content} } @{ $plan_req->{body}{messages} };
ok((grep { $_ eq 'average age' } @said)
   && (grep { $_ eq 'Explained (average age)' } @said),
   'follow-up: the planner sees the earlier questions and answers');
is($said[-1], 'and by city?', 'follow-up: and the new question last');

# the conversation holds questions and answers, not the inner steps
my $m = $t->http('GET', "/api/sessions/$sid/messages")->{json}{messages};
is(scalar @$m, 12, 'six questions, six answers listed');

# the events format: the same package as LangGraph's custom events
my $t2 = AgentTest->new;
$t2->mock(sub { $mock->{script}->(@_) });
$t2->run($t2->graph_conf('data_scientist', location => 'agent_stream events;'));
my $sid2 = $t2->session;
$t2->http('POST', "/api/sessions/$sid2/resources?name=people.csv", $csv,
          'Content-Type' => 'text/csv');
$r = $t2->turn($sid2, 'histogram');
my @custom = map { $_->{name} } grep { $_->{event} eq 'on_custom_event' }
             @{ $r->{events} };
is_deeply(\@custom, [qw(plan sql result)],
          'events format: plan, sql, result as on_custom_event');
my ($chart_end) = grep { $_->{event} eq 'on_tool_end'
                         && $_->{name} eq 'ask_analyst' } @{ $r->{events} };
is($chart_end->{data}{output}{type}, 'vega_lite_spec',
   'events format: the chart as ask_analyst\'s on_tool_end');
$t2->check_log;

$t->check_log;
done_testing;
