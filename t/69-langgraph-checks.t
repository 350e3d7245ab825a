#!/usr/bin/perl
# agent_langgraph_api gets the checks of the location and bounded answers
# (issue 28, items 3 and 5): a thread's history and a search of threads
# stop at a byte budget, read one entry at a time, so that a long thread
# cannot make the worker hold its whole history.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($last) = map { $_->{content} } grep { $_->{role} eq 'user' } reverse @m;
    # "big N": an answer of N KB
    return { text => join('', map { chr(97 + $_ % 26) x 1023 . ' ' }
                                  1 .. $1) } if $last =~ /^big (\d+)/;
    return { text => "Hello from the mock" };
});

my $conf = $t->conf(workers => 1);
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
        $1};
$t->run($conf);

my ($worker) = $t->worker_pids;

# the peak memory of the worker so far, in KB
sub peak {
    open my $fh, '<', "/proc/$worker/status" or return 0;
    while (<$fh>) {
        return $1 if /^VmHWM:\s+(\d+)/;
    }
    return 0;
}

sub lg {
    my ($method, $path, $body) = @_;
    return $t->http($method, "/lg$path", $body);
}

# 1. a thread of 40 turns of 20 KB: 120 checkpoints, each state up to
# 800 KB; all its history at once was about 50 MB
my $r = lg('POST', '/threads', { thread_id => 'long-1' });
is($r->{status}, 200, 'a thread');
for my $i (1 .. 40) {
    my $e = $t->turn('long-1', "big 20");
    $e->{events}[-1]{type} eq 'end' or diag("turn $i: $e->{raw}"), last;
}

my $base = peak();

$r = lg('GET', '/threads/long-1/history');
is($r->{status}, 200, 'GET history');
is(scalar @{ $r->{json} }, 10, 'the default limit is 10');

$r = lg('POST', '/threads/long-1/history', { limit => 1000 });
is($r->{status}, 200, 'POST history, limit 1000');
my $h = $r->{json};
ok(@$h >= 1 && @$h < 120, 'fewer entries than asked: ' . scalar @$h);
ok(length $r->{content} <= 8 * 1024 * 1024 + 4096,
   'the answer within the budget: ' . length $r->{content});
is(scalar @{ $h->[0]{values}{messages} }, 80,
   'the newest entry first, whole');

# the next page starts where the first stopped
my $last = $h->[-1]{checkpoint}{checkpoint_id};
$r = lg('POST', '/threads/long-1/history',
        { limit => 1000,
          before => { configurable => { checkpoint_id => $last } } });
is($r->{status}, 200, 'the next page with before');
is($r->{json}[0]{checkpoint}{checkpoint_id},
   $h->[-1]{parent_checkpoint}{checkpoint_id},
   'it goes on with the parent of the last entry');

my $grown = peak() - $base;
ok($grown < 40 * 1024, "the worker grew by $grown KB (< 40 MB)");

# 2. threads/search: 10 threads of 1 MB values answer within the budget
for my $i (1 .. 10) {
    lg('POST', '/threads', { thread_id => "wide-$i" });
    $t->turn("wide-$i", "big 1000");
}
$base = peak();
$r = lg('POST', '/threads/search', { limit => 100 });
is($r->{status}, 200, 'threads/search');
ok(@{ $r->{json} } >= 1 && @{ $r->{json} } < 11,
   'fewer threads than there are: ' . scalar @{ $r->{json} });
ok(length $r->{content} <= 8 * 1024 * 1024 + 4096,
   'the search within the budget: ' . length $r->{content});
$r = lg('POST', '/threads/search', { limit => 100,
                                     offset => scalar @{ $r->{json} } });
ok(@{ $r->{json} } >= 1, 'the rest with offset: ' . scalar @{ $r->{json} });
$grown = peak() - $base;
ok($grown < 40 * 1024, "the search grew the worker by $grown KB (< 40 MB)");

$t->stop;
$t->check_log;

done_testing;
