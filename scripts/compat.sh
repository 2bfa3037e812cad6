#!/usr/bin/env bash
# Runs scripts/redis_py_compat.py (redis-py 8, RESP2 and RESP3) against a
# FerrumKV binary on a free loopback port: in plain, with requirepass, and
# over TLS with a client certificate (certificates made here with openssl).
# Usage: scripts/compat.sh [path/to/ferrum-server]   (default: target/debug)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/ferrum-server}
# shellcheck source=scripts/pyenv.sh
. scripts/pyenv.sh
# run_against [compat script args...] -- [server args...]
run_against() {
  local py=() port pid status=0
  while [ "$1" != "--" ]; do py+=("$1"); shift; done
  shift
  port=$(free_port)
  "$bin" --port "$port" --dir "$(mktemp -d)" "$@" >"target/compat-$port.log" 2>&1 &
  pid=$!
  wait_for_port "$port" || true
  "$venv/bin/python" scripts/redis_py_compat.py --host 127.0.0.1 --port "$port" --tcp-port "$port" "${py[@]}" || status=$?
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  return $status
}
# make_certs DIR: a CA, and a server (localhost, 127.0.0.1) and a client
# certificate it signed, as PEM files.
make_certs() {
  local d=$1 who
  openssl req -x509 -new -nodes -newkey rsa:2048 -days 2 -subj "/CN=FerrumKV compat CA" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$d/san.ext"
  for who in server client; do
    openssl req -new -nodes -newkey rsa:2048 -subj "/CN=$who" \
      -keyout "$d/$who.key" -out "$d/$who.csr" 2>/dev/null
    openssl x509 -req -in "$d/$who.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
      -days 2 -extfile "$d/san.ext" -out "$d/$who.crt" 2>/dev/null
  done
}
run_against --
run_against --password s3cret -- --requirepass s3cret
tls=$(mktemp -d)
trap 'rm -rf "$tls"' EXIT
make_certs "$tls"
tls_port=$(free_port)
run_against --port "$tls_port" --tls-ca "$tls/ca.crt" --tls-cert "$tls/client.crt" --tls-key "$tls/client.key" -- \
  --tls-port "$tls_port" --tls-cert-file "$tls/server.crt" --tls-key-file "$tls/server.key" \
  --tls-ca-cert-file "$tls/ca.crt"
