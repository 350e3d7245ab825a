#!/usr/bin/perl
# The tool loop: SQL over an uploaded CSV, tool calls split across many
# chunks, parallel calls, tool events, and the answer from the results.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;

my $query = 'SELECT Department, AVG(CAST(Salary AS REAL)) AS avg, COUNT(*) '
          . 'AS n FROM csv_data GROUP BY Department ORDER BY Department';

my $mock = $t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];

    if ($last->{role} eq 'user') {
        # two parallel calls, arguments cut into 7 pieces each
        return { pieces => 7, tools => [
            [ 'call_a', 'load_csv_data', '{"table": "staff"}' ],
            [ 'call_b', 'execute_sql_query',
              JSON::PP->new->canonical->encode({ query => $query }) ] ] };
    }

    my @results = grep { $_->{role} eq 'tool' } @{ $req->{messages} };
    my ($sql) = grep { $_->{tool_call_id} eq 'call_b' } @results;
    my $rows = decode_json($sql->{content})->{rows};
    return { text => join '; ', map { "$_->[0]=$_->[1]" } @$rows };
});

$t->run;

my $sid = $t->session;
my $csv = "Name,Department,Salary\n";
my %sum;
# 3,000 rows: more than client_body_buffer_size, so nginx keeps the body in
# a temp file and the module reads it from there
for my $i (1 .. 3000) {
    my $d = (qw(Sales Ops Research))[$i % 3];
    $csv .= "P$i,$d,$i\n";
    $sum{$d} += $i;
}
my $r = $t->http('POST', "/api/sessions/$sid/resources?name=staff.csv", $csv,
                 'Content-Type' => 'text/csv');
is($r->{status}, 201, 'CSV uploaded');
ok(length($csv) > 16384, 'the upload was larger than the body buffer');

$r = $t->turn($sid, 'Average salary by department?');
is($r->{types}[-1], 'end', 'turn ends') or diag(explain $r->{events});

# the calls run at once: both start, then the results in the calls' order
my @types = grep { $_ ne 'chunk' && $_ ne 'node' } @{ $r->{types} };
is_deeply(\@types, [qw(start tool_start tool_start tool_result tool_result
                       end)], 'tool events in order');

my ($ts1, $ts2, $tr1, $tr2) = grep { $_->{type} =~ /^tool/ }
                              @{ $r->{events} };
is($ts1->{id}, 'call_a', 'tool_start id');
is($ts1->{name}, 'load_csv_data', 'tool_start name');
is_deeply($ts1->{input}, { table => 'staff' }, 'input is the parsed args');
is($tr1->{content}{row_count}, 3000, 'load_csv_data: row count');
is_deeply($tr1->{content}{columns}[2], { name => 'Salary',
                                         type => 'INTEGER' },
          'load_csv_data: typed columns');
is(scalar @{ $tr1->{content}{first_rows}{rows} }, 5,
   'load_csv_data: first rows');
is($ts2->{input}{query}, $query, 'the query arrived whole');

my $res = $tr2->{content};
is_deeply($res->{columns}, [qw(Department avg n)], 'result columns');
is($res->{row_count}, 3, 'row_count');
ok(!$res->{truncated}, 'not truncated');
my %got = map { $_->[0] => $_->[1] } @{ $res->{rows} };
is($got{$_}, $sum{$_} / 1000, "average of $_") for sort keys %sum;

my $expect = join '; ', map { "$_=" . $sum{$_} / 1000 } sort keys %sum;
is($r->{events}[-1]{full_response}, $expect,
   'the model answered from the tool results');

my @req = $mock->requests;
is(scalar @req, 2, 'two model calls');
like($req[1]{body}{messages}[0]{content}, qr/table staff \(also csv_data\)/,
     'system prompt lists the CSV');
my @m = @{ $req[1]{body}{messages} };
is($m[-3]{role}, 'assistant', 'the calls went back to the model');
is(scalar @{ $m[-3]{tool_calls} }, 2, 'both calls');
is_deeply(decode_json($m[-3]{tool_calls}[1]{function}{arguments}),
          { query => $query }, 'arguments reassembled from the pieces');
is_deeply([ map { $_->{tool_call_id} } @m[-2, -1] ], [qw(call_a call_b)],
          'a tool message per call');

my $all = $t->http('GET', "/api/sessions/$sid/messages?include_tools=1")
             ->{json}{messages};
is_deeply([ map { $_->{role} } @$all ],
          [qw(user assistant tool tool assistant)], 'include_tools: all');
my $plain = $t->http('GET', "/api/sessions/$sid/messages")->{json}{messages};
is_deeply([ map { $_->{role} } @$plain ], [qw(user assistant)],
          'tool traffic left out by default');

my $h = $t->http('GET', "/api/sessions/$sid/history")->{json}{checkpoints};
is_deeply([ map { $_->{node} } reverse @$h ],
          [qw(__input__ load_csv_metadata model tools model)],
          'checkpoints: input, csv, model, tools, model');
is($h->[-2]{next}, 'model', 'load_csv_metadata: next is model');

# row cap
$t->stop;
$mock = $t->mock(sub {
    my ($req) = @_;
    return { tools => [[ 'c1', 'execute_sql_query',
                         '{"query":"SELECT * FROM staff"}' ]] }
        if $req->{messages}[-1]{role} eq 'user';
    return { text => 'done' };
});
$t->run($t->conf(location => 'agent_sql_max_rows 10;'));
$r = $t->turn($sid, 'all rows');
my ($cap) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is($cap->{content}{row_count}, 10, 'rows capped');
ok($cap->{content}{truncated}, 'truncated says so');

# a query that runs too long is stopped
$t->stop;
$mock = $t->mock(sub {
    my ($req) = @_;
    return { tools => [[ 'c1', 'execute_sql_query', encode_json({ query =>
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) '
        . 'SELECT COUNT(*) FROM c' }) ]] }
        if $req->{messages}[-1]{role} eq 'user';
    return { text => 'gave up' };
});
$t->run($t->conf(location => 'agent_sql_timeout 300ms;'));
$r = $t->turn($sid, 'forever');
my ($slow) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
like($slow->{content}{error}, qr/longer than 300 ms/, 'time cap');
is($r->{types}[-1], 'end', 'a tool error is not a failed turn');

$t->stop;
$t->check_log;
done_testing;
