#!/usr/bin/perl
# A run's webhook (issue 32, item 4): called once when the run ends, with
# the run as GET /threads/{id}/runs/{run_id} answers it and its values,
# tried again after a 500; a webhook at a URL agent_webhooks does not
# list (or one that could leave its prefix) is refused when the run is
# made, and nothing is contacted.  Signed as Standard Webhooks (issue 48,
# item 7): webhook-id (the run's, the same on each try), webhook-timestamp
# and webhook-signature under the key key_env names ("whsec_" and base64,
# or raw bytes), checked by Standard Webhooks' own verifier from npm,
# which refuses a delivery replayed under a new timestamp or another id.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use Digest::SHA qw(hmac_sha256);
use MIME::Base64 qw(encode_base64);
use POSIX ();

my $root = "$FindBin::Bin/..";
my $sw = system('sh', '-c', 'command -v npm >/dev/null') == 0
         ? AgentTest::npm_install('standardwebhooks', 'standardwebhooks',
                                  'standardwebhooks@1.3.0')
         : undef;

my $t = AgentTest->new;
my $dir = $t->dir;
$t->mock(sub { { text => 'hooked' } });

# the receiver: a path's first request answered 500, the next ones 200
my $log = "$dir/hooks.log";
my $port = AgentTest::hook_receiver($log);

my $key = 'the key bytes of 48-7, any bytes';
my $secret = 'whsec_' . encode_base64($key, '');
$ENV{AGENT_TEST_HOOK_KEY} = $secret;
$ENV{AGENT_TEST_HOOK_RAW} = 'a raw key';
my $conf = $t->conf;
$conf =~ s/^(worker_processes)/env AGENT_TEST_HOOK_KEY;
env AGENT_TEST_HOOK_RAW;\n$1/m;
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_webhooks http://127.0.0.1:$port/hooks/
                           key_env=AGENT_TEST_HOOK_KEY; }
        location /lg2/ { agent_langgraph_api; }
        location /lg3/ { agent_langgraph_api;
            agent_webhooks http://127.0.0.1:$port/raw/
                           key_env=AGENT_TEST_HOOK_RAW; }
        $1};
$t->run($conf);

sub hooks {
    return map { { %$_, sig => $_->{headers}{'webhook-signature'},
                   id => $_->{headers}{'webhook-id'},
                   ts => $_->{headers}{'webhook-timestamp'} } }
           AgentTest::hooks_got($log);
}

# Standard Webhooks' signature, as its spec writes it
sub standard {
    my ($h, $k) = @_;
    return 'v1,' . encode_base64(hmac_sha256("$h->{id}.$h->{ts}.$h->{body}",
                                             $k), '');
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
is($h[0]{id}, $run, 'webhook-id: the run\'s');
is($h[1]{id}, $h[0]{id}, '... the same on the try after the 500');
like($h[1]{ts}, qr/^\d{10}$/, 'webhook-timestamp: the try\'s, in seconds');
ok(abs($h[1]{ts} - time) < 60, '... now');
is($h[1]{sig}, standard($h[1], $key),
   'webhook-signature: v1, HMAC-SHA256 of id.timestamp.body under the '
   . 'whsec_ key\'s bytes');
ok(!exists $h[1]{headers}{'x-agent-signature'},
   'the body-only signature is gone');

SKIP: {
    skip 'npm is missing: Standard Webhooks\' verifier not installed', 5
        unless $sw;
    my %o = AgentTest::observe("$root/t/webhooks/verify.mjs", $sw, $secret,
                               'whsec', $log);
    is(scalar(grep { $_->{ok} } @{ $o{verified} // [] }), 2,
       'standardwebhooks verifies both tries') or diag explain \%o;
    is($o{verified}[1]{payload}{run_id}, $run, '... and reads the run');
    like($o{new_timestamp}{error} // '', qr/signature/i,
         'a replay under a new timestamp: refused');
    like($o{other_id}{error} // '', qr/signature/i,
         'under another id: refused');
    like($o{other_body}{error} // '', qr/signature/i,
         'another body: refused');
}

# a key that is not "whsec_": its own bytes
$r = $t->http('POST', '/lg3/runs/wait', { assistant_id => 'react',
    input => $in, webhook => "http://127.0.0.1:$port/raw/r" });
is($r->{status}, 200, 'a run with a webhook under a raw key');
ok(AgentTest::wait_for(sub { grep { $_->{path} eq '/raw/r' } hooks() }, 15),
   'called');
my ($raw) = grep { $_->{path} eq '/raw/r' } hooks();
is($raw->{sig}, standard($raw, 'a raw key'), 'signed under the raw bytes');
SKIP: {
    skip 'npm is missing: Standard Webhooks\' verifier not installed', 1
        unless $sw;
    my %o = AgentTest::observe("$root/t/webhooks/verify.mjs", $sw,
                               'a raw key', 'raw', $log, '/raw/r');
    ok($o{verified}[0]{ok}, 'standardwebhooks verifies it (format "raw")')
        or diag explain \%o;
}

my $g = $t->http('GET', "/lg/threads/$th/runs/$run")->{json};
is($g->{status}, 'success', 'the run as GET answers it');

$t->stop;
$t->check_log;
done_testing;
