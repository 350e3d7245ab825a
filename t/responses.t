#!/usr/bin/perl
# Open Responses inbound (issue 31, item 4): agent_responses, with the
# location as the base URL of the official openai npm client, unchanged:
# responses.create, responses.stream (the semantic events), a
# conversation kept by previous_response_id and by conversation, an
# interrupt as an incomplete response answered by the next input, an
# unknown model and another owner's response (OpenAI's errors), a stream
# the client leaves; malformed requests by hand; the conversation goes on
# through our chat API; kept responses retrieved, run in the background,
# cancelled and deleted.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $root = "$FindBin::Bin/..";
my $dir = AgentTest::npm('openai', 'openai', 'openai@6.49.0');

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my $last = $m[$u]{content};
    return { text => 'one two three four five six seven eight',
             pieces => [ map { "$_ " } qw(one two three four five six
                                           seven eight) ],
             delay => 0.3 } if $last eq 'slow';
    my $n = grep { $_->{role} eq 'user' } @m;
    return { text => "Hello, you said $last ($n)",
             pieces => [ 'Hello, ', "you said $last ($n)" ] };
});

my $conf = $t->conf(http => <<'HTTP');
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
agent_graph approval {
    channel plan value 'default="Delete the rows?"';
    channel answer value;
    node ask interrupt value=plan resume=answer;
    node done template "text=you said {{answer}}";
    edge START ask;
    edge ask done;
    edge done END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /v1/ { agent_responses;
        agent_owner \$http_x_user; agent_use_graph chat;
        agent_assistants approval; }
    $1};
$t->run($conf);

my $base = 'http://127.0.0.1:' . $t->port;
my %o = AgentTest::observe("$root/t/responses/client.mjs", $dir, $base);

my $hi = $o{hi};
ok($hi && !$hi->{error}, 'responses.create answers') or diag explain $hi;
is($hi->{status}, 'completed', '... completed');
is($hi->{output_text}, 'Hello, you said hi (1)', '... output_text');
like($hi->{id}, qr/^resp_/, '... a response id');
is($hi->{model}, 'chat', '... the graph as the model');
ok($hi->{conversation}{id}, '... in a conversation');
ok($hi->{usage}{total_tokens} > 0, '... with its usage');
is($o{again}{output_text}, 'Hello, you said again (2)',
   'previous_response_id: the same conversation');
is($o{again}{previous_response_id}, $hi->{id}, '... said so');

my $st = $o{stream};
ok($st && !$st->{error}, 'responses.stream') or diag explain $st;
my @types = map { $_->{type} } @{ $st->{events} };
is($types[0], 'response.created', 'response.created first');
is($types[-1], 'response.completed', 'response.completed last');
ok((grep { $_ eq 'response.output_item.added' } @types)
   && (grep { $_ eq 'response.content_part.added' } @types)
   && (grep { $_ eq 'response.output_text.done' } @types)
   && (grep { $_ eq 'response.output_item.done' } @types),
   'the item and part events around the text');
is(join('', map { $_->{delta} // '' } grep { $_->{type} eq
        'response.output_text.delta' } @{ $st->{events} }),
   'Hello, you said streamed (3)', 'output_text.delta, token by token');
is_deeply([ map { $_->{seq} } @{ $st->{events} } ],
          [ 0 .. $#{ $st->{events} } ], 'sequence numbers in order');
is($st->{final}{output_text}, 'Hello, you said streamed (3)',
   'the final response, accumulated by the client');

is($o{ask}{status}, 'incomplete', 'an interrupt: incomplete');
is($o{ask}{incomplete_details}{reason}, 'interrupt', '... because it waits');
is($o{ask}{output_text}, 'Delete the rows?', '... asking its question');
is($o{answer}{output_text}, 'you said yes',
   'the next input answers it, and the graph goes on');

is($o{unknown}{status}, 404, 'an unknown model: 404');
is($o{unknown}{code}, 'model_not_found', '... model_not_found');
is($o{bob}{status}, 404, 'another owner\'s response: 404');
is($o{bob}{code}, 'previous_response_not_found', '... not found');
is($o{no_input}{status}, 400, 'no input: 400');
is($o{no_input}{param}, 'input', '... naming the field');
is($o{tool_output}{status}, 400, 'a function_call_output: 400');
ok(!$o{after}{error}, 'a stream the client left: the conversation is free')
    or diag explain $o{after};
like($o{after}{output_text} // '', qr/you said after/, '... and goes on');

# by hand
sub post {
    my ($body, %h) = @_;
    return $t->http('POST', '/v1/responses', $body, 'Content-Type' =>
                    'application/json', 'X-User' => 'alice', %h);
}
my $r = post('{"model": ');
is($r->{status}, 400, 'bad JSON: 400');
ok($r->{json}{error}{message}, '... OpenAI\'s error shape');
$r = post('[' x 100000);
is($r->{status}, 400, 'deep nesting: 400');
$r = post(encode_json({ model => 'chat', input => 'x', background => 'yes' }));
is($r->{json}{error}{param}, 'background', 'background not a boolean: '
   . 'refused, named');
$r = post(encode_json({ model => 'chat', input => 'x', stream => 'yes' }));
is($r->{json}{error}{param}, 'stream', 'stream of the wrong type');
$r = $t->http('GET', '/v1/responses/resp_x', undef, 'X-User' => 'alice');
is($r->{status}, 404, 'a response that is no response: 404');
$r = $t->http('PUT', '/v1/responses/resp_x', '', 'X-User' => 'alice');
is($r->{status}, 405, 'PUT a response: 405');
$r = $t->http('GET', '/v1/responses/resp_x/cancel', undef,
              'X-User' => 'alice');
is($r->{status}, 405, 'GET a cancel: 405');

# kept responses, through the client
is($o{get_hi}{status}, 'completed', 'retrieve: the response, completed')
    or diag explain $o{get_hi};
is($o{get_hi}{output_text}, 'Hello, you said hi (1)', '... with its answer');
is($o{get_hi}{conversation}{id}, $o{conversation}, '... in its conversation');
is($o{get_ask}{status}, 'incomplete', 'retrieve an interrupted one: '
   . 'incomplete');
is($o{get_ask}{output_text}, 'Delete the rows?', '... with its question');
is($o{get_bob}{status}, 404, 'retrieve another owner\'s: 404');
is($o{bg}{status}, 'in_progress', 'background: answered at once, in '
   . 'progress') or diag explain $o{bg};
is($o{bg_done}{status}, 'completed', '... and completed later')
    or diag explain $o{bg_done};
like($o{bg_done}{output_text} // '', qr/in the background/,
     '... with its answer');
is($o{delete_running}{status}, 400, 'delete one in progress: 400');
is($o{bg_stream_left}{status}, 'completed', 'a background stream its '
   . 'client left: the run goes on to its end')
    or diag explain $o{bg_stream_left};
like($o{bg_stream_left}{output_text} // '', qr/^one two .* seven eight/,
     '... with its whole answer');
is($o{cancel}{status}, 'cancelled', 'cancel: cancelled')
    or diag explain $o{cancel};
is($o{cancel_get}{status}, 'cancelled', '... and so it stays');
is($o{cancel_again}{status}, 400, 'cancel one that is over: 400');
ok(!$o{delete} || $o{delete}{deleted}, 'delete: done')
    or diag explain $o{delete};
is($o{deleted_get}{status}, 404, '... then it is not found');
$r = $t->http('POST', '/v1/responses', '{}', 'Content-Type' =>
              'application/json');
is($r->{status}, 401, 'no owner: 401');
ok($r->{json}{error}{message}, '... OpenAI\'s error shape');

my $chat = $t->http('POST', "/api/chat/$o{conversation}/message",
                    encode_json({ message => 'from chat' }),
                    'Content-Type' => 'application/json',
                    'Accept' => 'application/json');
like($chat->{json}{full_response} // '', qr/from chat/,
     'the conversation is a thread of our chat API too');

$t->stop;
$t->check_log;
done_testing;
