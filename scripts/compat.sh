#!/usr/bin/env bash
# Runs scripts/redis_py_compat.py (redis-py 8, RESP2 and RESP3) against a
# FerrumKV binary on a free loopback port, with and without requirepass.
# Usage: scripts/compat.sh [path/to/ferrum-server]   (default: target/debug)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/ferrum-server}
venv=${FERRUM_PYENV:-target/pyenv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet redis==8.1.0
fi
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
run_against() {
  local port pid status=0
  port=$(free_port)
  "$bin" --port "$port" "$@" >"target/compat-$port.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do
    "$venv/bin/python" -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break
    sleep 0.1
  done
  local pass=()
  [ "$#" -gt 0 ] && pass=(--password "$2")
  "$venv/bin/python" scripts/redis_py_compat.py --host 127.0.0.1 --port "$port" "${pass[@]}" || status=$?
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  return $status
}
run_against
run_against --requirepass s3cret
