#!/usr/bin/env bash
# Runs only the hit-ratio part of `cargo xtask bench`: the store-engine
# simulator, the live driver against FerrumKV (and Redis when installed),
# and the full-speed vs 1 ms spacing check. Writes the generated block of
# benches/hit-ratio.md, its charts and target/bench/<run>/results.json.
#
#   scripts/bench-hit-ratio.sh            # 1,000,000 requests per cell
#   scripts/bench-hit-ratio.sh --quick    # 150,000 per cell
#   scripts/bench-hit-ratio.sh --policies allkeys-lru,allkeys-ahe --patterns zipf,ttl
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo xtask bench --scenarios sim,live,spacing "$@"
