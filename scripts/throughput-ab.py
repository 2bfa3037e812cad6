#!/usr/bin/env python3
"""Throughput of several server builds side by side: interleaved rounds of
redis-benchmark, medians of the per-round ratios against the first build.

`cargo xtask bench --scenarios throughput` compares FerrumKV with Redis.
This compares builds with each other: FerrumKV at two commits (did a change
regress?), or a build against Redis and another build in one run. Each
round starts every server fresh on a free 127.0.0.1 port and runs each test
against each server in turn, the order rotating from test to test and round
to round, so the runs a ratio compares are seconds apart. Besides ops/s it
reads each server's CPU time per request (/proc/PID/task/*/schedstat, the
scheduler's nanoseconds), which does not depend on how busy the client was.

    scripts/throughput-ab.py ROUNDS NAME=COMMAND [NAME=COMMAND ...]

COMMAND is a server binary, with options after commas
(`new=target/release/ferrum-server,--worker-threads,1`), or `redis` for
redis-server with persistence off. `--bind 127.0.0.1 --port P` is appended.
An environment variable for one side goes in a wrapper script.

Environment: TESTS (redis-benchmark `-t` names, default `set,get,lpush,hset`),
PIPELINE (`-P`, default 16), REQUESTS (`-n`, default 1000000), CLIENTS (`-c`,
default 50), KEYSPACE (`-r`, default none). Every server is stopped by PID
at the end of its round.
"""

import csv
import glob
import io
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ns(pid):
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended between the glob and the read
    return total


def start(command):
    program, *options = command.split(",")
    port = free_port()
    if program == "redis":
        argv = ["redis-server", "--save", "", "--appendonly", "no"]
    else:
        # No save points and a directory of its own: a save at SIGTERM
        # would be measured, and a file left behind loaded by the next run.
        argv = [program, "--save", "", "--dir", tempfile.mkdtemp(prefix="throughput-ab-")]
    argv += options + ["--bind", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{' '.join(argv)} exited at startup")
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit(f"{' '.join(argv)} did not listen within 20 s")


def bench(port, test, env):
    argv = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-t", test, "--csv",
            "-c", env["clients"], "-n", env["requests"], "-P", env["pipeline"]]
    if env["keyspace"]:
        argv += ["-r", env["keyspace"]]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    rows = list(csv.reader(io.StringIO(out)))
    return float(rows[1][1])


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    sides = [a.split("=", 1) for a in sys.argv[2:]]
    tests = os.environ.get("TESTS", "set,get,lpush,hset").split(",")
    env = {
        "pipeline": os.environ.get("PIPELINE", "16"),
        "requests": os.environ.get("REQUESTS", "1000000"),
        "clients": os.environ.get("CLIENTS", "50"),
        "keyspace": os.environ.get("KEYSPACE", ""),
    }
    # (test, side) -> [(ops/s, server CPU µs per request)], one per round.
    runs = {}
    for r in range(rounds):
        servers = []
        try:
            for _, command in sides:
                servers.append(start(command))
            for t, test in enumerate(tests):
                k = (r + t) % len(sides)
                for i in list(range(k, len(sides))) + list(range(k)):
                    proc, port = servers[i]
                    before = cpu_ns(proc.pid)
                    ops = bench(port, test, env)
                    cpu_us = (cpu_ns(proc.pid) - before) / 1000 / int(env["requests"])
                    runs.setdefault((test, sides[i][0]), []).append((ops, cpu_us))
        finally:
            for proc, _ in servers:
                proc.terminate()
                proc.wait()
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    base = sides[0][0]
    for test in tests:
        cells = [test]
        for name, _ in sides:
            got = runs[(test, name)]
            ops = statistics.median(o for o, _ in got)
            cpu = statistics.median(c for _, c in got)
            cells.append(f"{name} {ops:.0f} ops/s {cpu:.3f} us CPU")
        for name, _ in sides[1:]:
            pairs = list(zip(runs[(test, name)], runs[(test, base)]))
            ops = [a[0] / b[0] for a, b in pairs]
            cpu = [a[1] / b[1] for a, b in pairs]
            cells.append(f"{name}/{base} ops {statistics.median(ops):.2f} "
                         f"({min(ops):.2f}-{max(ops):.2f}) CPU {statistics.median(cpu):.2f}")
        print(" | ".join(cells))


if __name__ == "__main__":
    main()
