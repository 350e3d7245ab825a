#!/usr/bin/perl
# Budgets and rate limits, nginx style (agent_limit_zone, agent_limit) in
# shared memory across two workers: turns per window, turns at once, a
# token budget that 64 parallel turns of one user do not overspend by more
# than one model call each; 429 with Retry-After and a JSON error; a turn
# that crosses its budget stops at its next step.  Per-turn caps:
# agent_turn_max_tokens, agent_turn_max_tool_calls, agent_turn_timeout.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use POSIX qw(WNOHANG);

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $last = $m[-1];
    my ($u) = grep { $_->{role} eq 'user' } reverse @m;
    return { text => 'slow answer', delay => 1 }
        if ($last->{content} // '') =~ /^slow/;
    # "loop": a tool call after every result, forever
    return { tools => [ [ 'q' . scalar(@m), 'execute_sql_query',
                          '{"query": "SELECT 1"}' ] ] }
        if ($u->{content} // '') =~ /^loop/;
    return { tools => [ [ 'q1', 'execute_sql_query',
                          '{"query": "SELECT 1"}' ] ] }
        if $last->{role} eq 'user' && $last->{content} =~ /^tool/;
    return { text => 'done' };
});

# traced too, to a collector that is not there, with no header=: the
# turns below run all the same
my $conf = $t->conf(http => <<'HTTP');
agent_otlp url=http://127.0.0.1:9/v1/traces;
agent_limit_zone users key=$http_x_user size=1m;
agent_limit_zone budget key=$http_x_user size=1m;
agent_limit_zone owners key=$agent_owner size=1m;
agent_limit_zone small key=$http_x_user size=32k;
HTTP
$conf =~ s{(location /api/chat/ \{ agent_chat;)}{$1
            agent_limit zone=users turns=3/1h concurrent=1;};
$conf =~ s{(location /api/sessions/)}{location /budget/ { agent_chat;
            agent_limit zone=budget tokens=100/1h; }
        location /capped/ { agent_chat; agent_turn_max_tool_calls 2;
            agent_max_tool_rounds 50; }
        location /tokens/ { agent_chat; agent_turn_max_tokens 40;
            agent_max_tool_rounds 50; }
        location /timed/ { agent_chat; agent_turn_timeout 1500ms; }
        location /small/ { agent_chat; agent_limit zone=small turns=5/1h; }
        location /owned/ { agent_chat; agent_owner \$http_x_user;
            agent_limit zone=owners turns=1/1h; }
        location /owned-sessions/ { agent_sessions;
            agent_owner \$http_x_user; }
        $1};
$t->run($conf);

sub turn_as {
    my ($user, $path, $text, %o) = @_;
    my $sid = $t->session;
    my $r = $t->stream("$path$sid/message", encode_json({ message => $text }),
                       headers => { 'X-User' => $user }, %o);
    $r->{sid} = $sid;
    return $r;
}

# 1. turns per window: 3 an hour for alice; bob is not alice
for my $i (1 .. 3) {
    is(turn_as('alice', '/api/chat/', "hello $i")->{types}[-1], 'end',
       "alice's turn $i");
}
my $r = turn_as('alice', '/api/chat/', 'hello 4');
is($r->{status}, 429, "alice's fourth turn in the hour: 429");
like($r->{json}{error}, qr/limit of turns of "alice" is reached/,
     'a JSON error that says which limit');
ok($r->{headers}{'retry-after'} > 0
   && $r->{headers}{'retry-after'} <= 3600, 'Retry-After: within the hour');
is(turn_as('bob', '/api/chat/', 'hello')->{types}[-1], 'end',
   'bob has his own count');
is(turn_as('', '/api/chat/', 'no key')->{types}[-1], 'end',
   'no key, no limit');

# 2. turns at once: one for carol, on either worker
my $pid = fork() // die;
if ($pid == 0) {
    turn_as('carol', '/api/chat/', 'slow one');
    POSIX::_exit(0);
}
# the first turn runs once the model has its request
ok(AgentTest::wait_for(sub {
    grep { ($_->{body}{messages}[-1]{content} // '') eq 'slow one' }
         $t->{mock}->requests }, 10), 'the slow turn runs');
$r = turn_as('carol', '/api/chat/', 'at the same time');
is($r->{status}, 429, 'a second turn at once: 429');
like($r->{json}{error}, qr/turns at once/, 'saying why');
waitpid($pid, 0);
is(turn_as('carol', '/api/chat/', 'after it')->{types}[-1], 'end',
   'after the first ended: allowed');

# 3. a token budget under concurrency: 64 turns of dave at once, each two
# model calls of 14 tokens; the budget is 100
my $dir = $t->dir;
my @kids;
for my $i (1 .. 64) {
    my $k = fork() // die;
    if ($k == 0) {
        my $res = turn_as('dave', '/budget/', "tool $i", timeout => 60);
        open my $fh, '>', "$dir/kid-$i.json";
        print $fh encode_json({ status => $res->{status}, sid => $res->{sid},
                                last => $res->{events}[-1] // {} });
        close $fh;
        POSIX::_exit(0);
    }
    push @kids, $k;
}
waitpid($_, 0) for @kids;
my (%by, $charged, @dave);
for my $i (1 .. 64) {
    open my $fh, '<', "$dir/kid-$i.json" or next;
    my $o = decode_json(do { local $/; <$fh> });
    push @dave, $o->{sid};
    my $k = $o->{status} == 429 ? '429'
          : ($o->{last}{type} // '') eq 'end' ? 'end'
          : ($o->{last}{code} // $o->{last}{type} // '?');
    $by{$k}++;
}
$charged = $t->sqlite("$dir/agent.db",
    'SELECT SUM(prompt_tokens + completion_tokens) FROM sessions WHERE id IN ('
    . join(',', map { "'$_'" } @dave) . ')');
note explain \%by;
ok($by{429}, "turns refused once the budget was spent: " . ($by{429} // 0));
ok(($by{end} // 0) + ($by{budget_exceeded} // 0) + ($by{429} // 0) == 64,
   'every turn ended, was stopped, or was refused');
# each model call reserves its tokens first: the 64 turns overspend the
# budget by one call at most (the mock's calls here cost 11 to 25 tokens),
# not by one call each (before: 700 and more)
ok($charged < 100 + 30,
   "at most one model call over the budget: $charged tokens for 100");
my $again = turn_as('dave', '/budget/', 'one more');
is($again->{status}, 429, 'the budget spent: 429');
like($again->{json}{error}, qr/limit of tokens/, 'tokens, it says');

# 4. per-turn caps
$r = turn_as('erin', '/capped/', 'loop forever');
my ($err) = grep { ($_->{type} // '') eq 'error' } @{ $r->{events} };
ok($err, 'a turn over agent_turn_max_tool_calls ends with an error event');
is($err->{code}, 'turn_tool_call_limit', 'its code')
    or diag explain $r->{events};
my @tools = grep { ($_->{type} // '') eq 'tool_result' } @{ $r->{events} };
is(scalar @tools, 2, 'after its two tool calls');

$r = turn_as('erin', '/tokens/', 'loop on');
($err) = grep { ($_->{type} // '') eq 'error' } @{ $r->{events} };
is($err->{code}, 'turn_token_limit', 'agent_turn_max_tokens: an error event');
my $spent = $t->sqlite("$dir/agent.db",
    "SELECT prompt_tokens + completion_tokens FROM sessions "
    . "WHERE id = '$r->{sid}'");
ok($spent >= 40 && $spent < 40 + 40, "stopped after it crossed 40: $spent");

$r = turn_as('erin', '/timed/', 'slow and timed');
($err) = grep { ($_->{type} // '') eq 'error' } @{ $r->{events} };
is($err->{code}, 'turn_timeout', 'agent_turn_timeout: an error event');

# 5. the owner as the key: $agent_owner
{
    my $s = $t->http('POST', '/owned-sessions/', {}, 'X-User' => 'frank')
              ->{json}{id};
    my $one = $t->stream("/owned/$s/message",
                         encode_json({ message => 'hello' }),
                         headers => { 'X-User' => 'frank' });
    is($one->{types}[-1], 'end', "frank's turn");
    my $two = $t->stream("/owned/$s/message",
                         encode_json({ message => 'again' }),
                         headers => { 'X-User' => 'frank' });
    is($two->{status}, 429, 'his second in the hour: 429');
    like($two->{json}{error}, qr/"frank"/, 'keyed by $agent_owner');
}

# 6. a full zone: a key that runs a turn is passed over, idle ones go; a
# key longer than 64 bytes is kept as its digest
{
    my $slow = fork() // die;
    if ($slow == 0) {
        turn_as('oldest', '/small/', 'slow one', timeout => 30);
        POSIX::_exit(0);
    }
    sleep 0.3;
    my %st;
    for my $i (1 .. 400) {
        my $u = ($i % 2 ? 'k' : 'x' x 3000) . $i;
        my $r = turn_as($u, '/small/', 'hello');
        $st{ $r->{status} == 200 ? ($r->{types}[-1] // '?') : $r->{status} }++;
    }
    waitpid($slow, 0);
    is_deeply(\%st, { end => 400 },
              'a zone of 8 pages, 400 new keys (half of them 3000 bytes) '
              . 'past a running one: none refused')
        or diag explain \%st;
}

$t->check_log;

done_testing;
