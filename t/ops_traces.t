#!/usr/bin/perl
# agent_otlp: a turn is a span tree in OpenTelemetry's GenAI conventions,
# sent as OTLP/HTTP JSON to a loopback collector (a sink here that keeps
# what it is sent): invoke_agent at the root, a span per node, chat per
# model call, execute_tool per tool call, with their attributes; an
# incoming traceparent is honoured and $agent_trace_id names the trace; a
# collector that is down or slow does not touch the turns.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use IO::Socket::INET;
use Time::HiRes qw(sleep time);
use POSIX qw(WNOHANG);

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    return { text => 'the answer: 1' } if $last->{role} eq 'tool';
    return { tools => [ [ 'call_7', 'execute_sql_query',
                          '{"query": "SELECT 1 AS one"}' ] ] }
        if ($last->{content} // '') =~ /tool/;
    return { text => 'Hello' };
});

# the collector: every request's headers and body, one JSON line each
my $dir = $t->dir;
my $sink_port = AgentTest::free_port();
my $sink = fork() // die;
if ($sink == 0) {
    # not the harness's handler: that one stops nginx and the mock
    $SIG{TERM} = sub { POSIX::_exit(0) };
    my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
                                  LocalPort => $sink_port, Listen => 16,
                                  ReuseAddr => 1) or die $!;
    while (my $c = $l->accept) {
        my ($head, $body) = ('', '');
        while (defined(my $line = <$c>)) {
            last if $line eq "\r\n";
            $head .= $line;
        }
        my ($len) = $head =~ /Content-Length: (\d+)/i;
        read($c, $body, $len // 0);
        sleep 10 if -e "$dir/sink-slow";
        open my $fh, '>>', "$dir/sink.log";
        print $fh encode_json({ head => $head, body => $body }), "\n";
        close $fh;
        print $c "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                 . "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
        close $c;
    }
    POSIX::_exit(0);
}
END { kill 'TERM', $sink if $sink }

my $conf = $t->conf(http => <<"HTTP");
agent_otlp url=http://127.0.0.1:$sink_port/v1/traces headers=X-Token=secret,X-Tenant=t1;
HTTP
$conf =~ s{(location /api/chat/ \{ agent_chat;)}{$1
            add_header X-Trace-Id \$agent_trace_id;};
$conf =~ s{(location /api/chat/)}{location = /metrics { agent_metrics; }
        $1};
$t->run($conf);

sub received {
    open my $fh, '<', "$dir/sink.log" or return ();
    return map { decode_json($_) } <$fh>;
}

sub spans_of {
    my ($trace) = @_;
    my @s;
    for my $req (received()) {
        my $b = decode_json($req->{body});
        for my $rs (@{ $b->{resourceSpans} }) {
            for my $ss (@{ $rs->{scopeSpans} }) {
                push @s, grep { $_->{traceId} eq $trace } @{ $ss->{spans} };
            }
        }
    }
    return @s;
}

sub attr {
    my ($span, $key) = @_;
    my ($a) = grep { $_->{key} eq $key } @{ $span->{attributes} };
    return undef unless $a;
    my ($v) = values %{ $a->{value} };
    return $v;
}

# 1. a turn with two model calls and a tool call
my $sid = $t->session;
my $r = $t->turn($sid, 'use a tool');
is($r->{types}[-1], 'end', 'the turn');
my $trace = $r->{headers}{'x-trace-id'};
like($trace, qr/^[0-9a-f]{32}$/, '$agent_trace_id: the trace');

my @spans;
ok(AgentTest::wait_for(sub { @spans = spans_of($trace); @spans >= 7 }, 10),
   'the collector got the turn\'s spans') or diag explain [ received() ];
my %by_id = map { $_->{spanId} => $_ } @spans;
my ($root) = grep { !$_->{parentSpanId} } @spans;
is($root->{name}, 'invoke_agent react', 'the root: invoke_agent {graph}');
is(attr($root, 'gen_ai.operation.name'), 'invoke_agent', 'its operation');
is(attr($root, 'gen_ai.conversation.id'), $sid, 'the session');
my @nodes = grep { ($_->{parentSpanId} // '') eq $root->{spanId} } @spans;
is_deeply([ map { $_->{name} } sort { $a->{startTimeUnixNano}
                                      <=> $b->{startTimeUnixNano} } @nodes ],
          [qw(load_csv_metadata model tools model)],
          'a span per node under the root, in order');
my @chat = grep { $_->{name} =~ /^chat / } @spans;
is(scalar @chat, 2, 'two model calls');
is($chat[0]{name}, 'chat mock-1', 'chat {model}');
is($by_id{ $chat[0]{parentSpanId} }{name}, 'model', 'under the model node');
is($chat[0]{kind}, 3, 'a client span');
is(attr($chat[0], 'gen_ai.operation.name'), 'chat', 'gen_ai.operation.name');
is(attr($chat[0], 'gen_ai.provider.name'), 'openai', 'gen_ai.provider.name');
is(attr($chat[0], 'gen_ai.request.model'), 'mock-1', 'gen_ai.request.model');
is(attr($chat[0], 'gen_ai.response.model'), 'mock-1',
   'gen_ai.response.model');
like(attr($chat[0], 'gen_ai.usage.input_tokens'), qr/^\d+$/,
     'input tokens, as OTLP JSON writes 64-bit integers');
ok(attr($chat[1], 'gen_ai.usage.output_tokens') > 0, 'output tokens');
ok(defined attr($chat[0], 'gen_ai.response.time_to_first_chunk'),
   'time to the first chunk');
my ($tool) = grep { $_->{name} =~ /^execute_tool / } @spans;
is($tool->{name}, 'execute_tool execute_sql_query', 'execute_tool {name}');
is($by_id{ $tool->{parentSpanId} }{name}, 'tools', 'under the tools node');
is(attr($tool, 'gen_ai.tool.name'), 'execute_sql_query', 'gen_ai.tool.name');
is(attr($tool, 'gen_ai.tool.call.id'), 'call_7', 'gen_ai.tool.call.id');
ok(!(grep { $_->{startTimeUnixNano} > $_->{endTimeUnixNano} } @spans),
   'every span ends after it starts');
ok(!(grep { $_->{startTimeUnixNano} < $root->{startTimeUnixNano}
            || $_->{endTimeUnixNano} > $root->{endTimeUnixNano} } @spans),
   'within the root');
ok(!(grep { defined attr($_, 'gen_ai.input.messages') } @spans),
   'no message contents');
my ($req) = received();
like($req->{head}, qr{^POST /v1/traces }, 'POST /v1/traces');
like($req->{head}, qr/X-Token: secret/i, 'with the configured headers');
like($req->{head}, qr/X-Tenant: t1/i, 'all of them');
like($req->{head}, qr{Content-Type: application/json}i, 'as JSON');

# the bodies against OpenTelemetry's own encoder (otlp-transformer, npm)
SKIP: {
    my $otlp = AgentTest->root . '/build/otlp';
    system('sh', '-c', "mkdir -p $otlp && npm install --prefix $otlp "
           . '@opentelemetry/otlp-transformer@0.223.1 --no-audit --no-fund '
           . '--loglevel=error >/dev/null 2>&1')
        unless -d "$otlp/node_modules/\@opentelemetry/otlp-transformer";
    skip 'no @opentelemetry/otlp-transformer from npm', 2
        unless -d "$otlp/node_modules/\@opentelemetry/otlp-transformer";
    my $out = `node ${\ AgentTest->root}/t/otlp/shape.mjs $otlp $dir/sink.log`;
    my $shape = eval { decode_json($out) } // {};
    ok($shape->{spans} >= 7, "checked $shape->{spans} spans of "
                             . "$shape->{requests} requests");
    is_deeply($shape->{problems}, [],
              'the fields and types of OpenTelemetry\'s own encoding')
        or diag $out;
}

# 2. an incoming traceparent is honoured; not sampled: nothing sent
my $tp_trace = '4bf92f3577b34da6a3ce929d0e0e4736';
$sid = $t->session;
$r = $t->turn($sid, 'hello', headers => {
    traceparent => "00-$tp_trace-00f067aa0ba902b7-01" });
is($r->{headers}{'x-trace-id'}, $tp_trace, 'the caller\'s trace id');
ok(AgentTest::wait_for(sub { @spans = spans_of($tp_trace); @spans >= 3 },
                       10), 'its spans sent');
($root) = grep { $_->{name} =~ /^invoke_agent/ } @spans;
is($root->{parentSpanId}, '00f067aa0ba902b7', 'the root under the caller\'s');

# the caller's "not sampled" does not hide a turn (sample=1 decides, not
# the flag, unless trust_parent=on)
my $off = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
$r = $t->turn($t->session, 'hello', headers => {
    traceparent => "00-$off-00f067aa0ba902b7-00" });
is($r->{headers}{'x-trace-id'}, $off, 'flags 00: the caller\'s trace goes on');
ok(AgentTest::wait_for(sub { spans_of($off) >= 3 }, 10),
   'and sample= decides: its spans sent');

# W3C Trace Context: what is not a valid traceparent starts a new trace
my $zero = '0' x 32;
my %bad = (
    'a trace id of zeros' => "00-$zero-00f067aa0ba902b7-01",
    'a parent id of zeros' => "00-$tp_trace-0000000000000000-01",
    'uppercase hex' => '00-' . uc($tp_trace) . '-00f067aa0ba902b7-01',
    'version ff' => "ff-$tp_trace-00f067aa0ba902b7-01",
    'version 00 with more after it' => "00-$tp_trace-00f067aa0ba902b7-01-x",
    'a flags field of one digit' => "00-$tp_trace-00f067aa0ba902b7-1",
);
for my $what (sort keys %bad) {
    $r = $t->turn($t->session, 'hello', headers => {
        traceparent => $bad{$what} });
    my $id = $r->{headers}{'x-trace-id'} // '';
    ok($id =~ /^[0-9a-f]{32}$/ && $id ne $zero && lc($id) ne $tp_trace,
       "$what: ignored, a new trace ($id)");
}
# a later version is read by its first 55 characters
my $v1 = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
$r = $t->turn($t->session, 'hello', headers => {
    traceparent => "01-$v1-00f067aa0ba902b7-01-what-comes-later" });
is($r->{headers}{'x-trace-id'}, $v1,
   'version 01: its first 55 characters read');

sub reload {
    my ($c, $what) = @_;
    $t->write_conf($c);
    my @old = $t->worker_pids;
    kill 'HUP', $t->{nginx};
    ok(AgentTest::wait_for(sub {
        my %o = map { $_ => 1 } @old;
        my @new = $t->worker_pids;
        @new && !grep { $o{$_} } @new }, 10), "reloaded with $what");
}

# sample=0: a caller's "sampled" does not override it
my $c1 = $conf;
$c1 =~ s{headers=X-Token=secret,X-Tenant=t1;}{sample=0;};
reload($c1, 'sample=0');
my $on = 'cccccccccccccccccccccccccccccccc';
$r = $t->turn($t->session, 'hello', headers => {
    traceparent => "00-$on-00f067aa0ba902b7-01" });
is($r->{types}[-1], 'end', 'sample=0, flags 01: the turn');
sleep 1.5;
is(scalar(spans_of($on)), 0, 'sends nothing: the caller cannot make it '
                             . 'sampled');

# content=on: the turn's input and answer on the root, after a reload;
# trust_parent=on: the caller's flag decides
my $c2 = $conf;
$c2 =~ s{headers=X-Token=secret,X-Tenant=t1;}{content=on trust_parent=on;};
reload($c2, 'content=on trust_parent=on');
my $off2 = 'dddddddddddddddddddddddddddddddd';
$r = $t->turn($t->session, 'hello', headers => {
    traceparent => "00-$off2-00f067aa0ba902b7-00" });
is($r->{types}[-1], 'end', 'trust_parent=on: a turn not sampled');
sleep 1.5;
is(scalar(spans_of($off2)), 0, 'sends nothing');
$r = $t->turn($t->session, 'say hello');
$trace = $r->{headers}{'x-trace-id'};
ok(AgentTest::wait_for(sub { @spans = spans_of($trace); @spans >= 3 }, 10),
   'its spans');
($root) = grep { !$_->{parentSpanId} } @spans;
my $in = eval { decode_json(attr($root, 'gen_ai.input.messages')) };
is($in->[0]{parts}[0]{content}, 'say hello', 'gen_ai.input.messages');
my $out = eval { decode_json(attr($root, 'gen_ai.output.messages')) };
is($out->[0]{parts}[0]{content}, 'Hello', 'gen_ai.output.messages');

# 3. a slow collector, then none: the turns do not notice
open my $fh, '>', "$dir/sink-slow"; close $fh;
my $t0 = time;
for (1 .. 3) {
    is($t->turn($t->session, 'hello')->{types}[-1], 'end',
       'a turn while the collector is slow');
}
# a turn that waited on the collector would take its 10 s
ok(time - $t0 < 8, 'not held by it');
unlink "$dir/sink-slow";
kill 'TERM', $sink;
waitpid($sink, 0);
$sink = 0;
for (1 .. 3) {
    my $down = $t->turn($t->session, 'hello');
    is($down->{types}[-1], 'end', 'a turn while the collector is down')
        or diag explain $down->{events}[-1];
}
ok(AgentTest::wait_for(sub {
    my ($v) = $t->http('GET', '/metrics')->{content}
              =~ /^agent_traces_dropped_total (\d+)$/m;
    ($v // 0) > 0 }, 15), 'the spans it missed are counted as dropped');

$t->check_log;

done_testing;
