#!/usr/bin/env python3
"""Peak RSS of a server while one client writes a whole pipeline before
reading a reply (issue 37): N x (GET big; ECHO <70,000 bytes>), about
100 MB each way at the default N, then reads and checks every reply.

    scripts/pipeline-rss.py [--pairs N] [--echo BYTES] [--value BYTES] \
        SERVER_BINARY [server args...]

Starts the binary on a free loopback port (`--port P --save ''` are
appended; both redis-server and ferrum-server take them), prints its RSS
before, its peak RSS (VmHWM) after, the growth, and the wall time, then
stops it by its PID. Run it for ferrum-server and redis-server in the
same session and compare the growth.
"""

import argparse
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def read_exact(sock, n):
    chunks, got = [], 0
    while got < n:
        c = sock.recv(min(n - got, 1 << 20))
        if not c:
            raise SystemExit(f"server closed after {got} of {n} bytes")
        chunks.append(c)
        got += len(c)
    return b"".join(chunks)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", type=int, default=1500)
    p.add_argument("--echo", type=int, default=70_000)
    p.add_argument("--value", type=int, default=100)
    p.add_argument("server", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if not a.server:
        p.error("name the server binary")
    port = free_port()
    proc = subprocess.Popen(
        a.server + ["--port", str(port), "--save", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=60)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise SystemExit("the server did not start")
        value = b"v" * a.value
        sock.sendall(command(b"SET", b"big", value))
        assert read_exact(sock, 5) == b"+OK\r\n"
        before = status_kb(proc.pid, "VmRSS")
        echo = bytes(b"a"[0] + i % 26 for i in range(a.echo))
        pair = command(b"GET", b"big") + command(b"ECHO", echo)
        start = time.monotonic()
        for i in range(0, a.pairs, 64):
            sock.sendall(pair * min(64, a.pairs - i))
        expected = b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(value), value, len(echo), echo)
        for i in range(a.pairs):
            if read_exact(sock, len(expected)) != expected:
                raise SystemExit(f"reply pair {i} differs")
        took = time.monotonic() - start
        peak = status_kb(proc.pid, "VmHWM")
        mb = a.pairs * len(pair) / 1e6
        print(
            f"{a.server[0]}: {a.pairs} pairs, {mb:.0f} MB each way, {took:.2f} s; "
            f"RSS before {before / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB, "
            f"growth {(peak - before) / 1024:.1f} MiB"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
