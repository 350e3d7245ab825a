#!/usr/bin/perl
# A client that goes away mid-stream cancels the upstream transfer (the mock
# sees its connection closed) and the rest of the turn; the steps already
# checkpointed stay and the session is free again.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
my $mock = $t->mock(sub {
    my ($req) = @_;
    my $q = $req->{messages}[-1]{content};
    return { text => join(' ', map { "w$_" } 1 .. 40), delay => 0.1 }
        if $q eq 'slow';
    return { text => "quick: $q" };
});
$t->run;

my $sid = $t->session;
# start, three node events (load_csv_metadata, model), three chunks
my $r = $t->turn($sid, 'slow', stop_after => 7);
ok($r->{stopped}, 'client left after 7 events');
is_deeply([ grep { $_ ne 'node' } @{ $r->{types} } ],
          [qw(start chunk chunk chunk)], 'it had streamed');

ok(AgentTest::wait_for(sub {
    grep { $_->{event} eq 'closed' } $mock->log_lines }, 5),
   'the mock saw its connection closed');
ok(!grep({ $_->{event} eq 'done' } $mock->log_lines),
   'the upstream stream never finished');

ok(AgentTest::wait_for(sub {
    $t->slurp('error.log') =~ /client gone, turn on session "\Q$sid\E"/ }),
   'the turn was cancelled');

$r = $t->turn($sid, 'next');
is($r->{types}[-1], 'end', 'the session is free again');
is($r->{events}[-1]{full_response}, 'quick: next', 'and answers');

my $h = $t->http('GET', "/api/sessions/$sid/history")->{json}{checkpoints};
my @nodes = map { $_->{node} } reverse @$h;
is_deeply([ @nodes[0, 1] ], [qw(__input__ load_csv_metadata)],
          'the steps before the disconnect were kept');
my $m = $t->http('GET', "/api/sessions/$sid/messages")->{json}{messages};
is_deeply([ map { $_->{content} } @$m ], [ 'slow', 'next', 'quick: next' ],
          'no partial answer was recorded');

$t->stop;
$t->check_log;
done_testing;
