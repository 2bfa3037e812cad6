#!/usr/bin/env bash
# Three FerrumKV nodes in cluster mode on free loopback ports, then:
# redis-py 8's RedisCluster (scripts/redis_py_cluster.py: keys spread, MOVED
# followed, a slot moved under load with no key lost) and a bounded
# `redis-benchmark --cluster` against them. A missing redis-benchmark is
# skipped with the reason printed.
# Usage: scripts/cluster.sh [path/to/ferrum-server]   (default: target/debug)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/ferrum-server}
# shellcheck source=scripts/pyenv.sh
. scripts/pyenv.sh
dir=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# start_nodes: three empty nodes, their ports in $ports.
start_nodes() {
  local port i
  ports=()
  for i in 1 2 3; do
    port=$(free_port)
    mkdir -p "$dir/$port"
    "$bin" --port "$port" --bind 127.0.0.1 --cluster-enabled yes --dir "$dir/$port" \
      --cluster-config-file "$dir/$port/nodes.conf" >"$dir/$port/log" 2>&1 &
    pids+=($!)
    ports+=("$port")
  done
  for port in "${ports[@]}"; do
    wait_for_port "$port" || true
  done
}
start_nodes
echo "== redis-py RedisCluster against nodes on ${ports[*]}"
"$venv/bin/python" scripts/redis_py_cluster.py "${ports[@]}"
if ! command -v redis-benchmark >/dev/null; then
  echo "== redis-benchmark --cluster: skipped (redis-benchmark not found; Debian package redis-tools)"
  exit 0
fi
echo "== redis-benchmark --cluster against ${ports[0]} (20000 requests, 120 s at most)"
out=$(timeout 120 redis-benchmark --cluster -h 127.0.0.1 -p "${ports[0]}" -n 20000 -c 8 -r 10000 -t set,get -q 2>&1 | tr '\r' '\n')
echo "$out" | grep -E '^(SET|GET): [0-9.]+ requests per second' || { echo "$out"; echo "FAILED: redis-benchmark --cluster gave no result"; exit 1; }
"$venv/bin/python" - "${ports[@]}" <<'PY'
import sys, redis
sizes = [redis.Redis(port=int(p)).dbsize() for p in sys.argv[1:]]
if min(sizes) == 0:
    raise SystemExit(f"FAILED: redis-benchmark's keys did not reach every node: {sizes}")
print(f"ok: redis-benchmark's keys on every node: {sizes}")
PY
