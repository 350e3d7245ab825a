#!/usr/bin/perl
# CopilotKit's LangGraph agent (@ag-ui/langgraph from npm, unchanged) at the
# LangGraph API (issue 50, items 13 to 15): an approval resumed (on_tool_end
# carries data.input), an abort before the first token (events frames name
# the run: the cancel finds it), a stream of messages-tuple alone (chunks
# typed "AIMessageChunk", as the Python server's).  The same shapes on the
# wire, and an image sent alone reaches the model with no empty text part.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $last = AgentTest::last_user($req);
    if ($req->{tools}) {
        return { text => 'the tool said ' . $m[-1]{content} }
            if $m[-1]{role} eq 'tool';
        return { tools => [ [ 'c1', 'lookup', '{"q": "x"}' ] ] };
    }
    return { text => 'late answer', first_delay => 4 } if $last eq 'wait';
    return { text => "Hello, you said $last" };
});

my $conf = $t->conf(http => <<'HTTP');
agent_tool lookup location=/lookup "description=Looks up";
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
agent_graph loop {
    node agent llm tools=lookup;
    node tool tools;
    edge START agent;
    edge agent tool if=tool_calls;
    edge agent END;
    edge tool agent;
}
agent_graph guard {
    node agent llm tools=lookup;
    node tool tools approve=on;
    edge START agent;
    edge agent tool if=tool_calls;
    edge agent END;
    edge tool agent;
}
agent_graph lang {
    channel count sum;
    channel flag value;
    node add template output=count json=on text=2;
    node truth template output=flag json=on text=true;
    node hello template "text=first said hello";
    node oops fail error=NotHello "message=first was {{messages.last}}";
    edge START add;
    edge add truth;
    edge truth hello "if=messages.0.content == 'hello'
        && messages.last.type == 'human' && messages.0.role == 'user'
        && messages.length == 1 && count == 2 && flag == true";
    edge truth oops;
    edge hello END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location = /lookup { return 200 "found"; }
    location /lg/ { agent_langgraph_api; agent_use_graph chat;
        agent_assistants loop guard lang;
        access_log %%DIR%%/lg.log; }
    location /js/ { agent_langgraph_api; agent_use_graph chat;
        agent_langgraph_server js; }
    $1};
$t->run($conf);

sub lg { my ($m, $p, $b) = @_; return $t->http($m, "/lg$p", $b) }

sub frames {
    my ($st, $name) = @_;
    return [ map { $_->{_json} }
             grep { ($_->{_event} // '') eq $name } @{ $st->{events} } ];
}

# --- the wire ----------------------------------------------------------------

# messages-tuple: the Python server's chunk type; messages/partial: "ai"
my $th = lg('POST', '/threads', {})->{json}{thread_id};
my $st = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'chat', stream_mode => [ 'messages-tuple' ],
    input => { messages => [ { role => 'user', content => 'hi' } ] } }));
my $chunks = frames($st, 'messages');
ok(@$chunks, 'messages-tuple: chunks');
is_deeply([ map { $_->[0]{type} } @$chunks ],
          [ ('AIMessageChunk') x @$chunks ],
          '... typed AIMessageChunk, as the Python server');
is(join('', map { $_->[0]{content} } @$chunks), 'Hello, you said hi',
   '... the text');
is_deeply([ $chunks->[-1][0]{content},
            $chunks->[-1][0]{response_metadata}{finish_reason} ],
          [ '', 'stop' ], '... the last with no text, its finish_reason');
$th = $t->http('POST', '/js/threads', {})->{json}{thread_id};
$st = $t->stream("/js/threads/$th/runs/stream", encode_json({
    assistant_id => 'chat', stream_mode => [ 'messages-tuple' ],
    input => { messages => [ { role => 'user', content => 'hi' } ] } }));
$chunks = frames($st, 'messages');
is_deeply([ map { [ $_->[0]{type}, $_->[0]{content} ] } @$chunks ],
          [ map { [ 'ai', $_ ] } 'Hello, ', 'you ', 'said ', 'hi' ],
          'agent_langgraph_server js: typed ai, no last chunk, as the JS '
          . 'server') or diag explain $chunks;
$st = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'chat', stream_mode => [ 'messages' ],
    input => { messages => [ { role => 'user', content => 'ho' } ] } }));
my $partial = frames($st, 'messages/partial');
ok(@$partial, 'messages mode: messages/partial');
is($partial->[-1][0]{type}, 'ai', '... the message so far, typed ai');

# events: every frame names the run and the thread; on_tool_end its input
$th = lg('POST', '/threads', {})->{json}{thread_id};
$st = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'loop', stream_mode => [ 'events' ],
    input => { messages => [ { role => 'user', content => 'use it' } ] } }));
my $run = frames($st, 'metadata')->[0]{run_id};
my $ev = frames($st, 'events');
ok($run && @$ev, 'events mode: frames');
is_deeply([ grep { ($_->{metadata}{run_id} // '') ne $run
                   || ($_->{metadata}{thread_id} // '') ne $th } @$ev ], [],
          '... each with run_id and thread_id in its metadata');
is($ev->[0]{metadata}{graph_id}, 'loop', '... and graph_id');
my ($end) = grep { $_->{event} eq 'on_tool_end' } @$ev;
is_deeply($end->{data}{input}, { q => 'x' },
          'on_tool_end: data.input, the arguments')
    or diag explain $end;
is($end->{data}{output}{tool_call_id}, 'c1', '... beside its output');

# an image alone: no empty text part
my $png = 'iVBORw0KGgo=';
$th = lg('POST', '/threads', {})->{json}{thread_id};
my $r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'chat',
    input => { messages => [ { type => 'human', content => [
        { type => 'image', mimeType => 'image/png', data => $png } ] } ] } });
is($r->{status}, 200, 'an image alone') or diag $r->{content};
my ($seen) = grep { ref $_->{content} eq 'ARRAY' }
             map { @{ $_->{body}{messages} // [] } } $t->{mock}->requests;
is_deeply($seen->{content}, [ { type => 'image_url', image_url => {
    url => "data:image/png;base64,$png" } } ],
    '... reaches the model as the image part alone, no empty text part')
    or diag explain $seen;

# --- the graph language (item 15) -----------------------------------------

# json=on writes values (a sum adds), if= reads a message's fields, a fail
# node needs no edge out (nginx started with one)
$th = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'lang',
    input => { messages => [ { role => 'user', content => 'hello' } ] } });
is($r->{status}, 200, 'lang: a run') or diag $r->{content};
is($r->{json}{count}, 2, 'template json=on: a sum adds the number');
ok(JSON::PP::is_bool($r->{json}{flag}) && $r->{json}{flag},
   '... and writes a boolean') or diag explain $r->{json};
is($r->{json}{messages}[-1]{content}, 'first said hello',
   'if= read messages.0.content, .role, messages.last.type, '
   . 'messages.length');
$th = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'lang',
    input => { messages => [ { role => 'user', content => 'bye' } ] } });
is(lg('GET', "/threads/$th")->{json}{status}, 'error',
   'a fail node with no edge out: the run ends in error there');
like($r->{content}, qr/NotHello|first was bye/, '... with its error')
    or diag $r->{content};

# --- runs (item 13) ---------------------------------------------------------

# a name in interrupt_before that the graph has no node of: ignored
$th = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'chat',
    interrupt_before => [ 'nowhere' ],
    input => { messages => [ { role => 'user', content => 'x' } ] } });
is_deeply([ $r->{status}, $r->{json}{messages}[-1]{content},
            $r->{json}{__interrupt__} ], [ 200, 'Hello, you said x', undef ],
          'interrupt_before of an unknown node: ignored, the run ends');

# a pending run cancelled reads interrupted at once, on whichever worker
# (each request its own connection: both workers answer some)
my @st;
for (1 .. 4) {
    $th = lg('POST', '/threads', {})->{json}{thread_id};
    my $id = lg('POST', "/threads/$th/runs", { assistant_id => 'chat',
        after_seconds => 600,
        input => { messages => [ { role => 'user', content => 'x' } ] } })
        ->{json}{run_id};
    push @st, lg('POST', "/threads/$th/runs/$id/cancel")->{status},
        lg('GET', "/threads/$th/runs/$id")->{json}{status},
        lg('GET', "/threads/$th/runs")->{json}[0]{status};
}
is_deeply(\@st, [ (202, 'interrupted', 'interrupted') x 4 ],
          'a pending run cancelled: interrupted at once, alone and listed');

# --- CopilotKit --------------------------------------------------------------

my $dir = AgentTest::npm_install('agui', '@ag-ui/langgraph',
                                 '@ag-ui/langgraph@0.0.43',
                                 '@ag-ui/client@1.0.0');

SKIP: {
skip '@ag-ui/langgraph (npm) is not installable here', 1 unless $dir;

my $js = $t->dir . '/copilotkit.mjs';
open my $fh, '>', $js or die $!;
print $fh <<'JS';
import { randomUUID } from 'node:crypto';
const [dir, url] = process.argv.slice(2);
const { LangGraphAgent } = await import(
    `${dir}/node_modules/@ag-ui/langgraph/dist/index.mjs`);
const out = (k, v) => console.log(JSON.stringify({ k, v }));
function agent(graphId) {
    const a = new LangGraphAgent({ deploymentUrl: url, graphId });
    a.threadId = randomUUID();
    return a;
}
const say = (a, text) => a.addMessage({ id: randomUUID(), role: 'user',
                                        content: text });
async function run(k, a, params = {}, onEvent) {
    const events = [];
    let error = null;
    try {
        await a.runAgent(params, { onEvent: ({ event }) => {
            events.push({ type: event.type, delta: event.delta ?? null,
                          content: event.content ?? null });
            if (onEvent) onEvent(event, a);
        } });
    } catch (e) {
        error = String(e?.message ?? e);
    }
    out(k, { error, events, runId: a.activeRun?.id ?? null });
}
async function settled(k, threadId) {
    for (let i = 0; i < 600; i++) {
        const r = await (await fetch(`${url}/threads/${threadId}/runs`))
            .json();
        if (r.length && r.every((x) => !['pending', 'running']
                                       .includes(x.status))) {
            return out(k, r);
        }
        await new Promise((res) => setTimeout(res, 100));
    }
    out(k, null);
}
try {
    const g = agent('guard');
    say(g, 'use the tool');
    await run('ask', g);
    await run('resume', g, { forwardedProps: { command: {
        resume: { decisions: [ { type: 'approve' } ] } } } });

    const w = agent('chat');
    say(w, 'wait');
    let aborted = false;
    await run('abort', w, {}, (event, a) => {
        if (event.type === 'STEP_STARTED' && !aborted) {
            aborted = true;
            a.abortRun();
        }
    });
    await settled('abort_runs', w.threadId);
    out('abort_thread', w.threadId);
    say(w, 'again');
    await run('after_abort', w);

    const m = agent('chat');
    say(m, 'tuple');
    await run('tuple', m, { forwardedProps: {
        streamMode: [ 'values', 'messages-tuple' ] } });
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
JS
close $fh;

my $url = 'http://127.0.0.1:' . $t->port . '/lg';
my %o = AgentTest::observe($js, $dir, $url);
sub types { [ map { $_->{type} } @{ $_[0]{events} } ] }

# an approval resumed: the tool's call told from on_tool_end's input
$r = $o{ask};
ok($r && !$r->{error}, 'CopilotKit: a run stops for an approval')
    or diag explain $r;
$r = $o{resume};
ok($r && !$r->{error}, '... resumed with an approve decision, no error')
    or diag explain $r;
my ($args) = grep { $_->{type} eq 'TOOL_CALL_ARGS' } @{ $r->{events} };
is($args && $args->{delta}, '{"q":"x"}',
   '... TOOL_CALL_ARGS from on_tool_end\'s data.input')
    or diag explain types($r);
my ($res) = grep { $_->{type} eq 'TOOL_CALL_RESULT' } @{ $r->{events} };
is($res && $res->{content}, 'found', '... then its result');

# an abort before the first token cancels the server's run, by its id
my $runs = $o{abort_runs} // [];
is(scalar @$runs, 1, 'CopilotKit: aborted before the first token')
    or diag explain $runs;
is($runs->[0]{status}, 'interrupted', '... the server\'s run cancelled');
my $tid = $o{abort_thread} // '-';
my @cancels = grep { m{/threads/$tid/runs/[^/]+/cancel} }
              split /\n/, $t->slurp('lg.log');
ok(@cancels, '... a cancel sent');
is_deeply([ grep { !m{/runs/\Q$runs->[0]{run_id}\E/cancel\S* HTTP/1\.1" 20}
                 } @cancels ], [], '... each to the run\'s id, answered 2xx')
    or diag explain \@cancels;
ok($o{after_abort} && !$o{after_abort}{error},
   '... the next run on the thread runs') or diag explain $o{after_abort};

# messages-tuple alone: the text streamed
$r = $o{tuple};
ok($r && !$r->{error}, 'CopilotKit: streamMode messages-tuple alone');
is(join('', map { $_->{delta} // '' } grep { $_->{type} eq
       'TEXT_MESSAGE_CONTENT' } @{ $r->{events} }), 'Hello, you said tuple',
   '... the text streamed as TEXT_MESSAGE_CONTENT') or diag explain types($r);
}

$t->stop;
$t->check_log;
done_testing;
