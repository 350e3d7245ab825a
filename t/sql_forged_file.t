#!/usr/bin/perl
# The SQL tool attaches only files the module made.  A resources row is
# forged in the store (as a moved store or a hand-written row could hold
# it): its path is the store itself, then a path with a quote that would end
# the ATTACH's text.  A turn on that session is refused with a clear error;
# nothing of the store is read through the SQL tool.  A genuine upload of
# another session still works.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    return { text => "rows: $last->{content}" } if $last->{role} eq 'tool';
    return { tools => [[ 'q1', 'execute_sql_query',
                         '{"query":"SELECT COUNT(*) FROM r0.sessions"}' ]] }
        if ($last->{content} // '') =~ /steal/;
    return { tools => [[ 'q2', 'execute_sql_query',
                         '{"query":"SELECT SUM(n) FROM csv_data"}' ]] };
});
$t->run;

my $db = $t->dir . '/agent.db';
my $victim = $t->session;
my $thief = $t->session;
my $good = $t->session;

is($t->http('POST', "/api/sessions/$good/resources?name=n.csv", "n\n1\n2\n",
            'Content-Type' => 'text/csv')->{status}, 201, 'a real upload');

sub forge {
    my ($id, $path) = @_;
    (my $q = $path) =~ s/'/''/g;
    $t->sqlite($db, "INSERT INTO resources (id, session_id, name, table_name,"
               . " columns, row_count, size_bytes, path, created_at) VALUES"
               . " ('$id', '$thief', 'x.csv', 'csv_data', '[]', 1, 1, '$q',"
               . " '2026-01-01T00:00:00.000Z')");
}

forge('00000000-0000-4000-8000-000000000001', $db);
my $r = $t->turn($thief, 'steal');
isnt($r->{types}[-1] // '', 'end', 'a forged path: the turn is refused');
like($r->{json}{error} // $r->{events}[-1]{error} // '',
     qr/is not one of this server's/, 'saying why');
ok(!grep({ ($_->{type} // '') eq 'tool_result' } @{ $r->{events} // [] }),
   'the SQL tool never ran');

$t->sqlite($db, "DELETE FROM resources WHERE session_id = '$thief'");
forge('00000000-0000-4000-8000-000000000002',
      $t->dir . "/resources/x' AS r9; ATTACH '$db");
$r = $t->turn($thief, 'steal');
like($r->{json}{error} // $r->{events}[-1]{error} // '',
     qr/is not one of this server's/, 'a path with a quote: refused too');

like($t->slurp('error.log'),
     qr/a file row whose path is not agent_resources_dir\/ID\.sqlite/,
     'logged');

$r = $t->turn($good, 'sum');
is($r->{types}[-1], 'end', 'a real upload: the turn ends');
like($r->{events}[-1]{full_response} // '', qr/\[\[3\]\]/,
     'and its table is read');

$t->check_log;
done_testing;
