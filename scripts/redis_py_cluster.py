"""redis-py 8's RedisCluster against three FerrumKV nodes in cluster mode.

Usage: redis_py_cluster.py PORT PORT PORT   (nodes started empty, on 127.0.0.1)

Gives the nodes the three thirds of the slots and tells each of the others
(CLUSTER ADDSLOTSRANGE, CLUSTER MEET), then checks what a cluster client
relies on: keys spread over the nodes, MOVED followed after a slot moved
behind the client's back, hash-tagged multi-key commands, pipelines, and
a slot moved while a writer runs, with no key lost. Exits non-zero with
the failed check's message.
"""

import sys
import threading

import redis
from redis.cluster import ClusterNode, RedisCluster

HOST = "127.0.0.1"
THIRDS = [(0, 5460), (5461, 10922), (10923, 16383)]


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def form_cluster(ports):
    plain = [redis.Redis(host=HOST, port=p, decode_responses=True) for p in ports]
    for r, (a, b) in zip(plain, THIRDS):
        r.execute_command("CLUSTER", "ADDSLOTSRANGE", a, b)
    for r in plain:
        for p in ports:
            r.execute_command("CLUSTER", "MEET", HOST, p)
    return plain


def move_slot(plain, slot, src, dst):
    """As redis-cli --cluster reshard: IMPORTING, MIGRATING, MIGRATE ... KEYS, NODE everywhere."""
    src_id = plain[src].execute_command("CLUSTER", "MYID")
    dst_id = plain[dst].execute_command("CLUSTER", "MYID")
    dst_port = plain[dst].connection_pool.connection_kwargs["port"]
    plain[dst].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    plain[src].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    while True:
        keys = plain[src].execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10)
        if not keys:
            break
        plain[src].execute_command("MIGRATE", HOST, dst_port, "", 0, 5000, "KEYS", *keys)
    for i in [dst, src] + [i for i in range(len(plain)) if i not in (src, dst)]:
        plain[i].execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)


def current_owner(plain, ports, slot):
    """The index of the node serving `slot`, by CLUSTER SLOTS."""
    for start, end, (_, port, *_) , *_ in plain[0].execute_command("CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return ports.index(port)
    raise SystemExit(f"FAILED: slot {slot} is not served")


def owner(slot):
    return next(i for i, (a, b) in enumerate(THIRDS) if a <= slot <= b)


def main(ports):
    plain = form_cluster(ports)
    rc = RedisCluster(startup_nodes=[ClusterNode(HOST, ports[0])], decode_responses=True)
    check(len(rc.get_nodes()) == 3, "RedisCluster found the three nodes from one")

    for i in range(3000):
        rc.set(f"key:{i}", i)
    check(all(rc.get(f"key:{i}") == str(i) for i in range(3000)), "3000 keys read back")
    sizes = [r.dbsize() for r in plain]
    check(sum(sizes) == 3000 and min(sizes) > 800, f"keys spread over the nodes: {sizes}")

    check(rc.mset({"{user}:a": 1, "{user}:b": 2}), "MSET of hash-tagged keys")
    check(rc.mget("{user}:a", "{user}:b") == ["1", "2"], "MGET of hash-tagged keys")
    try:
        plain[0].mset({"a": 1, "b": 2})
        check(False, "MSET across slots is refused")
    except redis.ResponseError as e:
        check("don't hash to the same slot" in str(e), f"MSET across slots is refused: {e}")

    pipe = rc.pipeline()
    for i in range(100):
        pipe.incr(f"counter:{i}")
    check(pipe.execute() == [1] * 100, "a pipeline over every node")

    # Move a slot behind the client's back: its map is stale, MOVED is followed.
    slot = rc.keyslot("key:7")
    move_slot(plain, slot, owner(slot), (owner(slot) + 1) % 3)
    check(rc.get("key:7") == "7", "MOVED followed after a slot moved")

    # Move a slot while a writer runs through the client.
    slot = rc.keyslot("{load}")
    src = current_owner(plain, ports, slot)
    for i in range(500):
        rc.set(f"{{load}}old{i}", i)
    done = threading.Event()
    written = []
    errors = []

    def writer():
        w = RedisCluster(startup_nodes=[ClusterNode(HOST, ports[0])], decode_responses=True)
        n = 0
        try:
            while not done.is_set() or n < 200:
                w.set(f"{{load}}new{n}", n)
                n += 1
        except Exception as e:  # reported below, the thread must not die silently
            errors.append(repr(e))
        written.append(n)

    t = threading.Thread(target=writer)
    t.start()
    move_slot(plain, slot, src, (src + 1) % 3)
    done.set()
    t.join(timeout=120)
    check(not errors, f"the writer saw no error: {errors}")
    n = written[0]
    old_ok = all(rc.get(f"{{load}}old{i}") == str(i) for i in range(500))
    new_ok = all(rc.get(f"{{load}}new{i}") == str(i) for i in range(n))
    check(old_ok and new_ok, f"no key lost moving slot {slot} under load ({500 + n} keys)")
    left = plain[src].execute_command("CLUSTER", "COUNTKEYSINSLOT", slot)
    check(left == 0, "the old owner kept none of the slot's keys")


if __name__ == "__main__":
    main([int(p) for p in sys.argv[1:4]])
