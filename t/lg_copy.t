#!/usr/bin/perl
# POST /threads/{id}/copy (issue 30, item 3): a new thread with all the
# thread has: its state, its history (its checkpoints with the same ids,
# as LangGraph's copy keeps them: a checkpoint's id is its thread's; each
# the parent of the next as before), its messages with the same ids, its
# runs, its metadata; the copy
# and the original go on apart; another owner's thread is not there to
# copy; a thread waiting on an interrupt is copied waiting.  On both
# stores (make test-pg).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub { { text => 'answer to ' . AgentTest::last_user($_[0]) } });

my $conf = $t->conf(http => <<'HTTP');
agent_graph two {
    channel note value;
    node think llm;
    node mark template output=note text=marked;
    edge START think;
    edge think mark;
    edge mark END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
        agent_use_graph two; }
    location /mine/ { agent_langgraph_api; agent_use_graph two;
                      agent_owner \$http_x_user; }
    $1};
$t->run($conf);

sub lg { my ($m, $p, $b, %h) = @_; return $t->http($m, "/lg$p", $b, %h) }
sub texts { [ map { $_->{content} } @{ $_[0]{values}{messages} } ] }
sub say_ { { messages => [ { role => 'user', content => $_[0] } ] } }

my $th = lg('POST', '/threads', { metadata => { team => 'a' } })
         ->{json}{thread_id};
lg('POST', "/threads/$th/runs/wait", { assistant_id => 'two',
                                       input => say_('one') });
my $orig = lg('GET', "/threads/$th/state")->{json};
my $ohist = lg('POST', "/threads/$th/history", { limit => 20 })->{json};

my $r = lg('POST', "/threads/$th/copy");
is($r->{status}, 200, 'a copy');
my $cp = $r->{json}{thread_id};
ok($cp && $cp ne $th, 'a new thread');
is($r->{json}{metadata}{team}, 'a', 'with the metadata');
is($r->{json}{status}, 'idle', 'idle');

my $copy = lg('GET', "/threads/$cp/state")->{json};
is_deeply(texts($copy), texts($orig), 'the same messages');
is($copy->{values}{note}, 'marked', 'the same channels');
is($copy->{metadata}{step}, $orig->{metadata}{step}, 'at the same step');
is($copy->{checkpoint}{checkpoint_id}, $orig->{checkpoint}{checkpoint_id},
   'its checkpoints keep their ids (LangGraph\'s copy)');
is_deeply([ map { $_->{id} } @{ $copy->{values}{messages} } ],
          [ map { $_->{id} } @{ $orig->{values}{messages} } ],
          '... and its messages theirs');
is($copy->{checkpoint}{thread_id}, $cp, '... in the copy');

my $chist = lg('POST', "/threads/$cp/history", { limit => 20 })->{json};
is(scalar @$chist, scalar @$ohist, 'the whole history');
is_deeply([ map { [ $_->{metadata}{step}, $_->{next} ] } @$chist ],
          [ map { [ $_->{metadata}{step}, $_->{next} ] } @$ohist ],
          '... step by step');
my $chained = 1;
for my $i (0 .. $#$chist - 1) {
    $chained &&= $chist->[$i]{parent_checkpoint}{checkpoint_id}
                 eq $chist->[$i + 1]{checkpoint}{checkpoint_id};
}
ok($chained, 'each checkpoint the parent of the next, as before');
is_deeply([ map { $_->{checkpoint}{checkpoint_id} } @$chist ],
          [ map { $_->{checkpoint}{checkpoint_id} } @$ohist ],
          '... with the same ids');
is(lg('GET', "/threads/$cp/state/$ohist->[1]{checkpoint}{checkpoint_id}")
   ->{json}{checkpoint}{thread_id}, $cp,
   'a checkpoint of the copy read by its id: the copy\'s');
is_deeply([ map { texts($_) } @$chist ], [ map { texts($_) } @$ohist ],
          'each with its messages');

my $runs = lg('GET', "/threads/$cp/runs")->{json};
is(scalar @$runs, 1, 'its run');
is($runs->[0]{thread_id}, $cp, '... on the copy');
isnt($runs->[0]{run_id}, lg('GET', "/threads/$th/runs")->{json}[0]{run_id},
     '... with an id of its own');
is($runs->[0]{status}, 'success', '... as it ended');

# apart from here on
$r = lg('POST', "/threads/$cp/runs/wait", { assistant_id => 'two',
                                            input => say_('two') });
is_deeply([ map { $_->{content} } @{ $r->{json}{messages} } ],
          [ 'one', 'answer to one', 'two', 'answer to two' ],
          'the copy goes on');
is_deeply(texts(lg('GET', "/threads/$th/state")->{json}), texts($orig),
          'the original as it was');
lg('DELETE', "/threads/$th");
is_deeply(texts(lg('GET', "/threads/$cp/state")->{json}),
          [ 'one', 'answer to one', 'two', 'answer to two' ],
          'the original deleted: the copy keeps all');

# a fork of the copy from its input checkpoint
$chist = lg('POST', "/threads/$cp/history", { limit => 20 })->{json};
my ($first) = grep { $_->{metadata}{step} == -1 } @$chist;
$r = lg('POST', "/threads/$cp/runs/wait", { assistant_id => 'two',
    checkpoint_id => $first->{checkpoint}{checkpoint_id},
    input => say_('edited') });
is_deeply([ map { $_->{content} } @{ $r->{json}{messages} } ],
          [ 'edited', 'answer to edited' ],
          'the copy\'s checkpoints fork as any');

# an edited message is copied as edited
my $t2 = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$t2/runs/wait", { assistant_id => 'two',
                                       input => say_('x') });
my $ai = { %{ lg('GET', "/threads/$t2/state")->{json}{values}{messages}[1] } };
$ai->{content} = 'edited';
lg('POST', "/threads/$t2/state", { values => { messages => [ $ai ] } });
my $c2 = lg('POST', "/threads/$t2/copy")->{json}{thread_id};
is_deeply(texts(lg('GET', "/threads/$c2/state")->{json}), [ 'x', 'edited' ],
          'a replaced message: copied replaced');
my $ai2 = { %{ lg('GET', "/threads/$c2/state")->{json}{values}{messages}[0] } };
$ai2->{content} = 'x again';
lg('POST', "/threads/$c2/state", { values => { messages => [ $ai2 ] } });
is_deeply(texts(lg('GET', "/threads/$c2/state")->{json}),
          [ 'x again', 'edited' ],
          'a copied message edited by its kept id: replaced in the copy');
is_deeply(texts(lg('GET', "/threads/$t2/state")->{json}), [ 'x', 'edited' ],
          '... not in the original');

# waiting on an interrupt: so is the copy
my $t3 = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$t3/runs/wait", { assistant_id => 'two',
    input => say_('y'), interrupt_before => [ 'mark' ] });
my $c3 = lg('POST', "/threads/$t3/copy")->{json}{thread_id};
is(lg('GET', "/threads/$c3")->{json}{status}, 'interrupted',
   'a waiting thread: the copy waits');
$r = lg('POST', "/threads/$c3/runs/wait", { assistant_id => 'two',
                                            input => undef });
is($r->{json}{note}, 'marked', '... and goes on');
is(lg('GET', "/threads/$t3")->{json}{status}, 'interrupted',
   '... the original still waits');

# owners, unknown threads
my %ann = ('X-User' => 'ann');
my %bob = ('X-User' => 'bob');
my $at = $t->http('POST', '/mine/threads', {}, %ann)->{json}{thread_id};
is($t->http('POST', "/mine/threads/$at/copy", undef, %bob)->{status}, 404,
   'another owner\'s thread: 404');
$r = $t->http('POST', "/mine/threads/$at/copy", undef, %ann);
is($r->{status}, 200, 'the owner\'s own: copied');
is($t->http('GET', "/mine/threads/$r->{json}{thread_id}", undef, %bob)
   ->{status}, 404, '... the copy the owner\'s too');
is(lg('POST', '/threads/nothing-here/copy')->{status}, 404,
   'no such thread: 404');
is(lg('GET', "/threads/$cp/copy")->{status}, 405, 'GET: 405');

my $was = texts(lg('GET', "/threads/$cp/state")->{json});
$t->stop;
$t->check_log;

# a file of an earlier version (checkpoint ids unique across threads, no
# namespaces): its checkpoints rebuilt once at start, none lost
SKIP: {
    skip 'SQLite files only', 6 if $ENV{AGENT_PG};
    my $db = $t->dir . '/agent.db';
    # (a copy's ids are its original's: such an earlier file has one each)
    system('sqlite3', $db, 'ALTER TABLE checkpoints RENAME TO c0;'
        . ' DROP INDEX checkpoints_session; DROP INDEX checkpoints_id;'
        . ' CREATE TABLE checkpoints (n INTEGER PRIMARY KEY AUTOINCREMENT,'
        . ' id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, parent_id TEXT,'
        . ' step INTEGER NOT NULL, node TEXT NOT NULL, next TEXT,'
        . ' msg_count INTEGER NOT NULL, channels TEXT NOT NULL,'
        . ' created_at TEXT NOT NULL);'
        . ' CREATE INDEX checkpoints_session ON checkpoints (session_id, n);'
        . ' INSERT INTO checkpoints SELECT n, id, session_id, parent_id,'
        . ' step, node, next, msg_count, channels, created_at FROM c0'
        . ' WHERE id IN'
        . ' (SELECT id FROM c0 GROUP BY id HAVING count(*) = 1);'
        . ' DROP TABLE c0;'
        # rows deleted at its end once: AUTOINCREMENT past the last row
        . " UPDATE sqlite_sequence SET seq = seq + 100"
        . " WHERE name = 'checkpoints';") == 0 or die;
    my $seq = $t->sqlite($db, "SELECT seq FROM sqlite_sequence"
                              . " WHERE name = 'checkpoints'");
    my $rows = $t->sqlite($db, 'SELECT count(*) || \',\' || sum(n)'
                               . ' FROM checkpoints');
    is($t->sqlite($db, "SELECT count(*) FROM sqlite_master WHERE name ="
                       . " 'sqlite_autoindex_checkpoints_1'"), 1,
       'an earlier file: ids unique across threads');
    $t->run($conf);
    is($t->sqlite($db, "SELECT count(*) FROM sqlite_master WHERE name ="
                       . " 'sqlite_autoindex_checkpoints_1'"), 0,
       '... rebuilt at start: unique per thread');
    is($t->sqlite($db, 'SELECT count(*) || \',\' || sum(n)'
                       . ' FROM checkpoints'), $rows,
       '... every checkpoint kept, in its order');
    is($t->sqlite($db, "SELECT seq FROM sqlite_sequence"
                       . " WHERE name = 'checkpoints'"), $seq,
       '... its AUTOINCREMENT carried over');
    is_deeply(texts(lg('GET', "/threads/$cp/state")->{json}), $was,
              '... a thread reads as before');
    is(lg('POST', "/threads/$cp/copy")->{status}, 200,
       '... and is copied, its ids kept');
    $t->stop;
    $t->check_log;
}

done_testing;
