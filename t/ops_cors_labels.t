#!/usr/bin/perl
# What is ours in the metrics and the log, and a web client on another
# origin.  A metric label longer than a series holds is cut between two
# characters, never inside one: a scrape refuses the whole page for one
# label that is not UTF-8.  A provider's error text reaches the log with its
# newlines escaped.  agent_cors answers a browser's preflight and names the
# allowed origin on answers and event streams; Chromium on another origin
# streams a turn, and an origin not allowed is blocked.

use strict;
use warnings;
use utf8;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Encode qw(decode encode);
use JSON::PP;

my $t = AgentTest->new;

# --- A: a label cut on a character boundary ----------------------------

$t->mock(sub {
    my ($req) = @_;
    return { status => 400, message => "bad\n2026/01/01 00:00:00 [emerg] "
                                       . "forged by the provider" }
        if ($req->{messages}[-1]{content} // '') eq 'forge';
    return { text => 'fine' };
});

# 1 + 2 * 30 bytes: the 48 bytes a series keeps end inside an "é"
my $model = 'x' . ('é' x 30);
my $name = encode('UTF-8', $model);
my $conf = $t->conf;
$conf =~ s{agent_model mock }{agent_model $name };
$conf =~ s{(location /api/chat/)}{location = /metrics { agent_metrics; }
        $1};
$t->run($conf);

is($t->turn($t->session, 'hello')->{types}[-1], 'end', 'a turn');
my $page = $t->http('GET', '/metrics')->{content};
my $text = eval { decode('UTF-8', $page, Encode::FB_CROAK) };
ok(defined $text, 'the page is UTF-8') or diag $@;
my ($label) = ($text // '') =~ /^agent_model_calls_total\{model="([^"]*)"/m;
is($label, 'x' . ('é' x 23), 'the label: 47 bytes, the character it would cut left out');

# a provider's error text is one line of the log too
is($t->turn($t->session, 'forge')->{types}[-1], 'error',
   'a turn whose provider answers an error with a newline in it');
my $log = $t->slurp('error.log');
like($log, qr/answered 400: bad.{1,4}2026\/01\/01 00:00:00 \[emerg\] forged by the provider/,
     'logged on one line');
unlike($log, qr/^2026\/01\/01 00:00:00 \[emerg\] forged/m,
       'forging no line of the log');

$t->stop;

# --- B: agent_cors, a cross-origin client in Chromium --------------------

my $chromium = $ENV{CHROMIUM} // '/usr/bin/chromium';
my $modules = AgentTest->root . '/build/browser/node_modules';

SKIP: {
    if (!-d "$modules/playwright-core") {
        system('sh', '-c', "npm install --prefix ${\ AgentTest->root}"
               . '/build/browser playwright-core@1.65.1 --no-audit '
               . '--no-fund --loglevel=error >/dev/null 2>&1');
    }
    skip 'no Chromium or playwright-core (see t/ui_browser.t)', 19
        unless -x $chromium && -d "$modules/playwright-core";

    my $c = AgentTest->new;
    $c->mock(sub { { text => 'Hello from afar' } });

    my ($ok_port, $bad_port) = (AgentTest::free_port(),
                                AgentTest::free_port());
    my $www = $c->dir . '/www';
    mkdir $www;
    open my $fh, '>', "$www/index.html" or die;
    print $fh <<'HTML';
<!doctype html>
<meta charset="utf-8">
<title>another origin</title>
<script>
(async () => {
    const api = new URLSearchParams(location.search).get('api');
    const json = { 'Content-Type': 'application/json' };
    const out = {};
    try {
        let r = await fetch(api + '/api/sessions/', { method: 'POST',
            headers: json, body: '{}' });
        const s = await r.json();
        out.session = s.id;
        r = await fetch(api + '/api/chat/' + s.id + '/message', {
            method: 'POST', headers: json,
            body: JSON.stringify({ message: 'hello' }) });
        out.type = r.headers.get('Content-Type');
        const reader = r.body.getReader();
        const dec = new TextDecoder();
        out.stream = '';
        for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            out.stream += dec.decode(value, { stream: true });
        }
        r = await fetch(api + '/lg/threads', { method: 'POST',
            headers: json, body: '{}' });
        const th = await r.json();
        r = await fetch(api + '/lg/threads/' + th.thread_id
                        + '/runs/stream', { method: 'POST', headers: json,
            body: JSON.stringify({ assistant_id: 'react', input: {
                messages: [ { role: 'user', content: 'hi' } ] } }) });
        out.location = r.headers.get('Content-Location');
        out.lg = await r.text();
    } catch (e) {
        out.error = String(e);
    }
    window.__result = out;
})();
</script>
HTML
    close $fh;

    my $conf = $c->conf(http => <<"HTTP");
server {
        listen 127.0.0.1:$ok_port;
        root $www;
    }
    server {
        listen 127.0.0.1:$bad_port;
        root $www;
    }
HTTP
    $conf =~ s{(listen 127\.0\.0\.1:%%PORT%%;)}{$1
        agent_cors http://127.0.0.1:$ok_port http://ui.example:3000;
        location /lg/ { agent_langgraph_api; }};
    $c->run($conf);

    # the preflight and the headers, as the browser will see them
    my $origin = "http://127.0.0.1:$ok_port";
    my $r = $c->http('OPTIONS', '/api/sessions/', undef,
                     Origin => $origin,
                     'Access-Control-Request-Method' => 'POST',
                     'Access-Control-Request-Headers' => 'content-type');
    is($r->{status}, 204, 'a preflight from an allowed origin: 204');
    is($r->{headers}{'access-control-allow-origin'}, $origin,
       'naming the origin');
    like($r->{headers}{'access-control-allow-headers'} // '',
         qr/Content-Type.*Last-Event-ID/, 'the headers the API reads');
    $r = $c->http('OPTIONS', '/api/sessions/', undef,
                  Origin => "http://127.0.0.1:$bad_port",
                  'Access-Control-Request-Method' => 'POST');
    ok(!$r->{headers}{'access-control-allow-origin'},
       'another origin: no CORS header');

    my $api = 'http://127.0.0.1:' . $c->port;
    my $out = `NODE_PATH=$modules CHROMIUM=$chromium timeout 120 node ${\ AgentTest->root}/t/browser/cors.js "http://127.0.0.1:$ok_port/?api=$api" "http://127.0.0.1:$bad_port/?api=$api" 2>&1`;
    my @res = map { eval { decode_json($_) } // () } grep { /^\{/ }
              split /\n/, $out;
    is(scalar @res, 2, 'the browser reported both pages') or diag $out;
    my ($good, $bad) = @res;
    $good //= {};
    $bad //= {};
    ok(!$good->{error}, 'the allowed origin: no error')
        or diag explain $good;
    like($good->{session} // '', qr/^[\w-]+$/, 'it created a session');
    like($good->{type} // '', qr{^text/event-stream}, 'it streamed a turn');
    like($good->{stream} // '', qr/Hello from afar/,
         'and read the answer from the stream');
    like($good->{stream} // '', qr/"type":\s*"end"/, 'to its end');
    like($good->{location} // '', qr{^/threads/[^/]+/runs/},
         'a LangGraph run: Content-Location readable');
    like($good->{lg} // '', qr/Hello from afar/, 'and its stream');
    like($bad->{error} // '', qr/Failed to fetch/,
         'an origin not allowed: the browser blocks it');
    ok(!defined $bad->{session}, 'nothing read');
    ok(scalar(grep { /CORS policy/ } @{ $bad->{console} // [] }),
       'Chromium says why: the CORS policy');

    # credentials never with "*"
    my $c2 = $conf;
    $c2 =~ s{agent_cors [^;]+;}{agent_cors * credentials=on;};
    $c->write_conf($c2);
    my ($ok, $msg) = $c->test_conf;
    ok(!$ok, 'agent_cors * credentials=on: nginx -t fails');
    like($msg, qr/agent_cors.*never both/, 'saying why');
    $c->check_log;
}

done_testing;
