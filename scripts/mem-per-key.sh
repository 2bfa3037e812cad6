#!/usr/bin/env bash
# Bytes of memory per key: starts a server on a free 127.0.0.1 port, loads
# KEYS keys (16-byte names, 32-byte values) with `redis-cli --pipe`, and
# prints the growth of the process's RSS and of INFO's used_memory, per key.
# Needs redis-cli (apt-get install redis-tools) and python3.
#
#   scripts/mem-per-key.sh target/release/ferrum-server --maxmemory-policy allkeys-ahe
#   scripts/mem-per-key.sh redis-server --maxmemory-policy allkeys-lru
#   KEYS=200000 scripts/mem-per-key.sh target/release/ferrum-server
#
# Whatever follows the binary is passed to it (both servers take redis.conf
# options as --name value).
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
KEYS=${KEYS:-1000000}
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$@" --port "$port" --bind 127.0.0.1 --save '' >/dev/null 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done
rss() { awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$pid/status"; }
used() { redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '/^used_memory:/ { print $2 }'; }
rss0=$(rss) used0=$(used)
python3 - "$KEYS" <<'EOF' | redis-cli -p "$port" --pipe >/dev/null
import sys
out, value = sys.stdout.buffer, b"v" * 32
for i in range(int(sys.argv[1])):
    key = b"key:%012d" % i
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$32\r\n%s\r\n" % (len(key), key, value))
EOF
keys=$(redis-cli -p "$port" dbsize)
rss1=$(rss) used1=$(used)
echo "$* : keys=$keys rss_per_key=$(((rss1 - rss0) / keys)) used_memory_per_key=$(((used1 - used0) / keys))"
