#!/usr/bin/perl
# Open Responses with the client's own function tools (issue 50, items 8 to
# 11), through the official openai npm client's function-calling loop (with
# previous_response_id, streamed, and with the whole history sent back) and
# the AI SDK's generateText with a client tool (ai with
# @ai-sdk/open-responses), unchanged; GET /responses/{id}/input_items; GET
# /responses/{id}?stream=true of a background response, replayed and
# followed to its end; instructions echoed.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $openai = AgentTest::npm('openai', 'openai', 'openai@6.49.0');
my $aisdk = AgentTest::npm('aisdk', '@ai-sdk/open-responses', 'ai@7.0.185',
                           '@ai-sdk/open-responses@2.0.36', 'zod@4.6.7');

# the model: asks for the client's get_weather, then answers with what
# it returned; "both" asks for the graph's tool and the client's at once
my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $last = $m[-1];
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my $text = $m[$u]{content};
    $text = join '', map { $_->{text} // '' } @$text if ref $text;
    if ($last->{role} eq 'tool') {
        my @results = map { $_->{content} } grep { $_->{role} eq 'tool' }
                      @m[$u + 1 .. $#m];
        return { text => 'The tool said: ' . join(' | ', @results) };
    }
    my $city = $text =~ /(\w+)\?$/ ? $1 : 'Paris';
    $text = lc $text;
    return { text => 'Let me look.',
             tools => [[ 'call_w1', 'get_weather', "{\"city\": \"$city\"}" ],
                       ($text =~ /both/
                        ? [ 'call_s1', 'execute_sql_query',
                            '{"query": "select 6*7 as n"}' ] : ()) ] }
        if $text =~ /weather/;
    return { text => 'one two three four five six', delay => 0.6,
             pieces => [ map { "$_ " } qw(one two three four five six) ] }
        if $text eq 'slow';
    return { text => "no tools: $text" };
});

my $conf = $t->conf(http => <<'HTTP');
agent_graph tooly {
    node model llm tools=execute_sql_query;
    node tools tools;
    edge START model;
    edge model tools if=tool_calls;
    edge model END;
    edge tools model;
}
HTTP
# a short lease: a background run outlives two of them, and is followed
$conf =~ s{(location /api/chat/)}{location /v1/ { agent_responses;
        agent_owner \$http_x_user; agent_use_graph tooly;
        agent_turn_lease 1s; }
    $1};
$t->run($conf);

my $base = 'http://127.0.0.1:' . $t->port;
my $dir = $t->dir;

# the clients' scripts, as an app would write them
open my $fh, '>', "$dir/openai.mjs" or die $!;
print $fh <<'JS';
const [dir, base] = process.argv.slice(2);
const { default: OpenAI } = await import(
    `${dir}/node_modules/openai/index.mjs`);
const out = (k, v) => console.log(JSON.stringify({ k, v }));
const c = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused',
                       defaultHeaders: { 'X-User': 'alice' }, maxRetries: 0 });
const tools = [{ type: 'function', name: 'get_weather',
                 description: 'The weather in a city',
                 parameters: { type: 'object', required: ['city'],
                               properties: { city: { type: 'string' } } } }];
const run = (call) => JSON.stringify({ city: JSON.parse(call.arguments).city,
                                       sky: 'sunny' });
const err = (e) => ({ error: String(e?.message ?? e), status: e?.status });
try {
    // the function-calling loop, kept by previous_response_id
    const r1 = await c.responses.create({ model: 'tooly', tools,
        instructions: 'Be brief.', input: 'What is the weather in Paris?' });
    out('r1', r1);
    const calls = r1.output.filter((i) => i.type === 'function_call');
    const r2 = await c.responses.create({ model: 'tooly', tools,
        previous_response_id: r1.id,
        input: calls.map((x) => ({ type: 'function_call_output',
                                   call_id: x.call_id, output: run(x) })) });
    out('r2', r2);
    out('get_r1', await c.responses.retrieve(r1.id));
    const items = [];
    for await (const i of c.responses.inputItems.list(r2.id)) {
        items.push(i);
    }
    out('items_r2', items);
    const items1 = [];
    for await (const i of c.responses.inputItems.list(r1.id,
                                                      { order: 'asc' })) {
        items1.push(i);
    }
    out('items_r1', items1);

    // streamed, the same loop
    const events = [];
    const s = c.responses.stream({ model: 'tooly', tools,
                                   input: 'And the weather in Rome?' });
    s.on('event', (e) => events.push({ type: e.type, delta: e.delta,
                                       arguments: e.arguments,
                                       item: e.item }));
    const f1 = await s.finalResponse();
    out('s1', { events, final: f1 });
    const scalls = f1.output.filter((i) => i.type === 'function_call');
    const s2 = c.responses.stream({ model: 'tooly', tools,
        previous_response_id: f1.id,
        input: scalls.map((x) => ({ type: 'function_call_output',
                                    call_id: x.call_id, output: run(x) })) });
    out('s2', await s2.finalResponse());

    // the whole history sent back, no previous_response_id
    const input = [{ role: 'user', content: 'Weather in Oslo?' }];
    const h1 = await c.responses.create({ model: 'tooly', tools, input });
    input.push(...h1.output);
    for (const x of h1.output.filter((i) => i.type === 'function_call')) {
        input.push({ type: 'function_call_output', call_id: x.call_id,
                     output: run(x) });
    }
    out('h2', await c.responses.create({ model: 'tooly', tools, input }));

    // the graph's tool and the client's in one round
    const b1 = await c.responses.create({ model: 'tooly', tools,
        input: 'both: weather in Lima?' });
    out('b1', b1);
    const bcalls = b1.output.filter((i) => i.type === 'function_call');
    out('b2', await c.responses.create({ model: 'tooly', tools,
        previous_response_id: b1.id,
        input: bcalls.map((x) => ({ type: 'function_call_output',
                                    call_id: x.call_id,
                                    output: run(x) })) }));

    // a background response, followed by GET ?stream=true from its start
    const bg = await c.responses.create({ model: 'tooly', input: 'slow',
                                          background: true });
    const replay = [];
    const follow = await c.responses.retrieve(bg.id, { stream: true });
    for await (const e of follow) {
        replay.push({ type: e.type, seq: e.sequence_number,
                      delta: e.delta, response: e.response });
    }
    out('replay', { first: bg.status, id: bg.id, events: replay });
    const again = [];
    const tail = await c.responses.retrieve(bg.id, { stream: true,
                                                     starting_after: 3 });
    for await (const e of tail) {
        again.push(e.sequence_number);
    }
    out('replay_after', again);

    // a background response streamed as it runs, then replayed
    const live = [];
    const bs = await c.responses.create({ model: 'tooly', input: 'slow',
                                          background: true, stream: true });
    let bid;
    for await (const e of bs) {
        bid = bid ?? e.response?.id;
        live.push(e.type);
    }
    const stored = [];
    for await (const e of await c.responses.retrieve(bid, { stream: true })) {
        stored.push(e.type);
    }
    out('replay_live', { live, stored });

    // outputs for a conversation that waits for nothing: refused
    try {
        await c.responses.create({ model: 'tooly', tools,
            previous_response_id: r2.id,
            input: [{ type: 'function_call_output', call_id: 'call_w1',
                      output: 'late' }] });
        out('late', { error: null });
    } catch (e) {
        out('late', err(e));
    }
    try {
        await c.responses.create({ model: 'tooly', tools, input: [
            { type: 'function_call_output', call_id: 'x', output: '1' }] });
        out('orphan', { error: null });
    } catch (e) {
        out('orphan', err(e));
    }
    try {
        await c.responses.create({ model: 'tooly', input: 'hi',
            tools: [{ type: 'web_search' }] });
        out('web_search', { error: null });
    } catch (e) {
        out('web_search', err(e));
    }
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
JS
close $fh;

open $fh, '>', "$dir/aisdk.mjs" or die $!;
print $fh <<'JS';
const [dir, base] = process.argv.slice(2);
const m = (p) => import(`${dir}/node_modules/${p}`);
const { generateText, tool, jsonSchema, stepCountIs } =
    await m('ai/dist/index.js');
const { createOpenResponses } =
    await m('@ai-sdk/open-responses/dist/index.js');
const out = (k, v) => console.log(JSON.stringify({ k, v }));
const nginx = createOpenResponses({ name: 'nginx',
    url: `${base}/v1/responses`, headers: { 'X-User': 'alice' } });
const ran = [];
try {
    const r = await generateText({
        model: nginx('tooly'),
        system: 'Be brief.',
        prompt: 'What is the weather in Madrid?',
        tools: {
            get_weather: tool({
                description: 'The weather in a city',
                inputSchema: jsonSchema({ type: 'object',
                    properties: { city: { type: 'string' } },
                    required: ['city'] }),
                execute: async ({ city }) => {
                    ran.push(city);
                    return { city, sky: 'cloudy' };
                },
            }),
        },
        stopWhen: stepCountIs(4),
    });
    out('ai', { text: r.text, steps: r.steps.length, ran,
                finish: r.finishReason,
                calls: r.steps.map((s) => s.toolCalls.map((c) => c.toolName)) });
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
JS
close $fh;

my %o = AgentTest::observe("$dir/openai.mjs", $openai, $base);

my $r1 = $o{r1} // {};
is($r1->{status}, 'completed', 'a client tool called: the response is '
   . 'completed') or diag explain $r1;
my @fc = grep { $_->{type} eq 'function_call' } @{ $r1->{output} // [] };
is(scalar @fc, 1, '... with one function_call item');
is($fc[0]{name}, 'get_weather', '... naming the client\'s tool');
is($fc[0]{call_id}, 'call_w1', '... with the model\'s call id');
is_deeply(decode_json($fc[0]{arguments} // '{}'), { city => 'Paris' },
          '... and its arguments');
is($r1->{instructions}, 'Be brief.', 'instructions echoed');
is($o{r2}{status}, 'completed', 'function_call_output with '
   . 'previous_response_id: the run goes on') or diag explain $o{r2};
like($o{r2}{output_text} // '', qr/The tool said: .*"city":"Paris".*sunny/,
     '... and the model reads the client\'s output');
is($o{r2}{conversation}{id}, $r1->{conversation}{id}, '... in the same '
   . 'conversation');
is($o{get_r1}{status}, 'completed', 'retrieve: the response that called '
   . 'it, completed');
is((grep { $_->{type} eq 'function_call' } @{ $o{get_r1}{output} // [] })[0]
   {call_id}, 'call_w1', '... with its function_call item');
is($o{get_r1}{instructions}, 'Be brief.', '... and its instructions');

my $items = $o{items_r2} // [];
is(scalar @$items, 1, 'input_items: the items the request gave')
    or diag explain $items;
is($items->[0]{type}, 'function_call_output', '... the output');
is($items->[0]{call_id}, 'call_w1', '... of the call');
is($o{items_r1}[0]{type}, 'message', 'input_items of a text input: the '
   . 'user\'s message');
is($o{items_r1}[0]{content}[0]{text}, 'What is the weather in Paris?',
   '... its text');

my $s1 = $o{s1} // {};
my @types = map { $_->{type} } @{ $s1->{events} // [] };
ok((grep { $_ eq 'response.function_call_arguments.delta' } @types)
   && (grep { $_ eq 'response.function_call_arguments.done' } @types),
   'streamed: function_call_arguments.delta and .done') or diag "@types";
my ($added) = grep { $_->{type} eq 'response.output_item.added'
                     && $_->{item}{type} eq 'function_call' }
              @{ $s1->{events} // [] };
is($added->{item}{name}, 'get_weather', '... the item added first');
is($types[-1], 'response.completed', '... and response.completed last');
my ($sfc) = grep { $_->{type} eq 'function_call' }
            @{ $s1->{final}{output} // [] };
is_deeply(decode_json($sfc->{arguments} // '{}'), { city => 'Rome' },
          '... the client accumulates the arguments');
like($o{s2}{output_text} // '', qr/Rome.*sunny/,
     'the streamed loop goes on with the output');

like($o{h2}{output_text} // '', qr/Oslo.*sunny/, 'the whole history sent '
   . 'back without previous_response_id: the conversation of its '
   . 'function_call items goes on') or diag explain $o{h2};

my @b = grep { $_->{type} eq 'function_call' } @{ $o{b1}{output} // [] };
is_deeply([ map { $_->{name} } @b ], ['get_weather'], 'the graph\'s tool '
   . 'and the client\'s in one round: only the client\'s is its item');
like($o{b2}{output_text} // '', qr/Lima.*sunny.*\|.*42|42.*\|.*Lima/s,
     '... the graph ran its own, the model reads both results');

is($o{late}{status}, 409, 'outputs to a conversation that waits for none: '
   . '409') or diag explain $o{late};
is($o{orphan}{status}, 400, 'outputs that name no response of ours: 400');
is($o{web_search}{status}, 400, 'a tool that is not a function: 400');

my $rp = $o{replay} // {};
my @rt = map { $_->{type} } @{ $rp->{events} // [] };
is($rp->{first}, 'in_progress', 'background: answered in progress');
is($rt[0], 'response.created', 'GET ?stream=true: its events from the '
   . 'first') or diag "@rt";
is($rt[-1], 'response.completed', '... followed to its end');
is(join('', map { $_->{delta} // '' } grep { $_->{type} eq
        'response.output_text.delta' } @{ $rp->{events} // [] }),
   'one two three four five six ', '... every token once');
is_deeply([ map { $_->{seq} } @{ $rp->{events} // [] } ],
          [ 0 .. $#rt ], '... in order');
is($rp->{events}[-1]{response}{output}[0]{content}[0]{text},
   'one two three four five six ', '... the last with the whole response');
is_deeply($o{replay_after}, [ 4 .. $#rt ], 'starting_after: the events '
   . 'after it');
my $rl = $o{replay_live} // {};
is(scalar(grep { $_ eq 'response.completed' } @{ $rl->{live} // [] }), 1,
   'background streamed: one response.completed') or diag "@{$rl->{live}}";
is_deeply($rl->{stored}, $rl->{live}, '... and its replay the same events');

# what the model was offered, and what it read back
my @req = map { $_->{body} } $t->{mock}->requests;
my ($first) = grep { ($_->{messages}[-1]{content} // '') eq
                     'What is the weather in Paris?' } @req;
is_deeply([ sort map { $_->{function}{name} } @{ $first->{tools} // [] } ],
          [ 'execute_sql_query', 'get_weather' ],
          'the client\'s tool offered beside the graph\'s');
my ($gw) = grep { $_->{function}{name} eq 'get_weather' }
           @{ $first->{tools} // [] };
is($gw->{function}{parameters}{properties}{city}{type}, 'string',
   '... with its parameters');

# the AI SDK's tool loop
my %a = AgentTest::observe("$dir/aisdk.mjs", $aisdk, $base);
my $ai = $a{ai} // {};
is_deeply($ai->{ran}, ['Madrid'], 'AI SDK generateText: the client tool '
   . 'ran') or diag explain \%a;
like($ai->{text} // '', qr/Madrid.*cloudy/, '... and the answer reads its '
   . 'result');
is($ai->{steps}, 2, '... in two steps');

# by hand: malformed tools and outputs
sub post {
    my ($body) = @_;
    return $t->http('POST', '/v1/responses', encode_json($body),
                    'Content-Type' => 'application/json', 'X-User' => 'alice');
}
my $r = post({ model => 'tooly', input => 'x', tools => 'all' });
is($r->{json}{error}{param}, 'tools', 'tools not an array: refused, named');
$r = post({ model => 'tooly', input => 'x',
            tools => [{ type => 'function', name => 'a b' }] });
is($r->{status}, 400, 'a tool name that is no name: 400');
$r = post({ model => 'tooly', input => 'x',
            tools => [{ type => 'function', name => 'a' },
                      { type => 'function', name => 'a' }] });
is($r->{status}, 400, 'two tools of one name: 400');
$r = post({ model => 'tooly', input => [
    { type => 'function_call_output', call_id => 'c', output => {} }],
    previous_response_id => $r1->{id} });
is($r->{json}{error}{param}, 'input', 'an output that is not text: 400');
$r = post({ model => 'tooly', input => 'x', instructions => 7 });
is($r->{json}{error}{param}, 'instructions', 'instructions not a string');
$r = $t->http('GET', "/v1/responses/$r1->{id}/input_items", undef,
              'X-User' => 'bob');
is($r->{status}, 404, 'input_items of another owner\'s response: 404');
$r = $t->http('POST', "/v1/responses/$r1->{id}/input_items", '{}',
              'X-User' => 'alice');
is($r->{status}, 405, 'POST input_items: 405');
$r = $t->http('GET', "/v1/responses/$rp->{id}?stream=true", undef,
              'X-User' => 'bob');
is($r->{status}, 404, 'another owner\'s events: 404, no stream');
$r = $t->http('GET', "/v1/responses/$rp->{id}?stream=true"
              . '&starting_after=x', undef, 'X-User' => 'alice');
is($r->{status}, 400, 'starting_after that is no number: 400');

$t->stop;
$t->check_log;
done_testing;
