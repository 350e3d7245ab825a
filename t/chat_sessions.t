#!/usr/bin/perl
# The session endpoints, CSV resources, and every error answer of the
# contract that needs no model.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
$t->mock(sub { { text => 'unused' } });
$t->run($t->conf(http => 'client_max_body_size 64k;'));

# create, read, list
my $r = $t->http('POST', '/api/sessions/',
                 { title => 'Sales', metadata => { owner => 'ann' } });
is($r->{status}, 201, 'create: 201');
like($r->{headers}{'content-type'}, qr{^application/json}, 'json answer');
my $s = $r->{json};
like($s->{id}, qr/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/, 'uuid id');
is($s->{title}, 'Sales', 'title');
is($s->{message_count}, 0, 'no messages yet');
like($s->{created_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
     'created_at is ISO 8601');
is($s->{created_at}, $s->{updated_at}, 'updated_at');
is_deeply($s->{metadata}, { owner => 'ann' }, 'metadata kept');

$r = $t->http('POST', '/api/sessions/');
is($r->{status}, 201, 'create without a body');
is($r->{json}{title}, '', 'empty title');
my $second = $r->{json}{id};

$r = $t->http('GET', "/api/sessions/$s->{id}");
is($r->{status}, 200, 'get: 200');
is($r->{json}{title}, 'Sales', 'get: the session');

$r = $t->http('GET', '/api/sessions/');
is($r->{status}, 200, 'list: 200');
is_deeply([ map { $_->{id} } @{ $r->{json}{sessions} } ],
          [ $second, $s->{id} ], 'list: newest first');
$r = $t->http('GET', '/api/sessions/?limit=1&offset=1');
is_deeply([ map { $_->{id} } @{ $r->{json}{sessions} } ], [ $s->{id} ],
          'list: limit and offset');
is($t->http('GET', '/api/sessions/?limit=0')->{status}, 400, 'bad limit');

# empty collections
is_deeply($t->http('GET', "/api/sessions/$s->{id}/messages")->{json},
          { messages => [], has_more => JSON::PP::false,
            next_before => undef }, 'no messages');
is_deeply($t->http('GET', "/api/sessions/$s->{id}/history")->{json},
          { checkpoints => [] }, 'no checkpoints');
$r = $t->http('GET', "/api/sessions/$s->{id}/state")->{json};
is($r->{checkpoint_id}, undef, 'state before any turn');
is_deeply($r->{values}{messages}, [], 'state: no messages');

# CSV resources
my $csv = qq{Name,Department,Salary,Start\n}
        . qq{"Smith, Ann",Sales,5000,2020-01-02\n}
        . qq{Bob,"R&D ""labs""",6000.5,2021-03-04\r\n}
        . qq{"Multi\nLine",Sales,,2022-05-06\n};
$r = $t->http('POST', "/api/sessions/$s->{id}/resources?name=staff%20list.csv",
              $csv, 'Content-Type' => 'text/csv');
is($r->{status}, 201, 'upload: 201') or diag($r->{content});
is($r->{json}{name}, 'staff list.csv', 'upload: the file name');
is($r->{json}{table}, 'staff_list', 'upload: a table name');
is($r->{json}{row_count}, 3, 'upload: rows (quoted newline inside)');
is($r->{json}{size_bytes}, length $csv, 'upload: size');
is_deeply($r->{json}{columns}, [
    { name => 'Name', type => 'TEXT' },
    { name => 'Department', type => 'TEXT' },
    { name => 'Salary', type => 'REAL' },
    { name => 'Start', type => 'TEXT' } ], 'upload: columns and types');

$r = $t->http('POST', "/api/sessions/$s->{id}/resources?name=staff_list.csv",
              "a,b\n1,2\n", 'Content-Type' => 'text/csv');
is($r->{json}{table}, 'staff_list_2', 'second file: a new table name');
is_deeply($r->{json}{columns}, [ { name => 'a', type => 'INTEGER' },
                                 { name => 'b', type => 'INTEGER' } ],
          'integers');

$r = $t->http('GET', "/api/sessions/$s->{id}/resources");
is(scalar @{ $r->{json}{resources} }, 2, 'resources listed');

my @files = glob($t->dir . '/resources/*.sqlite');
is(scalar @files, 2, 'a SQLite file per CSV');
is($t->sqlite($files[0] =~ /\Q$r->{json}{resources}[0]{id}\E/ ? $files[0]
                                                               : $files[1],
              'SELECT Salary FROM csv_data WHERE Name = "Bob"'),
   '6000.5', 'the first CSV is csv_data');

$r = $t->http('POST', "/api/sessions/$s->{id}/resources?name=bad.csv",
              qq{a,b\n1,2,3\n}, 'Content-Type' => 'text/csv');
is($r->{status}, 400, 'ragged CSV: 400');
like($r->{json}{error}, qr/line 2 has 3 fields, the header has 2/,
     'ragged CSV: says where');
$r = $t->http('POST', "/api/sessions/$s->{id}/resources?name=bad.csv",
              qq{a,b\n"1,2\n}, 'Content-Type' => 'text/csv');
is($r->{status}, 400, 'unclosed quote: 400');
$r = $t->http('POST', "/api/sessions/$s->{id}/resources", "a\n1\n",
              'Content-Type' => 'text/csv');
is($r->{status}, 400, 'no name: 400');
like($r->{json}{error}, qr/\?name=/, 'no name: says how');

# errors
$r = $t->http('POST', '/api/sessions/', '{"title": ');
is($r->{status}, 400, 'bad JSON: 400');
like($r->{json}{error}, qr/not valid JSON/, 'bad JSON: says so');
$r = $t->http('POST', '/api/sessions/', { title => 5 });
is($r->{status}, 400, 'wrong type: 400');
is($r->{json}{error}, '"title" must be a string', 'wrong type: says which');
is($t->http('POST', '/api/sessions/', '[1]')->{status}, 400,
   'not an object: 400');
is($t->http('POST', '/api/sessions/', { metadata => 'x' })->{status}, 400,
   'metadata not an object: 400');

$r = $t->http('GET', '/api/sessions/no-such-session');
is($r->{status}, 404, 'unknown session: 404');
like($r->{json}{error}, qr/no session "no-such-session"/, '404 says which');
for my $p (qw(messages state history resources)) {
    is($t->http('GET', "/api/sessions/nope/$p")->{status}, 404,
       "unknown session /$p: 404");
}
is($t->http('GET', '/api/sessions/x/y/z')->{status}, 404, 'no endpoint');
is($t->http('GET', '/api/sessions/bad%20id')->{status}, 404, 'bad id');

$r = $t->http('PUT', "/api/sessions/$s->{id}");
is($r->{status}, 405, 'wrong method: 405');
is($r->{headers}{allow}, 'GET, DELETE', '405 says what is allowed');
like($r->{json}{error}, qr/method PUT is not allowed/, '405 in JSON');
is($t->http('DELETE', '/api/sessions/')->{status}, 405, 'DELETE list: 405');
is($t->http('GET', "/api/chat/$s->{id}/message")->{status}, 405,
   'GET message: 405');
is($t->http('GET', "/api/chat/$s->{id}/nothing")->{status}, 404,
   'chat: unknown endpoint');

$r = $t->http('POST', '/api/sessions/', { title => 'x' x 70000 });
is($r->{status}, 413, 'too large: 413');
like($r->{json}{error}, qr/larger than 65536 bytes/, '413 in JSON');

# chat endpoints that need no turn
$r = $t->http('GET', "/api/chat/$s->{id}/model");
is($r->{status}, 200, 'model: 200');
is_deeply($r->{json}, { thread_id => $s->{id}, model => 'mock',
                        models => { mock => JSON::PP::true } },
          'model: the default');
$r = $t->http('POST', "/api/chat/$s->{id}/model", { name => 'default' });
is($r->{json}{model}, 'mock', 'model: set by alias');
$r = $t->http('POST', "/api/chat/$s->{id}/model", { name => 'gpt-9' });
is($r->{status}, 404, 'unknown model: 404');
is($t->http('POST', "/api/chat/nope/model", { name => 'mock' })->{status},
   404, 'model of unknown session: 404');
$r = $t->http('POST', "/api/chat/$s->{id}/message", { message => '' });
is($r->{status}, 400, 'empty message: 400');
$r = $t->http('POST', "/api/chat/$s->{id}/message", { message => [] });
is($r->{status}, 400, 'message not a string: 400');
$r = $t->http('POST', "/api/chat/$s->{id}/message",
              { message => 'hi', images => [ { data => 'x' } ] });
is($r->{status}, 400, 'image without mime type: 400');
$r = $t->http('POST', "/api/chat/nope/message", { message => 'hi' });
is($r->{status}, 404, 'message to unknown session: 404');
$r = $t->http('POST', "/api/chat/$s->{id}/message",
              { message => 'hi', model => 'gpt-9' });
is($r->{status}, 400, 'message with unknown model: 400');
$r = $t->http('POST', "/api/chat/$s->{id}/connection", { database => 'x' });
is($r->{status}, 404, 'unknown database: 404');

# delete: rows and files gone
$r = $t->http('DELETE', "/api/sessions/$s->{id}");
is($r->{status}, 204, 'delete: 204');
is($r->{content} // '', '', 'delete: no body');
is($t->http('GET', "/api/sessions/$s->{id}")->{status}, 404, 'deleted');
is($t->http('DELETE', "/api/sessions/$s->{id}")->{status}, 404,
   'delete twice: 404');
@files = glob($t->dir . '/resources/*.sqlite');
is(scalar @files, 0, 'its files are gone');
is($t->sqlite($t->dir . '/agent.db',
              "SELECT COUNT(*) FROM resources WHERE session_id = '$s->{id}'"),
   '0', 'its resource rows are gone');

$t->stop;
$t->check_log;
done_testing;
