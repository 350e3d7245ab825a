#!/usr/bin/perl
# What LangGraph's clients expect of agent_langgraph_api's shapes (issue
# 30, items 2 and 3): a tool's result that is text is a plain string, not
# JSON text; a run whose input has no message ("messages": []) runs, not
# 413; a thread's metadata is patched (merged), names the graph and the
# assistant of its runs, and threads are searched by it.  A template node
# with role=tool answers tool calls as a LangGraph function node that
# returns a ToolMessage does, "{{messages.last}}" is the last message's
# text; "events" mode sends no on_chain_stream of the graph, as
# LangGraph's servers do.  A client's own message ids are kept, a message
# with one replaces the message that has it (add_messages), in a copy too.
# A thread made with supersteps has them as its history.  An input on a
# thread that waits goes over the wait (Agent Chat UI's message while an
# approval waits, with the tool messages it adds).  Images in LangChain's
# content blocks reach the model and are stored with the message.

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
    return { text => 'done' } if grep { $_->{role} eq 'tool' } @m;
    return { tools => [ [ 'c1', 'lookup', '{"q": "x"}' ] ] };
});

my $conf = $t->conf(http => <<'HTTP');
agent_tool lookup location=/lookup "description=Looks up";
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
agent_graph echo {
    node agent llm tools=lookup;
    node tool template role=tool "text=answered {{messages.last}}";
    node say template "text=you said: {{messages.last}}";
    edge START say;
    edge say agent;
    edge agent tool if=tool_calls;
    edge agent END;
    edge tool agent;
}
HTTP
$conf =~ s{(location /api/chat/)}{location = /lookup { return 200 "tool_call__begin"; }
    location /lg/ { agent_langgraph_api; agent_use_graph loop;
        agent_assistants echo guard; }
    $1};
$t->run($conf);

sub lg { my ($m, $p, $b) = @_; return $t->http($m, "/lg$p", $b) }

my $th = lg('POST', '/threads', {})->{json}{thread_id};
my $r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'loop',
    input => { messages => [ { role => 'user', content => 'go' } ] } });
is($r->{status}, 200, 'a run with a tool call');
my ($tool) = grep { $_->{type} eq 'tool' } @{ $r->{json}{messages} };
is($tool->{content}, 'tool_call__begin',
   'a tool result that is text is a plain string');
is($r->{json}{messages}[-1]{content}, 'done', 'the model answered after');

$r = lg('GET', "/threads/$th/state");
($tool) = grep { $_->{type} eq 'tool' } @{ $r->{json}{values}{messages} };
is($tool->{content}, 'tool_call__begin', 'in the state too');

$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'loop',
    input => { messages => [] } });
isnt($r->{status}, 413, 'an input with no message is no size limit');
is($r->{status}, 200, '... it runs');

# config.recursion_limit: fewer steps, LangGraph's error name
my $t3 = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$t3/runs/wait", { assistant_id => 'loop',
    config => { recursion_limit => 1 },
    input => { messages => [ { role => 'user', content => 'go' } ] } });
is($r->{json}{__error__}{error}, 'GraphRecursionError',
   'recursion_limit 1: GraphRecursionError');
like($r->{json}{__error__}{message}, qr/1 steps/, '... after one step');
is(lg('GET', "/threads/$t3")->{json}{status}, 'error',
   'the thread of a failed run is in error');
is(lg('POST', "/threads/$t3/runs/wait", { assistant_id => 'loop',
    config => { recursion_limit => 'x' }, input => {} })->{status}, 422,
   'recursion_limit is a number');
is(lg('GET', "/threads/$th")->{json}{status}, 'idle',
   'one whose last run ended well is idle');

# a failed run's error is its stream's last event, after debug and events
my $t4 = lg('POST', '/threads', {})->{json}{thread_id};
my $st = $t->stream("/lg/threads/$t4/runs/stream", encode_json({
    assistant_id => 'loop', config => { recursion_limit => 1 },
    stream_mode => [ 'debug', 'events' ],
    input => { messages => [ { role => 'user', content => 'go' } ] } }));
my @names = map { $_->{_event} } @{ $st->{events} };
is($names[-1], "error", "the error is the last event") or diag($st->{raw});
is($st->{events}[-1]{_json}{error}, 'GraphRecursionError', '... named');

# stream_mode "messages": the message so far at each chunk, then whole
my $t5 = lg('POST', '/threads', {})->{json}{thread_id};
$st = $t->stream("/lg/threads/$t5/runs/stream", encode_json({
    assistant_id => 'loop', stream_mode => [ 'messages', 'values' ],
    input => { messages => [ { role => 'user', content => 'go' } ] } }));
my @ev = @{ $st->{events} };
my %seen = map { ($_->{_event} // '') => 1 } @ev;
is_deeply([ sort keys %seen ], [ sort qw(metadata messages/metadata
    messages/partial messages/complete values) ],
    'messages mode: metadata, partial, complete') or diag(join ' ',
    map { $_->{_event} } @ev);
is($ev[-1]{_event}, 'messages/complete', 'a message whole is the last');
is($ev[-1]{_json}[0]{content}, 'done', '... the answer');
my @partial = grep { $_->{_event} eq 'messages/partial' } @ev;
is($partial[-1]{_json}[0]{content}, 'done',
   'the last partial holds the whole text');
is($partial[-1]{_json}[0]{id}, $ev[-1]{_json}[0]{id}, '... of that message');
my @complete = map { $_->{_json}[0]{type} }
               grep { $_->{_event} eq 'messages/complete' } @ev;
is_deeply(\@complete, [ qw(ai tool ai) ],
          'each message the run adds, once');

# threads and their metadata
my $md = lg('GET', "/threads/$th")->{json}{metadata};
is($md->{graph_id}, 'loop', 'a thread names the graph of its runs');
like($md->{assistant_id}, qr/^[0-9a-f-]{36}$/, '... and the assistant');

my $t2 = lg('POST', '/threads', { metadata => { team => 'a', n => 1 } })
    ->{json}{thread_id};
$r = lg('PATCH', "/threads/$t2", { metadata => { n => 2, tag => 'x y' } });
is($r->{status}, 200, 'PATCH /threads/{id}');
is_deeply($r->{json}{metadata}, { team => 'a', n => 2, tag => 'x y' },
          'its metadata merged');
is_deeply(lg('GET', "/threads/$t2")->{json}{metadata},
          { team => 'a', n => 2, tag => 'x y' }, 'and kept');
is(lg('PATCH', "/threads/$t2", { metadata => [] })->{status}, 422,
   'metadata is an object');
is(lg('PATCH', '/threads/nope', { metadata => {} })->{status}, 404,
   'an unknown thread');

$r = lg('POST', '/threads/search', { metadata => { team => 'a' } });
is_deeply([ map { $_->{thread_id} } @{ $r->{json} } ], [ $t2 ],
          'threads/search by metadata');
$r = lg('POST', '/threads/search', { metadata => { graph_id => 'loop' } });
is_deeply([ map { $_->{thread_id} } @{ $r->{json} } ], [ $t5, $t4, $t3, $th ],
          '... by the graph of its runs');
$r = lg('POST', '/threads/search', { metadata => { team => 'b' } });
is_deeply($r->{json}, [], '... none');
$r = lg('POST', '/threads/search', { metadata => {} });
is(scalar @{ $r->{json} }, 5, 'an empty filter: all');
is(lg('POST', '/threads/search', { metadata => 'x' })->{status}, 422,
   'a filter is an object');
is(lg('POST', '/threads/count', {})->{json}, 5, 'threads/count');
is(lg('POST', '/threads/count', { metadata => { graph_id => 'loop' } })
   ->{json}, 4, '... by metadata');
is(lg('POST', '/threads/count', { metadata => { team => 'b' } })->{json}, 0,
   '... none');
$r = lg('POST', '/threads/search', { sort_by => 'created_at',
                                      sort_order => 'asc' });
is_deeply([ map { $_->{thread_id} } @{ $r->{json} } ],
          [ $th, $t3, $t4, $t5, $t2 ], 'oldest first');
$r = lg('POST', '/threads/search', { sort_order => 'desc' });
is_deeply([ map { $_->{thread_id} } @{ $r->{json} } ],
          [ $t2, $t5, $t4, $t3, $th ], 'newest first');
$r = lg('POST', "/threads/$th/history", { limit => 10000 });
is($r->{status}, 200, 'a history of limit 10000 is a page of 1000');
ok(@{ $r->{json} } >= 2, '... with the thread\'s checkpoints');

# a template that answers tool calls; the last message's text
my $t6 = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$t6/runs/wait", { assistant_id => 'echo',
    input => { messages => [ { role => 'user', content => 'go' } ] } });
my @m = @{ $r->{json}{messages} };
is($m[1]{content}, 'you said: go', '{{messages.last}}: the last message');
is_deeply([ map { $_->{type} } @m ], [ qw(human ai ai tool ai) ],
          'role=tool: a tool message after the call') or diag explain \@m;
is($m[3]{tool_call_id}, 'c1', '... answering it');
is($m[3]{content}, 'answered ', '... with the text (the call had none)');
is($m[-1]{content}, 'done', '... and the model went on');

# events mode: no on_chain_stream of the graph; a tools node's tool events
for my $g ([ 'echo', [] ], [ 'loop', [ 'on_tool_end', 'on_tool_start' ] ]) {
    my $tt = lg('POST', '/threads', {})->{json}{thread_id};
    $st = $t->stream("/lg/threads/$tt/runs/stream", encode_json({
        assistant_id => $g->[0], stream_mode => [ 'events' ],
        input => { messages => [ { role => 'user', content => 'go' } ] } }));
    my %k = map { $_->{_json}{event} => 1 }
            grep { ($_->{_event} // '') eq 'events' } @{ $st->{events} };
    is_deeply([ sort keys %k ], [ sort qw(on_chain_start on_chain_end
        on_chat_model_start on_chat_model_stream on_chat_model_end),
        @{ $g->[1] } ], "events of $g->[0]: LangGraph's kinds");
}

# a client's own message ids
my $t7 = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$t7/runs/wait", { assistant_id => 'echo',
    input => { messages => [ { type => 'human', content => 'foo',
                               id => 'initial-message' } ] } });
is($r->{json}{messages}[0]{id}, 'initial-message', 'a client\'s id is kept');
like($r->{json}{messages}[1]{id}, qr/^\Q$t7\E-1$/, '... ours for the rest');
is(lg('POST', "/threads/$t7/state", { values => { messages => [
    { type => 'human', content => 'bar', id => 'initial-message' } ] } })
   ->{status}, 200, 'a state update with that id');
my $v = lg('GET', "/threads/$t7/state")->{json}{values}{messages};
is_deeply([ map { $_->{content} } @$v[0, 1] ], [ 'bar', 'you said: foo' ],
          '... replaces that message, in place');
is($v->[0]{id}, 'initial-message', '... which keeps its id');
$r = lg('POST', "/threads/$t7/runs/wait", { assistant_id => 'echo',
    input => { messages => [ { type => 'human', content => 'again',
                               id => 'second' } ] } });
is_deeply([ map { $_->{id} } @{ $r->{json}{messages} }[0, 5] ],
          [ 'initial-message', 'second' ],
          'both kept through the next run (read back from the store)');
is($r->{json}{messages}[0]{content}, 'bar', '... the edit too');
my $c7 = lg('POST', "/threads/$t7/copy", {})->{json}{thread_id};
is(lg('GET', "/threads/$c7/state")->{json}{values}{messages}[0]{id},
   'initial-message', 'a copy keeps them');
is(lg('POST', "/threads/$t7/runs/wait", { assistant_id => 'echo',
    input => { messages => [ { type => 'human', content => 'x',
                               id => 'y' x 257 } ] } })->{status}, 422,
   'an id past 256 bytes: 422');

# a thread made with a history: supersteps
my $n0 = lg('POST', '/threads/count', {})->{json};
my $hi = { type => 'human', content => 'foo', id => 'h1' };
$r = lg('POST', '/threads', { graph_id => 'echo', supersteps => [
    { updates => [ { as_node => '__input__',
                     values => { messages => [ $hi ] } } ] },
    { updates => [ { as_node => '__start__',
                     values => { messages => [ $hi ] } } ] },
    { updates => [ { as_node => 'say', values => { messages => [
        { type => 'ai', content => 'you said: foo', id => 'a1' } ] } } ] },
] });
is($r->{status}, 200, 'POST /threads with supersteps') or diag($r->{content});
my $ts = $r->{json}{thread_id};
is($r->{json}{metadata}{graph_id}, 'echo', '... names its graph');
my $hs = lg('POST', "/threads/$ts/history", {})->{json};
is_deeply([ map { $_->{metadata}{step} } @$hs ], [ 1, 0, -1 ],
          'a checkpoint per superstep');
is_deeply([ map { $_->{next} } @$hs ], [ [ 'agent' ], [ 'say' ],
          [ '__start__' ] ], '... each next as the graph routes');
is_deeply([ map { scalar @{ $_->{values}{messages} } } @$hs ], [ 2, 1, 0 ],
          '... "__input__" the input, which "__start__" writes');
is_deeply([ map { $_->{id} } @{ $hs->[0]{values}{messages} } ], [ 'h1', 'a1' ],
          '... the messages with their ids');
is(lg('POST', '/threads', { supersteps => [ { updates => [
    { as_node => 'nope', values => {} } ] } ] })->{status}, 422,
   'a superstep of no node: 422');
is(lg('POST', '/threads', { supersteps => [ { updates => [
    { as_node => 'say', values => {} }, { as_node => 'say', values => {} }
] } ] })->{status}, 422, 'two updates in one superstep: 422');
is(lg('POST', '/threads', { graph_id => 'hidden', supersteps => [] })
   ->{status}, 404, 'a graph the location does not serve: 404');
is(lg('POST', '/threads', { supersteps => [
    { updates => [ { as_node => 'say', values => {} } ] },
    { updates => [ { as_node => 'say', values => { messages => [
        { type => 'robot', content => 'x' } ] } } ] } ] })->{status}, 422,
   'a message a later superstep cannot write: 422');
is(lg('POST', '/threads', { supersteps => [ map { { updates => [
    { as_node => 'say', values => { messages => [ ('m') x 60 ] } } ] } }
    1 .. 17 ] })->{status}, 422, 'more than 1000 messages in all: 422');
is(lg('POST', '/threads/count', {})->{json}, $n0 + 1,
   '... and no thread made by a refused one');
$r = lg('POST', '/threads', { graph_id => 'echo', supersteps => [ map { {
    updates => [ { as_node => 'say', values => { messages => [
        { type => 'ai', content => "step $_" } ] } } ] } } 1 .. 40 ] });
is(scalar @{ lg('POST', "/threads/$r->{json}{thread_id}/history",
                { limit => 100 })->{json} }, 40, '40 supersteps, 40 steps');

# an input on a thread that waits: over the wait, as LangGraph's
my $tg = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$tg/runs/wait", { assistant_id => 'guard',
    input => { messages => [ { role => 'user', content => 'go' } ] } });
ok($r->{json}{__interrupt__}, 'an approval waits');
$r = lg('POST', "/threads/$tg/runs/wait", { assistant_id => 'guard',
    input => { messages => [
        { type => 'tool', tool_call_id => 'c1',
          content => 'Successfully handled tool call.' },
        { type => 'human', content => 'something else' } ] } });
is($r->{status}, 200, 'a message with the tool message Agent Chat UI adds')
    or diag($r->{content});
is_deeply([ map { $_->{type} } @{ $r->{json}{messages} } ],
          [ qw(human ai tool human ai) ], '... runs from the start')
    or diag explain $r->{json}{messages};
ok(!$r->{json}{__interrupt__}, '... the wait dropped');
is(lg('GET', "/threads/$tg")->{json}{status}, 'idle', '... the thread idle');

# images in content blocks
my $png = 'iVBORw0KGgo=';
my $ti = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$ti/runs/wait", { assistant_id => 'loop',
    input => { messages => [ { type => 'human', content => [
        { type => 'text', text => 'look' },
        { type => 'image', mimeType => 'image/png', data => $png },
        { type => 'image_url',
          image_url => { url => "data:image/jpeg;base64,/9j/4AAQSkZJRg==" } },
    ] } ] } });
is($r->{status}, 200, 'a message with image blocks') or diag($r->{content});
my ($seen) = grep { ref $_->{content} eq 'ARRAY' }
             map { @{ $_->{body}{messages} // [] } } $t->{mock}->requests;
is_deeply([ map { $_->{image_url}{url} // $_->{text} }
            @{ $seen->{content} // [] } ],
          [ 'look', "data:image/png;base64,$png",
            'data:image/jpeg;base64,/9j/4AAQSkZJRg==' ],
          '... the images reach the model with the text');
is_deeply([ map { $_->{type} } @{ $r->{json}{messages}[0]{content} } ],
          [ qw(text image image) ], '... and are kept with the message');
$r = lg('POST', "/threads/$ti/runs/wait", { assistant_id => 'loop',
    input => { messages => [ { type => 'human', content => [
        { type => 'image', mimeType => 'image/png', data => $png } ] } ] } });
is($r->{status}, 200, 'an image alone');

# a PDF as Agent Chat UI attaches it: a file block
my $pdf = 'JVBERi0xLjQKJcfsj6IK';
$r = lg('POST', "/threads/$ti/runs/wait", { assistant_id => 'loop',
    input => { messages => [ { type => 'human', content => [
        { type => 'text', text => 'read this' },
        { type => 'file', source_type => 'base64',
          mime_type => 'application/pdf', data => $pdf,
          metadata => { filename => 'a.pdf' } } ] } ] } });
is($r->{status}, 200, 'a PDF in a file block') or diag($r->{content});
($seen) = grep { ref $_->{content} eq 'ARRAY'
                 && grep { $_->{type} eq 'file' } @{ $_->{content} } }
          map { @{ $_->{body}{messages} // [] } } $t->{mock}->requests;
is_deeply($seen->{content}[1], { type => 'file', file => {
    filename => 'document.pdf',
    file_data => "data:application/pdf;base64,$pdf" } },
    '... reaches the model as a file part');
my ($kept) = grep { $_->{content} && ref $_->{content}
                    && ($_->{content}[0]{text} // '') eq 'read this' }
             @{ $r->{json}{messages} };
is_deeply($kept->{content}[1], { type => 'file',
                                 mimeType => 'application/pdf',
                                 data => $pdf },
          '... and is kept with the message as a file block');
for my $bad ([ { type => 'image_url', image_url => 'https://x/y.png' },
               'a remote image' ],
             [ { type => 'file', source_type => 'url',
                 url => 'https://x/y.pdf', mime_type => 'application/pdf' },
               'a file by URL' ],
             [ { type => 'file', mimeType => 'application/pdf',
                 data => $png }, 'a PNG declared a PDF' ],
             [ { type => 'audio', mimeType => 'audio/wav',
                 data => 'UklGRg==' }, 'audio' ],
             [ { type => 'image', mimeType => 'image/tiff', data => $png },
               'a TIFF' ]) {
    isnt(lg('POST', "/threads/$ti/runs/wait", { assistant_id => 'loop',
        input => { messages => [ { type => 'human', content => [
            { type => 'text', text => 'x' }, $bad->[0] ] } ] } })->{status},
         200, "$bad->[1]: refused");
}

done_testing;
