#!/usr/bin/perl
# POST /connection reads the database's schema on the thread pool, not on
# the event loop, and answers the same as before.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
$t->mock(sub { { text => 'unused' } });
my $db = $t->dir . '/shop.db';
my $sql = join '', map { "CREATE TABLE t$_ (a INTEGER, b TEXT); "
                         . "INSERT INTO t$_ VALUES ($_, 'x$_'); " } 1 .. 50;
system('sqlite3', $db, $sql) == 0 or die 'sqlite3 failed';

my $conf = $t->conf(http => "agent_database shop $db;",
                    location => 'agent_databases shop;');
$conf =~ s/error_log (\S+) info;/error_log $1 debug;/;
$t->run($conf);

my $sid = $t->session;
my $r = $t->http('POST', "/api/chat/$sid/connection", { database => 'shop' });
is($r->{status}, 200, 'connection: 200');
is(scalar @{ $r->{json}{tables} // [] }, 50, 'fifty tables');
is_deeply($r->{json}{tables}[0]{sample}{rows}, [[ 1, 'x1' ]],
          'with their sample rows');
ok($t->slurp('error.log') =~ /schema of "shop" read on a thread/,
   'the schema was read on a thread');

my $st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is(scalar @{ $st->{values}{db_schema} // [] }, 50, 'db_schema in the state');

$r = $t->http('POST', "/api/chat/$sid/connection", { database => 'none' });
is($r->{status}, 404, 'an unknown database: 404');

$t->stop;
$t->check_log;
done_testing;
