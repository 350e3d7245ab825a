#!/usr/bin/perl
# Cached nodes (issue 53, item 4): cache=TTL on an llm and an http node
# gives the node's update again for the same state (one owner's threads
# share it, another owner's never), a different input runs the node, an
# entry past its TTL is not used, a reload that changes the node finds
# none kept, agent_cache_max lets the oldest go first; a subgraph's node
# is cached too; the hits and misses counted.  On both stores (t/pg/run prove t/graph_node_cache.t).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Time::HiRes qw(sleep);

my $t = AgentTest->new;
$t->mock(sub { { text => 'answer to ' . AgentTest::last_user($_[0]) } });

sub graphs {
    my ($ttl) = @_;
    return <<"G";
agent_cache_max items=8;
agent_graph cached {
    channel score value;
    node model llm cache=$ttl;
    node score http location=/internal/score input=input output=score
        cache=$ttl;
    edge START model;
    edge model score;
    edge score END;
}
agent_graph brief {
    node model llm cache=1s;
    edge START model;
    edge model END;
}
agent_graph plain {
    node model llm cache=60s;
    edge START model;
    edge model END;
}
agent_graph inner {
    node model llm cache=60s;
    edge START model;
    edge model END;
}
agent_graph outer {
    node sub subgraph graph=inner;
    edge START sub;
    edge sub END;
}
agent_use_graph cached;
G
}

sub conf {
    my ($ttl) = @_;
    my $conf = $t->conf(http => graphs($ttl) . "agent_owner \$http_x_user;");
    $conf =~ s{(location /api/sessions/)}{location /internal/score { internal;
            default_type application/json;
            return 200 '{"score":"\$request_id"}'; }
        location /brief/ { agent_chat; agent_use_graph brief; }
        location /plain/ { agent_chat; agent_use_graph plain; }
        location /outer/ { agent_chat; agent_use_graph outer; }
        location = /metrics { agent_metrics; }
        $1};
    return $conf;
}

$t->run(conf('60s'));

sub calls { scalar $t->{mock}->requests }

sub turn {
    my ($user, $text, $base) = @_;
    my $r = $t->http('POST', '/api/sessions/', {}, 'X-User' => $user);
    die "session: $r->{status}" unless $r->{status} == 201;
    my $sid = $r->{json}{id};
    my $path = ($base // '/api/chat/') . "$sid/message";
    my $s = $t->stream($path, '{"message":"' . $text . '"}',
                       headers => { 'X-User' => $user });
    my $st = $t->http('GET', "/api/sessions/$sid/state", undef,
                      'X-User' => $user)->{json}{values} // {};
    my @m = grep { $_->{role} eq 'assistant' } @{ $t->http('GET',
        "/api/sessions/$sid/messages", undef, 'X-User' => $user)
        ->{json}{messages} // [] };
    return { end => $s->{events}[-1], score => $st->{score},
             answer => @m ? $m[-1]{content} : undef };
}

sub metric {
    my ($name) = @_;
    my $m = $t->http("GET", "/metrics")->{content};
    return $m =~ /^\Q$name\E (\d+)/m ? $1 : 0;
}

# --- the same input: no second call ------------------------------------------

my $a1 = turn('ann', 'hello');
is($a1->{end}{type}, 'end', 'a first turn ends');
is($a1->{answer}, 'answer to hello', 'the model answered');
like($a1->{score} // '', qr/^[0-9a-f]{32}$/, 'the http node answered');
is(calls(), 1, 'one model call');

my $a2 = turn('ann', 'hello');
is($a2->{end}{type}, 'end', 'a second thread with the same input ends');
is(calls(), 1, 'the model is not called again');
is($a2->{answer}, 'answer to hello', 'the cached answer is the thread\'s');
is($a2->{score}, $a1->{score}, 'the http node is not called again');

my $a3 = turn('ann', 'something else');
is(calls(), 2, 'another input calls the model');
is($a3->{answer}, 'answer to something else', 'and has its own answer');
isnt($a3->{score}, $a1->{score}, 'and the http node its own');

# another owner shares nothing
my $b1 = turn('bob', 'hello');
is(calls(), 3, 'another owner\'s same input calls the model');
isnt($b1->{score}, $a1->{score}, 'and the http node');

is(metric('agent_cache_hits_total{kind="node"}'), 2,
   'two hits counted (the model and the http node)');
is(metric('agent_cache_misses_total{kind="node"}'), 6, 'six misses');

# --- TTL ---------------------------------------------------------------------

turn('ann', 'short lived', '/brief/');
is(calls(), 4, 'a node with cache=1s runs');
sleep 1.5;
turn('ann', 'short lived', '/brief/');
is(calls(), 5, 'past its TTL the entry is not used');

# --- a reload that changes the node ------------------------------------------

sub reload {
    my ($conf) = @_;
    my @old = $t->worker_pids;
    $t->write_conf($conf);
    kill 'HUP', $t->{nginx};
    return AgentTest::wait_for(sub {
        my %old = map { $_ => 1 } @old;
        (grep { !$old{$_} } $t->worker_pids)
            && !(grep { kill 0, $_ } @old) }, 10);
}

ok(reload(conf('61s')), 'reloaded with the nodes changed (cache=61s)');
my $a4 = turn('ann', 'hello');
is(calls(), 6, 'the changed node finds nothing kept: the model is called');
isnt($a4->{score}, $a1->{score}, 'and the http node');
turn('ann', 'hello');
is(calls(), 6, 'then its own entry is used');

# --- the bound: the oldest go first ------------------------------------------

# agent_cache_max items=8: eight puts of one node each leave only theirs
turn('ann', "bound $_", '/plain/') for 1 .. 8;
is(calls(), 14, 'eight inputs, eight calls');
turn('ann', 'bound 8', '/plain/');
is(calls(), 14, 'the newest is kept');
turn('ann', 'hello');
is(calls(), 15, 'an entry older than the bound\'s eight went first');
turn('ann', 'bound 3', '/plain/');
is(calls(), 15, 'the oldest left is still there');
turn('ann', 'bound 1', '/plain/');
is(calls(), 16, 'the put of two entries let the two oldest go');

# --- a node of a subgraph -----------------------------------------------------

my $s1 = turn('ann', 'inside', '/outer/');
is($s1->{end}{type}, 'end', 'a turn through a subgraph ends');
is(calls(), 17, 'its node calls the model');
my $s2 = turn('ann', 'inside', '/outer/');
is(calls(), 17, 'the subgraph\'s node is cached too');
is($s2->{answer}, 'answer to inside', 'its answer is the thread\'s');

# --- nginx -t ----------------------------------------------------------------

$t->write_conf($t->conf(http => "agent_graph g { node t template text=x "
                               . "cache=5s; edge START t; edge t END; }\n"
                               . "agent_use_graph g;"));
my ($ok, $out) = $t->test_conf;
ok(!$ok, 'cache= on a template node is refused');
like($out, qr/cache= of the node "t"/, 'saying which node');
$t->write_conf(conf('60s'));

$t->check_log;
done_testing;
