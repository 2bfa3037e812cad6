#!/usr/bin/env bash
# Bytes of RSS per key for small collections, FerrumKV and Redis side by
# side: for each scenario and each server, starts the server on a free
# 127.0.0.1 port, loads KEYS keys with `redis-cli --pipe`, and prints the
# growth of the process's RSS (and of INFO's used_memory) per key.
# Needs redis-server, redis-cli (apt-get install redis-server redis-tools)
# and python3.
#
#   scripts/mem-collections.sh target/release/ferrum-server
#   KEYS=20000 scripts/mem-collections.sh target/release/ferrum-server hash mix
#
# Scenarios (all by default): hash (10 fields, 8-byte names, 16-byte
# values), intset (8 small integers), strset (8 members of 10 bytes), zset
# (8 members of 10 bytes, integer scores), list (8 elements of 10 bytes),
# mix (KEYS hashes plus KEYS integer sets, per key of the 2*KEYS).
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '2,15p' "$0" >&2
    exit 2
fi
ferrum=$1
shift
scenarios=${*:-hash intset strset zset list mix}
KEYS=${KEYS:-100000}
REDIS=${REDIS:-redis-server}

gen() { # scenario -> RESP commands on stdout
    python3 - "$1" "$KEYS" <<'EOF'
import sys
kind, n = sys.argv[1], int(sys.argv[2])
out = sys.stdout.buffer
def cmd(*args):
    out.write(b"*%d\r\n" % len(args))
    for a in args:
        out.write(b"$%d\r\n%s\r\n" % (len(a), a))
def hashes():
    for i in range(n):
        args = [b"HSET", b"h:%010d" % i]
        for f in range(10):
            args += [b"field:%02d" % f, b"v%015d" % (i * 10 + f)]
        cmd(*args)
def intsets():
    for i in range(n):
        cmd(b"SADD", b"s:%010d" % i, *[b"%d" % (i % 1000 + j * 7) for j in range(8)])
if kind in ("hash", "mix"):
    hashes()
if kind in ("intset", "mix"):
    intsets()
if kind == "strset":
    for i in range(n):
        cmd(b"SADD", b"t:%010d" % i, *[b"member%04d" % ((i + j) % 10000) for j in range(8)])
if kind == "zset":
    for i in range(n):
        args = [b"ZADD", b"z:%010d" % i]
        for j in range(8):
            args += [b"%d" % (i % 100 + j), b"member%04d" % ((i + j) % 10000)]
        cmd(*args)
if kind == "list":
    for i in range(n):
        cmd(b"RPUSH", b"l:%010d" % i, *[b"item%06d" % ((i + j) % 100000) for j in range(8)])
EOF
}

measure() { # scenario binary -> "rss_per_key used_per_key keys encoding"
    local kind=$1 bin=$2 port pid rss0 used0 rss1 used1 keys enc
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$bin" --port "$port" --bind 127.0.0.1 --save '' >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 50); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    rss() { awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$pid/status"; }
    used() { redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '/^used_memory:/ { print $2 }'; }
    rss0=$(rss) used0=$(used)
    gen "$kind" | redis-cli -p "$port" --pipe >/dev/null
    keys=$(redis-cli -p "$port" dbsize)
    rss1=$(rss) used1=$(used)
    enc=$(redis-cli -p "$port" object encoding "$(redis-cli -p "$port" randomkey)")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    echo "$(((rss1 - rss0) / keys)) $(((used1 - used0) / keys)) $keys $enc"
}

printf '| %-7s | %-6s | %-10s | %-14s | %-10s | %-14s | %-11s |\n' scenario keys "Redis RSS" "Redis used_mem" "Ferrum RSS" "Ferrum used_mem" "RSS ratio"
printf '| %-7s | %-6s | %-10s | %-14s | %-10s | %-14s | %-11s |\n' --- --- --- --- --- --- ---
for kind in $scenarios; do
    read -r r_rss r_used keys r_enc < <(measure "$kind" "$REDIS")
    read -r f_rss f_used _ f_enc < <(measure "$kind" "$ferrum")
    ratio=$(python3 -c "print(f'{$f_rss / $r_rss:.2f}x')")
    printf '| %-7s | %-6s | %-10s | %-14s | %-10s | %-14s | %-11s |\n' "$kind" "$keys" "$r_rss ($r_enc)" "$r_used" "$f_rss ($f_enc)" "$f_used" "$ratio"
done
