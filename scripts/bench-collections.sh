#!/usr/bin/env bash
# redis-benchmark's collection rows against FerrumKV and Redis, in
# interleaved rounds (Redis, FerrumKV, Redis, FerrumKV, ...), printing each
# row's median requests per second for both and their ratio.
# Needs redis-server, redis-benchmark (apt-get install redis-server
# redis-tools) and python3.
#
#   scripts/bench-collections.sh target/release/ferrum-server
#   ROUNDS=5 REQUESTS=200000 scripts/bench-collections.sh target/release/ferrum-server
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '2,9p' "$0" >&2
    exit 2
fi
ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-100000}
TESTS=${TESTS:-hset,sadd,spop,zadd,zpopmin,lpush,rpush,lpop,rpop,lrange_100,lrange_300,lrange_600}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rport=$(free_port)
fport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' >/dev/null 2>&1 &
rpid=$!
"$1" --port "$fport" --bind 127.0.0.1 --save '' --dir "$(mktemp -d)" >/dev/null 2>&1 &
fpid=$!
trap 'kill "$rpid" "$fpid" 2>/dev/null; wait 2>/dev/null || true' EXIT
for port in "$rport" "$fport"; do
    for _ in $(seq 50); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
done
out=$(mktemp -d)
for round in $(seq "$ROUNDS"); do
    for side in redis ferrum; do
        port=$rport
        [ "$side" = ferrum ] && port=$fport
        redis-cli -p "$port" flushall >/dev/null
        redis-benchmark -p "$port" -n "$REQUESTS" -t "$TESTS" --csv -q >"$out/$side.$round.csv"
    done
done
python3 - "$out" "$ROUNDS" <<'EOF'
import csv, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
def load(side):
    rows = {}
    for r in range(1, rounds + 1):
        for row in csv.reader(open(f"{d}/{side}.{r}.csv")):
            if row and row[0] != "test":
                rows.setdefault(row[0], []).append(float(row[1]))
    return rows
redis, ferrum = load("redis"), load("ferrum")
print("| command | Redis rps (median) | FerrumKV rps (median) | FerrumKV / Redis |")
print("| --- | ---: | ---: | ---: |")
for name, rs in redis.items():
    r, f = statistics.median(rs), statistics.median(ferrum.get(name, [0]))
    print(f"| {name} | {r:,.0f} | {f:,.0f} | {f / r:.2f} |")
EOF
rm -rf "$out"
