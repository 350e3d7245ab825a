#!/usr/bin/perl
# LangGraph's runtime API over agent_langgraph_api (issue 30, items 2 and
# 4): a run's `context` reaches the channels it names, under its input and
# over its assistant's; a graph's `output` statement is a run's output (its
# values and updates events, a wait's answer) while the state keeps every
# channel; the `fail` node kind fails a run with an error name and message
# of the graph's, as a node that raises does; a run's error is kept, so a
# join after it ended, or a join of a run that was not resumable, ends with
# it; every run's answer says where the run is (Content-Location).  Then
# what nginx -t says of a bad `output` or `fail`.  after_seconds: a run
# "pending" that holds its thread until its graph runs, or is cancelled.
# interrupt_if=: a node that waits on a condition, with a value, its
# answer written to interrupt_resume=.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use Time::HiRes qw(sleep);

my $t = AgentTest->new;
$t->mock(sub { { text => 'hello' } });

my $graphs = <<'HTTP';
agent_graph ctx {
    channel model value default="unknown";
    channel note value;
    output model;

    node use template output=model "text=model {{model}}";
    edge START use;
    edge use END;
}
agent_graph boom {
    channel why value 'default="no reason"';

    node greet template text=hi;
    node fail fail error=CustomError "message=Boo: {{why}}";
    edge START greet;
    edge greet fail;
    edge fail END;
}
agent_graph asker {
    channel want value;
    channel got value scope=turn;
    node answer template output=got "text=got {{got}}"
        "interrupt_if=want && !got" "interrupt_value=may I? {{want}}"
        interrupt_resume=got;
    edge START answer;
    edge answer END;
}
agent_graph quiet {
    node fail fail "message=plain";
    edge START fail;
    edge fail END;
}
HTTP

my $conf = $t->conf(http => $graphs);
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
        agent_use_graph ctx; agent_assistants boom quiet asker; }
    location /api/boom/ { agent_chat; agent_use_graph boom; }
    $1};
$t->run($conf);

sub lg { my ($m, $p, $b) = @_; return $t->http($m, "/lg$p", $b) }

my $in = { messages => [ { role => 'user', content => 'go' } ] };

# --- context and output -----------------------------------------------------

my $th = lg('POST', '/threads', {})->{json}{thread_id};
my $r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'ctx',
    input => $in, context => { model => 'openai' } });
is($r->{status}, 200, 'a run with a context');
is_deeply($r->{json}, { model => 'model openai' },
          'its answer: the output channels alone, the context in them');
like($r->{headers}{'content-location'} // '',
     qr{^/threads/\Q$th\E/runs/[0-9a-f-]{36}$},
     'a wait says where its run is (Content-Location)');

my $state = lg('GET', "/threads/$th/state")->{json};
is($state->{values}{model}, 'model openai', 'the state has the output');
is(scalar @{ $state->{values}{messages} }, 1,
   'and every other channel: the messages');
ok(!exists $state->{values}{note},
   '... not a channel never written (no value, as LangGraph shows it)');

$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'ctx',
    input => { %$in, model => 'mine' }, context => { model => 'openai' } });
is($r->{json}{model}, 'model mine', 'the input wins over the context');

$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'ctx',
    input => $in, context => { nothing => 1, messages => [ 'x' ] } });
is($r->{status}, 200, 'context keys that are no channel are not the graph\'s');

# an assistant's context under the run's
my $as = lg('POST', '/assistants', { graph_id => 'ctx',
                                      context => { model => 'anthropic' } });
my $aid = $as->{json}{assistant_id};
$r = lg('POST', '/runs/wait', { assistant_id => $aid, input => $in });
is_deeply($r->{json}, { model => 'model anthropic' },
          'a stateless run gets its assistant\'s context');
like($r->{headers}{'content-location'} // '', qr{/runs/[0-9a-f-]{36}$},
     '... and says where it is');
$r = lg('POST', '/runs/wait', { assistant_id => $aid, input => $in,
                                context => { model => 'openai' } });
is($r->{json}{model}, 'model openai', 'the run\'s context over the assistant\'s');
$r = lg('POST', '/runs/wait', { assistant_id => 'ctx', input => $in });
is($r->{json}{model}, 'model unknown',
   'none: the channel\'s default (a graph\'s own assistant)');

# the stream: values and updates events of the output channels
my $st = $t->stream('/lg/runs/stream', encode_json({ assistant_id => 'ctx',
    input => $in, context => { model => 'x' },
    stream_mode => [ 'values', 'updates' ] }));
my @values = map { $_->{_json} } grep { $_->{_event} eq 'values' }
                                      @{ $st->{events} };
ok(@values >= 2, 'values events');
is_deeply([ map { [ sort keys %$_ ] } @values ],
          [ map { [ 'model' ] } @values ],
          'each of them the output channels only');
is($values[-1]{model}, 'model x', 'the last one the answer');
my ($upd) = grep { $_->{_event} eq 'updates' } @{ $st->{events} };
is_deeply($upd->{_json}, { use => { model => 'model x' } },
          'an update: the output channels the node wrote');

# --- the fail node ----------------------------------------------------------

my $tb = lg('POST', '/threads', {})->{json}{thread_id};
$st = $t->stream("/lg/threads/$tb/runs/stream", encode_json({
    assistant_id => 'boom', input => { %$in, why => 'tests' },
    stream_mode => [ 'values', 'debug' ] }));
my $last = $st->{events}[-1];
is($last->{_event}, 'error', 'a fail node: the stream ends with an error');
is_deeply($last->{_json}, { error => 'CustomError', message => 'Boo: tests' },
          'its name and its message, the template rendered');
is(lg('GET', "/threads/$tb")->{json}{status}, 'error',
   'the thread is in error');
my @runs = @{ lg('GET', "/threads/$tb/runs")->{json} };
is($runs[0]{status}, 'error', 'the run too');
is(lg('GET', "/threads/$tb/state")->{json}{values}{messages}[-1]{content},
   'hi', 'what the nodes before it wrote is kept');

$r = lg('POST', '/runs/wait', { assistant_id => 'boom', input => $in });
is_deeply($r->{json}{__error__},
          { error => 'CustomError', message => 'Boo: no reason' },
          'a wait answers its __error__');

$r = lg('POST', '/runs/wait', { assistant_id => 'quiet', input => $in });
is($r->{json}{__error__}{error}, 'node_failed',
   'no error=: node_failed');

# our own chat API: the error event, the same words
my $sid = $t->http('POST', '/api/sessions/', {})->{json}{id};
my $ct = $t->stream("/api/boom/$sid/message", encode_json({ message => "go" }));
my ($err) = grep { ($_->{type} // '') eq 'error' } @{ $ct->{events} };
diag(explain($ct)) unless $err;
is($err->{code}, 'CustomError', 'the chat API\'s error event: its code');
is($err->{error}, 'Boo: no reason', '... its words');

# --- a join after the end ---------------------------------------------------

# a background run, not resumable: its join still ends with its error
my $tj = lg('POST', '/threads', {})->{json}{thread_id};
my $bg = lg('POST', "/threads/$tj/runs", { assistant_id => 'boom',
                                           input => $in });
is($bg->{status}, 200, 'a background run whose graph ends at once: its '
                       . 'record answered first') or diag($bg->{content});
my $run = $bg->{json};
ok(AgentTest::wait_for(sub {
    lg('GET', "/threads/$tj/runs/$run->{run_id}")->{json}{status} eq 'error'
}, 10), 'a background run that fails: error');
$st = $t->stream("/lg/threads/$tj/runs/$run->{run_id}/stream", '',
                 method => 'GET');
is($st->{events}[-1]{_event}, 'error', 'joined after its end: its error');
is($st->{events}[-1]{_json}{error}, 'CustomError', '... the graph\'s name');

# a streamed run, not resumable, joined after its end
$tj = lg('POST', '/threads', {})->{json}{thread_id};
$st = $t->stream("/lg/threads/$tj/runs/stream", encode_json({
    assistant_id => 'boom', input => $in }));
my $rid = lg('GET', "/threads/$tj/runs")->{json}[0]{run_id};
$st = $t->stream("/lg/threads/$tj/runs/$rid/stream", '', method => 'GET');
is_deeply([ map { $_->{_event} } @{ $st->{events} } ], [ 'error' ],
          'a stream that was not resumable: its join has the error alone');

# resumable: every event, the error last, once
$tj = lg('POST', '/threads', {})->{json}{thread_id};
my $first = $t->stream("/lg/threads/$tj/runs/stream", encode_json({
    assistant_id => 'boom', input => $in, stream_resumable => JSON::PP::true,
    stream_mode => [ 'values' ] }));
$rid = lg('GET', "/threads/$tj/runs")->{json}[0]{run_id};
$st = $t->stream("/lg/threads/$tj/runs/$rid/stream", '', method => 'GET');
is_deeply([ map { $_->{_event} } @{ $st->{events} } ],
          [ map { $_->{_event} } @{ $first->{events} } ],
          'a resumable one: the same events as its stream, the error once');

# --- after_seconds: a pending run --------------------------------------------

# 5 s: room for the reads below on a busy machine before it runs
my $tp = lg('POST', '/threads', {})->{json}{thread_id};
my $p = lg('POST', "/threads/$tp/runs", { assistant_id => 'ctx',
                                          input => $in, after_seconds => 5 });
is($p->{json}{status}, 'pending', 'after_seconds: the run is pending');
is(scalar @{ lg('GET', "/threads/$tp/runs?status=pending")->{json} }, 1,
   '... listed as pending');
is(lg('GET', "/threads/$tp")->{json}{status}, 'busy', '... its thread busy');
is(lg('POST', "/threads/$tp/state", { values => { note => 'x' } })->{status},
   409, '... and not written to meanwhile');
ok(AgentTest::wait_for(sub {
    lg('GET', "/threads/$tp/runs/$p->{json}{run_id}")->{json}{status}
        eq 'success' }, 30), 'then it runs to its end');
is(lg('GET', "/threads/$tp/state")->{json}{values}{model}, 'model unknown',
   '... its graph ran');

$p = lg('POST', "/threads/$tp/runs", { assistant_id => 'ctx', input => $in,
                                       after_seconds => 30 });
is($p->{json}{status}, 'pending', 'a run 30 s away');
is(lg('POST', "/threads/$tp/runs/$p->{json}{run_id}/cancel?wait=1")
   ->{status}, 204, 'cancelled while pending');
is(lg('GET', "/threads/$tp/runs/$p->{json}{run_id}")->{json}{status},
   'interrupted', '... interrupted');
is(lg('GET', "/threads/$tp")->{json}{status}, 'idle', '... its thread idle');

# not waited for (the SDK's cancel): interrupted at once, on any worker
for my $i (1 .. 4) {
    $p = lg('POST', "/threads/$tp/runs", { assistant_id => 'ctx',
                                           input => $in, after_seconds => 30 });
    is(lg('POST', "/threads/$tp/runs/$p->{json}{run_id}/cancel")->{status},
       202, "cancel $i, not waited for: 202");
    is(lg('GET', "/threads/$tp/runs/$p->{json}{run_id}")->{json}{status},
       'interrupted', '... the run interrupted at once');
    ok(AgentTest::wait_for(sub {
        lg('GET', "/threads/$tp")->{json}{status} eq 'idle' }, 10),
       '... then its thread idle');
}
for my $bad (-1, 'soon', 86401) {
    is(lg('POST', "/threads/$tp/runs", { assistant_id => 'ctx', input => $in,
                                         after_seconds => $bad })->{status},
       422, "after_seconds $bad: 422");
}

# --- interrupt_if: an interrupt() inside a node -----------------------------

my $tq = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$tq/runs/wait", { assistant_id => 'asker',
    input => { %$in, want => 'cake' } });
is_deeply($r->{json}{__interrupt__}[0]{value}, 'may I? cake',
          'interrupt_if=: the run waits with the rendered value');
$st = lg('GET', "/threads/$tq/state")->{json};
is_deeply($st->{next}, [ 'answer' ], '... at that node');
is($st->{tasks}[0]{interrupts}[0]{value}, 'may I? cake', '... its task\'s');
is(lg('GET', "/threads/$tq")->{json}{status}, 'interrupted',
   '... the thread interrupted');
$r = lg('POST', "/threads/$tq/runs/wait", { assistant_id => 'asker',
    command => { resume => 'yes' } });
is($r->{json}{got}, 'got yes', 'resumed: the answer in interrupt_resume=, '
   . 'the node ran');
$r = lg('POST', "/threads/$tq/runs/wait", { assistant_id => 'asker',
    input => { %$in, want => undef } });
is($r->{json}{got}, 'got ', 'its condition false: no wait');

# --- nginx -t ---------------------------------------------------------------

my $g = AgentTest->new;
$g->mock(sub { { text => 'x' } });

sub conf_test {
    my ($body) = @_;
    $g->write_conf($g->conf(http => "agent_graph g {\n$body\n}\n"));
    return $g->test_conf;
}

my ($ok, $out) = conf_test("node a template text=x;\n output a;\n"
                           . "edge START a;\n edge a END;");
ok(!$ok, 'output of no channel: refused');
like($out, qr/output: "a" is no channel of the graph declared before it/,
     '... and said');
($ok, $out) = conf_test("output b;\n channel b value;\n"
                        . "node a template text=x;\n edge START a;\n"
                        . "edge a END;");
ok(!$ok, 'output before its channel: refused');
($ok, $out) = conf_test("channel b value;\n output b;\n output messages;\n"
                        . "node a template text=x;\n edge START a;\n"
                        . "edge a END;");
like($out, qr/use one "output CHANNEL/, 'two output statements: refused');
($ok, $out) = conf_test("output input;\n node a template text=x;\n"
                        . "edge START a;\n edge a END;");
ok(!$ok, 'output input (ours): refused');
($ok, $out) = conf_test("channel b value;\n output b messages;\n"
                        . "node a template text=x;\n edge START a;\n"
                        . "edge a END;");
ok($ok, 'output of a channel and messages: accepted') or diag($out);

($ok, $out) = conf_test("node a fail error=X;\n edge START a;\n edge a END;");
like($out, qr/the fail node "a" needs message=/, 'a fail node without message');
($ok, $out) = conf_test("node a fail error=no-way message=m;\n"
                        . "edge START a;\n edge a END;");
like($out, qr/error=no-way: letters, digits and _ only/,
     'a fail node\'s error name is a name');

($ok, $out) = conf_test("node a template text=x interrupt_value=v;\n"
                        . "edge START a;\n edge a END;");
like($out, qr/want interrupt_if=/, 'interrupt_value= without interrupt_if=');
($ok, $out) = conf_test("node a template text=x \"interrupt_if=(\";\n"
                        . "edge START a;\n edge a END;");
like($out, qr/interrupt_if="\(" of node "a" does not parse/,
     'an interrupt_if= that does not parse');
($ok, $out) = conf_test("channel n sum;\n node a template text=x "
                        . "interrupt_if=n interrupt_resume=n;\n"
                        . "edge START a;\n edge a END;");
like($out, qr/interrupt_resume=n of node "a" names no value channel/,
     'interrupt_resume= of a sum channel');
($ok, $out) = conf_test("channel b value type=date;\n"
                        . "node a template text=x;\n edge START a;\n"
                        . "edge a END;");
like($out, qr/type=date.*one of string number integer boolean object array/,
     'a channel\'s type is one of JSON Schema\'s');
($ok, $out) = conf_test("channel b messages config=on;\n"
                        . "node a template text=x;\n edge START a;\n"
                        . "edge a END;");
like($out, qr/channel "b": messages are not configurable/,
     'messages are not configurable');
($ok, $out) = conf_test("channel b value config=on type=string enum=x,y;\n"
                        . "node a template text=x;\n edge START a;\n"
                        . "edge a END;");
ok($ok, 'config=on, type= and enum= together: accepted') or diag($out);

$t->stop;
$t->check_log;
done_testing;
