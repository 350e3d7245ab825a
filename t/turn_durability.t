#!/usr/bin/perl
# Durability (issue 32, item 5): agent_durability sync|async|exit and a
# LangGraph run's "durability".  Each mode ends with the same thread; exit
# saves the run's start and its end only (no step between: history has
# three entries, input, start and end, where sync and async have every
# step), and a run waiting
# at an interrupt is saved there; a thread run with exit goes on from its
# end; an exit run whose worker is killed is retried from its start (the
# model asked again for its first call) and its messages kept once.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use Time::HiRes qw(sleep);

my $t = AgentTest->new;
my $dir = $t->dir;

# the model: a tool call, then an answer; "slow" makes the answer hang
# the first time (a worker is killed then), "ask" asks for approval
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($tool) = grep { $_->{role} eq 'tool' } @m;
    my ($user) = grep { $_->{role} eq 'user' } reverse @m;
    return { tools => [ [ 'q' . scalar(@m), 'execute_sql_query',
                          '{"query": "SELECT 41 + 1 AS answer"}' ] ] }
        unless $tool && $m[-1]{role} eq 'tool';
    if ($user->{content} =~ /slow/ && !-e "$dir/cut") {
        open my $fh, '>', "$dir/cut" or die;
        close $fh;
        return { text => 'never ' x 60, pieces => [ ('never ') x 60 ],
                 delay => 0.5 };
    }
    return { text => "the answer is $tool->{content}" };
});

my $conf = $t->conf(http => <<'HTTP');
agent_graph approval {
    channel plan     value scope=turn;
    channel approval value;
    node draft   template output=plan "text=Delete the rows of 2019?";
    node approve interrupt value=plan resume=approval;
    node act     template "text=Done: {{approval}}";
    edge START draft;
    edge draft approve;
    edge approve act;
    edge act END;
}
agent_graph looper {
    node model llm tools=execute_sql_query;
    node tools tools;
    edge START model;
    edge model tools if=tool_calls;
    edge model END;
    edge tools model;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_use_graph looper; agent_turn_lease 3s; }
        location /lgs/ { agent_langgraph_api; agent_use_graph looper;
            agent_durability sync; }
        location /lgx/ { agent_langgraph_api; agent_use_graph looper; agent_assistants approval;
            agent_durability exit; agent_turn_lease 3s; }
        $1};
$t->run($conf);

my ($ok, $out) = $t->test_conf;
ok($ok, 'nginx -t takes agent_durability');
(my $bad = $conf) =~ s/agent_durability sync;/agent_durability always;/;
$t->write_conf($bad);
($ok, $out) = $t->test_conf;
ok(!$ok, 'and refuses a word it does not know');
like($out, qr/invalid value "always"/, 'saying which');
$t->write_conf($conf);

my $in = { messages => [ { role => 'user', content => 'add them' } ] };

sub run_on {
    my ($loc, %o) = @_;
    my $th = $o{thread} // $t->http('POST', "$loc/threads", {})->{json}{thread_id};
    my $r = $t->http('POST', "$loc/threads/$th/runs/wait",
                     { assistant_id => 'looper', input => $o{input} // $in,
                       %{ $o{body} // {} } });
    return ($th, $r);
}

sub history {
    my ($loc, $th) = @_;
    return $t->http('POST', "$loc/threads/$th/history",
                    { limit => 100 })->{json};
}

sub types {
    my ($loc, $th) = @_;
    my $st = $t->http('GET', "$loc/threads/$th/state")->{json};
    return [ map { $_->{type} } @{ $st->{values}{messages} } ];
}

my %steps;
for my $c ([ '/lgs', 'sync' ], [ '/lg', 'async' ], [ '/lgx', 'exit' ],
           [ '/lg', 'exit', { durability => 'exit' } ],
           [ '/lgx', 'sync', { durability => 'sync' } ]) {
    my ($loc, $mode, $body) = @$c;
    my $how = $body ? "a run's durability $mode" : "agent_durability $mode";
    my ($th, $r) = run_on($loc, body => $body);
    is($r->{status}, 200, "$how: the run ends");
    like($r->{json}{messages}[-1]{content}, qr/^the answer is .*42/,
         "$how: with its answer");
    is_deeply(types($loc, $th), [ qw(human ai tool ai) ],
              "$how: the thread holds each message once");
    my $h = history($loc, $th);
    $steps{$how} = scalar @$h;
    my @next = map { join(',', @{ $_->{next} }) } @$h;
    if ($mode eq 'exit') {
        is_deeply(\@next, [ '', 'model', '__start__' ],
                  "$how: its input, its start and its end saved, no step "
                  . 'between');
        is($h->[0]{metadata}{step}, 3, "$how: the end keeps its step number");
        is_deeply([ map { scalar @{ $_->{values}{messages} // [] } } @$h ],
                  [ 4, 1, 0 ], "$how: the end holds every message");
    } else {
        cmp_ok(scalar @$h, '>=', 4, "$how: every step saved");
    }
    my $rs = $t->http('GET', "$loc/threads/$th/runs")->{json};
    is($rs->[0]{kwargs}{durability}, $mode, "$how: kept in its kwargs")
        if $body;

    # the next run goes on from where this one ended
    ($th, $r) = run_on($loc, thread => $th, body => $body);
    is_deeply(types($loc, $th), [ qw(human ai tool ai human ai tool ai) ],
              "$how: the next run on the thread goes on from its end");
    # the messages' rows (what GET messages and a new worker read)
    is($t->sqlite("$dir/agent.db", "SELECT count(*) FROM messages m JOIN "
                  . "sessions s ON s.id = m.session_id WHERE s.id = '$th'"),
       8, "$how: each message a row of the store");
}

my ($th, $r) = run_on('/lg', body => { durability => 'never' });
is($r->{status}, 422, 'a durability it does not know: 422');
($th, $r) = run_on('/lg', body => { durability => 1 });
is($r->{status}, 422, 'a durability that is no word: 422');

# --- exit: a run that waits is saved where it waits -------------------------

$th = $t->http('POST', '/lgx/threads', {})->{json}{thread_id};
$r = $t->http('POST', "/lgx/threads/$th/runs/wait", {
    assistant_id => 'approval', input => $in });
is($r->{status}, 200, 'exit: a run that asks for approval');
my $thread = $t->http('GET', "/lgx/threads/$th")->{json};
is($thread->{status}, 'interrupted', 'exit: it waits');
my $st = $t->http('GET', "/lgx/threads/$th/state")->{json};
is_deeply($st->{next}, [ 'approve' ], 'exit: its wait saved, at its node');
$r = $t->http('POST', "/lgx/threads/$th/runs/wait", {
    assistant_id => 'approval', command => { resume => 'yes' } });
is($r->{status}, 200, 'exit: resumed');
is($r->{json}{messages}[-1]{content}, 'Done: yes', 'exit: and answered');
is_deeply(types('/lgx', $th), [ qw(human ai) ], 'exit: the thread after it');

# --- a worker killed: an exit run is retried from its start -----------------

$th = $t->http('POST', '/lgx/threads', {})->{json}{thread_id};
$r = $t->http('POST', "/lgx/threads/$th/runs", { assistant_id => 'looper',
    input => { messages => [ { role => 'user', content => 'slow sum' } ] } });
is($r->{status}, 200, 'an exit run in the background');
my $run = $r->{json}{run_id};
ok(AgentTest::wait_for(sub { -e "$dir/cut" }, 20),
   'its answer hangs after its tool round');
my $holder = $t->sqlite("$dir/agent.db",
                        "SELECT run_pid FROM sessions WHERE id = '$th'");
like($holder, qr/^\d+$/, 'a worker holds the thread');
kill 'KILL', $holder;

my $status = '';
ok(AgentTest::wait_for(sub {
    $status = $t->http('GET', "/lgx/threads/$th/runs/$run")->{json}{status}
              // '';
    $status eq 'success' }, 30), 'another worker finished the run')
    or diag("status: $status\n" . $t->slurp('error.log'));

my @asked = map { $_->{body}{messages} }
            grep { ($_->{event} // '') eq 'request' && $_->{body}{tools}
                   && $_->{body}{messages}[0]{content} eq 'slow sum'
                   || (grep { ($_->{content} // '') eq 'slow sum' }
                       @{ $_->{body}{messages} // [] }) }
            $t->{mock}->log_lines;
my @first = grep { !grep { $_->{role} eq 'tool' } @$_ } @asked;
is(scalar @first, 2, 'nothing of the run was saved: its first model call '
   . 'made again');
is_deeply(types('/lgx', $th), [ qw(human ai tool ai) ],
          'the thread holds each message once');

done_testing;
