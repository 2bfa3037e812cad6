#!/usr/bin/env python3
"""What a background save costs while clients write (issue 38): BGSAVE's
wall time, GET/SET latency during the save against without one, and
memory during the save against before it.

    scripts/bgsave-cost.py [--keys N] [--size BYTES] [--rounds R] \
        NAME=BINARY [NAME=BINARY ...]

For each round and each server in turn (interleaved), the binary starts
on a free loopback port in a temporary `dir` (`--save ''
--enable-debug-command yes` appended; redis-server and ferrum-server both
take them) and is filled with DEBUG POPULATE (N keys of BYTES-byte
values). Then:

- without a save: redis-benchmark (`-t set,get -r N -d BYTES -c 20`) runs
  back to back for as long as the save below takes, and each run's p99
  is kept;
- with a save: BGSAVE, and the same runs until the save ends (its wall
  time from INFO persistence).

Latency is reported as the median of the runs' p99 (and the worst run's
p99). Memory is the server's resident set plus its children's private
pages, sampled every 20 ms: before the save and its peak during it (not
the server's PSS: reading /proc/PID/smaps_rollup walks the page tables
under the process's memory lock, which by itself tripled the server's
p99 when sampled every 20 ms). For Redis the fork shows as its
`latest_fork_usec` (the pause while forking) and its child's private
pages (what writes copied on write). Prints one line per server and round, then the medians
per server. Every server it starts is stopped by its PID.
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mem_kb(pid):
    """Memory of `pid` and its children, in KiB (0 once gone): the
    server's resident set (VmRSS, which costs the server nothing to read)
    plus the pages private to each child (a forked saver's pages that
    writes in the parent copied away from it). Reading a process's
    smaps walks its page tables under its memory lock, which stalls it;
    only the children's are read."""
    try:
        with open(f"/proc/{pid}/status") as f:
            total = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = [int(p) for p in f.read().split()]
    except (OSError, StopIteration):
        return 0
    for p in children:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith(("Private_Clean:", "Private_Dirty:")):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def cli(port, *args, timeout=600):
    out = subprocess.run(
        ["redis-cli", "-p", str(port), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return out.stdout


def info(port, section):
    fields = {}
    for line in cli(port, "INFO", section).splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k] = v.strip()
    return fields


def bench_p99(port, keys, size, requests):
    """One redis-benchmark run; the worst p99 of SET and GET, in ms."""
    out = subprocess.run(
        [
            "redis-benchmark", "-p", str(port), "-t", "set,get", "-r", str(keys),
            "-d", str(size), "-n", str(requests), "-c", "20", "--csv",
            "--precision", "3",
        ],
        capture_output=True, text=True, timeout=600, check=True,
    ).stdout
    p99 = []
    for line in out.splitlines()[1:]:
        cols = [c.strip('"') for c in line.split(",")]
        if len(cols) >= 7:
            p99.append(float(cols[6]))
    return max(p99)


def runs_while(port, keys, size, requests, going):
    """Benchmark runs back to back while `going()`; their p99s."""
    p99s = []
    while going() or not p99s:
        p99s.append(bench_p99(port, keys, size, requests))
    return p99s


def one(name, binary, args):
    port = free_port()
    workdir = tempfile.mkdtemp(prefix=f"bgsave-cost-{name}-")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir,
         "--save", "", "--enable-debug-command", "yes"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 20
        while True:
            try:
                if cli(port, "PING").strip() == "PONG":
                    break
            except subprocess.CalledProcessError:
                pass
            if time.time() > deadline:
                raise SystemExit(f"{name} did not start")
            time.sleep(0.05)
        cli(port, "DEBUG", "POPULATE", str(args.keys), "key", str(args.size))
        # One run first, so neither measurement pays for a cold start.
        bench_p99(port, args.keys, args.size, args.requests)
        time.sleep(1)
        before = mem_kb(proc.pid)

        # With a save: BGSAVE, benchmark runs until it ends, PSS sampled.
        peak = [before]
        done = threading.Event()

        def sample():
            while not done.is_set():
                if args.sample_ms:
                    peak[0] = max(peak[0], mem_kb(proc.pid))
                time.sleep((args.sample_ms or 100) / 1000)

        sampler = threading.Thread(target=sample)
        sampler.start()
        t0 = time.time()
        cli(port, "BGSAVE")
        state = {"running": True}

        def watch():
            while info(port, "persistence")["rdb_bgsave_in_progress"] == "1":
                time.sleep(0.02)
            state["wall"] = time.time() - t0
            state["running"] = False

        watcher = threading.Thread(target=watch)
        watcher.start()
        during = runs_while(port, args.keys, args.size, args.requests, lambda: state["running"])
        watcher.join()
        done.set()
        sampler.join()
        persistence = info(port, "persistence")
        if persistence["rdb_last_bgsave_status"] != "ok":
            raise SystemExit(f"{name}: BGSAVE failed")
        fork_us = int(info(port, "stats").get("latest_fork_usec", "0"))
        wall = state["wall"]

        # Without a save: as many runs, for as long.
        t1 = time.time()
        without = runs_while(port, args.keys, args.size, args.requests,
                             lambda: time.time() - t1 < wall)
        return {
            "wall_s": wall,
            "p99_ms": statistics.median(during),
            "p99_max_ms": max(during),
            "base_p99_ms": statistics.median(without),
            "base_p99_max_ms": max(without),
            "mem_before_mb": before / 1024,
            "mem_peak_mb": peak[0] / 1024,
            "fork_ms": fork_us / 1000,
            "runs": len(during),
            "file_mb": os.path.getsize(os.path.join(workdir, "dump.rdb")) / 1e6,
        }
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--keys", type=int, default=1_000_000)
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--requests", type=int, default=20_000,
                   help="requests per redis-benchmark run")
    p.add_argument("--sample-ms", type=int, default=20,
                   help="memory sampling interval, 0: none")
    p.add_argument("servers", nargs="+", help="NAME=BINARY")
    args = p.parse_args()
    servers = [s.split("=", 1) for s in args.servers]
    results = {name: [] for name, _ in servers}
    for r in range(args.rounds):
        for name, binary in servers:
            res = one(name, binary, args)
            results[name].append(res)
            print(f"round {r + 1} {name}: " + " ".join(
                f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in res.items()),
                flush=True)
    print("medians:")
    for name, rs in results.items():
        med = {k: statistics.median(x[k] for x in rs) for k in rs[0]}
        print(f"  {name}: BGSAVE {med['wall_s']:.2f} s; p99 during {med['p99_ms']:.2f} ms "
              f"vs {med['base_p99_ms']:.2f} ms without ({med['p99_ms'] / med['base_p99_ms']:.2f}x); "
              f"memory {med['mem_before_mb']:.0f} -> peak {med['mem_peak_mb']:.0f} MB "
              f"({med['mem_peak_mb'] / med['mem_before_mb']:.2f}x); fork {med['fork_ms']:.1f} ms; "
              f"file {med['file_mb']:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
