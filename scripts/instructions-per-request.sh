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
#
# FILL (redis-benchmark flags) runs a load first and zeroes the counters after
# it, so a row that reads what another writes is counted alone, on a full key:
#   FILL="-t zadd -n 100000 -P 16 -c 50 -r 100000" \
#       scripts/instructions-per-request.sh BIN -t zpopmin -n 100000 -P 16 -c 50 -r 100000
# (redis-benchmark's own `-t zpopmin` pops an empty key unless ZADD ran first;
# `-t lrange_100` runs its filling LPUSH as a second row, so count LRANGE as a
# plain command after a FILL of `-t lpush`: `... -n 4000 LRANGE mylist 0 99`).
#
# SERVER_ARGS adds server options, e.g. AHE against LRU under eviction:
#   SERVER_ARGS="--maxmemory 8mb --maxmemory-policy allkeys-ahe" \
#   FILL="-t set -r 2000000 -d 32 -n 400000 -P 16 -c 20" \
#       scripts/instructions-per-request.sh BIN -t set,get -r 2000000 -d 32 -n 200000 -P 16 -c 20
#
# VG_FLAGS adds callgrind options, e.g. VG_FLAGS="--cache-sim=yes --LL=1048576,16,64"
# for simulated cache misses (load-independent, as instructions are: a row can
# cost fewer instructions than Redis's and still more cycles).
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
# No save points and a directory of its own, for either server: a save at
# SIGTERM would be counted, and a file left behind loaded by the next run.
DIR=$(mktemp -d)
EXTRA=(--save "" --dir "$DIR")
case "$(basename "$BIN")" in
    redis-server*) EXTRA+=(--appendonly no) ;;
esac

read -r -a SERVER_EXTRA <<<"${SERVER_ARGS:-}"
EXTRA+=("${SERVER_EXTRA[@]}")
read -r -a VG_EXTRA <<<"${VG_FLAGS:-}"
valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" "${VG_EXTRA[@]}" \
    "$BIN" --bind 127.0.0.1 --port "$PORT" "${EXTRA[@]}" >"$OUT/server.log" 2>&1 &
VG=$!
trap 'kill "$VG" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
    if redis-cli -p "$PORT" ping >/dev/null 2>&1; then break; fi
    sleep 0.1
done
redis-cli -p "$PORT" ping >/dev/null

if [ -n "${FILL:-}" ]; then
    read -r -a FILL_FLAGS <<<"$FILL"
    redis-benchmark -h 127.0.0.1 -p "$PORT" "${FILL_FLAGS[@]}" -q >/dev/null
    callgrind_control -z "$VG" >/dev/null
fi

CSV=$(redis-benchmark -h 127.0.0.1 -p "$PORT" --csv "${FLAGS[@]}")
# Requests: -n per test times the tests that ran.
N=$(printf '%s\n' "${FLAGS[@]}" | awk 'p { print; exit } $0 == "-n" { p = 1 }')
TESTS=$(printf '%s\n' "$CSV" | tail -n +2 | grep -c .)
kill -TERM "$VG"
wait "$VG" || true
trap - EXIT
rm -rf "$DIR"

IR=$(grep -h '^summary:' "$OUT"/callgrind.out* | awk '{ s += $2 } END { print s }')
REQ=$((N * TESTS))
echo "server: $BIN"
echo "load: redis-benchmark ${FLAGS[*]} ($TESTS tests)"
echo "instructions: $IR"
echo "requests: $REQ"
awk -v ir="$IR" -v req="$REQ" 'BEGIN { printf "instructions per request: %.0f\n", ir / req }'
