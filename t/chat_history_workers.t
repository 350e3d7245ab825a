#!/usr/bin/perl
# Multi-turn memory: any worker continues any conversation, and so does a
# restarted nginx, from the shared checkpoint file.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
my $mock = $t->mock(sub {
    my ($req) = @_;
    my @users = map { $_->{content} }
                grep { $_->{role} eq 'user' } @{ $req->{messages} };
    return { text => 'I remember: ' . join(', ', @users) };
});

# reuseport lets the kernel spread the connections over both workers
my $conf = $t->conf;
$conf =~ s/(listen 127\.0\.0\.1:%%PORT%%)/$1 reuseport/;
$t->run($conf);

my $sid = $t->session;
my @said;
for my $i (1 .. 12) {
    push @said, "fact $i";
    my $r = $t->turn($sid, "fact $i");
    is($r->{events}[-1]{full_response}, 'I remember: ' . join(', ', @said),
       "turn $i sees every earlier turn");
}

my %pids;
my $log = $t->slurp('error.log');
$pids{$1}++
    while $log =~ /\[info\] (\d+)#\d+: .*turn on session "\Q$sid\E" ended/g;
is(scalar keys %pids, 2, 'both workers ran turns of the session')
    or diag(explain \%pids);

# a restart: new processes, the same conversation
$t->stop;
$t->run($conf);
push @said, 'after restart';
my $r = $t->turn($sid, 'after restart');
is($r->{events}[-1]{full_response}, 'I remember: ' . join(', ', @said),
   'the conversation survives a restart');

my $s = $t->http('GET', "/api/sessions/$sid")->{json};
is($s->{message_count}, 26, 'message_count across workers and restarts');

my $h = $t->http('GET', "/api/sessions/$sid/history")->{json}{checkpoints};
is(scalar @$h, 13 * 3, 'three checkpoints a turn');
my %ids = map { $_->{checkpoint_id} => 1 } @$h;
is(scalar(grep { !$_->{parent_checkpoint_id}
                 || $ids{$_->{parent_checkpoint_id}} } @$h), scalar @$h,
   'one unbroken chain of parents');

$t->stop;
$t->check_log;
done_testing;
