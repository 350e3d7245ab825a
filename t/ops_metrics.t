#!/usr/bin/perl
# agent_metrics: counters in shared memory that both workers add to, in
# Prometheus's text format; Debian's prometheus scrapes them on loopback
# and its own query API reads them back.  Turns by graph and outcome,
# model calls by status, tokens by kind, retries, tool calls, SQL time,
# turn and first-token histograms, open streams.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use HTTP::Tiny;
use POSIX qw(WNOHANG);

my $t = AgentTest->new;
my $calls = 0;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $last = $m[-1];
    return { text => 'one two three', delay => 1 }
        if ($last->{content} // '') =~ /^slow/;
    return { status => 500 } if ($last->{content} // '') eq 'fail';
    return { text => 'the answer: 1' } if $last->{role} eq 'tool';
    return { tools => [ [ 'q1', 'execute_sql_query',
                          '{"query": "SELECT 1 AS one"}' ] ] }
        if ($last->{content} // '') eq 'use a tool';
    return { text => 'Hello from the mock' };
});

my $conf = $t->conf;
$conf =~ s{alias=default;}{alias=default retries=1 backoff=10ms;};
$conf =~ s{(location /api/chat/)}{location = /metrics { agent_metrics; }
        $1};
$t->run($conf);

sub scrape { $t->http('GET', '/metrics') }

# the value of one series in the exposition text
sub value {
    my ($text, $series) = @_;
    my ($v) = $text =~ /^\Q$series\E (\S+)$/m;
    return $v;
}

my $m = scrape();
is($m->{status}, 200, 'GET /metrics');
like($m->{headers}{'content-type'}, qr{^text/plain; version=0\.0\.4},
     'the text exposition format');
like($m->{content}, qr/^# TYPE agent_turns_total counter$/m, 'TYPE lines');
is(value($m->{content}, 'agent_open_streams'), 0, 'no stream open yet');

# turns: four that answer (one with a tool), one whose model fails
for my $q ('hello', 'again', 'use a tool', 'once more') {
    my $sid = $t->session;
    my $r = $t->turn($sid, $q);
    is($r->{types}[-1], 'end', "a turn: $q");
}
my $sid = $t->session;
my $r = $t->turn($sid, 'fail');
is($r->{types}[-1], 'error', 'a turn whose model fails');

$m = scrape()->{content};
is(value($m, 'agent_turns_total{graph="react",outcome="ok"}'), 4,
   'turns ok, summed over both workers');
is(value($m, 'agent_turns_total{graph="react",outcome="error"}'), 1,
   'turns failed');
is(value($m, 'agent_model_calls_total{model="mock",status="ok"}'), 5,
   'model calls ok (the tool turn makes two)');
is(value($m, 'agent_model_calls_total{model="mock",status="error"}'), 1,
   'model calls failed');
is(value($m, 'agent_model_retries_total{model="mock"}'), 1,
   'the failed one was tried again once');
ok(value($m, 'agent_tokens_total{model="mock",kind="input"}') > 0,
   'input tokens');
ok(value($m, 'agent_tokens_total{model="mock",kind="output"}') > 0,
   'output tokens');
is(value($m, 'agent_tool_calls_total{tool="execute_sql_query",outcome="ok"}'),
   1, 'the tool call');
is(value($m, 'agent_sql_duration_seconds_count'), 1, 'the SQL statement');
is(value($m, 'agent_turn_duration_seconds_count{graph="react"}'), 5,
   'every turn in the duration histogram');
is(value($m, 'agent_turn_duration_seconds_bucket{graph="react",le="+Inf"}'),
   5, 'its +Inf bucket');
is(value($m, 'agent_model_time_to_first_token_seconds_count{model="mock"}'),
   5, 'time to first token');
my @le = $m =~ /^agent_turn_duration_seconds_bucket\{graph="react",le="([^"]+)"\} (\d+)$/mg;
my @counts = @le[ grep { $_ % 2 } 0 .. $#le ];
is_deeply([ sort { $a <=> $b } @counts ], \@counts,
          'buckets are cumulative');

# a stream open while it is scraped
my $pid = fork() // die;
if ($pid == 0) {
    my $s = $t->session;
    $t->turn($s, 'slow one');
    POSIX::_exit(0);
}
ok(AgentTest::wait_for(sub {
    (value(scrape()->{content}, 'agent_open_streams') // 0) == 1 }, 10),
   'agent_open_streams: 1 while a turn streams');
waitpid($pid, 0);
ok(AgentTest::wait_for(sub {
    (value(scrape()->{content}, 'agent_open_streams') // -1) == 0 }, 10),
   'and 0 after it');

# a client that goes away mid-answer: the turn and its model call are
# counted as cancelled
{
    my $s = $t->session;
    my $r = $t->turn($s, 'slow and left', stop_after => 3);
    ok($r->{stopped}, 'a client leaves mid-answer');
}
ok(AgentTest::wait_for(sub {
    my $c = scrape()->{content};
    (value($c, 'agent_model_calls_total{model="mock",status="cancelled"}')
     // 0) == 1
    && (value($c, 'agent_turns_total{graph="react",outcome="cancelled"}')
        // 0) == 1 }, 10),
   'the stop is in the metrics: a cancelled turn and model call');

# Prometheus scrapes it and reads the counters back
my $prom = '/usr/bin/prometheus';
SKIP: {
    skip 'no prometheus (Debian package prometheus)', 4 unless -x $prom;

    my $port = AgentTest::free_port();
    my $dir = $t->dir . '/prometheus';
    mkdir $dir;
    open my $fh, '>', "$dir/prometheus.yml" or die;
    print $fh <<"YML";
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: agent
    metrics_path: /metrics
    static_configs:
      - targets: ['127.0.0.1:${\ $t->port }']
YML
    close $fh;

    my $ppid = fork() // die;
    if ($ppid == 0) {
        open STDOUT, '>', "$dir/prometheus.log";
        open STDERR, '>&', \*STDOUT;
        exec($prom, "--config.file=$dir/prometheus.yml",
             "--storage.tsdb.path=$dir/data",
             "--web.listen-address=127.0.0.1:$port") or POSIX::_exit(1);
    }

    my $api = HTTP::Tiny->new(timeout => 5);
    my $query = sub {
        my $r = $api->get("http://127.0.0.1:$port/api/v1/query?query="
                          . $_[0]);
        my $j = $r->{success} ? eval { decode_json($r->{content}) } : undef;
        return $j ? $j->{data}{result} : undef;
    };

    my $turns;
    ok(AgentTest::wait_for(sub {
        my $res = $query->('sum(agent_turns_total)');
        $turns = $res && @$res ? $res->[0]{value}[1] : undef;
        defined $turns && $turns >= 7 }, 30),
       'Prometheus scraped the metrics')
        or diag AgentTest::slurp_file("$dir/prometheus.log");
    is($turns, 7, 'and reads the turns back: 7');
    my $up = $query->('up{job="agent"}');
    is($up && $up->[0]{value}[1], 1, 'the target is up');
    my $tok = $query->('agent_tokens_total{kind="output"}');
    ok($tok && $tok->[0]{value}[1] > 0, 'tokens by kind');

    kill 'TERM', $ppid;
    waitpid($ppid, 0);
}

is($t->http('POST', '/metrics', {})->{status}, 405, 'POST: 405');

$t->check_log;

done_testing;
