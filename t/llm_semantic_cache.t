#!/usr/bin/perl
# The semantic response cache (issue 53, item 4): an llm node with
# cache_similar=SCORE beside cache_response=TTL answers, where the exact
# cache has none, with the answer kept for a question of the same owner
# whose embedding scores at least SCORE against the last user message:
# the same events replayed, $agent_cache and agent.cache "similar", the
# hits and misses counted with kind="similar"; a different question,
# another owner and a node without it call the model; nginx -t refuses
# bad values.  Embeddings calls of graph nodes (this cache's, a store
# node's put) count as model calls: in the turn's usage, $agent_cost and
# agent_cost_usd_total at the embeddings model's price, an "embeddings"
# span, and under agent_limit's tokens= and cost=.  On both stores
# (t/pg/run prove t/llm_semantic_cache.t).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;

# an OTLP collector, and the spans it got
my $dir = $t->dir;
my $sink_port = AgentTest::otlp_sink("$dir/sink.log");
sub spans { AgentTest::otlp_spans("$dir/sink.log") }

$t->mock(sub {
    my $q = AgentTest::last_user($_[0]);
    my $last = $_[0]{messages}[-1];
    return { text => "the result is $last->{content}" }
        if $last->{role} eq 'tool';
    return { tools => [[ 'c1', 'execute_sql_query',
                         '{"query":"SELECT 1 AS one"}' ]] }
        if $q =~ /^query/;
    return { text => "Here is the answer to $q, in pieces." };
});

my $conf = $t->conf(http => <<'HTTP',
log_format cache '$agent_session $agent_cache';
log_format cost '$agent_session $agent_cost';
agent_model emb provider=openai url=http://127.0.0.1:%%MOCK%%/v1/chat/completions model=embed-1 price=1.00/2.00;
agent_limit_zone toks key=$http_x_user size=1m;
agent_limit_zone money key=$http_x_user size=1m;
agent_graph remember {
    node put store op=put namespace=facts key=fact value=text:input;
    edge START put;
    edge put END;
}
agent_otlp url=http://127.0.0.1:SINK/v1/traces;
agent_owner $http_x_user;
agent_embeddings mock;
agent_graph near {
    node model llm cache_response=60s cache_similar=0.9;
    edge START model;
    edge model END;
}
agent_graph exact {
    node model llm cache_response=60s;
    edge START model;
    edge model END;
}
agent_graph tooled {
    node agent llm tools=execute_sql_query cache_response=60s
        cache_similar=0.9;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
agent_use_graph near;
HTTP
    location => 'access_log %%DIR%%/cache.log cache;');
$conf =~ s/SINK/$sink_port/;
$conf =~ s{(location /api/sessions/)}{location /exact/ { agent_chat;
            agent_use_graph exact; access_log %%DIR%%/cache.log cache; }
        location /bare/ { agent_chat; agent_embeddings off;
            access_log %%DIR%%/cache.log cache; }
        location /tooled/ { agent_chat; agent_use_graph tooled; }
        location /paid/ { agent_chat; agent_use_graph remember;
            agent_embeddings emb; access_log %%DIR%%/cost.log cost; }
        location /tokens/ { agent_chat; agent_use_graph remember;
            agent_embeddings emb; agent_limit zone=toks tokens=5/1h; }
        location /money/ { agent_chat; agent_use_graph remember;
            agent_embeddings emb; agent_limit zone=money cost=0.000005/1h; }
        location = /metrics { agent_metrics; }
        $1};
$t->run($conf);

sub chats { scalar grep { $_->{path} !~ /embed/ } $t->{mock}->requests }
sub embeds { grep { $_->{path} =~ /embed/ } $t->{mock}->requests }

sub turn {
    my ($user, $text, $base) = @_;
    my $r = $t->http('POST', '/api/sessions/', {}, 'X-User' => $user);
    die "session: $r->{status}" unless $r->{status} == 201;
    my $sid = $r->{json}{id};
    my $s = $t->stream(($base // '/api/chat/') . "$sid/message",
                       encode_json({ message => $text }),
                       headers => { 'X-User' => $user });
    $s->{sid} = $sid;
    return $s;
}

# what a client sees of a stream, its ids and times aside
sub seen {
    my ($r) = @_;
    return [ map { $_->{type} eq 'chunk' ? "chunk:$_->{content}"
                   : $_->{type} eq 'node' ? "node:$_->{name}:$_->{status}"
                   : $_->{type} } @{ $r->{events} } ];
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

# --- a near question answered with the kept answer ---------------------------

my $a1 = turn('ann', 'What is the capital of France?');
is($a1->{events}[-1]{type}, 'end', 'a first turn ends');
is(chats(), 1, 'the model is called');
is(scalar embeds(), 1, 'the question embedded');
is((embeds())[-1]{body}{input}[0], 'What is the capital of France?',
   'the last user message, as it is');
is(logged($a1->{sid}), 'miss', '$agent_cache: miss');

my $a2 = turn('ann', 'what is the capital city of France');
is($a2->{events}[-1]{type}, 'end', 'a near question in another thread ends');
is(chats(), 1, 'the model is not called again');
is(scalar embeds(), 2, 'the near question embedded');
is_deeply(seen($a2), seen($a1), 'the same events, every token the same');
is($a2->{events}[-1]{full_response}, $a1->{events}[-1]{full_response},
   'the first question\'s answer');
is($a2->{events}[-1]{usage}{completion_tokens} // 0, 0,
   'a replay spends no tokens');
is($a2->{events}[-1]{usage}{prompt_tokens}, 3,
   'but its question\'s embedding counts in the turn\'s usage');
is(logged($a2->{sid}), 'similar', '$agent_cache: similar');

my $a3 = turn('ann', 'What is the capital of France?');
is(chats(), 1, 'the same question again: the exact cache answers');
is(scalar embeds(), 2, 'and nothing is embedded');
is(logged($a3->{sid}), 'hit', '$agent_cache: hit');

# --- those that miss ----------------------------------------------------------

my $a4 = turn('ann', 'How do I bake sourdough bread?');
is(chats(), 2, 'a different question calls the model');
like($a4->{events}[-1]{full_response}, qr/sourdough/, 'its own answer');
is(logged($a4->{sid}), 'miss', 'a miss');

my $b1 = turn('bob', 'what is the capital city of France');
is(chats(), 3, 'another owner\'s near question calls the model');
is(logged($b1->{sid}), 'miss', 'a miss for him');
my $b2 = turn('bob', 'What is the capital of France?');
is(chats(), 3, 'his own near question is answered from his entry');
like($b2->{events}[-1]{full_response}, qr/capital city/,
     'his answer, not ann\'s');

my $before = scalar embeds();
turn('ann', 'Who wrote Hamlet?', '/exact/');
is(chats(), 4, 'off by default: a node without cache_similar calls');
turn('ann', 'who wrote the play Hamlet', '/exact/');
is(chats(), 5, 'and calls again for a near question');
is(scalar embeds(), $before, 'embedding nothing');

my $n1 = turn('ann', 'What is the capital of Spain?', '/bare/');
is($n1->{events}[-1]{type}, 'end',
   'without agent_embeddings the turn ends');
is(chats(), 6, 'the model answering it');
ok($t->slurp('error.log') =~ /cache_similar: the question could not be/,
   'a warning says why');

is(metric('agent_cache_hits_total{kind="similar"}'), 2, 'near hits counted');
is(metric('agent_cache_misses_total{kind="similar"}'), 4,
   'near misses counted');

# the answer is the exact cache's entry, bounded by agent_cache_max: one
# it has let go (here: all of them) is a miss, the question kept or not
like($t->sqlite("$dir/agent.db", "SELECT count(*) FROM items WHERE "
                . "ns LIKE 'agent_cache.%' AND owner = 'ann'"),
     qr/^[1-9]/, 'the owner\'s questions are store items');
$t->sqlite("$dir/agent.db", 'DELETE FROM cache');
my $a5 = turn('ann', 'What is the capital of France please');
is(chats(), 7, 'its answer let go from the cache: the model is called');
is(logged($a5->{sid}), 'miss', 'a miss');

ok(AgentTest::wait_for(sub {
       grep { ($_->{'agent.cache'} // '') eq 'similar' } spans() }, 10),
   'the model call\'s span says agent.cache similar');

# --- a tool call's round ------------------------------------------------------

my $chats = chats();
my $t1 = turn('ann', 'query the whole table of sales', '/tooled/');
is($t1->{events}[-1]{type}, 'end', 'a turn with a tool call ends');
is(chats(), $chats + 2, 'two model calls: the tool call, then the answer');
my $t2 = turn('ann', 'query the whole table of sales now', '/tooled/');
is($t2->{events}[-1]{type}, 'end', 'a near question\'s turn ends');
is(chats(), $chats + 3, 'its tool call replayed, the round after the '
   . 'tool\'s result asks the model: no near question to look up by');
is(scalar(grep { $_->{type} eq 'tool_start' } @{ $t2->{events} }), 1,
   'one tool call, not a loop of replayed ones');

# --- embeddings of graph nodes count as model calls --------------------------

my $c1 = turn('cara', 'my cat is called Tom', '/paid/');
is($c1->{events}[-1]{type}, 'end', 'a turn whose store node puts with index');
is($c1->{events}[-1]{usage}{prompt_tokens}, 3,
   'its embedding\'s tokens in the turn\'s usage');
ok(AgentTest::wait_for(sub { -f "$dir/cost.log"
       && $t->slurp('cost.log') =~ /^\Q$c1->{sid}\E 0\.000003$/m }, 5),
   '$agent_cost: 3 tokens at the embeddings model\'s $1.00 a million')
    or diag $t->slurp('cost.log');
like($t->http('GET', '/metrics')->{content},
     qr/^agent_cost_usd_total\{model="emb"\} 0\.000003$/m,
     'agent_cost_usd_total of the embeddings model');
ok(AgentTest::wait_for(sub {
       grep { ($_->{'gen_ai.operation.name'} // '') eq 'embeddings'
              && ($_->{'gen_ai.request.model'} // '') eq 'embed-1'
              && ($_->{'gen_ai.usage.input_tokens'} // 0) == 3
              && ($_->{'gen_ai.usage.cost'} // 0) == 0.000003 } spans() },
       10), 'an "embeddings" span with its tokens and cost')
    or diag explain [ grep { $_->{name} =~ /embed/ } spans() ];
ok((grep { $_->{name} eq 'embeddings mock-1' } spans()),
   'the semantic cache\'s embedding has its span too');

for my $case ([ '/tokens/', 'tokens' ], [ '/money/', 'cost in dollars' ]) {
    my ($base, $what) = @$case;
    my $r1 = turn('dan', 'first fact', $base);
    is($r1->{events}[-1]{type}, 'end', "$base: a first put fits");
    my $r2 = turn('dan', 'second fact', $base);
    is($r2->{events}[-1]{type}, 'end',
       "$base: a second one, reserved while some was left");
    my $r3 = turn('dan', 'third fact', $base);
    is($r3->{status}, 429, "$base: the embeddings spent the budget: 429")
        or diag explain $r3->{events};
    like($r3->{json}{error} // '', qr/limit of \Q$what\E of "dan"/,
         "$base: naming the $what limit");
}

# --- nginx -t ----------------------------------------------------------------

for my $bad ([ 'cache_similar=0.9', 'needs a score above 0' ],
             [ 'cache_response=60s cache_similar=1.5', 'from 0 to 1' ],
             [ 'cache_response=60s cache_similar=0', 'above 0' ],
             [ 'cache_response=60s cache_shared=on cache_similar=0.9',
               'without cache_shared' ]) {
    $t->write_conf($t->conf(http => "agent_graph g { node m llm $bad->[0]; "
                                   . "edge START m; edge m END; }\n"
                                   . "agent_use_graph g;"));
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, "nginx -t refuses $bad->[0]");
    like($out, qr/\Q$bad->[1]\E/, 'saying why');
}
$t->write_conf($conf);

$t->check_log;
done_testing;
