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
#                  the last ten (a long conversation's overhead); without
#                  it, the instructions per turn of turns 1-10 and of the
#                  last ten, the worker's and its event loop's thread's
#
# Under t/pg/run (AGENT_PG set) the store is PostgreSQL, a new database a
# module; with the server's pg_stat_statements loaded (t/pg/run's
# AGENT_PG_OPTIONS="-c shared_preload_libraries=pg_stat_statements") the
# counted turns' statements per turn and the server's time per turn,
# writes apart, are printed too (the phases count SQLite's writes only).

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

# PostgreSQL: a new database for the module; its statements' counts
# reset (none printed without pg_stat_statements)
pgdb=
pg_fresh() {
    pgdb="bench_instr_$1"
    PGOPTIONS=--client-min-messages=warning \
        psql -X -q -d "$AGENT_PG/postgres" -c "DROP DATABASE IF EXISTS $pgdb" \
        -c "CREATE DATABASE $pgdb" > /dev/null
    psql -X -q -d "$AGENT_PG/$pgdb" \
        -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' \
        > /dev/null 2>&1 || true
}

pg_reset() {
    [ -z "$pgdb" ] || psql -X -q -d "$AGENT_PG/$pgdb" \
        -c 'SELECT pg_stat_statements_reset()' > /dev/null 2>&1 || true
}

pg_count() {
    [ -n "$pgdb" ] || return 0
    psql -X -q -A -t -d "$AGENT_PG/$pgdb" -c "
        SELECT format('  PostgreSQL: %s statements per turn (%s writes), '
                      || '%s us of server time per turn (writes %s us)',
               round(sum(calls) / $n, 1),
               round(sum(calls) FILTER (WHERE w) / $n, 1),
               round(sum(total_exec_time)::numeric * 1000 / $n, 1),
               round(coalesce(sum(total_exec_time) FILTER (WHERE w), 0)
                     ::numeric * 1000 / $n, 1))
        FROM (SELECT calls, total_exec_time,
                     query ~* '\\m(insert|update|delete)\\M' AS w
              FROM pg_stat_statements
              WHERE dbid = (SELECT oid FROM pg_database
                            WHERE datname = current_database())
                    AND query !~* 'pg_stat_statements') s" 2> /dev/null \
        || true
}

# a take-over's claim drops the kept events of the step cut (docs/runs.md):
# that DELETE alone, on a run that kept N tokens after its last values,
# each size five times, rolled back (server time, EXPLAIN ANALYZE)
pg_claim() {
    [ -n "$pgdb" ] || return 0
    for kept in 100 1000 10000; do
        psql -X -q -A -t -d "$AGENT_PG/$pgdb" -c "
            INSERT INTO run_events SELECT 'bench-claim', g,
                CASE g WHEN 1 THEN 'metadata' WHEN 2 THEN 'values'
                       ELSE 'messages' END, repeat('x', 300)
            FROM generate_series(1, $kept + 2) g" > /dev/null
        ms=$(for _ in 1 2 3 4 5; do
            psql -X -q -A -t -d "$AGENT_PG/$pgdb" -c "BEGIN" -c "
                EXPLAIN (ANALYZE, FORMAT JSON) DELETE FROM run_events
                WHERE run_id = 'bench-claim' AND seq > (SELECT
                COALESCE(max(seq), 1) FROM run_events
                WHERE run_id = 'bench-claim'
                AND event IN ('values', 'updates', 'checkpoints'))" \
                -c "ROLLBACK" | perl -ne \
                'printf "%.2f ", $1 if /"Execution Time": ([\d.]+)/'
        done)
        echo "  PostgreSQL: the claim's DELETE of $kept kept events: $ms ms"
        psql -X -q -d "$AGENT_PG/$pgdb" \
            -c "DELETE FROM run_events WHERE run_id = 'bench-claim'" \
            > /dev/null
    done
}

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
    pg_reset
    node "$root/t/bench/loadgen.js" lgload \
        "{\"base\":\"$base\",\"n\":$n,\"c\":1}" > /dev/null
    kill -QUIT $vg
    wait $vg 2> /dev/null || true

    echo "$1: $n turns, one at a time, per phase"
    pg_count
    pg_claim
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

# one session's turns under callgrind: turns 1-10 counted, then the
# turns up to n - 10 not counted, then the last ten counted
long_instructions() {
    local base="http://127.0.0.1:$3" sid i ir
    sid=$(node "$root/t/bench/loadgen.js" long "{\"base\":\"$base\",\"n\":0}" \
          | sed 's/.*"sid":"\([^"]*\)".*/\1/')
    callgrind_control -z $vg > /dev/null 2>&1
    node "$root/t/bench/loadgen.js" long \
        "{\"base\":\"$base\",\"sid\":\"$sid\",\"n\":10}" > /dev/null
    callgrind_control -d $vg > /dev/null 2>&1
    node "$root/t/bench/loadgen.js" long "{\"base\":\"$base\",\"sid\":\"$sid\",
        \"n\":$((n - 20)),\"from\":10}" > /dev/null
    callgrind_control -z $vg > /dev/null 2>&1
    node "$root/t/bench/loadgen.js" long "{\"base\":\"$base\",\"sid\":\"$sid\",
        \"n\":10,\"from\":$((n - 10))}" > /dev/null
    callgrind_control -d $vg > /dev/null 2>&1
    kill $vg
    wait $vg 2> /dev/null || true

    # the request's bytes copied into curl's send buffer, where the
    # module's read callback does it (the floor's own cost: any client
    # of curl pays it)
    echo "$1: $n turns in one session, instructions per turn"
    for i in 1 2; do
        ir=$(cat "$2"/cg.out.$i-* | sed -n 's/^summary: //p' \
             | paste -sd+ | bc)
        rd=$(callgrind_annotate --inclusive=yes --threshold=100 \
                 "$2"/cg.out.$i-01 2> /dev/null \
             | sed -n 's/^ *\([0-9,]*\) .*:ngx_http_agent_curl_read .*/\1/p' \
             | head -1 | tr -d ,)
        printf '  %-14s worker %6.2fM  event loop %6.2fM' \
            "$([ $i = 1 ] && echo 'turns 1-10' || echo 'last ten')" \
            "$(echo "$ir / 10000000" | bc -l)" \
            "$(echo "$(sed -n 's/^summary: //p' "$2"/cg.out.$i-01) \
                    / 10000000" | bc -l)"
        [ -z "$rd" ] || printf '  (the request into curl %5.2fM)' \
            "$(echo "$rd / 10000000" | bc -l)"
        echo
    done
}

k=0
for so in "$@"; do
    so=$(realpath "$so")
    d="$work/run"
    rm -rf "$d"
    mkdir -p "$d"
    np=$(port)
    db="$d/agent.db"
    k=$((k + 1))

    if [ -n "$AGENT_PG" ]; then
        pg_fresh $k
        db="$AGENT_PG/$pgdb"
    fi

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
    agent_checkpoint_db $db;
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
        ${BENCH_LONG:+--separate-threads=yes} \
        /usr/sbin/nginx -p "$d/" -c "$d/nginx.conf" > "$d/vg.log" 2>&1 &
    vg=$!
    up "http://127.0.0.1:$np/lg/ok"

    if [ -n "$BENCH_LONG" ]; then
        long_instructions "$so" "$d" "$np"
        continue
    fi

    base="http://127.0.0.1:$np/lg"
    node "$root/t/bench/loadgen.js" lgload \
        "{\"base\":\"$base\",\"n\":20,\"c\":4}" > /dev/null
    callgrind_control -z $vg > /dev/null 2>&1
    pg_reset
    load=$(node "$root/t/bench/loadgen.js" lgload \
               "{\"base\":\"$base\",\"n\":$n,\"c\":4}")
    callgrind_control -d $vg > /dev/null 2>&1
    kill $vg
    wait $vg 2> /dev/null || true

    ir=$(sed -n 's/^summary: //p' "$d/cg.out.1")
    errors=$(echo "$load" | sed 's/.*"errors":\([0-9]*\).*/\1/')
    printf '%-60s %12.0f instructions per turn (%d turns, %s errors)\n' \
        "$so" "$(echo "$ir / $n" | bc -l)" "$n" "$errors"
    pg_count
done
