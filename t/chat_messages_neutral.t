#!/usr/bin/perl
# Messages are stored provider-neutral: tool calls as {"id", "name",
# "arguments": parsed}, images as {"mime_type", "data"}; the OpenAI client
# writes them its own way per call; messages stored in the older OpenAI
# shape still work.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
my $mock = $t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    return { tools => [[ 'c1', 'execute_sql_query',
                         qq({\n  "query": "SELECT 41 + 1"\n}) ]] }
        if $last->{role} eq 'user' && AgentTest::last_user($req) eq 'add';
    return { text => 'done' };
});
$t->run;
my $db = $t->dir . '/agent.db';

my $sid = $t->session;
my $r = $t->turn($sid, 'add');
is($r->{types}[-1], 'end', 'a turn with a tool call');

my $m = $t->http('GET', "/api/sessions/$sid/messages?include_tools=1")
          ->{json}{messages};
my ($ai) = grep { $_->{tool_calls} } @$m;
is_deeply($ai->{tool_calls}, [{ id => 'c1', name => 'execute_sql_query',
                                arguments => { query => 'SELECT 41 + 1' } }],
          'tool calls stored neutral, their arguments parsed');

# seed 000's clients read sessionId and createdAt: both names are there
for my $msg (@$m) {
    is($msg->{sessionId}, $msg->{session_id},
       "message $msg->{id}: sessionId beside session_id");
    is($msg->{createdAt}, $msg->{created_at},
       "message $msg->{id}: createdAt beside created_at");
}
like($m->[0]{createdAt}, qr/^\d{4}-\d\d-\d\dT/, 'createdAt is a time');

my $stored = $t->sqlite($db, "SELECT tool_calls FROM messages WHERE "
                             . "session_id = '$sid' AND role = 'assistant' "
                             . "AND tool_calls IS NOT NULL");
is_deeply(decode_json($stored), $ai->{tool_calls}, 'so in the store');

my @req = $mock->requests;
my ($sent) = grep { $_->{tool_calls} } @{ $req[-1]{body}{messages} };
is_deeply($sent->{tool_calls},
          [{ id => 'c1', type => 'function',
             function => { name => 'execute_sql_query',
                           arguments => '{"query":"SELECT 41 + 1"}' } }],
          'OpenAI gets its own shape, the arguments as compact JSON text');

# a message stored in the OpenAI shape, before the neutral one
my $old = encode_json([{ id => 'c1', type => 'function',
                         function => { name => 'execute_sql_query',
                                       arguments => '{"query": "SELECT 7"}' }
                       }]);
$old =~ s/'/''/g;
$t->sqlite($db, "UPDATE messages SET tool_calls = '$old' WHERE "
                . "session_id = '$sid' AND tool_calls IS NOT NULL");

$r = $t->turn($sid, 'next');
is($r->{types}[-1], 'end', 'a session with an old-shape message goes on');
@req = $mock->requests;
($sent) = grep { $_->{tool_calls} } @{ $req[-1]{body}{messages} };
is($sent->{tool_calls}[0]{function}{arguments}, '{"query": "SELECT 7"}',
   'the old message is sent as it was');
$m = $t->http('GET', "/api/sessions/$sid/messages?include_tools=1")
       ->{json}{messages};
ok(scalar(grep { $_->{tool_calls} } @$m), 'and listed');

# images: stored neutral, sent as OpenAI's content parts
$r = $t->turn($sid, { message => 'look', images => [
    { data => 'iVBORw0KGgo=', mime_type => 'image/png' } ] });
is($r->{types}[-1], 'end', 'a turn with an image');
my $img = $t->sqlite($db, "SELECT images FROM messages WHERE "
                          . "session_id = '$sid' AND images IS NOT NULL");
is_deeply(decode_json($img), [{ mime_type => 'image/png',
                                data => 'iVBORw0KGgo=' }],
          'the image stored neutral');
@req = $mock->requests;
my ($u) = grep { ref $_->{content} } @{ $req[-1]{body}{messages} };
is_deeply($u->{content},
          [{ type => 'text', text => 'look' },
           { type => 'image_url',
             image_url => { url => 'data:image/png;base64,iVBORw0KGgo=' } }],
          'sent as content parts');

$t->check_log;
done_testing;
