#!/usr/bin/perl
# CopilotKit's LangGraph agent (issue 30, item 8): @ag-ui/langgraph's
# LangGraphAgent from npm, unchanged, with its deploymentUrl at
# agent_langgraph_api, as CopilotKit's runtime uses it: it streams text
# and tool calls as AG-UI events, runs twice on one thread without
# duplicating messages, aborts (the server's run is cancelled), and
# resumes an interrupt through forwardedProps.command.resume.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $root = "$FindBin::Bin/..";
my $dir = AgentTest::npm('agui', '@ag-ui/langgraph',
                         '@ag-ui/langgraph@0.0.43', '@ag-ui/client@1.0.0');

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my $last = $m[$u]{content};
    if ($req->{tools}) {
        return { text => 'the tool said ' . $m[-1]{content} }
            if $m[-1]{role} eq 'tool';
        return { tools => [ [ 'c1', 'lookup', '{"q": "x"}' ] ] };
    }
    return { text => 'one two three four five six seven eight',
             pieces => [ map { "$_ " } qw(one two three four five six
                                           seven eight) ],
             delay => 0.3 } if $last eq 'slow';
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
$conf =~ s{(location /api/chat/)}{location = /lookup { return 200 "found"; }
    location /lg/ { agent_langgraph_api; agent_use_graph chat;
        agent_assistants loop approval; }
    $1};
$t->run($conf);

my $url = 'http://127.0.0.1:' . $t->port . '/lg';
my %o = AgentTest::observe("$root/t/lg/copilotkit.mjs", $dir, $url);

sub types { [ map { $_->{type} } @{ $_[0]{events} } ] }
sub has { my ($r, $type) = @_; scalar grep { $_ eq $type } @{ types($r) } }

# text
my $r = $o{text};
ok(!$r->{error}, 'a run: no error') or diag explain $r;
is(types($r)->[0], 'RUN_STARTED', 'RUN_STARTED first');
is(types($r)->[-1], 'RUN_FINISHED', 'RUN_FINISHED last');
ok(has($r, 'TEXT_MESSAGE_START') && has($r, 'TEXT_MESSAGE_END'),
   'the answer as a text message');
is(join('', map { $_->{delta} // '' } grep { $_->{type} eq
       'TEXT_MESSAGE_CONTENT' } @{ $r->{events} }), 'Hello, you said hi',
   '... streamed');
is_deeply([ map { [ $_->{role}, $_->{content} ] } @{ $r->{messages} } ],
          [ [ 'user', 'hi' ], [ 'assistant', 'Hello, you said hi' ] ],
          'the agent\'s messages');

# twice on one thread
$r = $o{again};
ok(!$r->{error}, 'a second run on the thread') or diag explain $r;
is_deeply([ map { $_->{content} } @{ $r->{messages} } ],
          [ 'hi', 'Hello, you said hi', 'again', 'Hello, you said again' ],
          '... the agent\'s messages, none twice');
is_deeply([ map { $_->{content} } @{ $o{again_state}{values}{messages} } ],
          [ 'hi', 'Hello, you said hi', 'again', 'Hello, you said again' ],
          '... nor in the thread');

# tool calls
$r = $o{tools};
ok(!$r->{error}, 'a run with a tool call') or diag explain $r;
my ($start) = grep { $_->{type} eq 'TOOL_CALL_START' } @{ $r->{events} };
is($start->{toolCallName}, 'lookup', 'TOOL_CALL_START names the tool');
ok(has($r, 'TOOL_CALL_ARGS') && has($r, 'TOOL_CALL_END'),
   '... its arguments and end');
my ($res) = grep { $_->{type} eq 'TOOL_CALL_RESULT' } @{ $r->{events} };
is($res->{content}, 'found', 'TOOL_CALL_RESULT: the tool\'s answer')
    or diag explain types($r);
like($o{tools_state}{values}{messages}[-1]{content}, qr/^the tool said "?found"?$/,
   'then the answer') or diag explain $o{tools_state}{values}{messages};

# the agent's messages: the adapter gives its TOOL_CALL_RESULT a random id
# of its own, so its last MESSAGES_SNAPSHOT puts the thread's tool message
# after the messages it kept (the same with LangGraph's own server)
is_deeply([ sort map { $_->{role} } @{ $r->{messages} } ],
          [ qw(assistant assistant tool user) ],
          '... the agent\'s messages: the call, its result and the answer')
    or diag explain $r->{messages};

# abort
ok(has($o{abort}, 'TEXT_MESSAGE_CONTENT'), 'a slow run streams');
my $runs = $o{abort_runs} // [];
is($runs->[0]{status}, 'interrupted', 'aborted: the server\'s run is '
   . 'cancelled') or diag explain $runs;

# an interrupt, resumed
$r = $o{ask};
ok(!$r->{error}, 'a run that stops at an interrupt') or diag explain $r;
my ($int) = grep { ($_->{name} // '') eq 'on_interrupt' } @{ $r->{events} };
ok($int, '... said as CopilotKit\'s on_interrupt event')
    or diag explain types($r);
$r = $o{resume};
ok(!$r->{error}, 'resumed through forwardedProps.command.resume')
    or diag explain $r;
is($o{resume_state}{values}{answer}, 'yes', '... the answer written');
is($o{resume_state}{values}{messages}[-1]{content}, 'you said yes',
   '... and the graph went on');

$t->stop;
$t->check_log;
done_testing;
