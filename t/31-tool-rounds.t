#!/usr/bin/perl
# Seed 001 as conf/graphs/tool_rounds.conf: the tool loop capped at three
# model rounds, then formatResponse's structured answer.  One test per path
# of the seed's graph: no tool call, tool rounds then an answer, the cap,
# an answer that is not the declared shape.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;

my $mock = $t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    my $tool_msgs = grep { $_->{role} eq 'tool' } @{ $req->{messages} };

    if ($q eq 'direct') {
        return { text => '{"answer": "42", "suggestions": ["why 42?"], '
                         . '"confidence": "high"}' };
    }

    if ($q eq 'one round') {
        return { tools => [[ "c$tool_msgs", 'execute_sql_query',
                             '{"query": "SELECT count(*) FROM csv_data"}' ]] }
            if $tool_msgs == 0;
        return { text => "```json\n{\"answer\": \"3 rows\", "
                         . "\"confidence\": 7}\n```" };
    }

    if ($q eq 'forever') {
        # the model never stops calling tools: the cap ends the loop
        return { tools => [[ "c$tool_msgs", 'load_csv_data', '{}' ]] };
    }

    return { text => 'Just some prose, not JSON.' };
});

$t->run($t->graph_conf('tool_rounds'));

my $sid = $t->session;
my $r = $t->http('POST', "/api/sessions/$sid/resources?name=t.csv",
                 "a,b\n1,2\n3,4\n5,6\n", 'Content-Type' => 'text/csv');
is($r->{status}, 201, 'CSV uploaded');

# 1. no tool call: llm_call -> format_response -> END
$r = $t->turn($sid, 'direct');
is_deeply(AgentTest::plain($r), [qw(start response end)],
          'direct: the response event, end')
    or diag explain $r->{types};
like($r->{text}, qr/"answer": "42"/, 'direct: the text streamed');
my @nodes = map { "$_->{name}:$_->{status}" }
            grep { $_->{type} eq 'node' } @{ $r->{events} };
is_deeply(\@nodes, [qw(llm_call:start llm_call:end format_response:start
                       format_response:end)], 'direct: the nodes it ran');
my ($ev) = grep { $_->{type} eq 'response' } @{ $r->{events} };
is_deeply($ev->{data}, { answer => '42', suggestions => ['why 42?'],
                         confidence => 'high' }, 'direct: the response');
my $st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is_deeply($st->{values}{response}, $ev->{data}, 'direct: in the state');
is($st->{values}{llm_calls}, 1, 'direct: one round');
is($st->{graph}, 'tool_rounds', 'the state names its graph');
my @reqs = $mock->requests;
is(scalar @{ $reqs[-1]{body}{tools} }, 2, 'the tools are offered');

# 2. a round of tools, then an answer with a missing and a mistyped field
$r = $t->turn($sid, 'one round');
is_deeply(AgentTest::plain($r), [qw(start tool_start tool_result response
                                    end)], 'one round: events')
    or diag explain $r->{types};
($ev) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is_deeply($ev->{content}{rows}, [[3]], 'one round: the SQL ran');
($ev) = grep { $_->{type} eq 'response' } @{ $r->{events} };
is_deeply($ev->{data}, { answer => '3 rows', suggestions => [],
                         confidence => 'low' },
          'one round: defaults for what is missing or mistyped');
$st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is($st->{values}{llm_calls}, 2, 'one round: two model calls this turn');

# 3. the cap: three model rounds, two of them with their tools run
my $before = scalar $mock->requests;
$r = $t->turn($sid, 'forever');
is($r->{types}[-1], 'end', 'forever: the turn still ends');
is(scalar($mock->requests) - $before, 3, 'forever: three model calls');
is(scalar(grep { $_->{type} eq 'tool_start' } @{ $r->{events} }), 2,
   'forever: the third round\'s calls are not run');
($ev) = grep { $_->{type} eq 'response' } @{ $r->{events} };
is_deeply($ev->{data}, { answer => '', suggestions => [],
                         confidence => 'low' }, 'forever: the defaults');
$st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is($st->{values}{llm_calls}, 3, 'forever: llm_calls is 3');

# 4. prose instead of JSON: the defaults, and the prose as the answer text
$r = $t->turn($sid, 'prose');
($ev) = grep { $_->{type} eq 'response' } @{ $r->{events} };
is_deeply($ev->{data}, { answer => '', suggestions => [],
                         confidence => 'low' }, 'prose: the defaults');
is($r->{events}[-1]{full_response}, 'Just some prose, not JSON.',
   'prose: full_response is the model\'s text');

# every message stays listable
my $m = $t->http('GET', "/api/sessions/$sid/messages?include_tools=1")->{json};
ok(scalar @{ $m->{messages} } >= 12, 'the whole history is listed');

$t->check_log;
done_testing;
