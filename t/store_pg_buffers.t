#!/usr/bin/perl
# The PostgreSQL store gives back what a large message took.  libpq's
# buffers grow to the largest message a connection sent or read and never
# shrink; over a walk of large bodies a worker's four connections held
# 265 MB.  A connection that carried a message over 1 MiB is opened again
# once it is idle (pg_conn.c): its backend changes, what waited
# behind it goes out on the new one, nothing is lost, and a connection
# that carried only small statements keeps its backend.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN {
    # make test: a cluster of its own for this file
    unless ($ENV{AGENT_PG}) {
        exec "$FindBin::Bin/pg/run", $^X, $0;
        die "t/pg/run: $!";
    }
}

use AgentTest;

my $db = 'buffers';
AgentTest::pg_query('postgres', "DROP DATABASE IF EXISTS $db");
AgentTest::pg_query('postgres', "CREATE DATABASE $db");

my $t = AgentTest->new;
$t->mock(sub { return { text => 'seen' } });

# one worker, one connection: every statement on the one backend
my $conf = $t->conf(workers => 1, http => 'client_max_body_size 8m;
    agent_max_document_size 2m;');
$conf =~ s{agent_checkpoint_db \S+;}
          {agent_checkpoint_db $ENV{AGENT_PG}/$db pool=1;};
$t->run($conf);

sub backends {
    return AgentTest::pg_query($db, "SELECT pid FROM pg_stat_activity "
        . "WHERE datname = '$db' AND pid <> pg_backend_pid() ORDER BY pid");
}

my $sid = $t->session;
is($t->turn($sid, 'small one')->{types}[-1], 'end', 'a small turn');
my $before = backends();
like($before, qr/^\d+$/, "one backend ($before)");

for my $n (1 .. 3) {
    is($t->turn($sid, "small $n")->{types}[-1], 'end', "small turn $n");
}
is(backends(), $before, 'small statements keep their backend');

# a message of 1.5 MB: its write and the history read after it are large
my $big = 'b' x (1536 * 1024);
my $r = $t->turn($sid, $big);
is($r->{types}[-1], 'end', 'a turn with a message of 1.5 MB');
is($r->{events}[-1]{full_response}, 'seen', 'answered');

my $after;
AgentTest::wait_for(sub { $after = backends(); $after =~ /^\d+$/
                          && $after ne $before }, 20);
isnt($after, $before, "the connection was opened again ($before -> "
     . ($after // '?') . ')');

# what follows goes out on the new backend, and the history is whole
is($t->turn($sid, 'after it')->{types}[-1], 'end', 'a turn after it');
# the pages of the history (a page ends past 1 MiB of text)
my (@m, $before_id);
for (1 .. 12) {
    my $q = defined $before_id ? "?before=$before_id" : '';
    my $page = $t->http('GET', "/api/sessions/$sid/messages$q")->{json};
    unshift @m, @{ $page->{messages} // [] };
    last unless $page->{has_more};
    $before_id = $page->{next_before};
}
my $m = \@m;
is(scalar @$m, 12, 'the history holds all 12 messages');
is(length($m->[8]{content} // ''), length $big,
   'the large message whole');
is($m->[-1]{content}, 'seen', 'the last answer');

# many at once while the connection is renewed: none fails
my @pids;
for my $n (1 .. 4) {
    my $pid = fork() // die;
    if ($pid == 0) {
        my $s = $t->session;
        my $ok = ($t->turn($s, $n % 2 ? $big : 'small')->{types}[-1] // '')
                 eq 'end';
        POSIX::_exit($ok ? 0 : 1);
    }
    push @pids, $pid;
}
my $failed = 0;
for (@pids) {
    waitpid($_, 0);
    $failed++ if $?;
}
is($failed, 0, 'four turns at once, two of them large: all end');

$t->check_log;
done_testing;
