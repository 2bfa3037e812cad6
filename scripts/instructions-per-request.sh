#!/usr/bin/env bash
# Instructions per request of a server binary under a fixed redis-benchmark
# load, counted by callgrind: repeatable on a loaded machine, where wall-clock
# throughput is not (issue 15). The count covers every thread of the server,
# start-up and shutdown included (a few million instructions, under 1% at the
# default load).
#
#   scripts/instructions-per-request.sh [SERVER_BINARY] [redis-benchmark flags]
#
# Defaults: target/release/ferrum-server and
# `-t get,set -n 200000 -P 16 -r 100000 -c 50`. Also works for redis-server:
#   scripts/instructions-per-request.sh "$(command -v redis-server)"
# Prints the total instructions, the requests and their quotient, and leaves
# callgrind's output in $OUT (default target/callgrind) for
#   callgrind_annotate --inclusive=yes $OUT/callgrind.out | head -60
set -euo pipefail

BIN=${1:-target/release/ferrum-server}
shift || true
FLAGS=("$@")
if [ ${#FLAGS[@]} -eq 0 ]; then
    FLAGS=(-t get,set -n 200000 -P 16 -r 100000 -c 50)
fi
OUT=${OUT:-target/callgrind}
mkdir -p "$OUT"
rm -f "$OUT/callgrind.out"*

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
EXTRA=()
case "$(basename "$BIN")" in
    redis-server*) EXTRA=(--save "" --appendonly no) ;;
esac

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" \
    "$BIN" --bind 127.0.0.1 --port "$PORT" "${EXTRA[@]}" >"$OUT/server.log" 2>&1 &
VG=$!
trap 'kill "$VG" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
    if redis-cli -p "$PORT" ping >/dev/null 2>&1; then break; fi
    sleep 0.1
done
redis-cli -p "$PORT" ping >/dev/null

CSV=$(redis-benchmark -h 127.0.0.1 -p "$PORT" "${FLAGS[@]}" --csv)
# Requests: -n per test times the tests that ran.
N=$(printf '%s\n' "${FLAGS[@]}" | awk 'p { print; exit } $0 == "-n" { p = 1 }')
TESTS=$(printf '%s\n' "$CSV" | tail -n +2 | grep -c .)
kill -TERM "$VG"
wait "$VG" || true
trap - EXIT

IR=$(grep -h '^summary:' "$OUT"/callgrind.out* | awk '{ s += $2 } END { print s }')
REQ=$((N * TESTS))
echo "server: $BIN"
echo "load: redis-benchmark ${FLAGS[*]} ($TESTS tests)"
echo "instructions: $IR"
echo "requests: $REQ"
awk -v ir="$IR" -v req="$REQ" 'BEGIN { printf "instructions per request: %.0f\n", ir / req }'
