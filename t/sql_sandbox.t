#!/usr/bin/perl
# The SQL sandbox, statement by statement: writes, attaches, extensions,
# pragmas, never-ending queries, string and blob bombs, exploding joins.
# Each is refused or capped within the time cap plus a margin, the data
# files are byte-identical afterwards, and the worker answers other
# requests while a statement runs.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use Digest::SHA qw(sha256_hex);
use Time::HiRes qw(time sleep);
use POSIX qw(WNOHANG);

my $CAP = 0.3;             # agent_sql_timeout below
# A statement the cap did not stop would run for minutes: the margin tells
# that apart from a host whose every core is busy (make test-stress saw
# 2.3 s for a 0.3 s cap), where a statement's thread and its timer wait
# for a CPU like everything else.  The cap's own work is shown by the
# error each capped statement answers.
my $MARGIN = 8;
# make test-asan: everything runs two to three times slower
$MARGIN = 16 if $ENV{AGENT_SANITIZER_LOGS};

my $t = AgentTest->new;
my $dir = $t->dir;
my $db = "$dir/shop.db";
system('sqlite3', $db, 'CREATE TABLE items (name TEXT, price REAL); '
                       . "INSERT INTO items VALUES ('pen', 1.5);") == 0
    or die 'sqlite3 failed';

my $big = 'x' x 150000;
my $deep = ('(' x 300) . '1' . (')' x 300);
my $compound = join ' UNION ALL ', ('SELECT 1') x 200;
my $join7 = 'SELECT count(*) FROM staff a, staff b, staff c, staff d, '
          . 'staff e, staff f, staff g';
my $forever = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 '
            . 'FROM c) SELECT count(*) FROM c';

# [ statement, expected: 'refused' (regex on the error), 'capped' (an
#   error or a truncated result, within the cap), 'ok' (rows), 'any'
#   (a harmless no-op: the files are checked at the end) ]
my @cases = (
    [ 'DROP TABLE staff', refused => qr/only reading/ ],
    [ 'DELETE FROM staff', refused => qr/only reading/ ],
    [ 'UPDATE staff SET Salary = 0', refused => qr/only reading/ ],
    [ "INSERT INTO staff VALUES ('x', 'y', 1)", refused => qr/only reading/ ],
    [ "REPLACE INTO staff VALUES ('x', 'y', 1)", refused => qr/only reading/ ],
    [ 'CREATE TABLE evil (a)', refused => qr/only reading/ ],
    [ 'CREATE TEMP TABLE evil (a)', refused => qr/only reading/ ],
    [ 'CREATE TEMP VIEW evil AS SELECT 1', refused => qr/only reading/ ],
    [ 'CREATE INDEX evil ON staff (Name)',
      refused => qr/only reading|no such table/ ],
    [ 'CREATE TEMP TRIGGER evil AFTER INSERT ON staff BEGIN SELECT 1; END',
      refused => qr/only reading/ ],
    [ 'ALTER TABLE staff ADD COLUMN evil', refused => qr/only reading/ ],
    [ 'REINDEX', any => undef ],
    [ 'ANALYZE', refused => qr/only reading/ ],
    [ 'VACUUM', refused => qr/only reading/ ],
    [ "VACUUM INTO '$dir/stolen.db'", refused => qr/only reading/ ],
    [ "ATTACH DATABASE '$dir/agent.db' AS cp", refused => qr/only reading/ ],
    [ "ATTACH DATABASE '%%OTHER%%' AS other", refused => qr/only reading/ ],
    [ "ATTACH DATABASE 'file::memory:' AS m", refused => qr/only reading/ ],
    [ 'DETACH r0', refused => qr/only reading/ ],
    [ 'BEGIN', refused => qr/only reading/ ],
    [ 'SAVEPOINT s', refused => qr/only reading/ ],
    [ "SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')",
      refused => qr/only reading/ ],
    [ "SELECT fts3_tokenizer('simple')", refused => qr/only reading/ ],
    [ 'PRAGMA writable_schema = 1', refused => qr/only reading/ ],
    [ 'PRAGMA journal_mode = DELETE', refused => qr/only reading/ ],
    [ "PRAGMA temp_store_directory = '/tmp'", refused => qr/only reading/ ],
    [ 'PRAGMA cache_size = 100000000', refused => qr/only reading/ ],
    [ 'PRAGMA query_only = 0', refused => qr/only reading/ ],
    [ 'PRAGMA database_list', refused => qr/only reading/ ],
    [ 'SELECT 1; DROP TABLE staff', refused => qr/one statement/ ],
    [ "SELECT '$big'", refused => qr/too big|too long/ ],
    [ "SELECT $deep", refused => qr/too large|depth|deep|stack overflow/i ],
    [ $compound, refused => qr/too many terms/ ],
    [ "SELECT 'a' LIKE printf('%.*c', 100000, '%')",
      capped => qr/pattern too complex|too big|larger/ ],
    [ "SELECT length(printf('%.*c', 999999999, 'x'))",
      capped => qr/larger than|too big|longer than 300 ms/ ],
    [ "SELECT printf('%.*c', 900000000, char(1))",
      capped => qr/larger than|too big|longer than 300 ms/ ],
    [ 'SELECT length(randomblob(1000000000))',
      capped => qr/larger than|too big|longer than 300 ms/ ],
    [ 'SELECT length(zeroblob(1000000000))',
      capped => qr/larger than|too big|longer than 300 ms/ ],
    [ "SELECT replace(printf('%.*c', 100000, 'x'), 'x', "
      . "printf('%.*c', 1000, 'y'))", capped => qr/larger than|too big|longer than 300 ms/ ],
    [ "SELECT group_concat(printf('%.*c', 100000, 'x')) FROM staff a, "
      . 'staff b', capped => qr/larger than|too big|longer than 300 ms/ ],
    [ $forever, capped => qr/longer than 300 ms/ ],
    [ 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) '
      . 'SELECT x FROM c ORDER BY x DESC LIMIT 1',
      capped => qr/longer than 300 ms|more memory/ ],
    [ $join7, capped => qr/longer than 300 ms/ ],
    [ 'SELECT a.Name FROM staff a, staff b, staff c ORDER BY random()',
      capped => qr/longer than 300 ms|more memory|truncated/ ],
    [ "SELECT printf('%.*c', 600000, 'x')", capped => 'truncated' ],
    [ "SELECT printf('%.*c', 200000, char(1))", capped => 'truncated' ],
    [ 'PRAGMA table_info(staff)', ok => 3 ],
    [ "SELECT value FROM json_each('[1,2,3]')", ok => 3 ],
    [ "SELECT name FROM pragma_table_info('staff')", ok => 3 ],
    [ 'SELECT name FROM sqlite_master', ok => 1 ],
);

my $mock = $t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    return { text => 'done' } if $last->{role} eq 'tool';
    my ($i) = $last->{content} =~ /^case (\d+)$/ or return { text => 'hi' };
    return { tools => [[ "c$i", 'execute_sql_query',
                         encode_json({ query => $cases[$i][0] }) ]] };
});

$t->run($t->conf(workers => 1,
                 http => "agent_database shop $db; "
                         . 'client_max_body_size 8m;',
                 location => 'agent_use_database shop; '
                             . 'agent_sql_timeout 300ms;'));

my $csv = "Name,Dept,Salary\n" . join '', map { "P$_,D$_,$_\n" } 1 .. 100;

# another user's session and file: the attacker must not reach it
my $other = $t->session;
is($t->http('POST', "/api/sessions/$other/resources?name=secret.csv",
            "secret\nS1\n", 'Content-Type' => 'text/csv')->{status}, 201,
   'the other session\'s file');
my ($other_file) = glob("$dir/resources/*.sqlite");
$_->[0] =~ s/%%OTHER%%/$other_file/ for @cases;

my $sid = $t->session;
is($t->http('POST', "/api/sessions/$sid/resources?name=staff.csv", $csv,
            'Content-Type' => 'text/csv')->{status}, 201, 'staff uploaded');
my ($own_file) = grep { $_ ne $other_file } glob("$dir/resources/*.sqlite");

sub digest { open my $fh, '<:raw', $_[0] or return ''; local $/;
             return sha256_hex(<$fh> // '') }
my %before = map { $_ => digest($_) } ($db, $own_file, $other_file);

ok(@cases >= 40, scalar(@cases) . ' hostile statements');

for my $i (0 .. $#cases) {
    my ($sql, $kind, $want) = @{ $cases[$i] };
    my $label = length $sql > 60 ? substr($sql, 0, 57) . '...' : $sql;

    my $t0 = time;
    my $r = $t->turn($sid, "case $i");
    my $took = time - $t0;

    # the statement's own time: from its tool_start to its tool_result (the
    # turn also holds two calls of the mock, which decodes the whole, ever
    # longer history with JSON::PP)
    my ($ts) = grep { $_->{type} eq 'tool_start' } @{ $r->{events} };
    my ($tr) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
    $took = $tr->{_t} - $ts->{_t} if $ts && $tr;

    my ($res) = grep { ($_->{type} // '') eq 'tool_result' }
                @{ $r->{events} };
    my $c = $res ? $res->{content} : {};

    if ($kind eq 'refused') {
        like($c->{error} // '', $want, "refused: $label");

    } elsif ($kind eq 'capped') {
        if (ref $want) {
            ok(($c->{error} // '') =~ $want
               || (($c->{truncated} && 'truncated' =~ $want)),
               "capped: $label") or diag(substr(encode_json($c), 0, 300));
        } else {
            ok($c->{truncated}
               && length(encode_json($c)) < 256 * 1024 + 4096,
               "cut to the byte cap: $label")
                or diag(substr(encode_json($c), 0, 300));
        }

    } elsif ($kind eq 'any') {
        ok($res, "answered: $label");

    } else {
        is($c->{row_count}, $want, "allowed: $label")
            or diag(substr(encode_json($c), 0, 300));
    }

    ok($took < $CAP + $MARGIN, sprintf("within the cap: %.2f s", $took));
    is($r->{types}[-1], 'end', "the turn ends: $label");
}

# a statement that runs to its cap does not hold up the worker
my $slow = grep { $cases[$_][0] eq $forever } 0 .. $#cases;
($slow) = grep { $cases[$_][0] eq $forever } 0 .. $#cases;
my $pid = fork() // die;
if ($pid == 0) {
    $t->turn($sid, "case $slow");
    POSIX::_exit(0);
}
sleep 0.1;
my $t0 = time;
my $g = $t->http('GET', '/api/sessions/');
my $took = time - $t0;
is($g->{status}, 200, 'another request meanwhile: 200');
ok($took < 0.25, sprintf('answered in %.3f s while the statement ran',
                         $took));
waitpid($pid, 0);

# nothing changed on disk
for my $f (sort keys %before) {
    is(digest($f), $before{$f}, 'byte-identical: ' . ($f =~ s{.*/}{}r));
}
ok(!-e "$dir/stolen.db", 'VACUUM INTO wrote nothing');
is($t->sqlite("$dir/agent.db", 'PRAGMA integrity_check'), 'ok',
   'checkpoint db intact');

$t->stop;
$t->check_log;
done_testing;
