#!/usr/bin/perl
# Seed 003's executor, proven with tools that sleep and fail: the calls of
# one round run at the same time (the scripted model sees both before it
# answers either), timeout= stops any tool, not only SQL (ask_database
# waits on a model here, and the model never answers in time), and
# retries= runs a failed call again.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use Time::HiRes qw(time);

my $root = AgentTest::root();
my $t = AgentTest->new;
my $dir = $t->dir;

my $db = "$dir/shop.db";
system('sqlite3', $db, 'CREATE TABLE sales (region TEXT, total REAL); '
       . "INSERT INTO sales VALUES ('north', 10), ('south', 32);") == 0
    or die 'sqlite3 failed';

my $mock = $t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $q = AgentTest::last_user($req);

    # ask_database's own model call
    if ($m[0]{content} =~ /^You write one SQLite SELECT/) {
        # within timeout=1s: it fires on time, with no second of grace
        return { first_delay => 0.6, text => 'SELECT count(*) FROM sales' }
            if $q =~ /^pause/;
        return { first_delay => 5, text => 'SELECT 1' } if $q eq 'stuck';

        if ($q eq 'flaky') {
            # the first answer is SQL that fails, the second is good
            my $f = "$dir/flaky";
            my $first = !-e $f;
            open my $fh, '>>', $f; close $fh;
            return { text => $first ? 'SELECT nope FROM sales'
                                    : 'SELECT sum(total) FROM sales' };
        }
        return { text => 'SELECT 1' };
    }

    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    return { text => 'done' } if grep { $_->{role} eq 'tool' } @m[$u .. $#m];

    my $call = sub { [ $_[0], 'ask_database', encode_json({ query => $_[1] }) ] };
    return { tools => [ $call->('p1', 'pause one'), $call->('p2', 'pause two') ] }
        if $q eq 'two at once';
    return { tools => [ $call->('s1', 'stuck') ] } if $q eq 'stuck';
    return { tools => [ $call->('f1', 'flaky') ] } if $q eq 'flaky';
    return { text => 'hello' };
});

my $graph = <<"GRAPH";
agent_graph executor {
    channel db_schema  value;
    channel sql_result value;

    node assistant llm prompt=sql_assistant.md tools=ask_database;
    node executor  tools timeout=1s retries=1;

    edge START assistant;
    edge assistant executor if=tool_calls;
    edge assistant END;
    edge executor assistant;
}
GRAPH
open my $fh, '>', "$dir/executor.conf" or die;
print $fh $graph;
close $fh;

$t->run($t->conf(http => "agent_prompts $root/prompts;\n"
                         . "include $dir/executor.conf;\n"
                         . "agent_use_graph executor;\n"
                         . "agent_database shop $db;",
                 location => 'agent_use_database shop;'));
my $sid = $t->session;

sub results {
    my ($r) = @_;
    return map { $_->{content} } grep { $_->{type} eq 'tool_result' }
           @{ $r->{events} };
}

sub asks {
    my ($since) = @_;
    my @r = $mock->log_lines;
    return grep { $_->{event} eq 'request'
                  && $_->{body}{messages}[0]{content}
                     =~ /^You write one SQLite SELECT/ } @r[$since .. $#r];
}

# 1. two calls that each take 0.6 s: both asked before either answers
my $since = scalar $mock->log_lines;
my $t0 = time;
my $r = $t->turn($sid, 'two at once');
my $took = time - $t0;
is($r->{types}[-1], 'end', 'concurrency: the turn ends');
my @res = results($r);
is(scalar(grep { ref $_ eq 'HASH' && $_->{rows} } @res), 2,
   'concurrency: both calls answered with rows');
my @log = (($mock->log_lines)[$since .. scalar($mock->log_lines) - 1]);
my @kinds = map { $_->{event} eq 'request'
                  && $_->{body}{messages}[0]{content} =~ /^You write one/
                  ? 'ask' : $_->{event} eq 'done' ? 'done' : () } @log;

my @asked = grep { $kinds[$_] eq 'ask' } 0 .. $#kinds;
is(scalar @asked, 2, 'concurrency: two model calls of the tool');
my ($second_done) = grep { $kinds[$_] eq 'done' && $_ > $asked[0] } 0 .. $#kinds;
ok($asked[1] < $second_done,
   'concurrency: the second call started before the first answered')
    or diag explain \@kinds;
note sprintf 'two 0.6 s calls took %.1f s in all', $took;

# 2. a tool that waits on a model past timeout=1s, twice (retries=1)
$since = scalar $mock->log_lines;
$t0 = time;
$r = $t->turn($sid, 'stuck');
$took = time - $t0;
is($r->{types}[-1], 'end', 'timeout: the turn still ends');
@res = results($r);
like($res[0]{error} // '', qr/"ask_database" did not answer within 1000 ms/,
     'timeout: the call is an error result that says so');
is(scalar(asks($since)), 2, 'timeout: tried twice (retries=1)');
ok($took < 4.5, 'timeout: the stuck model was not waited for')
    or diag "took $took s";
like($t->slurp('error.log'), qr/tool "ask_database" timed out/,
     'timeout: logged');

# 3. a call that fails once is run again and answers
$since = scalar $mock->log_lines;
$r = $t->turn($sid, 'flaky');
@res = results($r);
is_deeply($res[0]{rows}, [[42]], 'retries: the second attempt answers');
is(scalar(asks($since)), 2, 'retries: two attempts');
is(scalar(grep { $_->{type} eq 'tool_result' } @{ $r->{events} }), 1,
   'retries: one result reaches the stream');

$t->check_log;
done_testing;
