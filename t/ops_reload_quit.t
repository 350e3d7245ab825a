#!/usr/bin/perl
# nginx -s reload and nginx -s quit while a turn streams: on reload the
# old worker finishes the turn, new workers serve new requests and the old
# one exits; on quit with worker_shutdown_timeout the turn ends with a
# clean error event before nginx closes it, every process exits, the
# store keeps what completed and the session works after a restart.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Time::HiRes qw(time sleep);
use POSIX qw(WNOHANG);

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $q = $req->{messages}[-1]{content} // '';
    return { text => join(' ', map { "w$_" } 1 .. 12), delay => 0.25 }
        if $q =~ /^slow/;
    return { text => "fine: $q" };
});
my $conf = $t->conf;
(my $conf_timeout = $conf) =~ s/(events \{)/worker_shutdown_timeout 2s;\n$1/;
$t->run($conf);
my $db = $t->dir . '/agent.db';

# a turn read by a child; its events come back through a file
sub turn_in_child {
    my ($sid, $msg) = @_;
    my $out = $t->dir . "/child-$msg.json";
    my $pid = fork() // die;
    if ($pid == 0) {
        my $r = $t->turn($sid, $msg, timeout => 30);
        open my $fh, '>', $out or POSIX::_exit(1);
        print $fh encode_json({ types => $r->{types}, text => $r->{text},
                                last => $r->{events}[-1] // {} });
        close $fh;
        POSIX::_exit(0);
    }
    return ($pid, $out);
}

sub result {
    my ($pid, $out) = @_;
    waitpid($pid, 0);
    open my $fh, '<', $out or return {};
    local $/;
    return decode_json(<$fh>);
}

# 1. reload mid-stream
my $sid = $t->session;
my @old = $t->worker_pids;
my ($pid, $out) = turn_in_child($sid, 'slow reload');
sleep 0.8;
kill 'HUP', $t->{nginx};

ok(AgentTest::wait_for(sub {
    my %old = map { $_ => 1 } @old;
    grep { !$old{$_} } $t->worker_pids } , 10), 'new workers started');
my $other = $t->session;
is($t->turn($other, 'during reload')->{types}[-1], 'end',
   'a new request is served meanwhile');

my $res = result($pid, $out);
is($res->{types}[-1], 'end', 'the turn streaming at the reload ends');
is($res->{text}, join(' ', map { "w$_" } 1 .. 12), 'with its whole text');
ok(AgentTest::wait_for(sub { !(grep { kill 0, $_ } @old) }, 10),
   'the old workers exit after it');
is($t->sqlite($db, "SELECT COUNT(*) FROM messages WHERE session_id = '$sid'"),
   2, 'the store has the whole turn');

# 2. quit mid-stream with worker_shutdown_timeout 2s (loaded by a reload)
$t->write_conf($conf_timeout);
@old = $t->worker_pids;
kill 'HUP', $t->{nginx};
ok(AgentTest::wait_for(sub { !(grep { kill 0, $_ } @old) }, 10),
   'reloaded with worker_shutdown_timeout 2s');
my $master = $t->{nginx};
($pid, $out) = turn_in_child($sid, 'slow quit');
sleep 0.8;
my $t0 = time;
kill 'QUIT', $master;

$res = result($pid, $out);
my $took = time - $t0;
is($res->{types}[-1], 'error', 'the turn ends with an error event');
is($res->{last}{code}, 'shutdown', 'code shutdown');
like($res->{last}{error} // '', qr/shutting down/, 'says why');
ok($took < 2.5, sprintf('before the shutdown timeout (%.1f s)', $took));

ok(AgentTest::wait_for(sub { waitpid($master, WNOHANG) == $master }, 10),
   'every nginx process exits');
delete $t->{nginx};

is($t->sqlite($db, "SELECT run_id IS NULL FROM sessions WHERE id = '$sid'"),
   1, 'the session is not left locked');
is($t->sqlite($db, 'PRAGMA integrity_check'), 'ok', 'the store is intact');
my $n = $t->sqlite($db, 'SELECT COUNT(*) FROM messages '
                        . "WHERE session_id = '$sid'");
is($n, 3, 'the user message of the cut turn is kept, no half answer');

# 3. after a restart the session goes on
$t->run($conf_timeout);
$res = $t->turn($sid, 'after');
is($res->{types}[-1], 'end', 'the session works after the restart');
my $m = $t->http('GET', "/api/sessions/$sid/messages")->{json}{messages};
is_deeply([ map { $_->{content} } @$m ],
          [ 'slow reload', join(' ', map { "w$_" } 1 .. 12), 'slow quit',
            'after', 'fine: after' ], 'the history in order');

$t->stop;
$t->check_log;
done_testing;
