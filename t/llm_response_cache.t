#!/usr/bin/perl
# The exact response cache (issue 53, item 4): an llm node with
# cache_response=TTL answers the same request to the same model, for the
# same owner, with the answer kept: nothing sent to the provider, the
# same events (every token) streamed, no tokens counted; $agent_cache says
# hit, miss or - in the access log, agent.cache on the model call's span;
# the hits and misses in the metrics;
# another owner calls the model unless cache_shared=on; tool calls
# replayed too; nginx -t refusing bad values.  On both stores
# (t/pg/run prove t/llm_response_cache.t).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;

# an OTLP collector; the agent.cache attribute of its spans, in order
my $dir = $t->dir;
my $sink_port = AgentTest::otlp_sink("$dir/sink.log");
sub span_caches {
    return map { $_->{'agent.cache'} // () }
           AgentTest::otlp_spans("$dir/sink.log");
}

$t->mock(sub {
    my $q = AgentTest::last_user($_[0]);
    my $last = $_[0]{messages}[-1];
    return { text => "the weather is $last->{content}" }
        if $last->{role} eq 'tool';
    return { tools => [[ 'c1', 'execute_sql_query',
                         '{"query":"SELECT 1 AS one"}' ]] }
        if $q =~ /^query/;
    return { text => "Here is a longer answer to $q, in pieces." };
});

my $conf = $t->conf(http => <<'HTTP',
log_format cache '$agent_session $agent_cache';
agent_otlp url=http://127.0.0.1:SINK/v1/traces;
agent_owner $http_x_user;
agent_graph exact {
    node model llm cache_response=60s;
    edge START model;
    edge model END;
}
agent_graph shared {
    node model llm cache_response=60s cache_shared=on;
    edge START model;
    edge model END;
}
agent_graph plain {
    node model llm;
    edge START model;
    edge model END;
}
agent_graph tooled {
    node agent llm tools=execute_sql_query cache_response=60s;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
agent_use_graph exact;
HTTP
    location => 'access_log %%DIR%%/cache.log cache;');
$conf =~ s/SINK/$sink_port/;
$conf =~ s{(location /api/sessions/)}{location /shared/ { agent_chat;
            agent_use_graph shared; access_log %%DIR%%/cache.log cache; }
        location /plain/ { agent_chat; agent_use_graph plain;
            access_log %%DIR%%/cache.log cache; }
        location /tooled/ { agent_chat; agent_use_graph tooled;
            access_log %%DIR%%/cache.log cache; }
        location = /metrics { agent_metrics; }
        $1};
$t->run($conf);

sub calls { scalar $t->{mock}->requests }

my %sid_of;

sub turn {
    my ($user, $text, $base) = @_;
    my $r = $t->http('POST', '/api/sessions/', {}, 'X-User' => $user);
    die "session: $r->{status}" unless $r->{status} == 201;
    my $sid = $r->{json}{id};
    my $s = $t->stream(($base // '/api/chat/') . "$sid/message",
                       '{"message":"' . $text . '"}',
                       headers => { 'X-User' => $user });
    $s->{sid} = $sid;
    return $s;
}

# what a client sees of a stream, its ids, times and run ids aside
sub seen {
    my ($r) = @_;
    return [ map { my $e = $_;
                   $e->{type} eq 'chunk' ? "chunk:$e->{content}"
                   : $e->{type} eq 'node' ? "node:$e->{name}:$e->{status}"
                   : $e->{type} eq 'tool_start'
                     ? "tool_start:$e->{id}:$e->{name}:"
                       . ($e->{input}{query} // '')
                   : $e->{type} } @{ $r->{events} } ];
}

sub logged {
    my ($sid) = @_;
    AgentTest::wait_for(sub {
        -f "$t->{dir}/cache.log"
            && $t->slurp("cache.log") =~ /^\Q$sid\E /m }, 5);
    my ($v) = $t->slurp("cache.log") =~ /^\Q$sid\E (\S+)/m;
    return $v // '';
}

sub metric {
    my ($name) = @_;
    my $m = $t->http('GET', '/metrics')->{content};
    return $m =~ /^\Q$name\E (\d+)/m ? $1 : 0;
}

# --- the same request replayed ------------------------------------------------

my $a1 = turn('ann', 'hello');
is($a1->{events}[-1]{type}, 'end', 'a first turn ends');
is(calls(), 1, 'the model is called');
my @chunks = grep { /^chunk:/ } @{ seen($a1) };
ok(@chunks > 3, 'its answer streamed in pieces') or diag explain seen($a1);
is(logged($a1->{sid}), 'miss', '$agent_cache: miss');

my $a2 = turn('ann', 'hello');
is($a2->{events}[-1]{type}, 'end', 'the same request in another thread ends');
is(calls(), 1, 'the model is not called again');
is_deeply(seen($a2), seen($a1), 'the same events, every token the same');
is($a2->{events}[-1]{full_response}, $a1->{events}[-1]{full_response},
   'the same answer');
is($a2->{events}[-1]{usage}{completion_tokens} // 0, 0,
   'a replay spends no tokens');
is(logged($a2->{sid}), 'hit', '$agent_cache: hit');

my $a3 = turn('ann', 'hello again');
is(calls(), 2, 'another request calls the model');
is(logged($a3->{sid}), 'miss', 'a miss');

my $b1 = turn('bob', 'hello');
is(calls(), 3, 'another owner\'s same request calls the model');

my $p1 = turn('ann', 'hello', '/plain/');
is(calls(), 4, 'a node without cache_response calls the model');
is(logged($p1->{sid}), '-', '$agent_cache: -');

# --- cache_shared=on ----------------------------------------------------------

turn('ann', 'shared question', '/shared/');
is(calls(), 5, 'a shared node\'s first request calls the model');
my $s2 = turn('bob', 'shared question', '/shared/');
is(calls(), 5, 'another owner\'s same request is answered from the cache');
is(logged($s2->{sid}), 'hit', 'a hit');

# --- tool calls ---------------------------------------------------------------

my $t1 = turn('ann', 'query one', '/tooled/');
is($t1->{events}[-1]{type}, 'end', 'a turn with a tool call ends');
is(calls(), 7, 'two model calls: the call, then the answer');
my $t2 = turn('ann', 'query one', '/tooled/');
is(calls(), 7, 'both replayed');
is_deeply(seen($t2), seen($t1), 'the tool call and the answer the same');
ok((grep { $_ eq 'tool_start:c1:execute_sql_query:SELECT 1 AS one' }
     @{ seen($t2) }), 'the tool call is among them, its id and arguments');

ok(AgentTest::wait_for(sub { (grep { $_ eq 'hit' } span_caches())
                             && (grep { $_ eq 'miss' } span_caches()) }, 10),
   'the model calls\' spans say agent.cache hit and miss')
    or diag explain [ span_caches() ];

is(metric('agent_cache_hits_total{kind="exact"}'), 4, 'hits counted');
is(metric('agent_cache_misses_total{kind="exact"}'), 6, 'misses counted');

# --- nginx -t ----------------------------------------------------------------

for my $bad ([ 'node m llm cache_response=soon;', 'cache_response' ],
             [ 'node m llm cache_shared=maybe;', 'cache_shared' ]) {
    $t->write_conf($t->conf(http => "agent_graph g { $bad->[0] "
                                   . "edge START m; edge m END; }\n"
                                   . "agent_use_graph g;"));
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, "nginx -t refuses $bad->[1]= of another value");
    like($out, qr/\Q$bad->[1]\E/, 'naming it');
}
for my $bad ([ 'agent_cache_max items=0;', 'invalid parameter "items=0"' ],
             [ 'agent_cache_max big=1;', 'invalid parameter "big=1"' ],
             [ 'agent_cache_max items=5; agent_cache_max size=1m;',
               '"agent_cache_max" directive is duplicate' ]) {
    $t->write_conf($t->conf(http => $bad->[0]));
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, "nginx -t refuses \"$bad->[0]\"");
    like($out, qr/\Q$bad->[1]\E/, 'saying why');
}
$t->write_conf($conf);

$t->check_log;
done_testing;
