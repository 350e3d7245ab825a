#!/usr/bin/perl
# make bench-scale: memory per open stream.  For each count of
# BENCH_STREAMS ("1000 10000"), that many slow model answers held open at
# once through stock nginx proxying the mock (proxy_buffering off: the
# floor), through the module's chat API and through its LangGraph API's
# runs/stream; prints opened, most flowing at once, errors, the workers'
# RSS and KiB per stream, and the targets.  Figures only; not a test.
#
# Past one process's descriptors (BENCH_SHARD streams, 14,000), the load
# comes from several generators, each from a loopback address of its own
# (127.0.0.11, .12, ...: an address has 28,000 ports to one server), the
# mock runs that many processes and listens on one loopback address per
# BENCH_PER_HOST streams (20,000), reached as models bench1 .. benchN (nginx's side of the
# same limit), and nginx runs a worker per 8,000 streams (each costs a
# worker two descriptors, the hard limit here is 20,000).

use strict;
use warnings;
use FindBin;
use File::Path qw(make_path remove_tree);
use lib $FindBin::Bin;
use BenchProc;
use JSON::PP ();
use List::Util ();
use POSIX ();

my $root = "$FindBin::Bin/../..";
my $work = "$root/build/bench-scale";
my $module = $ENV{BENCH_MODULE}
             // "$root/build/nginx/objs/ngx_http_agent_module.so";
my @counts = split ' ', ($ENV{BENCH_STREAMS} // '1000 10000');
my @kinds = split ' ', ($ENV{BENCH_KINDS} // 'floor chat lg');
# each stream costs a worker two descriptors: several workers for 10,000
my $workers = $ENV{BENCH_WORKERS} // 4;
my $nofile = (`sh -c 'ulimit -Hn'` =~ /(\d+)/)[0] || 65536;
# where the memory goes: BENCH_WRAP='heaptrack -o FILE' runs one nginx
# process (no master) under that command; its RSS figures then mean little
my @wrap = split ' ', ($ENV{BENCH_WRAP} // '');
# one process accepts on one of reuseport's sockets only
$workers = 1 if @wrap;

$| = 1;

remove_tree($work);
make_path("$work/logs");
system('sqlite3', "$work/data.db", 'CREATE TABLE t (x); INSERT INTO t '
       . 'VALUES (1);') == 0 or die 'sqlite3 failed';

my $shard = $ENV{BENCH_SHARD} // 14000;
my $per_host = $ENV{BENCH_PER_HOST} // 20000;

sub ceil_div { int(($_[0] + $_[1] - 1) / $_[1]) }

# the mock's addresses for n streams
sub hosts { map { "127.0.0.$_" } 1 .. ceil_div($_[0], $per_host) }

sub start_mock {
    my ($n) = @_;
    my $port = free_port();
    my $pid = spawn("$work/logs/mock.log", cmd => [ 'node',
                    "$FindBin::Bin/mock.js" ], PORT => $port,
                    HOSTS => join(',', hosts($n)),
                    PROCS => ceil_div($n, $shard),
                    QUERY => 'SELECT x FROM t',
                    TOKENS => $ENV{BENCH_TOKENS} // 100,
                    TOKEN_DELAY => $ENV{BENCH_TOKEN_DELAY} // 200);
    wait_port($port);
    return ($pid, $port);
}

# stock nginx for the floor; the module for the others
sub start_nginx {
    my ($kind, $mock, $n) = @_;
    my $port = free_port();
    my $procs = $workers;
    $procs = ceil_div($n, 8000) if $n > 8000 * $procs && !@wrap;
    my @hosts = hosts($n);
    my $models = @hosts < 2 ? '' : join '', map {
        "agent_model bench$_ provider=openai
             url=http://$hosts[$_ - 1]:$mock/v1/chat/completions;\n" }
        1 .. @hosts;
    my $servers = join ' ', map { "server $_:$mock;" } @hosts;
    my $dir = "$work/$kind";
    remove_tree($dir);
    make_path($dir);
    my $user = $> == 0 ? 'user root;' : '';
    my $load = $kind eq 'floor' ? '' : "load_module $module;";
    my $agent = $kind eq 'floor' ? '' : "
    agent_checkpoint_db $dir/agent.db;
    agent_resources_dir $dir/resources;
    agent_database bench $work/data.db;
    agent_llm_connect_timeout 60s;
    agent_turn_lease @{[ $ENV{BENCH_LEASE} // '30s' ]};
    agent_llm_idle_timeout 120s;
    agent_llm_timeout 3600s;
    agent_model bench provider=openai
        url=http://127.0.0.1:$mock/v1/chat/completions;
    $models";
    my $loc = {
        floor => "location /v1/ { proxy_pass http://mock;
                  proxy_buffering off; proxy_http_version 1.1;
                  proxy_set_header Connection ''; }",
        chat => 'location /api/sessions/ { agent_sessions; }
                 location /api/chat/ { agent_chat;
                                       agent_use_database bench; }',
        lg => 'location /lg/ { agent_langgraph_api;
                               agent_use_database bench; }',
    }->{$kind};
    open my $fh, '>', "$dir/nginx.conf" or die;
    print $fh <<"CONF";
$load
$user
worker_processes $procs;
worker_rlimit_nofile $nofile;
error_log $dir/error.log warn;
pid $dir/nginx.pid;
thread_pool default threads=4;
events { worker_connections $nofile; multi_accept on; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    upstream mock { $servers keepalive 64; }
    $agent
    server {
        listen 127.0.0.1:$port backlog=65535 reuseport;
        $loc
    }
}
CONF
    close $fh;
    my $pid = spawn("$work/logs/nginx-$kind.out", cmd => [ @wrap,
                    '/usr/sbin/nginx', '-p', "$dir/", '-c', "$dir/nginx.conf",
                    '-e', "$dir/error.log", '-g', 'daemon off;'
                    . (@wrap ? ' master_process off;' : '') ]);
    wait_port($port, @wrap ? 60 : 10);
    # the master listens before it forks: its workers, once there
    my $all = tree($pid);
    for (1 .. 100) {
        last if @wrap || @$all > $procs;
        select(undef, undef, undef, 0.05);
        $all = tree($pid);
    }
    return ($pid, $port, @wrap ? [] : [ @$all[1 .. $#$all] ], $dir);
}

my %mode = (floor => 'proxyopen', chat => 'open', lg => 'lgopen');
my %base = (floor => '', chat => '/api', lg => '/lg');
my %row;

sub rss {
    my $kb = 0;
    for my $pid (@_) {
        open my $fh, '<', "/proc/$pid/status" or next;
        $kb += $1 if join('', <$fh>) =~ /VmRSS:\s+(\d+)/;
    }
    return $kb;
}

# the streams from several generators at once: the flowing ones summed,
# the workers' RSS taken when the most flow
sub sharded {
    my ($mode, $base, $n, $pids) = @_;
    my $k = ceil_div($n, $shard);
    my $before = rss(@$pids);
    my (@out, @kid);
    for my $i (0 .. $k - 1) {
        my $m = int($n / $k) + ($i < $n % $k ? 1 : 0);
        my $arg = JSON::PP::encode_json({ base => $base, n => $m,
            timeout => 600000, local => '127.0.0.' . (11 + $i),
            ramp => $ENV{BENCH_RAMP} // 200,
            count => "$work/count-$i", pids => [],
            $n > $per_host ? (models => scalar(hosts($n))) : () });
        unlink "$work/count-$i";
        my $pid = open my $fh, '-|', 'sh', '-c', 'ulimit -n "$(ulimit -Hn)"; '
                  . 'exec node "$@"', 'sh', "$FindBin::Bin/loadgen.js",
                  $mode, $arg or die "loadgen: $!";
        push @kid, [ $pid, $fh ];
    }
    my ($most, $peak) = (0, 0);
    while (grep { kill 0, $_->[0] } @kid) {
        my $flowing = 0;
        for my $i (0 .. $k - 1) {
            open my $fh, '<', "$work/count-$i" or next;
            $flowing += (<$fh> // 0) =~ /(\d+)/ ? $1 : 0;
        }
        if ($flowing > 0 && $flowing >= $most) {
            $most = $flowing;
            $peak = List::Util::max($peak, rss(@$pids));
        }
        select(undef, undef, undef, 0.25);
        # reap the ones done, keep their answers
        for my $c (@kid) {
            next if $c->[2] || waitpid($c->[0], POSIX::WNOHANG()) != $c->[0];
            $c->[2] = 1;
        }
        last unless grep { !$_->[2] } @kid;
    }
    my $r = { n => 0, errors => 0, tail => '' };
    for my $c (@kid) {
        my $fh = $c->[1];
        my ($line) = grep { /^\{/ } <$fh>;
        my $o = $line ? JSON::PP::decode_json($line)
                      : { n => 0, errors => -1, tail => 'no answer' };
        $r->{n} += $o->{n};
        $r->{errors} += $o->{errors};
        $r->{tail} = $o->{tail} if $o->{tail};
    }
    $r->{most_streaming} = $most;
    $r->{rss_kb} = $peak;
    $r->{per_stream_kb} = $most ? ($peak - $before) / $most : 0;
    return $r;
}

for my $n (@counts) {
    for my $kind (@kinds) {
        my ($mpid, $mport) = start_mock($n);
        my ($pid, $port, $w, $dir) = start_nginx($kind, $mport, $n);
        note("$kind: $n streams open at once, " . scalar(@$w) . ' workers');
        my $base = "http://127.0.0.1:$port" . $base{$kind};
        $base =~ s{/api$}{};
        $row{$n}{$kind} = eval {
            $n > $shard ? sharded($mode{$kind}, $base, $n, $w)
                        : loadgen($mode{$kind}, base => $base, n => $n,
                                  pids => $w, timeout => 120000) }
            // { errors => -1, tail => $@ };
        my $log = `grep -c -E '\\[(alert|crit|emerg)\\]' $dir/error.log`;
        $row{$n}{$kind}{alerts} = $log =~ /(\d+)/ ? $1 : 0;
        if (@wrap && open my $fh, '<', "$dir/nginx.pid") {
            # nginx alone, so that the wrapper writes its file out
            kill 'TERM', (<$fh> =~ /(\d+)/)[0];
            waitpid($pid, 0);
        }
        stop($pid);
        stop($mpid);
    }
}

my %name = (floor => 'stock nginx, proxy_pass (floor)',
            chat => 'chat API (POST /api/chat/{id}/message)',
            lg => 'LangGraph API (runs/stream)');
printf "\n%-40s %7s %7s %6s %6s %9s %8s %7s\n", 'memory per open stream',
       'streams', 'opened', 'flowed', 'errors', 'RSS MiB', 'KiB/strm',
       'x floor';
for my $n (@counts) {
    my $floor = $row{$n}{floor}{per_stream_kb};
    for my $kind (@kinds) {
        my $r = $row{$n}{$kind};
        printf "%-40s %7d %7d %6d %6d %9.1f %8.1f %7s\n", $name{$kind}, $n,
               $r->{n} // 0, $r->{most_streaming} // 0, $r->{errors},
               ($r->{rss_kb} // 0) / 1024, $r->{per_stream_kb} // 0,
               $floor && $r->{per_stream_kb}
                   ? sprintf('%.2f', $r->{per_stream_kb} / $floor) : '';
        print "    last error: $r->{tail}\n" if $r->{errors} && $r->{tail};
        print "    [alert]/[crit] lines: $r->{alerts}\n" if $r->{alerts};
    }
}

print "\ntargets\n";
for my $n (@counts) {
    my $floor = $row{$n}{floor}{per_stream_kb};
    for my $kind (grep { $_ ne 'floor' } @kinds) {
        my $kb = $row{$n}{$kind}{per_stream_kb} // 0;
        my $ok = $row{$n}{$kind}{errors} == 0;
        printf "%-22s at %6d: at most 32 KiB: %-7s", $kind, $n,
               $ok && $kb && $kb <= 32 ? 'met' : 'missed';
        printf " within 1.5x the floor: %s", $ok && $kb <= 1.5 * $floor
               ? 'met' : 'missed' if $floor;
        print "\n";
    }
}
