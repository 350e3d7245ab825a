#!/usr/bin/perl
# A run's webhook (issue 32, item 4): called once when the run ends, with
# the run as GET /threads/{id}/runs/{run_id} answers it and its values,
# signed with HMAC-SHA256 under the key agent_webhooks' key_env names,
# tried again after a 500; a webhook at a URL agent_webhooks does not
# list (or one that could leave its prefix) is refused when the run is
# made, and nothing is contacted.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use Digest::SHA qw(hmac_sha256_hex);
use POSIX ();

my $t = AgentTest->new;
my $dir = $t->dir;
$t->mock(sub { { text => 'hooked' } });

# the receiver: a path's first request answered 500, the next ones 200
my $log = "$dir/hooks.log";
my $port = AgentTest::hook_receiver($log);

$ENV{AGENT_TEST_HOOK_KEY} = 'hook-secret';
my $conf = $t->conf;
$conf =~ s/^(worker_processes)/env AGENT_TEST_HOOK_KEY;\n$1/m;
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_webhooks http://127.0.0.1:$port/hooks/
                           key_env=AGENT_TEST_HOOK_KEY; }
        location /lg2/ { agent_langgraph_api; }
        $1};
$t->run($conf);

sub hooks {
    return map { { %$_, sig => $_->{headers}{'x-agent-signature'} } }
           AgentTest::hooks_got($log);
}

my $in = { messages => [ { role => 'user', content => 'hi' } ] };

# --- refused at the run's making ---------------------------------------------

for my $url ("http://127.0.0.1:1/hooks/", "http://127.0.0.1:$port/other",
             "http://127.0.0.1:$port/hooks/../admin",
             "http://127.0.0.1:$port/hooks/%2e%2e/admin",
             "http://127.0.0.1:$port/hooks/.%2E/admin",
             "http://127.0.0.1:$port/hooks/x/..",
             "http://127.0.0.1:$port/hooks/a\\b", 42) {
    my $r = $t->http('POST', '/lg/runs/wait', { assistant_id => 'react',
        input => $in, webhook => $url });
    is($r->{status}, 422, "webhook $url refused");
}
# a segment that starts with a dot is no dot segment
my $r = $t->http('POST', '/lg/runs/wait', { assistant_id => 'react',
    input => $in, webhook => "http://127.0.0.1:$port/hooks/.well-known/x" });
is($r->{status}, 200, 'a webhook under /hooks/.well-known/ is taken');
ok(AgentTest::wait_for(sub { my @n = hooks(); @n >= 2 }, 15),
   'and called (again after its 500)');
unlink $log;

$r = $t->http('POST', '/lg2/runs/wait', { assistant_id => 'react',
    input => $in, webhook => "http://127.0.0.1:$port/hooks/x" });
is($r->{status}, 422, 'no agent_webhooks here: every webhook refused');
my @none = hooks();
is(scalar @none, 0, 'and nothing was contacted');

# --- called once at the end, again after a 500 -------------------------------

my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
$r = $t->http('POST', "/lg/threads/$th/runs/wait", { assistant_id => 'react',
    input => $in, webhook => "http://127.0.0.1:$port/hooks/a?x=1" });
is($r->{status}, 200, 'a run with a webhook');
my $run = $r->{headers}{'content-location'} =~ m{/runs/([^/]+)$} ? $1 : '';

ok(AgentTest::wait_for(sub { my @n = hooks(); @n >= 2 }, 15),
   'the webhook was called again after its 500');
sleep 3;
my @h = hooks();
is(scalar @h, 2, 'then not again');
is($h[0]{path}, '/hooks/a?x=1', 'at its URL');
is($h[1]{body}, $h[0]{body}, 'the same body each time');

my $b = decode_json($h[1]{body});
is($b->{run_id}, $run, 'the run');
is($b->{thread_id}, $th, 'its thread');
is($b->{status}, 'success', 'ended');
is($b->{kwargs}{webhook}, "http://127.0.0.1:$port/hooks/a?x=1",
   'its kwargs, as the run\'s GET says');
is($b->{values}{messages}[-1]{content}, 'hooked', 'its values');
is($h[1]{sig}, 'sha256=' . hmac_sha256_hex($h[1]{body}, 'hook-secret'),
   'signed: HMAC-SHA256 of the body under the key');

my $g = $t->http('GET', "/lg/threads/$th/runs/$run")->{json};
is($g->{status}, 'success', 'the run as GET answers it');

$t->stop;
$t->check_log;
done_testing;
