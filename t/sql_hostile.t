#!/usr/bin/perl
# Hostile SQL from the model: writes, ATTACH, pragmas, extensions, several
# statements; each gets a tool error and nothing changes.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my @attacks = (
    [ 'DROP TABLE staff', qr/only reading is allowed/ ],
    [ 'DELETE FROM staff', qr/only reading is allowed/ ],
    [ "UPDATE staff SET Salary = 0", qr/only reading is allowed/ ],
    [ "INSERT INTO staff VALUES ('x', 'y', 1)", qr/only reading is allowed/ ],
    [ "CREATE TABLE evil (a)", qr/only reading is allowed/ ],
    [ "CREATE TEMP TABLE evil (a)", qr/only reading is allowed/ ],
    [ "ATTACH DATABASE '/tmp/evil.db' AS evil", qr/only reading is allowed/ ],
    [ "PRAGMA journal_mode = DELETE", qr/only reading is allowed/ ],
    [ "PRAGMA writable_schema = 1", qr/only reading is allowed/ ],
    [ "SELECT load_extension('/tmp/evil.so')", qr/only reading is allowed/ ],
    [ "SELECT 1; DROP TABLE staff", qr/one statement at a time/ ],
    [ "VACUUM", qr/only reading is allowed/ ],
    [ "SELECT * FROM no_such_table", qr/no such table/ ],
    [ "", qr/non-empty string/ ],
);

my $t = AgentTest->new;
my $mock = $t->mock(sub {
    my ($req, $n) = @_;
    return { text => 'refused' } if $req->{messages}[-1]{role} eq 'tool';
    my $i = 0;
    return { tools => [ map { [ 'c' . $i++, 'execute_sql_query',
                                encode_json({ query => $_->[0] }) ] }
                        @attacks ] };
});

# a location database too: it must stay read-only
my $db = $t->dir . '/shop.db';
system('sqlite3', $db, 'CREATE TABLE items (name TEXT, price REAL); '
                       . "INSERT INTO items VALUES ('pen', 1.5);") == 0
    or die 'sqlite3 failed';

$t->run($t->conf(http => "agent_database shop $db;",
                 location => 'agent_use_database shop;'));

my $sid = $t->session;
$t->http('POST', "/api/sessions/$sid/resources?name=staff.csv",
         "Name,Dept,Salary\nA,x,1\nB,y,2\n", 'Content-Type' => 'text/csv');

my $r = $t->turn($sid, 'attack');
is($r->{types}[-1], 'end', 'the turn survives');

my @res = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is(scalar @res, scalar @attacks, 'a result per attack');

for my $i (0 .. $#attacks) {
    like($res[$i]{content}{error} // '', $attacks[$i][1],
         "refused: $attacks[$i][0]");
}

# nothing changed
my ($file) = glob($t->dir . '/resources/*.sqlite');
is($t->sqlite($file, 'SELECT COUNT(*) FROM staff'), 2, 'CSV table intact');
is($t->sqlite($file, "SELECT COUNT(*) FROM sqlite_master WHERE name='evil'"),
   0, 'no table created');
is($t->sqlite($db, 'SELECT COUNT(*) FROM items'), 1, 'database intact');
ok(!-e '/tmp/evil.db', 'nothing attached or created');

# reading the location database and the CSV in one query works
$t->stop;
$mock = $t->mock(sub {
    my ($req) = @_;
    return { text => 'ok' } if $req->{messages}[-1]{role} eq 'tool';
    return { tools => [[ 'c', 'execute_sql_query', encode_json({ query =>
        'SELECT (SELECT price FROM items), (SELECT SUM(Salary) FROM '
        . 'staff), (SELECT COUNT(*) FROM csv_data)' }) ]] };
});
$t->run($t->conf(http => "agent_database shop $db;",
                 location => 'agent_use_database shop;'));
$r = $t->turn($sid, 'read');
my ($ok) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is_deeply($ok->{content}{rows}, [[ 1.5, 3, 2 ]], 'database and CSV read');

# the connection endpoint: tables with samples, and db_schema in the state
$r = $t->http('POST', "/api/chat/$sid/connection", { database => 'shop' });
is($r->{status}, 200, 'connection: 200');
is($r->{json}{database}, 'shop', 'connection: the database');
is($r->{json}{tables}[0]{name}, 'items', 'connection: its tables');
is_deeply($r->{json}{tables}[0]{sample}{rows}, [[ 'pen', 1.5 ]],
          'connection: sample rows');
my $st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is($st->{values}{db_schema}[0]{name}, 'items', 'db_schema in the state');
is(scalar @{ $st->{values}{messages} }, 3 + @attacks + 4,
   'messages kept with it');
$r = $t->turn($sid, 'what tables?');
like(($mock->requests)[-1]{body}{messages}[0]{content}, qr/"items"/,
     'the schema reaches the system prompt');

$t->stop;
$t->check_log;
done_testing;
