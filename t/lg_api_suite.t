#!/usr/bin/perl
# LangGraph's own Agent Server API suite (tests/api.test.mts of
# @langchain/langgraph-api 2.0.0, ../shared/langgraph-api-tests) run with
# vitest against nginx with agent_langgraph_api.  The suite talks to
# http://localhost:2024, so nginx listens there (127.0.0.1 and ::1) in a
# private network namespace (unshare -n, as root) where the port is ours
# alone.  Its graphs are t/lgsuite/graphs.conf (what our language cannot
# say of each is written there), its model a scripted mock that answers
# as its FakeListChatModel.  The suite is copied to the test's folder with
# one change: truncate() clears through the public API
# (t/lgsuite/truncate.mts) instead of the JS dev server's
# /internal/truncate.  Prints passed / failed / skipped per describe area
# and each failure's first line; fails when fewer than FLOOR pass.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use HTTP::Tiny;
use POSIX ();
use Time::HiRes qw(time sleep);

# The number of the suite's tests that pass at least (of 67: 66 counted,
# one skipped upstream).  40 pass today (assistants made, versioned and
# searched; threads patched, searched and copied; the store; the runtime
# context and output; input checkpoints, the tasks and checkpoints modes;
# commands on idle threads; shapes); the floor leaves four for the
# multitasking and long-running tests, which race timers on a loaded
# host.  Raise it as the API grows, never lower it.
use constant FLOOR => 56;

# vitest is stopped after this long (the file must end within ~6 minutes)
use constant VITEST_LIMIT => 300;

sub slurp {
    open my $fh, '<', $_[0] or return '';
    local $/;
    return <$fh> // '';
}

my $root = AgentTest::root();
my $suite = $ENV{LG_SUITE} // "$root/../shared/langgraph-api-tests";
my $mods = "$root/build/lgsuite";
my $vitest = "$mods/node_modules/vitest/vitest.mjs";

# what tests/api.test.mts imports, at the versions of langgraph-api 2.0.0's
# time (its devDependencies; the SDK as t/lib/AgentTest.pm's lg_sdk)
my @npm = qw(vitest@3.2.4 @langchain/langgraph-sdk@1.15.0
             @langchain/langgraph@1.7.3 @langchain/core@1.4.0 postgres@3.4.5
             wait-port@1.1.0 uuid@10.0.0 zod@3.25.76);

if (!$ENV{AGENT_NETNS}) {
    plan skip_all => "LangGraph's suite is not at $suite"
        unless -f "$suite/tests/api.test.mts";
    plan skip_all => 'needs root for a private network namespace (unshare -n)'
        if $> != 0;

    if (!-f $vitest
        || !-d "$mods/node_modules/\@langchain/langgraph-sdk"
        || !-d "$mods/node_modules/\@langchain/langgraph")
    {
        system('sh', '-c', "mkdir -p $mods && npm install --prefix $mods "
               . join(' ', @npm) . ' --legacy-peer-deps --no-audit --no-fund '
               . '--loglevel=error >/dev/null 2>&1');
    }
    plan skip_all => 'vitest and the LangGraph packages could not be '
                     . 'installed from npm'
        unless -f $vitest && -d "$mods/node_modules/\@langchain/langgraph";

    system('unshare', '-n', 'true') == 0
        or plan skip_all => 'unshare -n is not allowed here';

    # the same test again, inside the namespace, loopback up
    exec('unshare', '-n', '--', 'sh', '-c',
         'ip link set lo up && AGENT_NETNS=1 exec "$@"', 'sh',
         $^X, $0) or die "unshare: $!";
}

# make test-pg: the server's loopback is not this namespace's, its socket
# file is
$ENV{AGENT_PG} = $ENV{AGENT_PG_SOCKET} if $ENV{AGENT_PG_SOCKET};

# the suite's messages have characters of their own (its diff's marks)
binmode(Test::More->builder->$_, ':encoding(UTF-8)')
    for qw(output failure_output todo_output);

my $t = AgentTest->new(port => 2024);
my $dir = $t->dir;
my $started = time;

# --- the model: FakeListChatModel's answers ---------------------------------
#
# agent.mts and agent_simple.mts keep one FakeListChatModel per thread
# whose answers cycle "begin", "end": the AI messages of the request's
# history say where the thread is.  "begin" comes with a call of the tool
# (the graph's edge is on tool_calls), unless the thread's first message
# is "should_end".  The text streams a character a chunk, as the fake
# model's.  fake-error fails after 1 s ("Boo!"), fake-delay waits the
# delay its prompt says.

sub chunk { MockLLM::sse_body(MockLLM::frame(@_)) }

$t->mock(sub {
    my ($req) = @_;
    my $model = $req->{model} // '';
    my @m = @{ $req->{messages} // [] };
    my ($sys) = map { $_->{content} } grep { $_->{role} eq 'system' } @m;
    $sys //= '';

    return { status => 400, delay => 1, message => 'Boo!' }
        if $model eq 'fake-error';

    if ($model eq 'fake-delay') {
        my ($ms) = $sys =~ /delay=(\d+)/;
        $ms //= 0;
        return { text => "finished after ${ms}ms", first_delay => $ms / 1000,
                 pieces => [ "finished after ${ms}ms" ] };
    }

    my @user = grep { $_->{role} eq 'user' } @m;
    my $ais = grep { $_->{role} eq 'assistant' } @m;
    my $begin = $ais % 2 == 0;
    # (bytes: the mock writes its JSON as it is given)
    my $text = $begin ? 'begin'
             : $model eq 'fake-simple' ? "end\xe2\x80\xa8" : 'end';
    my $first = @user ? $user[0]{content} // '' : '';
    $first = '' if ref $first;

    # agent.mts sleeps `sleep` seconds, or steps * ms, before a human's turn
    my $wait = 0;
    if (@m && $m[-1]{role} eq 'user' && $sys =~ /sleep=(\S+)/) {
        my $s = $1;
        my $j = eval { decode_json($s) };
        $wait = ref $j eq 'HASH' ? ($j->{steps} // 0) * ($j->{ms} // 0) / 1000
              : $s =~ /^[\d.]+$/ ? $s : 0;
    }

    my @chunks = (chunk(delta => { role => 'assistant', content => '' }),
                  map { chunk(delta => { content => $_ }) }
                      $text =~ /(\xe2\x80\xa8|.)/gs);
    if ($begin && $first ne 'should_end') {
        push @chunks, chunk(delta => { tool_calls => [ {
                          index => 0, id => 'tool_call_id', type => 'function',
                          function => { name => 'tool', arguments => '{}' } } ] }),
                      chunk(finish => 'tool_calls');
    } else {
        push @chunks, chunk(finish => 'stop');
    }
    push @chunks, MockLLM::sse_body(MockLLM::usage_frame(10, 5)),
                  MockLLM::sse_body('[DONE]');
    return { chunks => \@chunks, first_delay => $wait };
});

# --- nginx at localhost:2024 ------------------------------------------------

my $v6 = `ip -6 addr show dev lo 2>/dev/null` =~ /::1/;
my $listen6 = $v6 ? 'listen [::1]:2024;' : '';
my $models = join "\n    ", map {
    "agent_model $_->[0] provider=openai "
    . "url=http://127.0.0.1:%%MOCK%%/v1/chat/completions model=$_->[1]"
    . ($_->[0] eq 'fake' ? ' alias=default' : '') . ';' }
    [ 'fake', 'fake' ], [ 'fake_simple', 'fake-simple' ],
    [ 'fake_error', 'fake-error' ], [ 'fake_delay', 'fake-delay' ];

$t->run(<<"CONF");
load_module %%MODULE%%;
%%USER%%
worker_processes 2;
error_log %%DIR%%/error.log info;
pid %%DIR%%/nginx.pid;
events { worker_connections 1024; }
http {
    access_log %%DIR%%/access.log;
    client_body_temp_path %%DIR%%/body;
    proxy_temp_path %%DIR%%/proxy;
    fastcgi_temp_path %%DIR%%/fastcgi;
    uwsgi_temp_path %%DIR%%/uwsgi;
    scgi_temp_path %%DIR%%/scgi;
    agent_checkpoint_db %%DIR%%/agent.db;
    agent_resources_dir %%DIR%%/resources;
    agent_prompts %%ROOT%%/t/lgsuite/prompts;
    $models
    include %%ROOT%%/t/lgsuite/graphs.conf;

    server {
        listen 127.0.0.1:2024;
        $listen6
        location / {
            agent_langgraph_api;
            agent_langgraph_server js;      # the suite is the JS server's
            agent_use_graph agent;
            agent_assistants agent_simple error delay weather nested
                simple_runtime dynamic state_schema_graph
                zod_registry_graph plain_zod_graph;
        }
        # agent.mts's tool node: the ToolMessage's text
        location = /lgsuite/tool {
            internal;
            default_type text/plain;
            return 200 "tool_call__begin";
        }
    }
}
CONF

my $ok = HTTP::Tiny->new(timeout => 5)->get('http://localhost:2024/ok');
ok($ok->{success}, 'nginx answers at http://localhost:2024/ok'
                   . ($v6 ? ' (127.0.0.1 and ::1)' : ' (127.0.0.1; no ::1)'));

# --- the suite, copied with truncate() replaced -----------------------------

my $copy = "$dir/suite";
system('mkdir', '-p', "$copy/tests") == 0 or die;
system('cp', "$suite/tests/api.test.mts", "$copy/tests/") == 0 or die;
system('cp', "$suite/vitest.config.js", "$suite/package.json", "$copy/")
    == 0 or die;
symlink("$mods/node_modules", "$copy/node_modules") or die $!;

my $utils = slurp("$suite/tests/utils.mts");
my $mine = slurp("$root/t/lgsuite/truncate.mts");
my $n = ($utils =~ s/^export async function truncate\(.*\z/$mine/ms);
ok($n && $utils !~ m{/internal/truncate},
   'the copy\'s truncate() clears through the public API');
open my $fh, '>', "$copy/tests/utils.mts" or die;
print $fh $utils;
close $fh;

my $report = "$dir/report.json";
my $log = "$dir/vitest.log";
my $t0 = time;
my $pid = fork() // die;
if ($pid == 0) {
    POSIX::setpgid(0, 0);
    chdir $copy or POSIX::_exit(1);
    open STDOUT, '>', $log;
    open STDERR, '>&', \*STDOUT;
    # with CI set, the suite starts LangGraph's own server
    delete @ENV{qw(CI LANGSMITH_API_KEY LANGCHAIN_API_KEY POSTGRES_URI)};
    $ENV{NO_COLOR} = '1';
    $ENV{LANGSMITH_TRACING} = 'false';
    $ENV{LANGCHAIN_TRACING_V2} = 'false';
    $ENV{DO_NOT_TRACK} = '1';
    exec('node', $vitest, 'run', 'tests/api.test.mts',
         '--reporter=default', '--reporter=json',
         "--outputFile.json=$report", '--testTimeout=20000',
         '--hookTimeout=30000', '--teardownTimeout=5000',
         # LG_ONLY=pattern: the tests whose names match it, to work on them
         $ENV{LG_ONLY} ? ('-t', $ENV{LG_ONLY}) : ())
        or POSIX::_exit(1);
}

my $ended = AgentTest::wait_for(
    sub { waitpid($pid, POSIX::WNOHANG()) == $pid }, VITEST_LIMIT);
if (!$ended) {
    kill 'KILL', -$pid;
    waitpid($pid, 0);
}
my $secs = time - $t0;
ok($ended, sprintf('vitest ended (%.0f s)', $secs))
    or diag(AgentTest::slurp_file($log));

my $r = eval { decode_json(slurp($report)) } // {};
my @tests = map { @{ $_->{assertionResults} // [] } }
                @{ $r->{testResults} // [] };
diag(slurp($log)) if $ENV{LG_ONLY};
ok(@tests >= 66, 'the suite ran: ' . scalar(@tests) . ' tests in the report')
    or diag(join "\n", map { $_->{message} // () }
                           @{ $r->{testResults} // [] }),
       diag(substr(slurp($log), -4000));

# --- what passed, per describe area -----------------------------------------

my (%area, @areas, @failed);
for my $x (@tests) {
    my $a = $x->{ancestorTitles}[0] // '(top level)';
    push @areas, $a unless $area{$a};
    my $s = $x->{status} eq 'passed' ? 'passed'
          : $x->{status} eq 'failed' ? 'failed' : 'skipped';
    $area{$a}{$s}++;
    push @failed, $x if $s eq 'failed';
}

diag(sprintf '%-28s %6s %6s %7s', 'area', 'passed', 'failed', 'skipped');
for my $a (@areas) {
    diag(sprintf '%-28s %6d %6d %7d', $a, map { $area{$a}{$_} // 0 }
                                          qw(passed failed skipped));
}

my $passed = grep { $_->{status} eq 'passed' } @tests;
my $skipped = grep { $_->{status} !~ /^(passed|failed)$/ } @tests;
diag(sprintf 'passed %d, failed %d, skipped %d of %d; vitest took %.0f s',
             $passed, scalar @failed, $skipped, scalar @tests, $secs);

for my $x (@failed) {
    my ($line) = grep { /\S/ } split /\n/, ($x->{failureMessages}[0] // '');
    $line //= '(no message)';
    $line = substr($line, 0, 300) . '...' if length $line > 300;
    diag("FAIL $x->{fullName}: $line");
}

# under the sanitizers (make test-asan) nginx is a few times slower: the
# tests that race timers get five more
my $floor = $ENV{AGENT_SANITIZER_LOGS} ? FLOOR - 5 : FLOOR;

cmp_ok($passed, '>=', $floor, "$passed of LangGraph's tests pass (floor "
                              . $floor . ')');

note(sprintf 'the file took %.0f s', time - $started);

done_testing;
