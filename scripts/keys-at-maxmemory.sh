#!/usr/bin/env bash
# Keys held at a fixed maxmemory, Redis and FerrumKV side by side in one run
# (issue 11's table). For each value size (32, 100 and 1,000 bytes) and each
# server/policy: start the server on a free 127.0.0.1 port with
# `maxmemory 128mb`, write enough distinct 16-byte keys through
# `redis-cli --pipe` to overflow the limit about 3x (3,000,000 keys for
# 32-byte values, scaled as 3 * maxmemory / (value + 100)), then print the
# keys held (DBSIZE), the ratio to Redis allkeys-lru's count, RSS per held
# key, used_memory, RSS / maxmemory and whether RSS is within issue 11's
# bound, maxmemory * 1.10 plus the server's startup RSS (its RSS before the
# fill, printed as "baseline"). RSS is read SETTLE seconds after the fill
# (default 2: jemalloc returns dirty pages after dirty_decay_ms, 1 s in
# FerrumKV), so it measures what stays resident, not a purge in flight.
# Servers run one at a time. Needs redis-server, redis-cli and python3.
#
#   scripts/keys-at-maxmemory.sh target/release/ferrum-server
#   SIZES="32" MAXMEMORY=64mb scripts/keys-at-maxmemory.sh target/release/ferrum-server
#
# Environment: SIZES (value sizes, default "32 100 1000"), MAXMEMORY
# (default 128mb), OVERFLOW (default 3), REDIS (default redis-server),
# FERRUM_POLICIES / REDIS_POLICIES (space-separated lists), SETTLE
# (default 2).
set -euo pipefail
if [ $# -ne 1 ]; then
    sed -n '2,23p' "$0" >&2
    exit 2
fi
ferrum=$1
redis=${REDIS:-redis-server}
SIZES=${SIZES:-32 100 1000}
MAXMEMORY=${MAXMEMORY:-128mb}
OVERFLOW=${OVERFLOW:-3}
SETTLE=${SETTLE:-2}
REDIS_POLICIES=${REDIS_POLICIES:-allkeys-lru allkeys-lfu}
FERRUM_POLICIES=${FERRUM_POLICIES:-allkeys-lru allkeys-lfu allkeys-random allkeys-ahe}
max_bytes=$(python3 -c '
import re, sys
m = re.fullmatch(r"(\d+)(b|k|kb|m|mb|g|gb)?", sys.argv[1].lower())
if not m: sys.exit("bad MAXMEMORY " + sys.argv[1])
unit = {None: 1, "b": 1, "k": 1000, "kb": 1024, "m": 10**6, "mb": 1 << 20, "g": 10**9, "gb": 1 << 30}[m[2]]
print(int(m[1]) * unit)' "$MAXMEMORY")

pid=
stop() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        pid=
    fi
}
trap stop EXIT

# rss PID: the process's resident set size in bytes.
rss() {
    awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$1/status"
}

# run NAME BINARY POLICY VALUE_SIZE COUNT: prints one tab-separated line
# `name policy keys rss used_memory baseline_rss`.
run() {
    local name=$1 bin=$2 policy=$3 size=$4 count=$5 port baseline
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --maxmemory "$MAXMEMORY" --maxmemory-policy "$policy" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    baseline=$(rss "$pid")
    python3 - "$count" "$size" <<'EOF' | redis-cli -p "$port" --pipe >/dev/null
import sys
out = sys.stdout.buffer
count, size = int(sys.argv[1]), int(sys.argv[2])
value = b"v" * size
tail = b"\r\n$%d\r\n%s\r\n" % (size, value)
batch = []
for i in range(count):
    batch.append(b"*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d%s" % (i, tail))
    if len(batch) == 10000:
        out.write(b"".join(batch))
        batch.clear()
out.write(b"".join(batch))
EOF
    local keys rss used
    keys=$(redis-cli -p "$port" dbsize)
    sleep "$SETTLE"
    rss=$(rss "$pid")
    used=$(redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '/^used_memory:/ { print $2 }')
    stop
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$policy" "$keys" "$rss" "$used" "$baseline"
}

echo "maxmemory $MAXMEMORY ($max_bytes bytes), 16-byte keys, $("$redis" --version | awk '{ print $1, $3 }'), ferrum-server $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')"
for size in $SIZES; do
    count=$((OVERFLOW * max_bytes / (size + 100)))
    echo
    echo "## ${size}-byte values, $count SETs"
    {
        for p in $REDIS_POLICIES; do run redis "$redis" "$p" "$size" "$count"; done
        for p in $FERRUM_POLICIES; do run ferrumkv "$ferrum" "$p" "$size" "$count"; done
    } | awk -F'\t' -v max="$max_bytes" '
        { name[NR] = $1; pol[NR] = $2; keys[NR] = $3; rss[NR] = $4; used[NR] = $5; base[NR] = $6
          if ($1 == "redis" && $2 == "allkeys-lru") ref = $3 }
        END {
            printf "| %-9s | %-15s | %10s | %8s | %13s | %11s | %13s | %9s | %24s |\n", "server", "policy", "keys held", "vs Redis lru", "RSS/held key", "used_memory", "RSS/maxmemory", "baseline", "RSS <= 1.10 max + base"
            print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
            for (i = 1; i <= NR; i++) {
                ratio = ref > 0 ? sprintf("%.2fx", keys[i] / ref) : "-"
                per = keys[i] > 0 ? sprintf("%d B", rss[i] / keys[i]) : "-"
                bound = 1.10 * max + base[i]
                within = rss[i] <= bound ? "yes" : "NO"
                printf "| %-9s | %-15s | %10d | %8s | %13s | %11d | %13.2f | %6.1f MB | %s (%.1f of %.1f MB) |\n", name[i], pol[i], keys[i], ratio, per, used[i], rss[i] / max, base[i] / 1e6, within, rss[i] / 1e6, bound / 1e6
            }
        }'
done
