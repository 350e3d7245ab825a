#!/usr/bin/perl
# Reload is a deploy: after nginx -s reload new turns run the new graph
# while the turn streaming at the reload ends on the old one; a session
# whose checkpoint was written by a graph with other channels continues,
# unknown channels kept, missing ones at their defaults.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use POSIX ();
use Time::HiRes qw(sleep);

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    return { text => join(' ', map { "w$_" } 1 .. 12), delay => 0.25 }
        if $q =~ /^slow/;
    return { text => "fine: $q" };
});

my $v1 = <<'G';
agent_graph assistant {
    channel model_calls sum;
    channel topic value 'default="none"';
    node model llm count=model_calls;
    edge START model;
    edge model END;
}
agent_use_graph assistant;
G

my $v2 = <<'G';
agent_graph assistant {
    channel mood value 'default="calm"';
    node model llm;
    node sign template "text= -- v2 ({{mood}})";
    edge START model;
    edge model sign;
    edge sign END;
}
agent_use_graph assistant;
G

$t->run($t->conf(http => $v1));

sub nodes {
    my ($types) = @_;
    return [ map { $_->{name} } grep { $_->{type} eq 'node'
                                       && $_->{status} eq 'start' } @$types ];
}

sub state {
    my ($sid) = @_;
    return $t->http('GET', "/api/sessions/$sid/state")->{json};
}

sub reload {
    my ($conf, %o) = @_;
    my @old = $t->worker_pids;
    $t->write_conf($conf);
    kill 'HUP', $t->{nginx};
    my $ok = AgentTest::wait_for(sub {
        my %old = map { $_ => 1 } @old;
        grep { !$old{$_} } $t->worker_pids }, 10);
    # an old worker takes no new connection once it has the signal; wait
    # for the idle ones to be gone, so that none races the next request
    return $ok if $o{busy};
    return $ok && AgentTest::wait_for(sub { !(grep { kill 0, $_ } @old) },
                                       10);
}

my $sid = $t->session;
my $r = $t->turn($sid, 'first');
is_deeply(nodes($r->{events}), ['model'], 'v1 runs');
is(state($sid)->{values}{model_calls}, 1, 'v1 counts its calls');

# a turn streams while nginx reloads into v2
my $out = $t->dir . '/child.json';
my $pid = fork() // die;
if ($pid == 0) {
    my $c = $t->turn($sid, 'slow one', timeout => 30);
    open my $fh, '>', $out or POSIX::_exit(1);
    print $fh encode_json({ events => $c->{events}, text => $c->{text} });
    close $fh;
    POSIX::_exit(0);
}

sleep 0.8;
ok(reload($t->conf(http => $v2), busy => 1), 'reloaded into v2');

waitpid($pid, 0);
open my $fh, '<', $out or die;
my $old = decode_json(do { local $/; <$fh> });
close $fh;

is($old->{events}[-1]{type}, 'end', 'the streaming turn ends with end');
is_deeply(nodes($old->{events}), ['model'], 'on the old graph');
is($old->{text}, join(' ', map { "w$_" } 1 .. 12), 'with its whole text');

# the next turn runs v2 on the same session
$r = $t->turn($sid, 'after');
is_deeply(nodes($r->{events}), [qw(model sign)], 'the next turn runs v2');
is($r->{events}[-1]{full_response}, ' -- v2 (calm)',
   'v2\'s last node answers, its new channel at the default');

my $st = state($sid);
is($st->{values}{mood}, 'calm', 'v2\'s channel is in the state');
is($st->{values}{model_calls}, 2, 'v1\'s counter is kept');
is($st->{values}{topic}, 'none', 'v1\'s value is kept');
is(scalar(grep { $_->{role} eq 'user' } @{ $t->http('GET',
   "/api/sessions/$sid/messages")->{json}{messages} }), 3,
   'the conversation goes on');

# and back to v1: its channels were never lost
ok(reload($t->conf(http => $v1)), 'reloaded back into v1');
$r = $t->turn($sid, 'again');
is_deeply(nodes($r->{events}), ['model'], 'v1 runs again');
$st = state($sid);
is($st->{values}{model_calls}, 3, 'v1 counts on from where it was');
is($st->{values}{mood}, 'calm', 'and keeps v2\'s channel');

$t->check_log;
done_testing;
