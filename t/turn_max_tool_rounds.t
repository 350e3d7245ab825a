#!/usr/bin/perl
# agent_max_tool_rounds: a model that always wants tools must answer on the
# last call a turn may make, which is sent without tools.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
my $mock = $t->mock(sub {
    my ($req, $n) = @_;
    return { tools => [[ "call_$n", 'execute_sql_query',
                         '{"query": "SELECT 1"}' ]] } if $req->{tools};
    return { text => 'Final answer without tools.' };
});
$t->run($t->conf(location => 'agent_max_tool_rounds 3;'));

my $sid = $t->session;
my $r = $t->turn($sid, 'loop forever');
is($r->{types}[-1], 'end', 'the turn ends');
is($r->{events}[-1]{full_response}, 'Final answer without tools.',
   'with an answer');
is(scalar(grep { $_ eq 'tool_start' } @{ $r->{types} }), 2,
   'two tool rounds');

my @req = $mock->requests;
is(scalar @req, 3, 'three model calls: the cap');
ok($req[0]{body}{tools} && $req[1]{body}{tools}, 'tools on calls 1 and 2');
ok(!exists $req[2]{body}{tools}, 'no tools on the last call');

my $st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is($st->{values}{model_calls}, 3, 'model_calls counted');

# the count is per turn: the next turn has three calls again
$r = $t->turn($sid, 'again');
is($r->{types}[-1], 'end', 'second turn ends');
@req = $mock->requests;
is(scalar @req, 6, 'three more calls');
ok($req[3]{body}{tools}, 'tools again on the first call of turn 2');

# a model that calls tools on the last call anyway: calls dropped
$t->stop;
$mock = $t->mock(sub {
    my ($req, $n) = @_;
    return { tools => [[ "call_$n", 'execute_sql_query',
                         '{"query": "SELECT 1"}' ]] };
});
$t->run($t->conf(location => 'agent_max_tool_rounds 1;'));
$r = $t->turn($sid, 'stubborn');
is($r->{types}[-1], 'end', 'turn ends though the model insists');
ok(!grep({ $_ eq 'tool_start' } @{ $r->{types} }), 'no tool ran');
$r = $t->turn($sid, 'next');
is($r->{types}[-1], 'end', 'and the session stays usable');
my @m = @{ (($mock->requests)[-1])->{body}{messages} };
my %answered = map { ($_->{tool_call_id} // '') => 1 } @m;
my @open = grep { !$answered{$_} }
           map { map { $_->{id} } @{ $_->{tool_calls} // [] } } @m;
is_deeply(\@open, [], 'no unanswered tool calls in history');

# the recursion limit stops a runaway graph with an error
$t->stop;
$mock = $t->mock(sub {
    my ($req, $n) = @_;
    return { tools => [[ "call_$n", 'execute_sql_query',
                         '{"query": "SELECT 1"}' ]] };
});
$t->run($t->conf(location => 'agent_max_tool_rounds 100; '
                             . 'agent_recursion_limit 6;'));
$r = $t->turn($sid, 'runaway');
is($r->{types}[-1], 'error', 'recursion limit: error event');
is($r->{events}[-1]{code}, 'recursion_limit', 'error code');
like($r->{events}[-1]{error}, qr/ran 6 steps/, 'error says why');

$t->stop;
$t->check_log;
done_testing;
