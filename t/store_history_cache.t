#!/usr/bin/perl
# The history a worker keeps per session (src/store/ngx_http_agent_store_history.c):
# a turn's begin reads only the rows after the ones it kept, and the model
# still gets exactly the stored history: rows another writer appended are
# read, a history another writer cut and wrote again is read whole, an
# edit is sent, a history past the kept bound is read whole each turn.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    my @m = @{ $req->{messages} };
    return { tools => [[ 'c1', 'execute_sql_query',
                         '{"query": "SELECT 1 AS one"}' ]] }
        if $q =~ /^tool/ && $m[-1]{role} eq 'user';
    return { text => "answer to " . substr($q, 0, 40) };
});

# one worker: its kept rows are the ones the next turn meets
my $conf = $t->conf(workers => 1);
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
        $1};
$t->run($conf);

my $db = "$t->{dir}/agent.db";

# the contents of the messages the last request about $id sent
sub sent {
    my ($id) = @_;
    my @r = grep { !$_->{body}{_err}
                   && grep { ($_->{content} // '') =~ /\Q$id\E/ }
                          @{ $_->{body}{messages} } } $t->{mock}->requests;
    return [ map { $_->{content} // '' }
             grep { $_->{role} ne 'system' } @{ $r[-1]{body}{messages} } ];
}

sub turn_ok {
    my ($sid, $q) = @_;
    my $r = $t->turn($sid, $q);
    is($r->{events}[-1]{type}, 'end', "turn \"$q\" ends")
        or diag(explain($r->{events}[-1]));
}

# a writer of its own on the store: SQLite's file or PostgreSQL
sub store {
    my ($sql) = @_;
    $t->sqlite($db, $sql);
}

my $now = '2026-01-01T00:00:00.000Z';

# --- only the new rows are read ----------------------------------------------

my $s = $t->session;
turn_ok($s, "q$_ $s") for 1 .. 3;

# the module never changes a stored row: one changed behind its back
# shows which rows a turn reads again
store("UPDATE messages SET content = 'changed behind' "
      . "WHERE session_id = '$s' AND seq = 1");
turn_ok($s, "q4 $s");

my $m = sent($s);
is(scalar @$m, 7, 'the fourth turn sends seven messages');
is($m->[1], "answer to q1 $s",
   '... a row before the kept ones is not read again');
is($m->[5], "answer to q3 $s", '... the rows the last turn wrote are read');
is($m->[6], "q4 $s", '... then the new message');

# --- another writer cuts the history and writes other rows there -------------

# as a fork or a rollback on another worker does: new rows, new ids
store("DELETE FROM messages WHERE session_id = '$s' AND seq >= 5; "
      . "INSERT INTO messages (session_id, seq, role, content, created_at) "
      . "VALUES ('$s', 5, 'assistant', 'other 5', '$now'), "
      . "('$s', 6, 'user', 'other 6', '$now'), "
      . "('$s', 7, 'assistant', 'other 7', '$now')");
turn_ok($s, "q5 $s");

$m = sent($s);
is(scalar @$m, 9, 'after a cut elsewhere: nine messages');
is($m->[1], 'changed behind', '... the whole history read again');
is(join('|', @$m[5 .. 8]), "other 5|other 6|other 7|q5 $s",
   '... the rows written in the cut\'s place, then the new message');

# --- another writer appends -------------------------------------------------

store("INSERT INTO messages (session_id, seq, role, content, created_at) "
      . "VALUES ('$s', 10, 'user', 'appended elsewhere', '$now'); "
      . "UPDATE checkpoints SET msg_count = 11 WHERE session_id = '$s' "
      . "AND n = (SELECT MAX(n) FROM checkpoints WHERE session_id = '$s')");
turn_ok($s, "q6 $s");

$m = sent($s);
is(scalar @$m, 12, 'after an append elsewhere: twelve messages');
is(join('|', @$m[9 .. 11]), "answer to q5 $s|appended elsewhere|q6 $s",
   '... the row appended elsewhere in its place');
is($m->[6], 'other 6', '... the earlier ones as stored');

# --- an edit of an earlier message is sent -------------------------------------

sub lg_run {
    my ($th, $q) = @_;
    my $r = $t->http('POST', "/lg/threads/$th/runs/wait",
                     { assistant_id => 'react', input => { messages => [
                         { role => 'user', content => "$q $th" } ] } });
    is($r->{status}, 200, "run \"$q\" answered");
}

my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
lg_run($th, $_) for 'first', 'second';

# the kept rows are as stored; the edit is the state's, over them
my $first = $t->http('GET', "/lg/threads/$th/state")
                ->{json}{values}{messages}[0];
is($t->http('POST', "/lg/threads/$th/state", { values => { messages => [
       { %$first, content => "edited $th" } ] } })->{status}, 200,
   'the first question edited');
lg_run($th, 'third');
$m = sent($th);
is(join('|', @$m[0, 2, 4]), "edited $th|second $th|third $th",
   'the next run sends the edit');

# --- a history cut between a call and its result -------------------------------

# the kept request text holds the call's result; the history now stops
# before it: the call is closed for the provider, not taken as checked
my $c = $t->session;
turn_ok($c, "tool $c");
store("DELETE FROM messages WHERE session_id = '$c' AND seq >= 2; "
      . "UPDATE checkpoints SET msg_count = 2 WHERE session_id = '$c' "
      . "AND n = (SELECT MAX(n) FROM checkpoints WHERE session_id = '$c')");
turn_ok($c, "plain $c");
my @last = grep { $_->{role} ne 'system' }
           @{ (grep { !$_->{body}{_err} } $t->{mock}->requests)[-1]{body}
              {messages} };
is(join(',', map { $_->{role} } @last), 'user,assistant,tool,user',
   'the open call closed before the next question');
like($last[2]{content}, qr/^Not run/, '... as not run');

# --- past the bound (1 MiB) the history is read whole -------------------------

my $big = $t->session;
my $x = 'x' x 400_000;
turn_ok($big, "big$_ $big $x") for 1 .. 3;
store("UPDATE messages SET content = 'changed behind' "
      . "WHERE session_id = '$big' AND seq = 1");
turn_ok($big, "big4 $big");
$m = sent($big);
is(scalar @$m, 7, 'a history of 1.2 MB: seven messages');
is($m->[1], 'changed behind', '... read whole, not kept');
is(length $m->[4], length("big3 $big $x"), '... its large rows whole');

$t->check_log;

done_testing;
