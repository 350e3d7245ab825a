#!/usr/bin/perl
# Seed 001 as conf/graphs/tool_rounds.conf: the tool loop capped at three
# model rounds, then formatResponse's structured answer.  One test per path
# of the seed's graph: no tool call, tool rounds then an answer, the cap,
# an answer that is not the declared shape.  The tools are the seed's five,
# from its MCP server written with the official TypeScript SDK (stateful
# with event streams, and stateless with JSON at the end); postId, a
# runtime input, reaches search_posts as excludePostId.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
my $mcp = $t->mcp_server('stateful')
    or plan skip_all => 'the MCP SDK could not be installed from npm';

sub script {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my $tool_msgs = grep { $_->{role} eq 'tool' } @m[$u .. $#m];

    if ($q eq 'direct') {
        return { text => '{"suggestions": [{"title": "Runbook", '
                         . '"description": "How to restart", "url": '
                         . '"https://docs.example/runbook", "sourceType": '
                         . '"docs", "m365Source": null, "score": 9}], '
                         . '"relatedPosts": [{"id": "p7", "title": "Same '
                         . 'issue", "likeCount": 3, "commentCount": 1}], '
                         . '"actionHint": "Restart the worker."}' };
    }

    if ($q eq 'one round') {
        return { tools => [[ 'c1', 'search_docs', '{"query": "restart"}' ],
                           [ 'c2', 'search_posts', '{"query": "restart", '
                                   . '"excludePostId": "model-made"}' ]] }
            if $tool_msgs == 0;
        return { text => "```json\n{\"actionHint\": \"3 rows\", "
                         . "\"suggestions\": [\"not an object\", "
                         . "{\"title\": 5, \"url\": \"u\"}], "
                         . "\"relatedPosts\": 7}\n```" };
    }

    return { status => 400, message => 'mock refuses' } if $q eq 'fail';

    if ($q eq 'forever') {
        # the model never stops calling tools: the cap ends the loop
        return { tools => [[ "c$tool_msgs", 'search_docs',
                             '{"query": "again"}' ]] };
    }

    return { text => 'Just some prose, not JSON.' };
}

my $mock = $t->mock(\&script);

$t->run($t->graph_conf('tool_rounds', mcp => $mcp->{url},
                       location => 'agent_input postId $arg_postId;'));

my $sid = $t->session;
my $r;

# 1. no tool call: llm_call -> format_response -> END
$r = $t->turn($sid, 'direct');
is_deeply(AgentTest::plain($r), [qw(start response end)],
          'direct: the response event, end')
    or diag explain $r->{types};
like($r->{text}, qr/"actionHint": "Restart the worker."/,
     'direct: the text streamed');
my @nodes = map { "$_->{name}:$_->{status}" }
            grep { $_->{type} eq 'node' } @{ $r->{events} };
is_deeply(\@nodes, [qw(llm_call:start llm_call:end format_response:start
                       format_response:end)], 'direct: the nodes it ran');
my ($ev) = grep { $_->{type} eq 'response' } @{ $r->{events} };
my $seed_answer = {
    suggestions => [ { title => 'Runbook', description => 'How to restart',
                       url => 'https://docs.example/runbook',
                       sourceType => 'docs', m365Source => undef } ],
    relatedPosts => [ { id => 'p7', title => 'Same issue', likeCount => 3,
                        commentCount => 1 } ],
    actionHint => 'Restart the worker.' };
is_deeply($ev->{data}, $seed_answer,
          'direct: the CombinedSuggestionsResponse, unknown keys dropped');
my $st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is_deeply($st->{values}{response}, $ev->{data}, 'direct: in the state');
is($st->{values}{llm_calls}, 1, 'direct: one round');
is($st->{graph}, 'tool_rounds', 'the state names its graph');
my @reqs = $mock->requests;
is_deeply([ sort map { $_->{function}{name} } @{ $reqs[-1]{body}{tools} } ],
          [qw(generate_action_hint search_docs search_issues search_m365
              search_posts)], 'the seed\'s five MCP tools are offered');

# 2. a round of tools, then an answer with a missing and a mistyped field;
# the post the turn is about comes as ?postId=
$r = $t->stream("/api/chat/$sid/message?postId=p2",
                encode_json({ message => 'one round' }));
is_deeply(AgentTest::plain($r), [qw(start tool_start tool_start tool_result
                                    tool_result response end)],
          'one round: events')
    or diag explain $r->{types};
my %res = map { $_->{id} => $_->{content} }
          grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is($res{c1}[0]{sourceType}, 'docs', 'one round: search_docs answered');
is_deeply([ map { $_->{id} } @{ $res{c2} } ], ['p1'],
          'one round: search_posts left out the post of the turn');
my ($posts) = grep { $_->{tool} eq 'search_posts' }
              AgentTest::mcp_calls($mcp);
is($posts->{args}{excludePostId}, 'p2',
   'one round: postId sent as excludePostId, not what the model wrote');
($ev) = grep { $_->{type} eq 'response' } @{ $r->{events} };
is_deeply($ev->{data}, { actionHint => '3 rows',
                         suggestions => [ { title => '', description => '',
                                            url => 'u', sourceType => '',
                                            m365Source => undef } ],
                         relatedPosts => [] },
          'one round: defaults for what is missing or mistyped, items too');
$st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is($st->{values}{llm_calls}, 2, 'one round: two model calls this turn');

# 3. the cap: three model rounds, two of them with their tools run
my $before = scalar $mock->requests;
$r = $t->turn($sid, 'forever');
is($r->{types}[-1], 'end', 'forever: the turn still ends');
is(scalar($mock->requests) - $before, 3, 'forever: three model calls');
is(scalar(grep { $_->{type} eq 'tool_start' } @{ $r->{events} }), 2,
   'forever: the third round\'s calls are not run');
is(scalar(grep { $_->{tool} eq 'search_docs' && $_->{args}{query} eq 'again' }
          AgentTest::mcp_calls($mcp)), 2,
   'forever: the MCP server ran two rounds');
($ev) = grep { $_->{type} eq 'response' } @{ $r->{events} };
my $defaults = { suggestions => [], relatedPosts => [], actionHint => '' };
is_deeply($ev->{data}, $defaults, 'forever: the defaults');
$st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is($st->{values}{llm_calls}, 3, 'forever: llm_calls is 3');

# 4. prose instead of JSON: the defaults, and the prose as the answer text
$r = $t->turn($sid, 'prose');
($ev) = grep { $_->{type} eq 'response' } @{ $r->{events} };
is_deeply($ev->{data}, $defaults, 'prose: the defaults');
is($r->{events}[-1]{full_response}, 'Just some prose, not JSON.',
   'prose: full_response is the model\'s text');

# a client that wants no stream: one JSON object, the answer in the state
$r = $t->http('POST', "/api/chat/$sid/message", '{"message": "direct"}',
              'Accept' => 'application/json');
is($r->{status}, 200, 'one-shot: 200');
like($r->{headers}{'content-type'}, qr{^application/json},
     'one-shot: application/json, not a stream');
is_deeply($r->{json}{state}{response}, $seed_answer,
          'one-shot: the structured answer in the state');
is($r->{json}{state}{llm_calls}, 1, 'one-shot: the other channels too');
like($r->{json}{full_response}, qr/actionHint/, 'one-shot: the answer text');
is($r->{json}{session_id}, $sid, 'one-shot: the session');
ok($r->{json}{checkpoint_id} && $r->{json}{usage}, 'one-shot: checkpoint, usage');
ok(!exists $r->{json}{state}{messages}, 'one-shot: no message list');

# both accepted: the stream, as browsers' EventSource asks
$r = $t->http('POST', "/api/chat/$sid/message", '{"message": "direct"}',
              'Accept' => 'text/event-stream, application/json');
like($r->{headers}{'content-type'}, qr{^text/event-stream},
     'Accept with text/event-stream: a stream');

# seed 001's answer as a JSON API client gets it, under Accept alone
$r = $t->http('POST', "/api/chat/$sid/message", '{"message": "prose"}',
              'Accept' => 'application/json');
is_deeply($r->{json}{state}{response}, $defaults, 'one-shot: defaults');

# a turn that fails: an HTTP error, since no header went out yet
$r = $t->http('POST', "/api/chat/$sid/message", '{"message": "fail"}',
              'Accept' => 'application/json');
is($r->{status}, 502, 'one-shot: a provider error is 502');
is($r->{json}{code}, 'llm_error', 'one-shot: with the error event\'s code');
like($r->{json}{error}, qr/mock refuses|400/, 'one-shot: and its text');

# every message stays listable
my $m = $t->http('GET', "/api/sessions/$sid/messages?include_tools=1")->{json};
ok(scalar @{ $m->{messages} } >= 12, 'the whole history is listed');

# the stateless protocol mode: JSON answers, no session
my $t2 = AgentTest->new;
my $flat = $t2->mcp_server('stateless');
$t2->mock(\&script);
$t2->run($t2->graph_conf('tool_rounds', mcp => $flat->{url},
                         location => 'agent_input postId $arg_postId;'));
my $sid2 = $t2->session;
$r = $t2->stream("/api/chat/$sid2/message?postId=p1",
                 encode_json({ message => 'one round' }));
%res = map { $_->{id} => $_->{content} }
       grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is_deeply([ map { $_->{id} } @{ $res{c2} } ], ['p2'],
          'stateless: the seed\'s tools answer, postId as excludePostId');
is($r->{types}[-1], 'end', 'stateless: the turn ends');
like($t2->slurp('error.log'), qr/MCP server "seed": 5 tools, protocol 2025-11-25, no session/,
     'stateless: no session');
$t2->check_log;

$t->check_log;
done_testing;
