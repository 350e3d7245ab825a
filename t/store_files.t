#!/usr/bin/perl
# The master never follows a link it did not make, and the files that hold
# the conversations are the workers' user's alone: the checkpoint database
# and its -wal and -shm 0600, its folder and the resources folder 0700, an
# uploaded CSV's file 0600.  A database, -wal or resources folder swapped
# for a symbolic link (as a worker-user process could) stops the start,
# and the link's target keeps its owner and mode.  Needs root.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

plan skip_all => 'needs root: the master hands files to the workers\' user'
    if $> != 0;
plan skip_all => 'make test-pg: no SQLite file to hand over' if $ENV{AGENT_PG};
my $wuser = 'www-data';
my $wuid = getpwnam($wuser);
plan skip_all => "no user $wuser" unless defined $wuid;

my $t = AgentTest->new;
$t->mock(sub { { text => 'ok' } });
my $dir = $t->dir;
my $data = "$dir/data";
my $res = "$dir/res";
mkdir "$dir/$_" for qw(body proxy fastcgi uwsgi scgi);
chown $wuid, -1, "$dir/body";

my $conf = $t->conf(user => "user $wuser;");
$conf =~ s{agent_checkpoint_db \S+;}{agent_checkpoint_db $data/agent.db;};
$conf =~ s{agent_resources_dir \S+;}{agent_resources_dir $res;};

sub mode { my @s = stat $_[0] or return 'none'; sprintf '%04o', $s[2] & 07777 }
sub owner { my @s = lstat $_[0] or return -1; $s[4] }

$t->run($conf);
my $sid = $t->session;
my $up = $t->http('POST', "/api/sessions/$sid/resources?name=x.csv",
                  "a,b\n1,2\n", 'Content-Type' => 'text/csv');
is($up->{status}, 201, 'a CSV uploaded');
is($t->turn($sid, 'hi')->{types}[-1], 'end', 'a turn');

is(mode($data), '0700', 'the database folder the master made: 0700');
is(owner($data), $wuid, 'the workers\' user\'s');
is(mode("$data/agent.db"), '0600', 'the database: 0600');
is(owner("$data/agent.db"), $wuid, 'the workers\' user\'s');
is(mode("$data/agent.db-wal"), '0600', 'its -wal: 0600');
is(mode("$data/agent.db-shm"), '0600', 'its -shm: 0600');
is(mode($res), '0700', 'the resources folder: 0700');
is(owner($res), $wuid, 'the workers\' user\'s');
my ($file) = glob("$res/*.sqlite");
is(mode($file // ''), '0600', 'an uploaded CSV\'s file: 0600');
$t->stop;

# a file of an earlier version, readable by every local account
chmod 0644, "$data/agent.db";
$t->run($conf);
is(mode("$data/agent.db"), '0600', 'a 0644 database is 0600 after a start');
$t->stop;

# a secret of root's, and the files swapped for links to it
my $secret = "$dir/secret";
open my $fh, '>', $secret or die;
print $fh "root's\n";
close $fh;
chmod 0600, $secret;

for my $swap ([ "$data/agent.db-wal", 'the -wal' ],
              [ "$data/agent.db", 'the database' ],
              [ $res, 'the resources folder' ]) {
    my ($path, $what) = @$swap;
    my $keep = "$path.keep";
    # (a clean stop removes the -wal: the link then stands alone)
    my $had = -e $path;
    rename $path, $keep or die "$path: $!" if $had;
    symlink $swap->[0] eq $res ? $dir : $secret, $path or die $!;
    my $target = $swap->[0] eq $res ? $dir : $secret;
    my @before = (owner($target), mode($target));

    my $started = eval { $t->run($conf); 1 };
    $t->stop if $started;
    ok(!$started, "$what swapped for a link: nginx refuses to start");
    like($t->slurp('nginx.out') . $t->slurp('error.log'),
         qr/is a symbolic link: refused/, 'and says why');
    is_deeply([ owner($target), mode($target) ], \@before,
              "$what: the link's target keeps its owner and mode");

    unlink $path;
    rename $keep, $path or die $! if $had;
}

$t->run($conf);
is($t->turn($sid, 'again')->{types}[-1], 'end',
   'the files back: nginx starts and answers');
$t->stop;
$t->check_log(allow => qr/symbolic link/);
done_testing;
