#!/usr/bin/perl
# conf/agent-sqlite-to-pg: a store on SQLite moved to PostgreSQL.  nginx
# serves conversations (a title with quotes and a line break, empty and
# NULL values, tool calls, an upload, a LangGraph run) from its SQLite
# file; the script copies them into a PostgreSQL database that nginx made
# the schema of; nginx on PostgreSQL then answers the same sessions,
# messages, state, history and runs, continues a conversation (the SQL
# tool reads the upload, also when this host has to fetch it from the
# store), and new rows come after the copied ones.  Text with a NUL and a
# byte that is not UTF-8 is copied with U+FFFD.  A second copy into the
# same database is refused, and so is a database without the schema; a
# row the database refuses copies nothing.
#
# No user byte is read as anything but data (issue 28): a title and
# messages with the markers the old sh script used (its NULL and its hex
# form of a value with a NUL), quotes, '","' and line breaks, one of them
# made to close its CSV field and add a row to another user's session,
# are copied as they were and add no row anywhere; every table has as
# many rows on both sides, and a row lost on the way (a trigger) copies
# nothing.  An upload row that names the SQLite file itself, a symlink or
# a hard link in the uploads folder or a file outside it is copied without
# its file: no byte of those reaches PostgreSQL's file store.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN {
    # make test: a cluster of its own for this file
    unless ($ENV{AGENT_PG}) {
        exec "$FindBin::Bin/pg/run", $^X, $0;
        die "t/pg/run: $!";
    }
}

use AgentTest;
use Digest::SHA qw(sha256_hex);

my $script = AgentTest->root . '/conf/agent-sqlite-to-pg';


my $t = AgentTest->new;
$t->mock(\&AgentTest::sum_script);
my $conf = $t->conf;
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
        $1};

# --- on SQLite ---------------------------------------------------------------

{
    local $ENV{AGENT_PG};
    $t->run($conf);
}

my $title = qq{It's "quoted"\nand on two lines};
my $sa = $t->session(title => $title, metadata => { k => 'v', e => '' });
my $sb = $t->session(title => '');
is($t->http('POST', "/api/sessions/$sa/resources?name=n.csv",
            "n\n1\n2\n3\n", 'Content-Type' => 'text/csv')->{status}, 201,
   'a CSV uploaded');
is($t->turn($sa, 'hello')->{types}[-1], 'end', 'a first turn');
like($t->turn($sa, 'sum it')->{events}[-1]{full_response}, qr/\[\[6\]\]/,
     'a turn with a tool call on the upload');

# text that the old script's markers and CSV would have read: its NULL,
# its hex form of a value with a NUL (here a row of $sb's: the decoded
# quote closed the field), '","', quotes and line breaks
my $null = 'AGENT_NULL_6b1f0e';
my $inject = "x,AGENT_HEX_6b1f0e:"
    . uc(unpack 'H*', join(',', ",$null" x 5, '2026-01-01 00:00:00')
                      . "\n999999,$sb,99,user,") . ',q';
my $tricky = qq{$null\n","AGENT_HEX_6b1f0e:41",\n"x""y",$null,\r\n'};
my $sd = $t->session(title => $tricky, metadata => { t => $tricky });
# a title alone (in no other table) that made a session of its own
my $forge = "t,AGENT_HEX_6b1f0e:"
    . uc(unpack 'H*', join(',', '', $null, ('2026-01-01 00:00:00') x 2, 0,
                           ($null) x 3, (0) x 4)
                      . "\n999999,forged-session,") . ',q';
my $se = $t->session(title => $forge);
for my $m ($null, $inject, $tricky, "AGENT_HEX_6b1f0e:00") {
    is($t->turn($sd, $m)->{types}[-1], 'end', 'a turn with marker text');
}

my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
my $run = $t->http('POST', "/lg/threads/$th/runs/wait",
                   { assistant_id => 'react', input => { messages => [
                       { role => 'user', content => 'from the API' } ] } });
is($run->{status}, 200, 'a LangGraph run') or diag $run->{content};
my $as = $t->http('POST', '/lg/assistants', { graph_id => 'react',
    name => 'moved', config => { configurable => { model => 'mock' } } });
is($as->{status}, 200, 'an assistant') or diag $as->{content};
$as = $as->{json}{assistant_id};
is($t->http('PATCH', "/lg/assistants/$as", { name => 'moved twice' })
   ->{status}, 200, '... with a second version');
is($t->http('PUT', '/lg/store/items', { namespace => [ 'memories', 'ann' ],
    key => 'k1', value => { text => 'likes tea' } })->{status}, 204,
   'an item of the store');

sub snapshot {
    my %s;
    $s{list} = $t->http('GET', '/api/sessions/')->{json};
    for my $id ($sa, $sb, $sd, $se, $th) {
        $s{$id}{messages} = $t->http('GET', "/api/sessions/$id/messages"
                                            . '?include_tools=1')->{json};
        $s{$id}{state} = $t->http('GET', "/api/sessions/$id/state")->{json};
        $s{$id}{history} = $t->http('GET', "/api/sessions/$id/history")->{json};
        $s{$id}{session} = $t->http('GET', "/api/sessions/$id")->{json};
    }
    $s{runs} = $t->http('GET', "/lg/threads/$th/runs")->{json};
    $s{assistant} = $t->http('GET', "/lg/assistants/$as")->{json};
    $s{versions} = $t->http('POST', "/lg/assistants/$as/versions", {})
                   ->{json};
    $s{item} = $t->http('GET', '/lg/store/items?namespace=memories.ann'
                        . '&key=k1')->{json};
    $s{found} = [ map { $_->{key} } @{ $t->http('POST',
        '/lg/store/items/search', { namespace_prefix => [ 'memories' ],
                                    query => 'tea' })->{json}{items} } ];
    return \%s;
}

my $before = snapshot();
is(scalar @{ $before->{$sa}{messages}{messages} }, 6,
   'six messages stored (two with tool traffic)');
is($before->{$sd}{messages}{messages}[0]{content}, $null,
   'the marker stored as text');
$t->stop;

# the rows of every table the script copies, in the SQLite file (the CLI
# itself: AgentTest's sqlite() would ask PostgreSQL) and in PostgreSQL
my @tables = qw(sessions messages checkpoints resources runs run_events
                assistants assistant_versions items);

sub lite_count {
    my ($file, $table) = @_;
    open my $fh, '-|', 'sqlite3', $file, "SELECT count(*) FROM $table"
        or die $!;
    chomp(my $n = <$fh> // '');
    close $fh;
    return $n;
}

sub counts_equal {
    my ($file, $pgname, $what) = @_;
    for my $table (@tables) {
        is(AgentTest::pg_query($pgname, "SELECT count(*) FROM $table"),
           lite_count($file, $table), "$what: the rows of $table, no more");
    }
}

# nginx's master makes the schema before its workers start: it is there
# when the start returns ("start nginx once, stop it" cannot stop before)
sub schema_made {
    my ($pgname) = @_;
    is(AgentTest::pg_query($pgname, "SELECT to_regclass('runs') IS NOT NULL"),
       '1', 'nginx made the schema by the time it started');
}

# --- the copy ----------------------------------------------------------------

my $db = $t->dir . '/agent.db';
my $name = 'moved' . $$;
AgentTest::pg_query('postgres', "CREATE DATABASE $name");
my $url = "$ENV{AGENT_PG}/$name";

my $out = `$script $db $url 2>&1`;
isnt($? >> 8, 0, 'a database without the schema: refused');
like($out, qr/start nginx once with this URL/, 'saying what to do');

(my $pgconf = $conf) =~ s{agent_checkpoint_db \S+;}
                         {agent_checkpoint_db $url;};
$t->run($pgconf);
schema_made($name);
$t->stop;

$out = `$script $db $url 2>&1`;
is($? >> 8, 0, 'copied') or diag $out;
my $said = 'copied 5 sessions, \d+ messages, \d+ checkpoints, 1 files, '
           . '\d+ runs, 1 assistants, 1 items';
like($out, qr/$said/, 'and says what');
is(AgentTest::pg_query($name, 'SELECT count(*) FROM blobs'), 1,
   'the upload\'s file stored once');
counts_equal($db, $name, 'copied');
is(AgentTest::pg_query($name, "SELECT count(*) FROM messages WHERE "
       . "session_id = '$sb'"), 0, 'no message made in another session');

$out = `$script $db $url 2>&1`;
isnt($? >> 8, 0, 'a second copy into it: refused');
like($out, qr/has 5 sessions already/, 'saying why');

# --- on PostgreSQL -----------------------------------------------------------

$t->run($pgconf);
my $after = snapshot();
is_deeply($after, $before,
          'sessions, messages, state, history, runs, assistants and '
          . 'items as they were');
is_deeply($after->{found}, [ 'k1' ], '... an item found by its words');
is($after->{$sa}{session}{title}, $title, 'the title whole');
is($after->{$sd}{session}{title}, $tricky, 'the title with markers whole');
is($after->{$se}{session}{title}, $forge, 'the title made to add a row whole');
is(AgentTest::pg_query($name, "SELECT count(*) FROM sessions WHERE id"
                       . " = 'forged-session'"), 0, 'and no row added');

# the host's own copy of the upload is gone: fetched from the store
unlink glob($t->dir . '/resources/*');
my $r = $t->turn($sa, 'sum again');
like($r->{events}[-1]{full_response}, qr/\[\[6\]\]/,
     'the SQL tool reads the upload, fetched from the store');
like($t->slurp('error.log'), qr/fetched from the store/,
     'the fetch logged');
is($t->turn($sa, 'and on')->{events}[-1]{full_response}, 'turn 4: and on',
   'the conversation goes on with its history');
my $sc = $t->session(title => 'after the move');
is($t->http('GET', '/api/sessions/')->{json}{sessions}[0]{id}, $sc,
   'a new session is listed first');
is(AgentTest::pg_query($name, "SELECT count(*) FROM messages WHERE "
       . "session_id = '$sa' AND id > (SELECT max(id) FROM messages "
       . "WHERE session_id = '$th')"), 6,
   'new messages come after the copied ones');

$t->stop;

# text PostgreSQL does not take (bytes that are not UTF-8, a NUL) copied
# with U+FFFD in their place, as the PostgreSQL store writes it; a row
# refused (a constraint added here) copies nothing at all
my $bad = $t->dir . '/bad.db';
# a copy with what the WAL holds too
system('sqlite3', $db, ".backup '$bad'") == 0 or die;
system('sqlite3', $bad, "UPDATE messages SET content = 'A' || char(0) "
       . "|| 'B' || CAST(X'ff' AS TEXT) || 'C' WHERE id = (SELECT max(id) "
       . "FROM messages WHERE session_id = '$sa')") == 0 or die;

# upload rows that name a file the module did not write there: the SQLite
# file itself, a symlink to it in the uploads folder under the row's own
# name, a copy of it outside the folder, a hard link to that copy in the
# folder; their bytes must not be read
my $res = $t->dir . '/resources';
symlink($bad, "$res/forged2.sqlite") or die "symlink: $!";
system('cp', $bad, $t->dir . '/forged3.sqlite') == 0 or die;
link($t->dir . '/forged3.sqlite', "$res/forged4.sqlite") or die "link: $!";
my %forged = (forged1 => $bad, forged2 => "$res/forged2.sqlite",
              forged3 => $t->dir . '/forged3.sqlite',
              forged4 => "$res/forged4.sqlite");
for my $id (sort keys %forged) {
    system('sqlite3', $bad, "INSERT INTO resources (id, session_id, name,"
           . " table_name, columns, row_count, size_bytes, path, created_at)"
           . " VALUES ('$id', '$sd', 'x.csv', 'x', '[]', 1, 1,"
           . " '$forged{$id}', '2026-01-01 00:00:00')") == 0 or die;
}
my %store = map { open my $fh, '<:raw', $_ or die "$_: $!"; local $/;
                  sha256_hex(<$fh>) => 1 } $bad, $t->dir . '/forged3.sqlite';

for my $n (qw(b c d)) {
    my $name2 = "moved" . $$ . $n;
    AgentTest::pg_query('postgres', "CREATE DATABASE $name2");
    (my $conf2 = $conf) =~ s{agent_checkpoint_db \S+;}
                            {agent_checkpoint_db $ENV{AGENT_PG}/$name2;};
    $t->run($conf2);
    schema_made($name2);
    $t->stop;
    if ($n eq 'b') {
        # the uploads folder named (the first copy found it by default)
        $out = `$script $bad $ENV{AGENT_PG}/$name2 $res 2>&1`;
        is($? >> 8, 0, 'text that is not UTF-8, with a NUL: copied')
            or diag $out;
        is(AgentTest::pg_query($name2, "SELECT content FROM messages WHERE "
               . "session_id = '$sa' ORDER BY seq DESC LIMIT 1"),
           "A\x{FFFD}B\x{FFFD}C" =~ s/(.)/$1/gr
               =~ s/\x{FFFD}/\xef\xbf\xbd/gr,
           'with U+FFFD in place of the NUL and the bad byte');
        for my $id (sort keys %forged) {
            like($out, qr/\Q"$forged{$id}" (file $id)\E .*left on this host/,
                 "$id: a path the module did not write, not read");
            is(AgentTest::pg_query($name2, "SELECT count(*) FROM resources"
                   . " WHERE id = '$id' AND blob IS NULL"), 1,
               "$id: its row copied without a file");
        }
        is(AgentTest::pg_query($name2, 'SELECT count(*) FROM blobs'), 1,
           'only the upload\'s own file stored');
        my @hashes = split /\n/,
            AgentTest::pg_query($name2, "SELECT encode(sha256(data), 'hex')"
                                . ' FROM blobs');
        ok(!(grep { $store{$_} } @hashes),
           'no byte of the SQLite file in the file store');
        counts_equal($bad, $name2, 'with forged upload rows');
        unlink "$res/forged2.sqlite", "$res/forged4.sqlite";
        next;
    }
    if ($n eq 'd') {
        # a row that PostgreSQL drops without an error: the counts differ
        AgentTest::pg_query($name2, 'CREATE FUNCTION drop_row() RETURNS'
            . ' trigger AS $$ BEGIN RETURN NULL; END $$ LANGUAGE plpgsql;'
            . ' CREATE TRIGGER drop_row BEFORE INSERT ON checkpoints'
            . ' FOR EACH ROW EXECUTE FUNCTION drop_row()');
        $out = `$script $db $ENV{AGENT_PG}/$name2 2>&1`;
        isnt($? >> 8, 0, 'a row lost on the way: an error');
        like($out, qr/nothing copied.*checkpoints/, 'saying which table');
        is(AgentTest::pg_query($name2, 'SELECT count(*) FROM sessions'), 0,
           'and nothing was copied');
        next;
    }
    AgentTest::pg_query($name2, "ALTER TABLE runs ADD CHECK "
                                . "(status <> 'success')");
    $out = `$script $db $ENV{AGENT_PG}/$name2 2>&1`;
    isnt($? >> 8, 0, 'a row refused by the database: an error');
    like($out, qr/nothing copied/, 'saying nothing was copied');
    is(AgentTest::pg_query($name2, 'SELECT count(*) FROM sessions'), 0,
       'and nothing was');
}

$t->check_log;
done_testing;
