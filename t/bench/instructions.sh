#!/bin/bash
#
# Instructions per turn of the LangGraph API's runs/stream (the bench's
# one-row query), counted by valgrind's callgrind on one worker: a before
# and after that a busy or shared host does not blur, as it blurs turns/s
# (docs/performance.md).  Syscalls are not counted: compare them with
# strace -c where a change adds I/O.
#
#   t/bench/instructions.sh [MODULE.so ...]   (default: this tree's)
#   BENCH_TURNS=N  the turns counted (200), after 20 not counted
#   BENCH_PHASES=1 no valgrind: the turns one at a time, each worker's
#                  clock per phase (NGX_AGENT_PHASES, src/ops/
#                  ngx_http_agent_phase.c), printed as medians in us
#   BENCH_LONG=1   with BENCH_PHASES: the turns in one session of our chat
#                  API, each phase's time per turn in turns 1-10 against
#                  the last ten (a long conversation's overhead)

set -e

root=$(cd "$(dirname "$0")/../.." && pwd)
n=${BENCH_TURNS:-200}
[ $# -gt 0 ] || set -- "$root/build/nginx/objs/ngx_http_agent_module.so"

[ -n "$BENCH_PHASES" ] || command -v valgrind > /dev/null \
    || { echo "valgrind is needed" >&2; exit 1; }

work=$(mktemp -d /tmp/agent-instructions.XXXXXX)
trap 'kill $mock $vg 2> /dev/null; [ -n "$BENCH_KEEP" ] || rm -rf "$work"' EXIT

# the bench's data: the one row its query reads
sqlite3 "$work/bench.db" "CREATE TABLE employees (Name, Department, Salary,
    City); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
    WHERE x < 5000) INSERT INTO employees SELECT 'Person ' || x, 'Sales',
    30000 + x, 'City 1' FROM c;"

port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0));
print(s.getsockname()[1])'
}

up() {
    for _ in $(seq 1 120); do
        curl -s -o /dev/null "$1" && return 0
        sleep 0.5
    done
    echo "no answer at $1" >&2
    exit 1
}

mp=$(port)
PORT=$mp QUERY='SELECT Name, Salary FROM employees WHERE rowid = 4242' \
    node "$root/t/bench/mock.js" > "$work/mock.log" 2>&1 &
mock=$!
up "http://127.0.0.1:$mp/"

user=
[ "$(id -u)" = 0 ] && user='user root;'

# the median of each phase, and how often it comes per turn
phases() {
    NGX_AGENT_PHASES="$2/phases" /usr/sbin/nginx -p "$2/" -c "$2/nginx.conf" \
        > "$2/nginx.log" 2>&1 &
    vg=$!
    up "http://127.0.0.1:$3/lg/ok"

    if [ -n "$BENCH_LONG" ]; then
        node "$root/t/bench/loadgen.js" long \
            "{\"base\":\"http://127.0.0.1:$3\",\"n\":$n}" > /dev/null
        kill -QUIT $vg
        wait $vg 2> /dev/null || true
        long "$1" "$2"
        return
    fi

    base="http://127.0.0.1:$3/lg"
    node "$root/t/bench/loadgen.js" lgload \
        "{\"base\":\"$base\",\"n\":$n,\"c\":1}" > /dev/null
    kill -QUIT $vg
    wait $vg 2> /dev/null || true

    echo "$1: $n turns, one at a time, per phase"
    perl -e '
        my $turns = shift; my (%ns, %count);
        while (<>) {
            my ($p, $a, $b) = split;
            if ($a eq "count") { $count{$p} += $b } else { push @{$ns{$p}}, $a }
        }
        printf "  %-8s %8s %10s %10s\n", "phase", "per turn", "p50 us",
            "p90 us";
        for my $p (qw(parse begin request curl answer sql read write event
                      end)) {
            my @s = sort { $a <=> $b } @{$ns{$p} // []};
            next unless @s;
            printf "  %-8s %8.1f %10.1f %10.1f\n", $p, $count{$p} / $turns,
                $s[$#s / 2] / 1000, $s[int($#s * 0.9)] / 1000;
        }' "$n" "$2"/phases.*
}

# one session's turns: a phase's time per turn (its samples of a turn
# summed), the median of the first ten turns and of the last ten
long() {
    echo "$1: $n turns in one session, per phase, us per turn"
    perl -e '
        my $turns = shift; my (%ns, %count);
        while (<>) {
            my ($p, $a, $b) = split;
            if ($a eq "count") { $count{$p} += $b } else { push @{$ns{$p}}, $a }
        }
        sub med { my @s = sort { $a <=> $b } @_; $s[$#s / 2] }
        printf "  %-8s %8s %12s %12s %7s\n", "phase", "per turn",
            "turns 1-10", "last 10", "ratio";
        my ($f, $l) = (0, 0);
        for my $p (qw(parse begin request curl answer sql read write event
                      end)) {
            my @s = @{$ns{$p} // []};
            my $k = $count{$p} / $turns;
            next unless @s && $k == int $k && @s == $count{$p};
            my @t = map { my $i = $_; my $sum = 0;
                          $sum += $s[$i * $k + $_] for 0 .. $k - 1; $sum }
                    0 .. $turns - 1;
            my ($a, $b) = (med(@t[0 .. 9]) / 1000,
                           med(@t[$turns - 10 .. $turns - 1]) / 1000);
            ($f, $l) = ($f + $a, $l + $b);
            printf "  %-8s %8d %12.1f %12.1f %6.2fx\n", $p, $k, $a, $b,
                $a ? $b / $a : 0;
        }
        printf "  %-8s %8s %12.1f %12.1f %6.2fx\n", "all", "", $f, $l,
            $f ? $l / $f : 0;' "$n" "$2"/phases.*
}

for so in "$@"; do
    so=$(realpath "$so")
    d="$work/run"
    rm -rf "$d"
    mkdir -p "$d"
    np=$(port)

    cat > "$d/nginx.conf" <<CONF
load_module $so;
$user
master_process off;
daemon off;
error_log $d/error.log warn;
pid $d/nginx.pid;
env NGX_AGENT_PHASES;
thread_pool default threads=4;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $d/body;
    agent_checkpoint_db $d/agent.db;
    agent_resources_dir $d/resources;
    agent_database bench $work/bench.db;
    agent_model bench provider=openai
                url=http://127.0.0.1:$mp/v1/chat/completions;
    agent_sql_timeout 30s;
    server {
        listen 127.0.0.1:$np;
        location /lg/ { agent_langgraph_api; agent_use_database bench; }
        location /api/sessions/ { agent_sessions; }
        location /api/chat/ { agent_chat; agent_use_database bench; }
    }
}
CONF

    if [ -n "$BENCH_PHASES" ]; then
        phases "$so" "$d" "$np"
        continue
    fi

    valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" \
        /usr/sbin/nginx -p "$d/" -c "$d/nginx.conf" > "$d/vg.log" 2>&1 &
    vg=$!
    up "http://127.0.0.1:$np/lg/ok"

    base="http://127.0.0.1:$np/lg"
    node "$root/t/bench/loadgen.js" lgload \
        "{\"base\":\"$base\",\"n\":20,\"c\":4}" > /dev/null
    callgrind_control -z $vg > /dev/null 2>&1
    load=$(node "$root/t/bench/loadgen.js" lgload \
               "{\"base\":\"$base\",\"n\":$n,\"c\":4}")
    callgrind_control -d $vg > /dev/null 2>&1
    kill $vg
    wait $vg 2> /dev/null || true

    ir=$(sed -n 's/^summary: //p' "$d/cg.out.1")
    errors=$(echo "$load" | sed 's/.*"errors":\([0-9]*\).*/\1/')
    printf '%-60s %12.0f instructions per turn (%d turns, %s errors)\n' \
        "$so" "$(echo "$ir / $n" | bc -l)" "$n" "$errors"
done
