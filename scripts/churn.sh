#!/usr/bin/env bash
# RSS under churn (issue 11, item 6), Redis and FerrumKV side by side in one
# run: each server/policy starts on a free 127.0.0.1 port with
# `maxmemory 64mb`, takes 400,000 SETs through `redis-cli --pipe` over
# 200,000 keys (16-byte names), each value 16 bytes (90%) or 16 KiB (10%),
# drawn per SET from a seeded generator, so a key's value changes size
# when an overwrite draws the other size; then prints the final RSS, RSS /
# maxmemory, used_memory and DBSIZE. Servers run one at a time.
# Needs redis-server, redis-cli and python3.
#
#   scripts/churn.sh target/release/ferrum-server
#   SETS=100000 scripts/churn.sh target/release/ferrum-server
#
# Environment: MAXMEMORY (default 64mb), SETS (400000), KEYS (200000),
# SEED (42), REDIS (redis-server), FERRUM_POLICIES / REDIS_POLICIES
# (space-separated lists).
set -euo pipefail
if [ $# -ne 1 ]; then
    sed -n '2,16p' "$0" >&2
    exit 2
fi
ferrum=$1
redis=${REDIS:-redis-server}
MAXMEMORY=${MAXMEMORY:-64mb}
SETS=${SETS:-400000}
KEYS=${KEYS:-200000}
SEED=${SEED:-42}
REDIS_POLICIES=${REDIS_POLICIES:-allkeys-lru}
FERRUM_POLICIES=${FERRUM_POLICIES:-allkeys-lru allkeys-ahe}
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

# run NAME BINARY POLICY: prints `name policy rss used_memory dbsize`.
run() {
    local name=$1 bin=$2 policy=$3 port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --maxmemory "$MAXMEMORY" --maxmemory-policy "$policy" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    python3 - "$SETS" "$KEYS" "$SEED" <<'EOF' | redis-cli -p "$port" --pipe >/dev/null
import random, sys
out = sys.stdout.buffer
sets, keys, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
small, large = b"s" * 16, b"L" * 16384
batch = []
for _ in range(sets):
    value = large if rng.random() < 0.1 else small
    batch.append(b"*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$%d\r\n%s\r\n" % (rng.randrange(keys), len(value), value))
    if len(batch) == 1000:
        out.write(b"".join(batch))
        batch.clear()
out.write(b"".join(batch))
EOF
    local rss used keys
    keys=$(redis-cli -p "$port" dbsize)
    rss=$(awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$pid/status")
    used=$(redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '/^used_memory:/ { print $2 }')
    stop
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$policy" "$rss" "$used" "$keys"
}

echo "churn: maxmemory $MAXMEMORY ($max_bytes bytes), $SETS SETs over $KEYS keys, values 16 B (90%) / 16 KiB (10%), seed $SEED, $("$redis" --version | awk '{ print $1, $3 }'), ferrum-server $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
{
    for p in $REDIS_POLICIES; do run redis "$redis" "$p"; done
    for p in $FERRUM_POLICIES; do run ferrumkv "$ferrum" "$p"; done
} | awk -F'\t' -v max="$max_bytes" '
    BEGIN {
        print "| server | policy | RSS | RSS/maxmemory | used_memory | used/maxmemory | keys held |"
        print "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
    }
    { printf "| %s | %s | %.1f MiB | %.2f | %d | %.2f | %d |\n", $1, $2, $3 / 1048576, $3 / max, $4, $4 / max, $5 }'
