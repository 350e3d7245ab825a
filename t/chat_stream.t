#!/usr/bin/perl
# A plain streamed answer: the event stream of the contract, token by token.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
my $mock = $t->mock(sub { { text => 'Hello there, I am the agent.' } });
$t->run;

my $sid = $t->session(title => 'stream');
my $r = $t->turn($sid, 'Say hello');

is($r->{status}, 200, 'status 200');
like($r->{headers}{'content-type'}, qr{^text/event-stream}, 'content type');
is($r->{headers}{'cache-control'}, 'no-cache', 'cache-control');
is($r->{headers}{'x-accel-buffering'}, 'no', 'x-accel-buffering');
like($r->{headers}{'transfer-encoding'} // '', qr/chunked/, 'chunked');

my @types = @{ $r->{types} };
is($types[0], 'start', 'start first');
is($types[-1], 'end', 'end last');
is(scalar(grep { $_ eq 'chunk' } @types), 6, 'a chunk per streamed piece');
is_deeply([ map { $_->{id} } @{ $r->{events} } ],
          [ 1 .. scalar @{ $r->{events} } ], 'ids count 1, 2, 3 ...');

my ($start, $end) = @{ $r->{events} }[0, -1];
is($start->{session_id}, $sid, 'start names the session');
like($start->{run_id}, qr/^[0-9a-f-]{36}$/, 'start has a run id');
is($r->{text}, 'Hello there, I am the agent.', 'chunks make the answer');
is($end->{full_response}, 'Hello there, I am the agent.', 'full_response');
is($end->{usage}{prompt_tokens}, 10, 'usage prompt tokens');
is($end->{usage}{completion_tokens}, 6, 'usage completion tokens');
like($end->{checkpoint_id}, qr/^[0-9a-f-]{36}$/, 'end has checkpoint id');

my @req = $mock->requests;
is(scalar @req, 1, 'one provider call');
my $b = $req[0]{body};
is($b->{model}, 'mock-1', 'remote model name sent');
ok($b->{stream}, 'streaming requested');
is($b->{messages}[0]{role}, 'system', 'system prompt first');
like($b->{messages}[0]{content}, qr/data analyst/, 'default prompt used');
is($b->{messages}[-1]{content}, 'Say hello', 'user message last');
is(scalar @{ $b->{tools} }, 2, 'two tools bound');

my $m = $t->http('GET', "/api/sessions/$sid/messages")->{json}{messages};
is(scalar @$m, 2, 'two messages kept');
is($m->[0]{role}, 'user', 'user first');
is($m->[1]{content}, 'Hello there, I am the agent.', 'assistant answer kept');
is($m->[1]{session_id}, $sid, 'message names its session');

my $s = $t->http('GET', "/api/sessions/$sid")->{json};
is($s->{message_count}, 2, 'message_count');

my $st = $t->http('GET', "/api/sessions/$sid/state")->{json};
is($st->{checkpoint_id}, $end->{checkpoint_id}, 'state at last checkpoint');
is_deeply($st->{next}, [], 'nothing next');
is($st->{values}{model_calls}, 1, 'counter channel');
is($st->{values}{input}, 'Say hello', 'value channel');
is(scalar @{ $st->{values}{messages} }, 2, 'messages channel');

my $h = $t->http('GET', "/api/sessions/$sid/history")->{json}{checkpoints};
is_deeply([ map { $_->{node} } @$h ],
          [qw(model load_csv_metadata __input__)], 'a checkpoint per node');
is($h->[0]{parent_checkpoint_id}, $h->[1]{checkpoint_id}, 'parent chain');
ok($h->[0]{step} > $h->[1]{step}, 'steps grow');

# images go to the provider as content parts
$r = $t->turn($sid, { message => 'Look', images => [
    { data => 'iVBORw0KGgo=', mime_type => 'image/png' } ] });
is($r->{types}[-1], 'end', 'turn with an image');
@req = $mock->requests;
my $parts = $req[-1]{body}{messages}[-1]{content};
is($parts->[1]{image_url}{url}, 'data:image/png;base64,iVBORw0KGgo=',
   'image as a data url');

# a heartbeat when nothing else is sent
$t->stop;
$t->mock(sub { { text => 'slow answer', delay => 0.7 } });
$t->run($t->conf(location => 'agent_heartbeat 200ms;'));
$r = $t->turn($sid, 'slowly');
is($r->{types}[-1], 'end', 'slow turn ends');
ok(scalar(grep { $_ eq 'ping' } @{ $r->{comments} }) >= 1, ': ping sent');

$t->stop;
$t->check_log;
done_testing;
