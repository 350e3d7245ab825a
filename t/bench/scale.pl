#!/usr/bin/perl
# make bench-scale: memory per open stream.  For each count of
# BENCH_STREAMS ("1000 10000"), that many slow model answers held open at
# once through stock nginx proxying the mock (proxy_buffering off: the
# floor), through the module's chat API and through its LangGraph API's
# runs/stream; prints opened, most flowing at once, errors, the workers'
# RSS and KiB per stream, and the targets.  Figures only; not a test.

use strict;
use warnings;
use FindBin;
use File::Path qw(make_path remove_tree);
use lib $FindBin::Bin;
use BenchProc;

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

sub start_mock {
    my $port = free_port();
    my $pid = spawn("$work/logs/mock.log", cmd => [ 'node',
                    "$FindBin::Bin/mock.js" ], PORT => $port,
                    QUERY => 'SELECT x FROM t',
                    TOKENS => $ENV{BENCH_TOKENS} // 100,
                    TOKEN_DELAY => 200);
    wait_port($port);
    return ($pid, $port);
}

# stock nginx for the floor; the module for the others
sub start_nginx {
    my ($kind, $mock) = @_;
    my $port = free_port();
    my $dir = "$work/$kind";
    remove_tree($dir);
    make_path($dir);
    my $user = $> == 0 ? 'user root;' : '';
    my $load = $kind eq 'floor' ? '' : "load_module $module;";
    my $agent = $kind eq 'floor' ? '' : "
    agent_checkpoint_db $dir/agent.db;
    agent_resources_dir $dir/resources;
    agent_database bench $work/data.db;
    agent_model bench provider=openai
        url=http://127.0.0.1:$mock/v1/chat/completions;";
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
worker_processes $workers;
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
    upstream mock { server 127.0.0.1:$mock; keepalive 64; }
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
        last if @wrap || @$all > $workers;
        select(undef, undef, undef, 0.05);
        $all = tree($pid);
    }
    return ($pid, $port, @wrap ? [] : [ @$all[1 .. $#$all] ], $dir);
}

my %mode = (floor => 'proxyopen', chat => 'open', lg => 'lgopen');
my %base = (floor => '', chat => '/api', lg => '/lg');
my %row;

for my $n (@counts) {
    for my $kind (@kinds) {
        my ($mpid, $mport) = start_mock();
        my ($pid, $port, $w, $dir) = start_nginx($kind, $mport);
        note("$kind: $n streams open at once, $workers workers");
        my $base = "http://127.0.0.1:$port" . $base{$kind};
        $base =~ s{/api$}{};
        $row{$n}{$kind} = eval { loadgen($mode{$kind}, base => $base,
            n => $n, pids => $w, timeout => 120000) }
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
