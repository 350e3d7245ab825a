#!/usr/bin/perl
# Foundation figures: turn latency against the scripted mock (a plain answer
# and a SQL tool round), and the cost of one checkpoint write at 5 and at
# 500 messages of history (read from the module's debug log).
# Prints figures; asserts nothing.  Run: make bench-foundation

use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More ();
use AgentTest;
use Time::HiRes qw(time);

sub pct {
    my ($p, @v) = @_;
    @v = sort { $a <=> $b } @v;
    return $v[int($p / 100 * $#v + 0.5)];
}

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $q = $req->{messages}[-1];
    return { tools => [[ 'c', 'execute_sql_query',
        '{"query":"SELECT Department, AVG(Salary) FROM csv_data '
        . 'GROUP BY Department"}' ]] }
        if $q->{role} eq 'user' && $q->{content} =~ /^sql/;
    return { text => 'The answer is forty-two, as the data shows.' };
});

$t->run;

my $csv = "Name,Department,Salary\n"
        . join('', map { "P$_," . (qw(A B C D))[$_ % 4] . ",$_\n" } 1 .. 1000);
my (@plain, @sql);
for my $i (1 .. 100) {
    my $s = $t->session;
    my $t0 = time;
    my $r = $t->turn($s, "hello $i");
    push @plain, (time - $t0) * 1000;
    die 'turn failed' unless $r->{types}[-1] eq 'end';

    $s = $t->session;
    $t->http('POST', "/api/sessions/$s/resources?name=staff.csv", $csv,
             'Content-Type' => 'text/csv');
    $t0 = time;
    $r = $t->turn($s, "sql $i");
    push @sql, (time - $t0) * 1000;
    die 'sql turn failed' unless $r->{types}[-1] eq 'end';
}

printf "turn latency, plain answer (100 turns): median %.2f ms, "
       . "p99 %.2f ms\n", pct(50, @plain), pct(99, @plain);
printf "turn latency, one SQL tool round over 1,000 rows (100 turns): "
       . "median %.2f ms, p99 %.2f ms\n", pct(50, @sql), pct(99, @sql);
$t->stop;

# checkpoint cost, from the debug log of the store
my $conf = $t->conf;
$conf =~ s/error_log %%DIR%%\/error.log info;/error_log %%DIR%%\/error.log debug;/;
unlink $t->dir . '/error.log';
$t->run($conf);

my $long = $t->session;
my %cost;
for my $turn (1 .. 250) {
    $t->turn($long, "turn $turn");
}
$t->stop;

for my $l (split /\n/, $t->slurp('error.log')) {
    next unless $l =~ /checkpoint of (\d+) messages \((\d+) new\) written in (\d+) us/;
    push @{ $cost{$1} }, $3;
}

for my $n (5, 500) {
    my @near = map { @{ $cost{$_} // [] } } ($n - 5 .. $n + 5);
    printf "checkpoint write near %d messages of history: median %d us "
           . "(%d samples)\n", $n, pct(50, @near), scalar @near;
}
