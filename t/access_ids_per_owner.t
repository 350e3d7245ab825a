#!/usr/bin/perl
# Ids are per owner (issue 48, item 6): a client-chosen thread_id,
# assistant_id (LangGraph API) or AG-UI threadId that another owner has
# is this owner's own too: made, read, run, searched, copied, patched
# and deleted apart from the other's, answered with the client's id;
# a third owner gets the 404 of a free id.  On SQLite and (t/pg/run)
# PostgreSQL alike.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
my $dir = $t->dir;

# the model: "fine"; a slow answer the first time it is asked to be slow
# (its worker is killed meanwhile), at once after
$t->mock(sub {
    my ($req) = @_;
    return { text => 'fine' } unless AgentTest::last_user($req) eq 'slow';
    return { text => 'recovered' } if -e "$dir/cut";
    open my $fh, '>', "$dir/cut" or die;
    close $fh;
    return { text => 'never ' x 60, pieces => [ ('never ') x 60 ],
             delay => 0.5 };
});

my $conf = $t->conf(http => <<'HTTP');
agent_owner $http_x_user;
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
    agent_use_graph chat; agent_turn_lease 3s; }
    location /agui/ { agent_agui; agent_use_graph chat; }
    location /keep/ { agent_langgraph_api; agent_use_graph chat;
        agent_checkpoint_keep 2; }
    $1};
$t->run($conf);

my %ann = ('X-User' => 'ann');
my %bob = ('X-User' => 'bob');
my %cid = ('X-User' => 'cid');
sub lg { my ($m, $p, $b, %h) = @_; return $t->http($m, "/lg$p", $b, %h) }

# no answer shows the form the store keeps a scoped id in
sub clean {
    my ($r, $id, $what) = @_;
    unlike($r->{content} // $r->{raw} // '', qr/\Q$id\E\.[0-9a-f]/,
           "$what: the client's id only");
}

# --- threads ----------------------------------------------------------------

my $r = lg('POST', '/threads', { thread_id => 'shared-1',
    metadata => { who => 'ann' } }, %ann);
is($r->{status}, 200, 'ann makes thread shared-1');

$r = lg('POST', '/threads', { thread_id => 'shared-1',
    metadata => { who => 'bob' } }, %bob);
is($r->{status}, 200, 'bob makes shared-1 too: not 409')
    or diag $r->{content};
is($r->{json}{thread_id}, 'shared-1', '... answered with his id');
clean($r, 'shared-1', 'create');

$r = lg('POST', '/threads', { thread_id => 'shared-1' }, %bob);
is($r->{status}, 409, 'bob\'s own is taken: 409');
unlike($r->{content}, qr/shared-1\./, '... naming his id');
$r = lg('POST', '/threads', { thread_id => 'shared-1',
    if_exists => 'do_nothing' }, %bob);
is($r->{json}{metadata}{who}, 'bob', 'do_nothing: his own');

is(lg('GET', '/threads/shared-1', undef, %ann)->{json}{metadata}{who},
   'ann', 'ann reads hers');
$r = lg('GET', '/threads/shared-1', undef, %bob);
is($r->{json}{metadata}{who}, 'bob', 'bob reads his');
clean($r, 'shared-1', 'get');
$r = lg('GET', '/threads/shared-1', undef, %cid);
is($r->{status}, 404, 'a third owner: 404');
is_deeply($r->{json}, lg('GET', '/threads/free-1', undef, %cid)->{json},
          '... as for an id nobody has');

is(lg('PATCH', '/threads/shared-1', { metadata => { n => 2 } },
      %bob)->{status}, 200, 'bob patches his');
ok(!exists lg('GET', '/threads/shared-1', undef, %ann)->{json}{metadata}{n},
   '... ann\'s is unchanged');

# a run on each: each thread has its own messages
$r = lg('POST', '/threads/shared-1/runs/wait', { assistant_id => 'chat',
    input => { messages => [ { role => 'user', content => 'from bob' } ] } },
    %bob);
is($r->{status}, 200, 'a run on bob\'s') or diag $r->{content};
$r = $t->stream('/lg/threads/shared-1/runs/stream', encode_json({
    assistant_id => 'chat', stream_mode => [ 'values', 'messages' ],
    input => { messages => [ { role => 'user', content => 'from ann' } ] } }),
    headers => { %ann });
is($r->{status}, 200, 'a streamed run on ann\'s');
like($r->{headers}{'content-location'} // '', qr{^/threads/shared-1/runs/},
     '... Content-Location: her id');
clean($r, 'shared-1', 'stream');

$r = lg('GET', '/threads/shared-1/state', undef, %bob);
is_deeply([ map { $_->{content} } @{ $r->{json}{values}{messages} } ],
          [ 'from bob', 'fine' ], 'bob\'s state: his messages alone');
is($r->{json}{checkpoint}{thread_id}, 'shared-1', '... his id');
like($r->{json}{values}{messages}[0]{id}, qr/^shared-1-\d+$/,
     '... message ids of his id');
clean($r, 'shared-1', 'state');
is_deeply([ map { $_->{content} } @{ lg('GET', '/threads/shared-1/state',
              undef, %ann)->{json}{values}{messages} } ],
          [ 'from ann', 'fine' ], 'ann\'s state: hers alone');

$r = lg('POST', '/threads/shared-1/history', { limit => 10 }, %bob);
ok(@{ $r->{json} } >= 2, 'bob\'s history');
clean($r, 'shared-1', 'history');

$r = lg('GET', '/threads/shared-1/runs', undef, %bob);
is(scalar @{ $r->{json} }, 1, 'bob\'s runs: his one');
is($r->{json}[0]{thread_id}, 'shared-1', '... of his id');
my $run = $r->{json}[0]{run_id};
is(lg('GET', "/threads/shared-1/runs/$run", undef, %bob)->{status}, 200,
   'his run read');
is(lg('GET', "/threads/shared-1/runs/$run", undef, %ann)->{status}, 404,
   '... not through ann\'s thread');
my $none = '00000000-0000-0000-0000-000000000000';
$r = lg('GET', "/threads/shared-1/runs/$none", undef, %bob);
is($r->{status}, 404, 'a run he has not: 404');
clean($r, 'shared-1', '... its error');
$r = lg('GET', "/threads/shared-1/state/$none", undef, %bob);
is($r->{status}, 404, 'a checkpoint he has not: 404');
clean($r, 'shared-1', '... its error');

$r = lg('POST', '/threads/search', { limit => 100 }, %bob);
my @mine = grep { $_->{thread_id} eq 'shared-1' } @{ $r->{json} };
is(scalar @mine, 1, 'bob\'s search: shared-1 once');
is($mine[0]{metadata}{who}, 'bob', '... his');
clean($r, 'shared-1', 'search');

$r = lg('POST', '/threads/shared-1/copy', undef, %bob);
is($r->{status}, 200, 'bob copies his');
$r = lg('GET', "/threads/$r->{json}{thread_id}/state", undef, %bob);
is($r->{json}{values}{messages}[0]{content}, 'from bob',
   '... the copy holds his messages');
like($r->{json}{values}{messages}[0]{id}, qr/^shared-1-\d+$/,
     '... under their ids, of his id');
clean($r, 'shared-1', 'copy');

# every stream mode on his (scoped) thread, and its storage, name it by
# his id alone
$r = $t->stream('/lg/threads/shared-1/runs/stream', encode_json({
    assistant_id => 'chat', stream_mode => [ qw(values messages updates
        messages-tuple custom events debug tasks checkpoints) ],
    input => { messages => [ { role => 'user', content => 'again' } ] } }),
    headers => { %bob });
is($r->{status}, 200, 'a streamed run on bob\'s, every mode');
like($r->{raw} // '', qr/"session_id":"shared-1"/, '... events: his id');
clean($r, 'shared-1', 'stream modes');
$r = lg('GET', '/threads/shared-1/storage', undef, %bob);
is($r->{json}{thread_id}, 'shared-1', 'storage: his id');
clean($r, 'shared-1', 'storage');

# the first owner lets the id go: the second keeps his own, a third may
# take the bare id, and the second still cannot make a second one
is(lg('DELETE', '/threads/shared-1', undef, %ann)->{status}, 204,
   'ann deletes hers');
is(lg('GET', '/threads/shared-1', undef, %bob)->{json}{metadata}{who}, 'bob',
   'bob\'s is still there');
is(lg('POST', '/threads', { thread_id => 'shared-1' }, %bob)->{status}, 409,
   '... and his id still taken by him');
is(lg('POST', '/threads', { thread_id => 'shared-1',
      metadata => { who => 'cid' } }, %cid)->{status}, 200,
   'cid makes shared-1');
is(lg('GET', '/threads/shared-1', undef, %bob)->{json}{metadata}{who}, 'bob',
   'bob still reads his');
is(lg('DELETE', '/threads/shared-1', undef, %bob)->{status}, 204,
   'bob deletes his');
is(lg('GET', '/threads/shared-1', undef, %bob)->{status}, 404,
   '... gone for him');
is(lg('GET', '/threads/shared-1', undef, %cid)->{json}{metadata}{who}, 'cid',
   '... cid\'s is not');

# a run that makes its thread (if_not_exists) on an id another owner has
$r = lg('POST', '/threads', { thread_id => 'shared-2' }, %ann);
$r = lg('POST', '/threads/shared-2/runs/wait', { assistant_id => 'chat',
    if_not_exists => 'create',
    input => { messages => [ { role => 'user', content => 'new' } ] } },
    %bob);
is($r->{status}, 200, 'if_not_exists create on ann\'s id: bob\'s own');
is(scalar @{ lg('GET', '/threads/shared-2/state', undef,
                %ann)->{json}{values}{messages} // [] }, 0,
   '... ann\'s has no messages');

# a cron on a thread of that id: shown and found by its id
lg('POST', '/threads', { thread_id => 'shared-3' }, %ann);
lg('POST', '/threads', { thread_id => 'shared-3' }, %bob);
$r = lg('POST', '/threads/shared-3/runs/crons', { assistant_id => 'chat',
    schedule => '0 0 1 1 *' }, %bob);
is($r->{status}, 200, 'bob\'s cron on his shared-3') or diag $r->{content};
is($r->{json}{thread_id}, 'shared-3', '... of his id');
$r = lg('POST', '/runs/crons/search', { thread_id => 'shared-3' }, %bob);
is(scalar @{ $r->{json} }, 1, '... found by it');
is(scalar @{ lg('POST', '/runs/crons/search', { thread_id => 'shared-3' },
                %ann)->{json} }, 0, '... not by ann');

# a run whose worker is killed is taken over on the owner's thread: its
# request made again names the thread by the client's id, for its owner
lg('POST', '/threads', { thread_id => 'shared-4' }, %ann);
lg('POST', '/threads', { thread_id => 'shared-4' }, %bob);
$r = lg('POST', '/threads/shared-4/runs', { assistant_id => 'chat',
    input => { messages => [ { role => 'user', content => 'slow' } ] },
    stream_resumable => JSON::PP::true }, %bob);
is($r->{status}, 200, 'a background run on bob\'s shared-4');
my $slow = $r->{json}{run_id};
ok(AgentTest::wait_for(sub { -e "$dir/cut" }, 20), '... the model is slow');
my $holder = $t->sqlite("$dir/agent.db", "SELECT run_pid FROM sessions"
                        . " WHERE id LIKE 'shared-4.%'");
like($holder, qr/^\d+$/, '... a worker holds his thread');
kill 'KILL', $holder;
my $st = '';
ok(AgentTest::wait_for(sub {
    $st = lg('GET', "/threads/shared-4/runs/$slow", undef,
             %bob)->{json}{status} // '';
    $st eq 'success' }, 30), 'another worker finished his run')
    or diag("status: $st\n" . $t->slurp('error.log'));
is(lg('GET', '/threads/shared-4/state', undef,
      %bob)->{json}{values}{messages}[-1]{content}, 'recovered',
   '... on his thread');
is(scalar @{ lg('GET', '/threads/shared-4/state', undef,
                %ann)->{json}{values}{messages} // [] }, 0,
   '... not on ann\'s');

# --- assistants -------------------------------------------------------------

$r = lg('POST', '/assistants', { graph_id => 'chat', assistant_id => 'helper',
    name => 'ann-h' }, %ann);
is($r->{status}, 200, 'ann makes assistant helper');
$r = lg('POST', '/assistants', { graph_id => 'chat', assistant_id => 'helper',
    name => 'bob-h' }, %bob);
is($r->{status}, 200, 'bob makes helper too: not 409') or diag $r->{content};
is($r->{json}{assistant_id}, 'helper', '... answered with his id');
is(lg('POST', '/assistants', { graph_id => 'chat', assistant_id => 'helper' },
      %bob)->{status}, 409, 'his own is taken: 409');
is(lg('POST', '/assistants', { graph_id => 'chat', assistant_id => 'helper',
      if_exists => 'do_nothing' }, %bob)->{json}{name}, 'bob-h',
   'do_nothing: his own');

is(lg('GET', '/assistants/helper', undef, %ann)->{json}{name}, 'ann-h',
   'ann reads hers');
$r = lg('GET', '/assistants/helper', undef, %bob);
is($r->{json}{name}, 'bob-h', 'bob reads his');
clean($r, 'helper', 'assistant');
is(lg('GET', '/assistants/helper', undef, %cid)->{status}, 404,
   'a third owner: 404');
is(lg('GET', '/assistants/helper/graph', undef, %bob)->{status}, 200,
   'his graph');
is(lg('GET', '/assistants/helper/schemas', undef, %bob)->{status}, 200,
   'his schemas');

$r = lg('PATCH', '/assistants/helper', { name => 'bob-h2' }, %bob);
is($r->{json}{version}, 2, 'bob patches his: version 2');
is(lg('GET', '/assistants/helper', undef, %ann)->{json}{version}, 1,
   '... ann\'s is at 1');
$r = lg('POST', '/assistants/helper/versions', {}, %bob);
is(scalar @{ $r->{json} }, 2, 'his versions: 2');
clean($r, 'helper', 'versions');
is(scalar @{ lg('POST', '/assistants/helper/versions', {},
                %ann)->{json} }, 1, 'hers: 1');
$r = lg('POST', '/assistants/helper/latest', { version => 1 }, %bob);
is($r->{json}{name}, 'bob-h', 'his version 1 made the latest');

$r = lg('POST', '/assistants/search', { limit => 100 }, %bob);
my @h = grep { $_->{assistant_id} eq 'helper' } @{ $r->{json} };
is(scalar @h, 1, 'bob\'s search: helper once');
is($h[0]{name}, 'bob-h', '... his');
clean($r, 'helper', 'search');

# a run on his assistant names it by his id
$r = lg('POST', '/threads', undef, %bob);
my $tid = $r->{json}{thread_id};
$r = lg('POST', "/threads/$tid/runs/wait", { assistant_id => 'helper',
    input => { messages => [ { role => 'user', content => 'hi' } ] } }, %bob);
is($r->{status}, 200, 'a run on his helper');
$r = lg('GET', "/threads/$tid/runs", undef, %bob);
is($r->{json}[0]{assistant_id}, 'helper', '... the run names his id');
is(lg('GET', "/threads/$tid", undef, %bob)->{json}{metadata}{assistant_id},
   'helper', '... and the thread\'s metadata');

is(lg('DELETE', '/assistants/helper', undef, %bob)->{status}, 204,
   'bob deletes his');
is(lg('GET', '/assistants/helper', undef, %bob)->{status}, 404,
   '... gone for him');
is(lg('GET', '/assistants/helper', undef, %ann)->{json}{name}, 'ann-h',
   '... ann\'s is not');

# --- AG-UI ------------------------------------------------------------------

sub agui {
    my ($thread, $text, %h) = @_;
    return $t->stream('/agui/', encode_json({ threadId => $thread,
        runId => "run-$text", state => {}, tools => [], context => [],
        forwardedProps => {},
        messages => [ { id => "m-$text", role => 'user',
                        content => $text } ] }), headers => { %h });
}

$r = agui('ag-1', 'ann1', %ann);
is($r->{status}, 200, 'ann runs on AG-UI thread ag-1');
$r = agui('ag-1', 'bob1', %bob);
is($r->{status}, 200, 'bob runs on ag-1 too: not 404')
    or diag explain $r->{json};
my ($started) = grep { ($_->{type} // '') eq 'RUN_STARTED' } @{ $r->{events} };
is($started->{threadId}, 'ag-1', '... RUN_STARTED: his threadId');
clean($r, 'ag-1', 'AG-UI');
agui('ag-1', 'bob2', %bob);
is_deeply([ map { $_->{content} } @{ lg('GET', '/threads/ag-1/state', undef,
              %bob)->{json}{values}{messages} } ],
          [ 'bob1', 'fine', 'bob2', 'fine' ], 'his thread: his two runs');
is_deeply([ map { $_->{content} } @{ lg('GET', '/threads/ag-1/state', undef,
              %ann)->{json}{values}{messages} } ],
          [ 'ann1', 'fine' ], 'hers: her run');

# agent_checkpoint_keep bounds a thread kept under a scoped id too, one
# of the longest (64 bytes and its hash)
my $long = 'k' x 64;
lg('POST', '/threads', { thread_id => $long }, %ann);
$t->http('POST', '/keep/threads', { thread_id => $long }, %bob);
$t->http('POST', "/keep/threads/$long/runs/wait", { assistant_id => 'chat',
    input => { messages => [ { role => 'user', content => "run $_" } ] } },
    %bob) for 1 .. 4;
sub kept { $t->http('GET', "/keep/threads/$long/storage", undef,
                    %bob)->{json}{checkpoints}{count} // 0 }
AgentTest::wait_for(sub { kept() <= 2 }, 10);
ok(kept() >= 1 && kept() <= 2, 'bob\'s scoped thread: its checkpoints '
   . 'within the bound (' . kept() . ')');

# the store keeps both under ids of their own
is($t->sqlite("$dir/agent.db", "SELECT count(*) FROM sessions"
              . " WHERE id = 'ag-1' OR id LIKE 'ag-1.%'"), 2,
   'two rows for ag-1');

$t->stop;
$t->check_log(allow => qr/exited on signal 9/);

done_testing;
