"""Replays one trace at one capacity through libCacheSim's algorithms, for
`cargo xtask bench --scenarios traces` (xtask/src/traces.rs), which runs it
in a virtual environment with the PyPI package `libcachesim` 0.3.5.

Usage: libcachesim_cells.py NAME ORACLE_GENERAL_FILE CAPACITY

`ferrum-bench to-libcachesim` writes the file (unit sizes, so the capacity
is a count of entries). Prints one JSON line per algorithm, with its hit
ratio and how long it took.

One cell per process, the algorithms always in the order below: libCacheSim's
Cacheus draws from a process-wide random generator, so its hit ratio
depends on what ran before it in the same process (lirs-ps at 150 entries:
27.51 alone, 32.54 after lirs-backf's cell).
"""

import json
import sys
import time

import libcachesim as lcs

# The algorithms of the reference table (../shared/traces/README.md), by
# the names the report prints. Belady is the offline optimum, not a
# contender for "best known".
ALGORITHMS = {
    "ARC": lcs.ARC,
    "LIRS": lcs.LIRS,
    "S3-FIFO": lcs.S3FIFO,
    "SIEVE": lcs.Sieve,
    "W-TinyLFU": lcs.WTinyLFU,
    "Cacheus": lcs.Cacheus,
    "2Q": lcs.TwoQ,
    "LRU": lcs.LRU,
    "LFU": lcs.LFU,
    "Belady": lcs.Belady,
}


def main():
    name, path, capacity = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for algorithm, make in ALGORITHMS.items():
        reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
        started = time.monotonic()
        # libCacheSim's default table size (2^24 slots): its W-TinyLFU's
        # hashes depend on it (a smaller table moves lirs-ps at 150 from
        # 34.12 to 34.40).
        miss_ratio, _ = make(capacity).process_trace(reader)
        cell = {
            "trace": name,
            "capacity": capacity,
            "algorithm": algorithm,
            "hit_ratio": 1.0 - miss_ratio,
            "requests": reader.n_total_req,
            "seconds": round(time.monotonic() - started, 3),
        }
        print(json.dumps(cell), flush=True)


if __name__ == "__main__":
    main()
