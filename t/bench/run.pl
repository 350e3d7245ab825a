#!/usr/bin/perl
# make bench: nginx with the module (2 workers) and the same agent in
# LangGraph.js, driven by one load generator against one fast mock
# provider on loopback; prints one table and which targets are met.
# Figures only; nothing here is a test.

use strict;
use warnings;
use FindBin;
use File::Path qw(make_path remove_tree);
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);
use JSON::PP;
use IO::Socket::INET;
use lib $FindBin::Bin;
use BenchProc;

my $root = "$FindBin::Bin/../..";
my $bench = "$FindBin::Bin";
my $work = "$root/build/bench";
my $module = "$root/build/nginx/objs/ngx_http_agent_module.so";
my $quick = $ENV{BENCH_QUICK};
my $nofile = (`sh -c 'ulimit -Hn'` =~ /(\d+)/)[0] || 65536;
my $t_start = time;

$| = 1;

# --- set-up ---------------------------------------------------------------

remove_tree("$work/nginx", "$work/logs");
make_path("$work/peer", "$work/nginx", "$work/logs");

system("cp $bench/peer/package.json $bench/peer/server.mjs "
       . "$bench/peer/agent.mjs $bench/peer/langgraph.json $work/peer/") == 0
    or die;

if (!-d "$work/peer/node_modules/better-sqlite3/build"
    || !-x "$work/peer/node_modules/.bin/langgraphjs")
{
    # better-sqlite3 is built from source against the local node headers
    note('installing the peer (LangGraph.js) from npm');
    # langgraph-api 2.0.0 names a newer SDK as an optional peer than
    # langgraph 1.7.3 brings: --legacy-peer-deps takes both as they are
    system("cd $work/peer && npm_config_nodedir=/usr npm install --no-audit "
           . "--no-fund --legacy-peer-deps --loglevel=error "
           . "> $work/logs/npm.log 2>&1") == 0
        or die "npm install failed: see $work/logs/npm.log";
}

note('making the data: a 10,000-row CSV, imported once');
open my $csv, '>', "$work/employees.csv" or die;
print $csv "Name,Department,Salary,City\n";
my @d = qw(Sales Engineering Support Marketing Finance Legal);
srand(7);
for my $i (1 .. 10000) {
    printf $csv "Person %d,%s,%d,City %d\n", $i, $d[$i % @d],
                30000 + int(rand(90000)), $i % 50;
}
close $csv;
unlink "$work/bench.db";
system('sqlite3', "$work/bench.db", '.mode csv',
       ".import $work/employees.csv employees") == 0 or die;

my $big = 'SELECT Department, AVG(CAST(Salary AS REAL)) AS avg_salary '
        . 'FROM employees GROUP BY Department';
my $small = 'SELECT Name, Salary FROM employees WHERE rowid = 4242';
my $slow = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c '
         . 'WHERE x < 5000000) SELECT COUNT(*) FROM c';

sub start_mock {
    my (%env) = @_;
    my $port = free_port();
    my $pid = spawn("$work/logs/mock.log", cmd => [ 'node',
                    "$bench/mock.js" ], PORT => $port, %env);
    wait_port($port);
    return ($pid, $port);
}

sub start_nginx {
    my ($mock, %x) = @_;
    my $http = $x{http} // '';
    my $server = $x{server} // '';
    my $chat = $x{chat} // '';
    my $port = free_port();
    my $dir = "$work/nginx";
    unlink glob("$dir/*.db*");
    my $db = $x{db} // "$dir/agent.db";
    my $user = $> == 0 ? 'user root;' : '';
    open my $fh, '>', "$dir/nginx.conf" or die;
    print $fh <<"CONF";
load_module $module;
$user
worker_processes 2;
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
    agent_checkpoint_db $db;
    agent_resources_dir $dir/resources;
    agent_database bench $work/bench.db;
    agent_model bench provider=openai url=http://127.0.0.1:$mock/v1/chat/completions;
    agent_sql_timeout 30s;
    $http
    server {
        listen 127.0.0.1:$port backlog=65535;
        location /api/sessions/ { agent_sessions; }
        location /api/chat/ { agent_chat; agent_use_database bench; $chat }
        $server
    }
}
CONF
    close $fh;
    my $pid = spawn("$work/logs/nginx.out", cmd => [ '/usr/sbin/nginx', '-p',
                    "$dir/", '-c', "$dir/nginx.conf", '-e',
                    "$dir/error.log", '-g', 'daemon off;' ]);
    wait_port($port);
    # the master listens before it forks: its 2 workers, once there (an
    # empty list made the open-streams row's RSS 0)
    my @w;
    for (1 .. 100) {
        @w = grep { /^\d+$/ } map { s/\s//gr } `ps -o pid= --ppid $pid`;
        last if @w >= 2;
        sleep 0.05;
    }
    return ($pid, $port, \@w, "$dir/agent.db");
}

sub start_peer {
    my ($mock) = @_;
    my $port = free_port();
    unlink glob("$work/peer/ckpt*");
    my $pid = spawn("$work/logs/peer.log", cmd => [ 'node',
                    "$work/peer/server.mjs" ], PORT => $port,
                    MOCK_URL => "http://127.0.0.1:$mock/v1",
                    DB => "$work/bench.db", CKPT => "$work/peer/ckpt.db");
    wait_port($port);
    return ($pid, $port, [ $pid ], "$work/peer/ckpt.db");
}

my %row;
my %only = map { $_ => 1 } split /,/, ($ENV{BENCH_ONLY} // '');
sub want { !%only || $only{$_[0]} }
# BENCH_SERVERS=nginx: the module alone (a quick before/after)
my @servers = split ' ', ($ENV{BENCH_SERVERS} // 'nginx peer');
my $n_seq = $quick ? 50 : 200;
my $n_load = $quick ? 500 : 3000;
my $n_open = $quick ? 1000 : 10000;

# --- the mock alone --------------------------------------------------------

my ($mpid, $mport) = start_mock(QUERY => $big);
my $murl = "http://127.0.0.1:$mport/v1/chat/completions";
note('measuring the mock alone');
$row{mockcap} = loadgen('mockcap', mock => $murl, n => $n_load * 2, c => 64);

# --- floor, turn and throughput, both servers ------------------------------

for my $who (grep { want('load') } @servers) {
    for my $q ([ big => $big ], [ small => $small ]) {
        stop($mpid);
        ($mpid, $mport) = start_mock(QUERY => $q->[1]);
        $murl = "http://127.0.0.1:$mport/v1/chat/completions";

        my ($pid, $port) = $who eq 'nginx' ? start_nginx($mport)
                                           : start_peer($mport);
        my $base = "http://127.0.0.1:$port";

        if ($q->[0] eq 'big') {
            # a turn, then the floor's calls, 200 times: drift hits both
            note("$who: 200 sequential turns, each beside its floor");
            my $ft = loadgen('floor', base => $base, mock => $murl,
                n => $n_seq, db => "$work/bench.db", query => $big,
                sqlite_module => "$work/peer/node_modules/better-sqlite3");
            $row{$who}{turn} = { p50 => $ft->{turn_p50},
                                 p99 => $ft->{turn_p99},
                                 errors => $ft->{errors} };
            $row{floor} //= $ft;
        }

        for my $c (16, 64) {
            note("$who: throughput, $q->[0] query, concurrency $c");
            $row{$who}{"load_$q->[0]_$c"} = loadgen('load', base => $base,
                n => $n_load, c => $c);
        }

        stop($pid);
    }
}

# --- long conversations, both ---------------------------------------------

# where a session's bytes in the store are read (its thread's storage)
my $lg_storage = 'location /lg/ { agent_langgraph_api; }';

for my $who (grep { want('long') } @servers) {
    stop($mpid);
    ($mpid, $mport) = start_mock(QUERY => $small);
    my ($pid, $port, $w, $file) = $who eq 'nginx'
        ? start_nginx($mport, server => $lg_storage) : start_peer($mport);
    note("$who: 200 turns in one session");
    $row{$who}{long} = loadgen('long', base => "http://127.0.0.1:$port",
        n => 200, at => [ 50, 100, 200 ],
        files => [ $file, "$file-wal" ],
        $who eq 'nginx' ? (storage => "http://127.0.0.1:$port/lg") : ());
    stop($pid);
}

# the same conversation with its checkpoints bounded: its bytes per turn
if (want('long') && grep { $_ eq 'nginx' } @servers) {
    my ($pid, $port) = start_nginx($mport, server => $lg_storage,
                                   chat => 'agent_checkpoint_keep 10;');
    note('nginx: 200 turns in one session, agent_checkpoint_keep 10');
    $row{nginx}{long_keep} = loadgen('long', n => 200,
        base => "http://127.0.0.1:$port",
        storage => "http://127.0.0.1:$port/lg");
    stop($pid);
}

# --- open streams, both ----------------------------------------------------

for my $who (grep { want('open') } @servers) {
    stop($mpid);
    ($mpid, $mport) = start_mock(QUERY => $small, TOKEN_DELAY => 200);
    my ($pid, $port, $w) = $who eq 'nginx' ? start_nginx($mport)
                                           : start_peer($mport);
    note("$who: $n_open streams open at once");
    $row{$who}{open} = eval { loadgen('open', base => "http://127.0.0.1:$port",
        n => $n_open, pids => $w, timeout => 60000) } // { errors => -1 };
    stop($pid);
}

# --- isolation, nginx -------------------------------------------------------

stop($mpid);
($mpid, $mport) = start_mock(QUERY => $small, SQL_FIRST => 0,
                             TOKENS => 400, TOKEN_DELAY => 5,
                             SLOW_QUERY => $slow);
if (want('iso')) {
    my ($pid, $port) = start_nginx($mport);
    note('nginx: 50 streams beside a 2 s query');
    $row{nginx}{iso} = loadgen('isolation', base => "http://127.0.0.1:$port",
                               m => 50, delay => 500);
    stop($pid);
}
stop($mpid);

# --- a turn's tool: built-in SQL, a location, an MCP server (nginx) ---------

if (want('tools')) {
    my $sdk = "$root/build/mcp";
    system('sh', '-c', "mkdir -p $sdk && npm install --prefix $sdk "
           . '@modelcontextprotocol/sdk@1.32.2 --no-audit --no-fund '
           . '--loglevel=error >/dev/null 2>&1')
        unless -d "$sdk/node_modules/\@modelcontextprotocol/sdk";
    system('cp', "$root/t/mcp/server.mjs", "$sdk/server.mjs");
    my $mcp_port = free_port();
    my $mcp_pid = spawn("$work/logs/mcp.log", cmd => [ 'node',
        "$sdk/server.mjs", $mcp_port, 'stateful', "$work/logs/mcp-calls.log" ]);
    wait_port($mcp_port);
    my $mcp_url = "http://127.0.0.1:$mcp_port/mcp";
    my $graph = sub {
        my ($tools) = @_;
        return "agent_graph tooled { node model llm prompt=react_system.md "
             . "tools=$tools; node tools tools; edge START model; "
             . "edge model tools if=tool_calls; edge model END; "
             . "edge tools model; } agent_use_graph tooled;";
    };
    my %cases = (
        sql => [ {}, {} ],
        location => [ { TOOL_NAME => 'echo', TOOL_ARGS => '{"q":"x"}' },
                      { http => 'agent_tool echo location=/internal/echo;'
                                . $graph->('echo'),
                        server => 'location /internal/echo { internal; '
                                  . 'return 200 \'{"ok":true}\'; }' } ],
        mcp => [ { TOOL_NAME => 'search_docs',
                   TOOL_ARGS => '{"query":"bench"}' },
                 { http => "agent_mcp bench url=$mcp_url;"
                           . $graph->('bench.*') } ],
    );
    for my $case (qw(sql location mcp)) {
        stop($mpid);
        ($mpid, $mport) = start_mock(QUERY => $small,
                                     %{ $cases{$case}[0] });
        my ($pid, $port) = start_nginx($mport, %{ $cases{$case}[1] });
        note("nginx: $n_seq sequential turns, the tool: $case");
        $row{nginx}{"tool_$case"} = loadgen('turns',
            base => "http://127.0.0.1:$port", n => $n_seq);
        stop($pid);
    }
    note("the MCP server called directly, $n_seq times");
    $row{mcpdirect} = loadgen('mcpdirect', mcp => $mcp_url, n => $n_seq);
    stop($mcp_pid);
}

# --- the LangGraph API: nginx and LangGraph's own Agent Server ---------------

# every process of a server: the reference's CLI starts its server as a child
sub start_reference {
    my ($mock) = @_;
    my $port = free_port();
    my $pid = spawn("$work/logs/reference.log", cmd => [
                    "$work/peer/node_modules/.bin/langgraphjs", 'dev',
                    '--host', '127.0.0.1', '--port', $port, '--no-browser',
                    '--no-reload', '--studio-url', "http://127.0.0.1:$port" ],
                    dir => "$work/peer",
                    MOCK_URL => "http://127.0.0.1:$mock/v1",
                    DB => "$work/bench.db", LANGSMITH_TRACING => 'false',
                    LANGGRAPH_CLI_NO_ANALYTICS => '1', DO_NOT_TRACK => '1');
    wait_port($port, 60);
    return ($pid, $port);
}

# CPU seconds each process of a server has used (pid => seconds): per
# turn, a figure the load generator and the mock on the same cores do not
# blur as they do turns/s
sub cpu_seconds {
    my ($pids) = @_;
    my %s;
    for my $p (@$pids) {
        open(my $fh, '<', "/proc/$p/stat") or next;
        my $stat = <$fh>;
        close $fh;
        my @f = split ' ', $stat =~ s/^.*\) //r;
        $s{$p} = ($f[11] + $f[12]) / POSIX::sysconf(POSIX::_SC_CLK_TCK());
    }
    return \%s;
}

# the CPU ms per turn of a server's run: its processes at the end, less
# what each had at the start (a worker forked meanwhile had none)
sub cpu_ms_per_turn {
    my ($pid, $before, $n) = @_;
    my $after = cpu_seconds(tree($pid));
    my $ms = 0;
    $ms += ($after->{$_} - ($before->{$_} // 0)) * 1000 for keys %$after;
    return $ms / $n;
}

for my $who (grep { want('lg') } @servers) {
    my $n_lg_open = $quick ? 300 : 2000;
    for my $delay (0, 200) {
        stop($mpid);
        ($mpid, $mport) = start_mock(QUERY => $small, TOKEN_DELAY => $delay);
        my ($pid, $port, $w) = $who eq 'nginx'
            ? start_nginx($mport, server => 'location /lg/ { '
                          . 'agent_langgraph_api; agent_use_database bench; }')
            : start_reference($mport);
        my $base = "http://127.0.0.1:$port" . ($who eq 'nginx' ? '/lg' : '');
        if ($delay == 0) {
            for my $c (16, 64) {
                note("$who: LangGraph API runs/stream, concurrency $c");
                my $cpu = cpu_seconds(tree($pid));
                $row{$who}{"lg_$c"} = loadgen('lgload', base => $base,
                                              n => $n_load, c => $c);
                $row{$who}{"lg_$c"}{cpu_ms} =
                    cpu_ms_per_turn($pid, $cpu, $n_load);
            }
        } else {
            note("$who: $n_lg_open LangGraph API streams open at once");
            $row{$who}{lg_open} = eval { loadgen('lgopen', base => $base,
                n => $n_lg_open, pids => tree($pid), timeout => 120000) }
                // { errors => -1 };
        }
        stop($pid);
    }
}

# --- one graph, every protocol (nginx) --------------------------------------

if (want('proto')) {
    stop($mpid);
    ($mpid, $mport) = start_mock(QUERY => $small);
    my ($pid, $port) = start_nginx($mport, server =>
        'location /lg/ { agent_langgraph_api; agent_use_database bench; } '
        . 'location /agui/ { agent_agui; agent_use_database bench; } '
        . 'location = /mcp { agent_mcp_server; agent_use_database bench; } '
        . 'location /a2a/ { agent_a2a; agent_use_database bench; } '
        . 'location /v1/ { agent_responses; agent_use_database bench; }');
    for my $p (qw(chat lg agui mcp a2a responses)) {
        note("nginx: the react graph through $p, concurrency 16");
        $row{nginx}{"proto_$p"} = loadgen('protoload', proto => $p,
            base => "http://127.0.0.1:$port", n => $n_load, c => 16);
    }
    stop($pid);
}

# --- the store on PostgreSQL (nginx) -----------------------------------------

# a throwaway cluster of Debian's postgresql on a loopback port: fsync on,
# synchronous_commit off (as SQLite's synchronous=NORMAL in WAL mode: a
# crash of the server may lose the last commits, never corrupt)
my ($pg_bin) = sort { $b cmp $a } glob('/usr/lib/postgresql/*/bin');
my (@pg_as, $pg_data, $pg_url);

sub pg_start {
    my $dir = "$work/pg";
    system('rm', '-rf', $dir);
    mkdir $dir or die "$dir: $!";
    if ($> == 0) {
        system('chown', 'postgres:', $dir);
        @pg_as = qw(runuser -u postgres --);
    }
    $pg_data = "$dir/data";
    my $port = free_port();
    system(@pg_as, "$pg_bin/initdb", '-D', $pg_data, '-U', 'postgres',
           '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8') == 0
        or die 'initdb failed';
    system(@pg_as, "$pg_bin/pg_ctl", '-D', $pg_data, '-l', "$dir/server.log",
           '-w', '-o', "-h 127.0.0.1 -p $port -k $dir -c max_connections=200"
           . ' -c synchronous_commit=off -c shared_buffers=256MB '
           . ($ENV{BENCH_PG_OPTIONS} // ''), 'start')
        == 0 or die 'pg_ctl start failed';
    $pg_url = "postgresql://postgres\@127.0.0.1:$port";
}

sub pg_fresh {
    my ($name) = @_;
    system('psql', '-X', '-q', '-d', "$pg_url/postgres", '-c',
           "DROP DATABASE IF EXISTS $name") == 0 or die 'psql failed';
    system('psql', '-X', '-q', '-d', "$pg_url/postgres", '-c',
           "CREATE DATABASE $name") == 0 or die 'psql failed';
    return "$pg_url/$name";
}

if (want('pg') && $pg_bin) {
    pg_start();
    for my $q ([ big => $big ], [ small => $small ]) {
        stop($mpid);
        ($mpid, $mport) = start_mock(QUERY => $q->[1]);
        $murl = "http://127.0.0.1:$mport/v1/chat/completions";
        my ($pid, $port) = start_nginx($mport, db => pg_fresh("bench$q->[0]"));
        my $base = "http://127.0.0.1:$port";
        if ($q->[0] eq 'big') {
            note("nginx on PostgreSQL: 200 sequential turns beside the floor");
            my $ft = loadgen('floor', base => $base, mock => $murl,
                n => $n_seq, db => "$work/bench.db", query => $big,
                sqlite_module => "$work/peer/node_modules/better-sqlite3");
            $row{pg}{turn} = { p50 => $ft->{turn_p50},
                               p99 => $ft->{turn_p99},
                               floor => $ft->{p50},
                               errors => $ft->{errors} };
        }
        for my $c (16, 64) {
            note("nginx on PostgreSQL: $q->[0] query, concurrency $c");
            $row{pg}{"load_$q->[0]_$c"} = loadgen('load', base => $base,
                                                  n => $n_load, c => $c);
        }
        stop($pid);
    }
    stop($mpid);
    ($mpid, $mport) = start_mock(QUERY => $small);
    my ($pid, $port) = start_nginx($mport, db => pg_fresh('benchlong'),
                                   server => $lg_storage);
    note('nginx on PostgreSQL: 200 turns in one session');
    $row{pg}{long} = loadgen('long', base => "http://127.0.0.1:$port",
        n => 200, at => [ 50, 100, 200 ], files => [],
        storage => "http://127.0.0.1:$port/lg");
    stop($pid);
    system(@pg_as, "$pg_bin/pg_ctl", '-D', $pg_data, '-m', 'fast', 'stop');
}

# --- durability: how a run's steps are saved (nginx) -------------------------

# the react graph's run (model, the SQL tool, model: three steps and the
# input's) through the LangGraph API at c=16, each mode its run's
# "durability", on SQLite and, when Debian's postgresql is there, on it
if (want('durability')) {
    stop($mpid);
    ($mpid, $mport) = start_mock(QUERY => $small);
    my @stores = ([ sqlite => undef ]);
    if ($pg_bin) {
        pg_start();
        push @stores, [ pg => 'pg' ];
    }
    for my $s (@stores) {
        my ($pid, $port) = start_nginx($mport, server =>
            'location /lg/ { agent_langgraph_api; agent_use_database bench; }',
            $s->[1] ? (db => pg_fresh('benchdurable')) : ());
        # a first load that warms the workers and the store, not counted
        loadgen('lgload', base => "http://127.0.0.1:$port/lg",
                n => $n_load / 5, c => 16);
        for my $d (qw(sync async exit)) {
            note("nginx ($s->[0]): LangGraph API runs, durability $d, c=16");
            $row{durable}{"$s->[0]_$d"} = loadgen('lgload',
                base => "http://127.0.0.1:$port/lg", n => $n_load, c => 16,
                durability => $d);
        }
        stop($pid);
    }
    system(@pg_as, "$pg_bin/pg_ctl", '-D', $pg_data, '-m', 'fast', 'stop')
        if $pg_bin;
}

# --- traces and metrics on and off (nginx) -----------------------------------

# metrics are always counted; "on" adds agent_otlp to a collector on the
# mock's port (it answers POST /v1/traces) and agent_metrics scraped once
if (want('trace')) {
    stop($mpid);
    ($mpid, $mport) = start_mock(QUERY => $small);
    for my $on (0, 1) {
        my ($pid, $port) = start_nginx($mport, $on ? (
            http => "agent_otlp url=http://127.0.0.1:$mport/v1/traces;",
            server => 'location = /metrics { agent_metrics; }') : ());
        my $base = "http://127.0.0.1:$port";
        my $k = $on ? 'traced' : 'untraced';
        note("nginx: tracing " . ($on ? 'on' : 'off') . ", $n_seq turns");
        $row{nginx}{"${k}_turns"} = loadgen('turns', base => $base,
                                            n => $n_seq);
        for my $c (16, 64) {
            $row{nginx}{"${k}_$c"} = loadgen('load', base => $base,
                                             n => $n_load, c => $c);
        }
        stop($pid);
    }
}

# --- the caches: a node's cache= and the exact response cache (nginx) --------

# a new question each turn (each a miss: the model called, the entry put)
# against the same question each turn (a hit after the first)
if (want('cache')) {
    stop($mpid);
    ($mpid, $mport) = start_mock(QUERY => $small);
    for my $k (qw(node exact)) {
        my $p = $k eq 'node' ? 'cache=1h' : 'cache_response=1h';
        my ($pid, $port) = start_nginx($mport,
            http => "agent_graph cached { node model llm $p; "
                    . "edge START model; edge model END; }",
            chat => 'agent_use_graph cached;');
        my $base = "http://127.0.0.1:$port";
        note("nginx: $k cache, $n_seq turns missed, $n_seq hit");
        $row{nginx}{"cache_${k}_miss"} = loadgen('turns', base => $base,
                                                 n => $n_seq);
        $row{nginx}{"cache_${k}_hit"} = loadgen('turns', base => $base,
            n => $n_seq, message => 'the same question');
        stop($pid);
    }
}

# --- semantic search over one owner's items (nginx) -------------------------

# Its own switch (BENCH_ONLY=semantic, make bench-semantic; about 3
# minutes at the default sizes, not part of the default make bench):
# BENCH_SEMANTIC items (default 10,000 then 100,000; BENCH_QUICK 10,000)
# put through the LangGraph API at c=32, each embedded by the mock (256
# dimensions, what the module writes), then 60 searches by meaning one at
# a time, limit 10; on SQLite and, when Debian's postgresql is there, on
# it. The embedding apart: the same searches over no items first (the
# query's embedding, the round trip and an empty scan), and the mock's
# embeddings answer called directly.
my @sem_sizes = sort { $a <=> $b } split ' ',
    ($ENV{BENCH_SEMANTIC} // ($quick ? '10000' : '10000 100000'));

# the lines of the error log saying a search by meaning stopped at its
# bounds (2 s of scoring, 100,000 items)
sub sem_cut {
    open my $fh, '<', "$work/nginx/error.log" or return 0;
    return scalar grep { /a search by meaning stopped/ } <$fh>;
}

if ($only{semantic}) {
    stop($mpid);
    ($mpid, $mport) = start_mock();
    note('the mock\'s embeddings called directly, 60 times');
    $row{embed} = loadgen('embeddirect', n => 60, dims => 256,
                          mock => "http://127.0.0.1:$mport/v1/embeddings");
    my @stores = ([ sqlite => undef ]);
    if ($pg_bin) {
        pg_start();
        push @stores, [ pg => 'pg' ];
    }
    for my $s (@stores) {
        my ($pid, $port) = start_nginx($mport,
            http => "agent_model embed provider=openai "
                    . "url=http://127.0.0.1:$mport/v1/chat/completions;",
            server => 'location /lg/ { agent_langgraph_api; '
                      . 'agent_embeddings embed dims=256; }',
            $s->[1] ? (db => pg_fresh('benchsemantic')) : ());
        my $base = "http://127.0.0.1:$port/lg";
        my $sem = $row{semantic}{$s->[0]} = {};
        note("nginx ($s->[0]): 60 searches by meaning over no items");
        $sem->{0} = loadgen('semsearch', base => $base, n => 60,
                            expect => 0);
        my $have = 0;
        for my $n (@sem_sizes) {
            note("nginx ($s->[0]): items $have to $n put at c=32");
            my $fill = loadgen('semfill', base => $base, from => $have,
                               to => $n, c => 32);
            $have = $n;
            # what the docs ask after a bulk load: the planner then
            # follows the index (autovacuum's analyze would, later)
            system('psql', '-X', '-q', '-d', $pg_url . '/benchsemantic',
                   '-c', 'ANALYZE items') if $s->[1];
            my $cut = sem_cut();
            note("nginx ($s->[0]): 60 searches by meaning over $n items");
            $sem->{$n} = loadgen('semsearch', base => $base, n => 60,
                                 expect => 10);
            $sem->{$n}{cut} = sem_cut() - $cut;
            $sem->{$n}{fill} = $fill;
        }
        stop($pid);
    }
    system(@pg_as, "$pg_bin/pg_ctl", '-D', $pg_data, '-m', 'fast', 'stop')
        if $pg_bin;
    stop($mpid);
}

# --- the table --------------------------------------------------------------

my $N = $row{nginx};
my $P = $row{peer};
my $f = $row{floor};

printf "\n%-58s %14s %14s %8s\n", 'row', 'nginx module', 'LangGraph.js',
       'ratio';
# (the LangGraph API rows: LangGraph.js is its own Agent Server there)
print '-' x 98, "\n";

sub line {
    my ($name, $a, $b, $fmt, $ratio) = @_;
    $fmt //= '%.2f';
    my $sa = defined $a ? sprintf($fmt, $a) : '-';
    my $sb = defined $b ? sprintf($fmt, $b) : '-';
    my $r = ($ratio && $a && $b) ? sprintf('%.1fx', $ratio eq 'up' ? $a / $b
                                                                   : $b / $a)
                                 : '';
    printf "%-58s %14s %14s %8s\n", $name, $sa, $sb, $r;
}

printf "%-58s %14.0f\n", 'mock alone: turns/s at concurrency 64 (capacity)',
       $row{mockcap}{tps};
line('floor (2 provider calls + SQL, direct): median ms', $f->{p50});
line('floor: p99 ms', $f->{p99});
line('turn, 10k-row query: median ms', $N->{turn}{p50}, $P->{turn}{p50},
     undef, 'down');
line('turn, 10k-row query: p99 ms', $N->{turn}{p99}, $P->{turn}{p99},
     undef, 'down');
line('overhead (turn - floor): median ms', $N->{turn}{p50} - $f->{p50},
     $P->{turn}{p50} - $f->{p50});
for my $q (qw(big small)) {
    for my $c (16, 64) {
        my ($a, $b) = ($N->{"load_${q}_$c"}, $P->{"load_${q}_$c"});
        my $l = $q eq 'big' ? '10k-row query' : 'one-row query';
        line("throughput, $l, c=$c: turns/s", $a->{tps}, $b->{tps}, '%.0f',
             'up');
        line("  p50 / p99 ms", $a->{p50}, $b->{p50}, '%.1f');
        line("  ", $a->{p99}, $b->{p99}, '%.1f');
        line("  errors", $a->{errors}, $b->{errors}, '%d');
    }
}
my ($on, $op) = ($N->{open}, $P->{open});
line("open streams ($n_open, 50 tokens 200 ms apart): errors",
     $on->{errors}, $op->{errors}, '%d');
line('  most streams flowing at once', $on->{most_streaming},
     $op->{most_streaming}, '%d');
line('  RSS of the server processes at that moment: MiB',
     ($on->{rss_kb} // 0) / 1024, ($op->{rss_kb} // 0) / 1024, '%.0f');
line('  RSS per open stream: KiB', $on->{per_stream_kb},
     $op->{per_stream_kb}, '%.1f', 'down');
my ($ln, $lp) = ($N->{long}, $P->{long});
line('long conversation: median ms of turns 1-10', $ln->{first10},
     $lp->{first10});
line('  median ms of turns 191-200', $ln->{last10}, $lp->{last10});
for my $at (50, 100, 200) {
    line("  checkpoint file after $at turns: KiB",
         $ln->{sizes}{$at} / 1024, $lp->{sizes}{$at} / 1024, '%.0f');
}
my $lk = $N->{long_keep};
line('  checkpoint bytes per turn (SQLite; storage after 200)',
     $ln->{storage}{per_turn}, undef, '%.0f');
line('    all of the session\'s bytes per turn',
     $ln->{storage}{total_per_turn}, undef, '%.0f');
line('    checkpoint bytes per turn, agent_checkpoint_keep 10',
     $lk->{storage}{per_turn}, undef, '%.1f');
line('    checkpoints kept of 200 turns (off, keep 10)',
     $ln->{storage}{checkpoints}, $lk->{storage}{checkpoints}, '%d');
line('    median ms of turns 1-10, 191-200, agent_checkpoint_keep 10',
     $lk->{first10}, $lk->{last10});
my $iso = $N->{iso};
line('isolation: p99 gap between chunks of 50 streams, ms', $iso->{p99});
line('  max gap ms (the query took ' . sprintf('%.0f', $iso->{slow_ms})
     . ' ms)', $iso->{max});

for my $c (16, 64) {
    my ($a, $b) = ($N->{"lg_$c"}, $P->{"lg_$c"});
    line("LangGraph API runs/stream, one-row query, c=$c: turns/s",
         $a->{tps}, $b->{tps}, '%.0f', 'up');
    line("  p50 / p99 ms", $a->{p50}, $b->{p50}, '%.1f');
    line("  ", $a->{p99}, $b->{p99}, '%.1f');
    line("  server CPU ms per turn", $a->{cpu_ms}, $b->{cpu_ms}, '%.2f',
         'down');
    line("  errors", $a->{errors}, $b->{errors}, '%d');
}
my ($lo, $lr) = ($N->{lg_open}, $P->{lg_open});
line('LangGraph API open streams: most flowing at once',
     $lo->{most_streaming}, $lr->{most_streaming}, '%d');
line('  RSS per open stream: KiB', $lo->{per_stream_kb},
     $lr->{per_stream_kb}, '%.1f', 'down');
line('  errors', $lo->{errors}, $lr->{errors}, '%d');

my $pc = $N->{proto_chat};
for my $p (qw(chat lg agui mcp a2a responses)) {
    my $a = $N->{"proto_$p"};
    my %name = (chat => 'our chat API', lg => 'the LangGraph API',
                agui => 'AG-UI (agent_agui)',
                mcp => 'MCP (agent_mcp_server)',
                a2a => 'A2A (agent_a2a)',
                responses => 'Open Responses');
    line("one graph through $name{$p}, c=16: turns/s", $a->{tps}, undef,
         '%.0f');
    line("  p50 / p99 ms", $a->{p50}, undef, '%.1f');
    line("  ", $a->{p99}, undef, '%.1f');
    line("  added p50 ms over our chat API",
         defined $a->{p50} && defined $pc->{p50} ? $a->{p50} - $pc->{p50}
                                                 : undef, undef, '%+.1f')
        unless $p eq 'chat';
    line("  errors", $a->{errors}, undef, '%d');
}

for my $k (qw(node exact)) {
    my ($m, $h) = ($N->{"cache_${k}_miss"}, $N->{"cache_${k}_hit"});
    line($k eq 'node' ? 'a cached node (cache=), turn p50 ms: miss / hit'
                      : 'exact response cache, turn p50 ms: uncached / hit',
         $m->{turn_p50}, undef, '%.1f');
    line('  ', $h->{turn_p50}, undef, '%.1f');
    line('  p99 ms: miss / hit', $m->{turn_p99}, undef, '%.1f');
    line('  ', $h->{turn_p99}, undef, '%.1f');
}

for my $n ($only{semantic} ? @sem_sizes : ()) {
    my ($a, $b) = map { $row{semantic}{$_}{$n} } qw(sqlite pg);
    my $items = $n =~ s/(\d)(?=(\d{3})+$)/$1,/gr;
    line("semantic search, $items items, limit 10: p50 ms (SQLite, "
         . 'PostgreSQL)', $a->{p50}, $b->{p50}, '%.1f');
    line('  p99 ms', $a->{p99}, $b->{p99}, '%.1f');
    line('  searches cut at a bound (of 60)', $a->{cut}, $b->{cut}, '%d');
    line('  errors (a put or a search)',
         defined $a ? $a->{errors} + $a->{fill}{errors} : undef,
         defined $b ? $b->{errors} + $b->{fill}{errors} : undef, '%d');
    line('  items put per second at c=32 (embedded each)',
         $a->{fill}{per_s}, $b->{fill}{per_s}, '%.0f');
}
if ($only{semantic}) {
    my ($a, $b) = map { $row{semantic}{$_}{0} } qw(sqlite pg);
    line('  the same search over no items (the embedding): p50 ms', $a->{p50},
         $b->{p50}, '%.1f');
    line('    p99 ms', $a->{p99}, $b->{p99}, '%.1f');
    line('    the mock\'s embedding called directly: p50 ms',
         $row{embed}{p50}, undef, '%.2f');
}

my $G = $row{pg};
line('store on PostgreSQL: turn, 10k-row query: median ms', $G->{turn}{p50},
     $N->{turn}{p50});
line('  overhead (turn - floor): median ms',
     defined $G->{turn}{p50} ? $G->{turn}{p50} - $G->{turn}{floor} : undef,
     defined $N->{turn}{p50} ? $N->{turn}{p50} - $f->{p50} : undef);
for my $q (qw(big small)) {
    for my $c (16, 64) {
        my ($a, $b) = ($G->{"load_${q}_$c"}, $N->{"load_${q}_$c"});
        my $l = $q eq 'big' ? '10k-row query' : 'one-row query';
        line("  throughput, $l, c=$c: turns/s (PostgreSQL, SQLite)",
             $a->{tps}, $b->{tps}, '%.0f', 'up');
        line("    p50 / p99 ms", $a->{p50}, $b->{p50}, '%.1f');
        line("    ", $a->{p99}, $b->{p99}, '%.1f');
        line("    errors", $a->{errors}, $b->{errors}, '%d');
    }
}
line('  long conversation: median ms of turns 1-10', $G->{long}{first10},
     $ln->{first10});
line('    median ms of turns 191-200', $G->{long}{last10}, $ln->{last10});
line('    checkpoint bytes per turn', $G->{long}{storage}{per_turn},
     $ln->{storage}{per_turn}, '%.0f');

for my $s (qw(sqlite pg)) {
    for my $d (qw(sync async exit)) {
        my $a = $row{durable}{"${s}_$d"};
        my $l = $s eq 'pg' ? 'PostgreSQL' : 'SQLite';
        line("durability $d ($l), LangGraph API c=16: turns/s", $a->{tps},
             undef, '%.0f');
        line("  p50 / p99 ms", $a->{p50}, undef, '%.1f');
        line("  ", $a->{p99}, undef, '%.1f');
        line("  errors", $a->{errors}, undef, '%d');
    }
}

for my $k (qw(untraced traced)) {
    my $l = $k eq 'traced' ? 'traces (OTLP) and metrics on' : 'off';
    line("$l: turn median ms (one-row query)", $N->{"${k}_turns"}{turn_p50});
    line("  throughput c=16: turns/s", $N->{"${k}_16"}{tps}, undef, '%.0f');
    line("  throughput c=64: turns/s", $N->{"${k}_64"}{tps}, undef, '%.0f');
    line("  errors", ($N->{"${k}_16"}{errors} // 0)
                     + ($N->{"${k}_64"}{errors} // 0), undef, '%d');
}

my ($ts, $tl, $tm) = map { $N->{"tool_$_"} } qw(sql location mcp);
line('turn, the tool SQL (one row): median ms', $ts->{turn_p50});
line('turn, the tool a location (agent_tool): median ms', $tl->{turn_p50});
line('turn, the tool an MCP server\'s (agent_mcp): median ms',
     $tm->{turn_p50});
line('  the MCP server called directly: median ms', $row{mcpdirect}{p50});
line('  errors of these turns', ($ts->{errors} // 0) + ($tl->{errors} // 0)
     + ($tm->{errors} // 0), undef, '%d') if want('tools');
my $added = (defined $tm->{turn_p50} && defined $tl->{turn_p50}
             && defined $row{mcpdirect}{p50})
            ? $tm->{turn_p50} - $tl->{turn_p50} - $row{mcpdirect}{p50}
            : undef;
line('  added per MCP call (MCP turn - location turn - direct): ms', $added);

print "\ntargets:\n";
sub target {
    my ($ok, $text) = @_;
    printf "  [%s] %s\n", $ok ? 'met' : 'MISSED', $text;
}
target(defined $added && $added <= 0.5,
       sprintf('the module adds at most 0.5 ms per MCP call at the median: '
               . '%.2f ms', $added // -1))
    if want('tools');
my $over = $N->{turn}{p50} - $f->{p50};
target($over <= 1, sprintf('overhead at most 1 ms at the median: %.2f ms',
                           $over));
my $rb = $P->{load_big_64}{tps} ? $N->{load_big_64}{tps}
                                  / $P->{load_big_64}{tps} : 0;
my $rs = $P->{load_small_64}{tps} ? $N->{load_small_64}{tps}
                                    / $P->{load_small_64}{tps} : 0;
target($rb >= 10, sprintf('10k-row query, c=64: at least 10x LangGraph.js: '
                          . '%.1fx', $rb));
target($rs >= 50, sprintf('one-row query, c=64: at least 50x LangGraph.js: '
                          . '%.1fx', $rs));
target($N->{load_small_64}{p99} < 100,
       sprintf('one-row query, c=64: p99 under 100 ms: %.1f ms',
               $N->{load_small_64}{p99}));
target(($on->{errors} // 1) == 0 && $on->{all_streamed}
       && ($on->{per_stream_kb} // 1e9) <= 32,
       sprintf("$n_open open streams, no errors, at most 32 KiB each: "
               . "%d errors, %.1f KiB", $on->{errors} // -1,
               $on->{per_stream_kb} // 0));
target($ln->{last10} <= 1.1 * $ln->{first10},
       sprintf('turns 191-200 at most 1.1x turns 1-10: %.2fx',
               $ln->{last10} / ($ln->{first10} || 1)));
my @s = map { $ln->{sizes}{$_} } (50, 100, 200);
my $lin = ($s[1] - $s[0]) ? ($s[2] - $s[1]) / (2 * ($s[1] - $s[0])) : 0;
# at most linearly: the file's free pages are used again (a session's
# rows pruned, the WAL's checkpoints), so it may grow by less
target($lin < 1.3,
       sprintf('checkpoint file grows at most linearly (growth 100-200 / '
               . '2x growth 50-100): %.2f', $lin));
target($iso->{p99} <= 20, sprintf('isolation p99 gap at most 20 ms: '
                                  . '%.1f ms', $iso->{p99}));
target(defined $ln->{storage} && defined $lk->{storage}
       && $lk->{storage}{checkpoints} <= 10,
       sprintf('checkpoint bytes per turn reported (%.0f), and '
               . 'agent_checkpoint_keep 10 holds the session to %d',
               $ln->{storage}{per_turn} // -1,
               $lk->{storage}{checkpoints} // -1))
    if want('long');
if (want('pg') && $G) {
    my $pr = $N->{load_big_64}{tps} ? $G->{load_big_64}{tps}
                                      / $N->{load_big_64}{tps} : 0;
    my $pr2 = $N->{load_small_64}{tps} ? $G->{load_small_64}{tps}
                                         / $N->{load_small_64}{tps} : 0;
    target($pr >= 0.7 && $pr2 >= 0.7,
           sprintf('PostgreSQL c=64 at least 70%% of SQLite: %.0f%% '
                   . '(10k-row), %.0f%% (one-row)', $pr * 100, $pr2 * 100));
    my $po = $G->{turn}{p50} - $G->{turn}{floor};
    target($po < 1.5, sprintf('PostgreSQL: overhead under 1.5 ms at the '
                              . 'median: %.2f ms', $po));
}
printf "\nbench took %.0f s on %d cores (%s)\n", time - $t_start,
       `nproc` + 0, (`grep -m1 'model name' /proc/cpuinfo` =~ s/.*:\s*//r
                     =~ s/\n//r);
