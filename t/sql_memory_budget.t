#!/usr/bin/perl
# The memory budget of a statement: a row of values far larger than the
# budget fails with the budget's words long before its time cap, and the
# next statement on the same thread runs normally.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use Time::HiRes qw(time);

my %sql = (
    # 200 values of 900 KB alive at once in one row: 180 MB
    huge => 'SELECT ' . join(', ', map { "printf('%.*c', 900000, 'x') AS c$_" }
                                  1 .. 200),
    small => 'SELECT 6 * 7',
);

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    return { text => 'done' } if $last->{role} eq 'tool';
    return { tools => [[ 'c', 'execute_sql_query',
                         encode_json({ query => $sql{$last->{content}} }) ]] };
});
$t->run($t->conf(workers => 1, location => 'agent_sql_timeout 60s; '
                                           . 'agent_sql_thread_pool one;',
                 http => '') =~ s/(events \{)/thread_pool one threads=1;\n$1/r);

my $sid = $t->session;
my $t0 = time;
my $r = $t->turn($sid, 'huge', timeout => 70);
my $took = time - $t0;
my ($res) = grep { ($_->{type} // '') eq 'tool_result' } @{ $r->{events} };
like($res->{content}{error} // '', qr/more memory than a statement may take/,
     'a row of 180 MB: out of its memory budget')
    or diag(substr(encode_json($res->{content} // {}), 0, 200));
ok($took < 30, sprintf('long before its 60 s cap (%.1f s)', $took));

$r = $t->turn($sid, 'small');
($res) = grep { ($_->{type} // '') eq 'tool_result' } @{ $r->{events} };
is_deeply($res->{content}{rows}, [[42]], 'the next statement runs');

$t->stop;
$t->check_log;
done_testing;
