#!/usr/bin/env bash
# Server CPU time per request for redis-benchmark rows, FerrumKV against
# Redis 7.0.15, in alternating runs. CPU time (nanoseconds on a CPU, summed
# over the server's threads from /proc/PID/task/*/schedstat: the scheduler's
# own count, not the 10 ms ticks of /proc/PID/stat) is what a request costs
# the server
# whatever else the machine runs, where wall-clock throughput on a shared
# machine moves by tens of percent (issue 12). Each server is pinned to one
# CPU and redis-benchmark to another.
#
#   scripts/cpu-per-request.sh [SERVER_BINARY]
#
# Environment: TESTS (comma-separated `-t` names; `collections`, the
# default, for the collection rows, `suite` for all 20 rows of
# redis-benchmark's default suite), FLAGS (default
# `-n 1000000 -P 16 -c 50 -r 100000`), RUNS (default 3), PORT_BASE (two
# ports from it; default: free ports), SERVER_CPU (1), CLIENT_CPU (0).
# A row whose command reads what another writes runs after it in the same
# run, as in redis-benchmark's default suite: SPOP after SADD, ZPOPMIN
# after ZADD, LPOP after LPUSH, RPOP after RPUSH, LRANGE_* after an LPUSH
# of as many requests (which is not measured); LRANGE rows run a 25th of
# the requests (LRANGE_REQUESTS), as each one replies with up to 600
# elements. Every run starts from
# FLUSHALL. Prints each row's median CPU-µs per request for both servers and
# the median of the runs' ratios (FerrumKV over Redis: below 1 is cheaper).
set -euo pipefail

BIN=${1:-target/release/ferrum-server}
COLLECTION_TESTS=hset,sadd,spop,zadd,zpopmin,lpush,rpush,lpop,rpop,lrange_100,lrange_300,lrange_500,lrange_600
SUITE_TESTS=ping_inline,ping_mbulk,set,get,incr,mset,$COLLECTION_TESTS
case ${TESTS:-collections} in
    collections) TESTS=$COLLECTION_TESTS ;;
    suite) TESTS=$SUITE_TESTS ;;
esac
read -r -a FLAGS <<<"${FLAGS:--n 1000000 -P 16 -c 50 -r 100000}"
RUNS=${RUNS:-3}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
if [ -n "${PORT_BASE:-}" ]; then
    rport=$PORT_BASE
    fport=$((PORT_BASE + 1))
else
    rport=$(free_port)
    fport=$(free_port)
fi

taskset -c "$SERVER_CPU" redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
rpid=$!
taskset -c "$SERVER_CPU" "$BIN" --port "$fport" --bind 127.0.0.1 --save '' --dir "$(mktemp -d)" >/dev/null 2>&1 &
fpid=$!
out=$(mktemp)
trap 'kill "$rpid" "$fpid" 2>/dev/null; wait 2>/dev/null; rm -f "$out"' EXIT
for port in "$rport" "$fport"; do
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    redis-cli -p "$port" ping >/dev/null 2>&1 || { echo "no server answers on port $port" >&2; exit 1; }
done

# The server's CPU time so far, in nanoseconds, over its live threads.
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ ns += $1 } END { printf "%.0f\n", ns }'; }

# The row that fills what `$1` reads, if any.
fill_for() {
    case $1 in
        spop) echo sadd ;;
        zpopmin) echo zadd ;;
        lpop) echo lpush ;;
        rpop) echo rpush ;;
        lrange_*) echo lpush ;;
    esac
}

# The number after -n in FLAGS.
requests=$(printf '%s\n' "${FLAGS[@]}" | awk 'p { print; exit } $0 == "-n" { p = 1 }')
lrange_requests=${LRANGE_REQUESTS:-$((requests / 25))}
# The requests row `$1` runs (a later -n overrides FLAGS' one).
requests_of() {
    case $1 in
        lrange_*) echo "$lrange_requests" ;;
        *) echo "$requests" ;;
    esac
}
# Runs row `$2` against port `$1`; a fill for row `$3` runs as many requests.
bench() {
    taskset -c "$CLIENT_CPU" redis-benchmark -h 127.0.0.1 -p "$1" -t "$2" "${FLAGS[@]}" \
        -n "$(requests_of "${3:-$2}")" -q >/dev/null
}

for run in $(seq "$RUNS"); do
    for test in ${TESTS//,/ }; do
        # Alternate which server goes first, run by run.
        sides="redis ferrum"
        [ $((run % 2)) -eq 0 ] && sides="ferrum redis"
        for side in $sides; do
            port=$rport pid=$rpid
            [ "$side" = ferrum ] && port=$fport pid=$fpid
            redis-cli -p "$port" flushall >/dev/null
            fill=$(fill_for "$test")
            [ -n "$fill" ] && bench "$port" "$fill" "$test"
            before=$(cpu_ns "$pid")
            bench "$port" "$test"
            after=$(cpu_ns "$pid")
            echo "$test $side $(( (after - before) / 1000 )) $(requests_of "$test")" >>"$out"
        done
    done
done
python3 - "$out" "$RUNS" "${FLAGS[*]}" "$lrange_requests" <<'EOF'
import statistics, sys
path, runs, flags, lrange = sys.argv[1:5]
cpu = {}
for line in open(path):
    test, side, us, requests = line.split()
    cpu.setdefault(test, {}).setdefault(side, []).append(int(us) / int(requests))
print(f"redis-benchmark {flags} (LRANGE rows -n {lrange}), {runs} runs each,")
print("server CPU-us per request (medians; the ratio is the median of each run's own ratio)")
print("| row | FerrumKV | Redis | FerrumKV / Redis | per-run ratios | FerrumKV runs | Redis runs |")
print("| --- | ---: | ---: | ---: | --- | --- | --- |")
for test, sides in cpu.items():
    fs, rs = sides["ferrum"], sides["redis"]
    ratios = [f / r for f, r in zip(fs, rs)]
    show = lambda vs, fmt: " ".join(format(v, fmt) for v in vs)
    print(f"| {test} | {statistics.median(fs):.3f} | {statistics.median(rs):.3f} "
          f"| {statistics.median(ratios):.2f} | {show(ratios, '.2f')} | {show(fs, '.3f')} | {show(rs, '.3f')} |")
EOF
