#!/usr/bin/env python3
"""redis-py compatibility checks for FerrumKV (expected results = Redis 7.0).

Usage:
    python3 scripts/redis_py_compat.py --host 127.0.0.1 --port 6379 \
        [--protocol 2|3] [--password P]

WARNING: the script runs FLUSHALL and CONFIG SET against the target server.
Only point it at a throwaway instance.

By default every check runs twice: once with a RESP2 client (protocol=2) and
once with a RESP3 client (protocol=3, redis-py sends HELLO 3 on connect).
Pass --protocol (repeatable) to choose. Prints one line per command family,
then "N passed, M failed"; the exit code is 0 only when nothing failed.
Requires redis-py (tested with redis==8.1.0).
"""

import argparse
import sys
import time
import traceback
import warnings

import redis

NOT_INT = "value is not an integer or out of range"
SYNTAX = "syntax error"
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


def arity(cmd):
    return "wrong number of arguments for '%s' command" % cmd


def invalid_expire(cmd):
    return "invalid expire time in '%s' command" % cmd


def same(a, b):
    """Equality that also distinguishes bool/int/float/str (True != 1 here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


# --------------------------------------------------------------------------
# Checker
# --------------------------------------------------------------------------


class Checker:
    def __init__(self):
        self.passed = 0
        self.failures = []
        self.family = None
        self.family_failures = 0

    def _fail(self, name, expected, got):
        self.failures.append((self.family, name, expected, got))
        self.family_failures += 1
        print("  FAIL [%s] %s: expected %r, got %r" % (self.family, name, expected, got))

    def _pass(self):
        self.passed += 1

    def eq(self, name, got, expected):
        if same(got, expected):
            self._pass()
        else:
            self._fail(name, expected, got)

    def ok(self, name, cond, detail=None):
        """Generic truth check; `detail` is what was observed."""
        if cond:
            self._pass()
        else:
            self._fail(name, "condition true", detail)

    def between(self, name, got, lo, hi):
        if isinstance(got, (int, float)) and not isinstance(got, bool) and lo <= got <= hi:
            self._pass()
        else:
            self._fail(name, "number in [%r, %r]" % (lo, hi), got)

    def err(self, name, fn, contains, exc=redis.RedisError):
        """fn() must raise `exc` whose message contains `contains`."""
        try:
            got = fn()
        except exc as e:
            if contains.lower() in str(e).lower():
                self._pass()
            else:
                self._fail(name, "error containing %r" % contains, "%s: %s" % (type(e).__name__, e))
            return
        except Exception as e:  # wrong exception type
            self._fail(name, "%s containing %r" % (exc.__name__, contains), "%s: %s" % (type(e).__name__, e))
            return
        self._fail(name, "error containing %r" % contains, got)

    def run_family(self, label, fn, *args):
        self.family = label
        self.family_failures = 0
        try:
            fn(self, *args)
        except Exception as e:  # a crash inside a family counts as one failure
            traceback.print_exc()
            self._fail("<family crashed>", "no exception", "%s: %s" % (type(e).__name__, e))
        print("%-32s %s" % (label, "ok" if self.family_failures == 0 else "FAILED (%d)" % self.family_failures))


# --------------------------------------------------------------------------
# Test context: client factory + raw access
# --------------------------------------------------------------------------


class Ctx:
    def __init__(self, host, port, protocol, password, tls=None):
        self.host, self.port, self.protocol, self.password = host, port, protocol, password
        # redis-py's ssl_* keyword arguments, or {} for a plain connection.
        self.tls = tls or {}
        # The plain port, which INFO reports as tcp_port (over TLS, `port` is
        # the TLS port).
        self.tcp_port = port
        self.r = self.client()

    def client(self, db=0, single=False, protocol=None):
        return redis.Redis(
            host=self.host,
            port=self.port,
            db=db,
            password=self.password,
            protocol=protocol or self.protocol,
            decode_responses=True,
            single_connection_client=single,
            **self.tls,
        )

    def raw(self, *args):
        """Send a command on a pooled connection of the main client and return
        the unparsed reply (no redis-py response callback). Error replies are
        raised as ResponseError (or a subclass)."""
        conn = self.r.connection_pool.get_connection()
        try:
            conn.send_command(*args)
            return conn.read_response()
        finally:
            self.r.connection_pool.release(conn)


def pairs_to_dict(v):
    if isinstance(v, dict):
        return v
    return dict(zip(v[::2], v[1::2]))


# --------------------------------------------------------------------------
# connection / server
# --------------------------------------------------------------------------


def check_ping_echo(c, ctx):
    r = ctx.r
    c.eq("PING", r.ping(), True)
    c.eq("PING raw", ctx.raw("PING"), "PONG")
    c.eq("PING msg", ctx.raw("PING", "hello world"), "hello world")
    c.err("PING 2 args", lambda: ctx.raw("PING", "a", "b"), arity("ping"))
    c.eq("ECHO", r.echo("héllo"), "héllo")
    c.eq("ECHO empty", r.echo(""), "")
    c.err("ECHO arity", lambda: ctx.raw("ECHO"), arity("echo"))
    c.err("ECHO arity 2", lambda: ctx.raw("ECHO", "a", "b"), arity("echo"))
    c.err("unknown command", lambda: ctx.raw("NOSUCHCMD", "x"), "unknown command 'NOSUCHCMD'")


def check_hello(c, ctx):
    for proto in (2, 3):
        cl = ctx.client(single=True, protocol=proto)
        args = ["HELLO", proto]
        if ctx.password:
            args += ["AUTH", "default", ctx.password]
        args += ["SETNAME", "hello-client-%d" % proto]
        h = pairs_to_dict(cl.execute_command(*args))
        c.eq("HELLO %d server" % proto, h.get("server"), "redis")
        c.eq("HELLO %d proto" % proto, h.get("proto"), proto)
        c.ok("HELLO %d version" % proto, str(h.get("version", "")).split(".")[0].isdigit(), h.get("version"))
        c.eq("HELLO %d mode" % proto, h.get("mode"), "standalone")
        c.eq("HELLO %d role" % proto, h.get("role"), "master")
        c.eq("HELLO %d modules" % proto, h.get("modules"), [])
        c.eq("HELLO %d id" % proto, h.get("id"), cl.client_id())
        c.eq("HELLO %d SETNAME" % proto, cl.client_getname(), "hello-client-%d" % proto)
        h0 = pairs_to_dict(cl.execute_command("HELLO"))
        c.eq("HELLO (no args) proto %d" % proto, h0.get("proto"), proto)
        c.err("HELLO 4", lambda: cl.execute_command("HELLO", 4), "NOPROTO")
        c.err("HELLO 1", lambda: cl.execute_command("HELLO", 1), "NOPROTO")
        c.err("HELLO abc", lambda: cl.execute_command("HELLO", "abc"), "Protocol version is not an integer or out of range")
        c.err("HELLO SETNAME bad", lambda: cl.execute_command("HELLO", proto, "SETNAME", "a b"),
              "Client names cannot contain spaces")
        c.err("HELLO bad option", lambda: cl.execute_command("HELLO", proto, "FOO"), "Syntax error in HELLO option 'FOO'")
        if ctx.password:
            # server replies "-WRONGPASS invalid username-password pair ..."; redis-py
            # strips the WRONGPASS code and raises AuthenticationError
            c.err("HELLO AUTH wrong", lambda: cl.execute_command("HELLO", proto, "AUTH", "default", "wrong-" + ctx.password),
                  "invalid username-password pair", exc=redis.AuthenticationError)
        cl.close()


def check_auth(c, ctx):
    if not ctx.password:
        print("  (AUTH checks skipped: no --password)")
        return
    cl = ctx.client(single=True)
    c.eq("AUTH", cl.execute_command("AUTH", ctx.password), True)
    c.eq("AUTH default user", cl.execute_command("AUTH", "default", ctx.password), True)
    c.err("AUTH wrong", lambda: cl.execute_command("AUTH", "wrong-" + ctx.password),
          "invalid username-password pair", exc=redis.AuthenticationError)
    c.err("AUTH arity", lambda: ctx.raw("AUTH", "a", "b", "c"), SYNTAX)
    cl.close()
    # an unauthenticated connection is refused
    # Redis 7.2+ already refuses redis-py's on-connect CLIENT SETINFO with
    # NOAUTH (7.0 answered "unknown subcommand" first), so the error may come
    # from connecting as well as from the command.
    def noauth_get():
        noauth = redis.Redis(host=ctx.host, port=ctx.port, protocol=2, decode_responses=True,
                             single_connection_client=True, **ctx.tls)
        try:
            return noauth.get("x")
        finally:
            noauth.close()
    c.err("NOAUTH", noauth_get, "Authentication required")


def check_select_swapdb(c, ctx):
    r = ctx.r
    cl = ctx.client(single=True)
    r.set("sel:k", "db0")
    c.eq("SELECT 1", cl.select(1), True)
    c.eq("SELECT 1 GET", cl.get("sel:k"), None)
    cl.set("sel:k", "db1")
    c.eq("SELECT 15", cl.select(15), True)
    c.eq("SELECT 0", cl.select(0), True)
    c.eq("SELECT 0 GET", cl.get("sel:k"), "db0")
    c.err("SELECT 16", lambda: cl.select(16), "DB index is out of range")
    c.err("SELECT -1", lambda: cl.select(-1), "DB index is out of range")
    c.err("SELECT abc", lambda: cl.execute_command("SELECT", "abc"), NOT_INT)
    c.err("SELECT arity", lambda: ctx.raw("SELECT"), arity("select"))
    cl.close()

    r1 = ctx.client(db=1)
    c.eq("SWAPDB 0 1", r.swapdb(0, 1), True)
    c.eq("SWAPDB db0 now", r.get("sel:k"), "db1")
    c.eq("SWAPDB db1 now", r1.get("sel:k"), "db0")
    c.eq("SWAPDB back", r.swapdb(1, 0), True)
    c.eq("SWAPDB restored", r.get("sel:k"), "db0")
    c.eq("SWAPDB same", r.swapdb(0, 0), True)
    c.err("SWAPDB 16", lambda: r.swapdb(0, 16), "DB index is out of range")
    c.err("SWAPDB abc", lambda: ctx.raw("SWAPDB", "abc", 1), "invalid first DB index")
    c.err("SWAPDB 2nd abc", lambda: ctx.raw("SWAPDB", 0, "abc"), "invalid second DB index")
    c.err("SWAPDB arity", lambda: ctx.raw("SWAPDB", 0), arity("swapdb"))
    r1.flushdb()
    r1.close()


def find_client(r, cid):
    return [x for x in r.client_list() if int(x["id"]) == cid]


def wait_gone(r, cid, timeout=0.5):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not find_client(r, cid):
            return True
        time.sleep(0.01)
    return not find_client(r, cid)


def check_client(c, ctx):
    r = ctx.r
    cl = ctx.client(single=True)
    cid = cl.client_id()
    c.ok("CLIENT ID int", isinstance(cid, int) and cid > 0, cid)
    c.eq("CLIENT GETNAME unset", cl.client_getname(), None)
    c.eq("CLIENT SETNAME", cl.client_setname("compat-a"), True)
    c.eq("CLIENT GETNAME", cl.client_getname(), "compat-a")
    c.err("CLIENT SETNAME space", lambda: cl.client_setname("a b"),
          "Client names cannot contain spaces, newlines or special characters")
    c.err("CLIENT SETNAME arity", lambda: cl.execute_command("CLIENT", "SETNAME"), arity("client|setname"))
    info = cl.client_info()
    c.eq("CLIENT INFO id", int(info["id"]), cid)
    c.eq("CLIENT INFO name", info["name"], "compat-a")
    c.eq("CLIENT INFO db", int(info["db"]), 0)
    c.eq("CLIENT INFO cmd", info["cmd"], "client|info")
    c.eq("CLIENT INFO resp", str(info["resp"]), str(ctx.protocol))
    entry = find_client(r, cid)
    c.eq("CLIENT LIST has client", len(entry), 1)
    if entry:
        c.eq("CLIENT LIST name", entry[0]["name"], "compat-a")
        c.ok("CLIENT LIST addr", ":" in entry[0]["addr"], entry[0]["addr"])
    only = r.client_list(client_id=[cid])
    c.eq("CLIENT LIST ID filter", [x["name"] for x in only], ["compat-a"])
    c.eq("CLIENT SETNAME empty clears", cl.client_setname(""), True)
    c.eq("CLIENT GETNAME cleared", cl.client_getname(), None)
    c.err("CLIENT bad subcommand", lambda: ctx.raw("CLIENT", "NOSUCH"), "unknown subcommand")

    # CLIENT KILL by ID
    c.eq("CLIENT KILL ID", r.client_kill_filter(_id=cid), 1)
    c.ok("CLIENT KILL gone", wait_gone(r, cid), "client %d still listed" % cid)
    c.eq("CLIENT KILL unknown ID", r.client_kill_filter(_id=2 ** 40), 0)
    c.err("CLIENT KILL bad ID", lambda: ctx.raw("CLIENT", "KILL", "ID", "abc"), "client-id should be greater than 0")
    c.err("CLIENT KILL old-style unknown", lambda: ctx.raw("CLIENT", "KILL", "1.2.3.4:5"), "No such client")
    cl.close()


def check_quit(c, ctx):
    r = ctx.r
    q = ctx.client(single=True)
    q.client_setname("compat-quit")
    qid = q.client_id()
    conn = q.connection  # the one connection of this single-connection client
    conn.send_command("QUIT")
    c.eq("QUIT", conn.read_response(), "OK")
    c.ok("QUIT closed connection", wait_gone(r, qid), "client %d still listed" % qid)
    q.close()


def check_command(c, ctx):
    r = ctx.r
    n = r.command_count()
    c.ok("COMMAND COUNT positive", isinstance(n, int) and n > 50, n)
    names = r.command_list()
    c.ok("COMMAND LIST has get", "get" in names, len(names))
    c.ok("COMMAND LIST >= COUNT", len(names) >= n, (len(names), n))
    c.ok("COMMAND LIST pattern", "get" in r.command_list(pattern="get*") and
         all(x.startswith("get") for x in r.command_list(pattern="get*")), r.command_list(pattern="get*"))
    infos = ctx.raw("COMMAND", "INFO", "get", "set", "nosuchcmd")
    c.eq("COMMAND INFO len", len(infos), 3)
    c.eq("COMMAND INFO get name", infos[0][0], "get")
    c.eq("COMMAND INFO get arity", infos[0][1], 2)
    c.eq("COMMAND INFO set arity", infos[1][1], -3)
    c.eq("COMMAND INFO get keys", infos[0][3:6], [1, 1, 1])
    c.eq("COMMAND INFO unknown", infos[2], None)
    parsed = r.execute_command("COMMAND", "INFO", "GET")
    c.eq("COMMAND INFO parsed arity", parsed["get"]["arity"], 2)
    docs = pairs_to_dict(ctx.raw("COMMAND", "DOCS", "get"))
    c.ok("COMMAND DOCS has get", "get" in docs, list(docs))
    if "get" in docs:
        d = pairs_to_dict(docs["get"])
        c.eq("COMMAND DOCS group", d.get("group"), "string")
        c.ok("COMMAND DOCS summary", bool(d.get("summary")), d.get("summary"))
    c.eq("COMMAND DOCS unknown", ctx.raw("COMMAND", "DOCS", "nosuchcmd"), {} if ctx.protocol == 3 else [])
    c.err("COMMAND bad subcommand", lambda: ctx.raw("COMMAND", "NOSUCH"), "unknown subcommand")


def check_info(c, ctx):
    r = ctx.r
    r.flushall()
    r.mset({"info:a": "1", "info:b": "2"})
    r.set("info:c", "3", ex=1000)
    server = r.info("server")
    ver = str(server.get("redis_version", ""))
    c.ok("INFO server redis_version", ver.count(".") == 2 and int(ver.split(".")[0]) >= 7, ver)
    c.ok("INFO server tcp_port", int(server.get("tcp_port", -1)) == ctx.tcp_port, server.get("tcp_port"))
    c.ok("INFO server only server section", "used_memory" not in server, sorted(server)[:5])
    clients = r.info("clients")
    c.ok("INFO connected_clients", isinstance(clients.get("connected_clients"), int)
         and clients["connected_clients"] >= 1, clients.get("connected_clients"))
    mem = r.info("memory")
    c.ok("INFO used_memory", isinstance(mem.get("used_memory"), int) and mem["used_memory"] > 0, mem.get("used_memory"))
    c.eq("INFO maxmemory_policy", mem.get("maxmemory_policy"), "noeviction")
    c.ok("INFO maxmemory", isinstance(mem.get("maxmemory"), int), mem.get("maxmemory"))
    stats = r.info("stats")
    for f in ("keyspace_hits", "keyspace_misses", "evicted_keys", "expired_keys", "total_commands_processed"):
        c.ok("INFO stats %s" % f, isinstance(stats.get(f), int) and stats[f] >= 0, stats.get(f))
    ks = r.info("keyspace")
    c.eq("INFO keyspace db0 keys", ks.get("db0", {}).get("keys"), 3)
    c.eq("INFO keyspace db0 expires", ks.get("db0", {}).get("expires"), 1)
    c.ok("INFO keyspace no empty dbs", "db1" not in ks, ks)
    both = r.info("server", "keyspace")
    c.ok("INFO multi-section", "redis_version" in both and "db0" in both, sorted(both)[:5])
    everything = r.info("everything")
    c.ok("INFO everything", "used_memory" in everything and "keyspace_hits" in everything, len(everything))
    c.eq("INFO unknown section", r.info("nosuchsection"), {})

    # CONFIG RESETSTAT + hit/miss accounting
    c.eq("CONFIG RESETSTAT", r.config_resetstat(), True)
    stats = r.info("stats")
    c.eq("RESETSTAT hits", stats["keyspace_hits"], 0)
    c.eq("RESETSTAT misses", stats["keyspace_misses"], 0)
    c.eq("RESETSTAT expired", stats["expired_keys"], 0)
    c.eq("RESETSTAT evicted", stats["evicted_keys"], 0)
    r.get("info:a")
    r.mget("info:b", "info:missing")
    r.get("info:missing2")
    stats = r.info("stats")
    c.eq("keyspace_hits after GETs", stats["keyspace_hits"], 2)
    c.eq("keyspace_misses after GETs", stats["keyspace_misses"], 2)
    # read-path lookups (EXISTS, TTL, TYPE, STRLEN...) count too; write-path
    # lookups (INCR, APPEND, SETRANGE, SET) do not
    r.exists("info:a", "info:missing")
    r.ttl("info:a")
    r.type("info:missing")
    r.incr("info:a")
    r.append("info:b", "x")
    r.set("info:b", "y")
    stats = r.info("stats")
    c.eq("keyspace_hits read-path only", stats["keyspace_hits"], 4)
    c.eq("keyspace_misses read-path only", stats["keyspace_misses"], 4)


def check_config(c, ctx):
    r = ctx.r
    cfg = r.config_get("maxmemory*")
    c.ok("CONFIG GET glob keys", all(k.startswith("maxmemory") for k in cfg), sorted(cfg))
    c.ok("CONFIG GET glob has maxmemory", "maxmemory" in cfg and "maxmemory-policy" in cfg, sorted(cfg))
    orig_mem, orig_pol = cfg["maxmemory"], cfg["maxmemory-policy"]
    c.eq("CONFIG GET exact", r.config_get("maxmemory-policy"), {"maxmemory-policy": orig_pol})
    c.eq("CONFIG GET no match", r.config_get("nosuchparam*"), {})
    multi = pairs_to_dict(ctx.raw("CONFIG", "GET", "maxmemory", "maxmemory-policy"))
    c.eq("CONFIG GET multiple params", sorted(multi), ["maxmemory", "maxmemory-policy"])
    try:
        c.eq("CONFIG SET maxmemory", r.config_set("maxmemory", "100mb"), True)
        c.eq("CONFIG GET maxmemory bytes", r.config_get("maxmemory"), {"maxmemory": "104857600"})
        c.eq("INFO maxmemory", r.info("memory")["maxmemory"], 104857600)
        c.eq("CONFIG SET policy", r.config_set("maxmemory-policy", "allkeys-lru"), True)
        c.eq("CONFIG GET policy", r.config_get("maxmemory-policy"), {"maxmemory-policy": "allkeys-lru"})
        c.eq("INFO maxmemory_policy", r.info("memory")["maxmemory_policy"], "allkeys-lru")
        c.eq("CONFIG SET policy case-insensitive", r.config_set("maxmemory-policy", "VOLATILE-TTL"), True)
        c.eq("CONFIG GET policy lowercased", r.config_get("maxmemory-policy"), {"maxmemory-policy": "volatile-ttl"})
        c.err("CONFIG SET bad policy", lambda: r.config_set("maxmemory-policy", "bogus"), "CONFIG SET failed")
        c.err("CONFIG SET bad maxmemory", lambda: r.config_set("maxmemory", "lots"), "CONFIG SET failed")
        c.err("CONFIG SET unknown", lambda: r.config_set("nosuchparam", "1"), "Unknown option or number of arguments for CONFIG SET - 'nosuchparam'")
        c.err("CONFIG SET arity", lambda: ctx.raw("CONFIG", "SET", "maxmemory"), arity("config|set"))
        c.err("CONFIG GET arity", lambda: ctx.raw("CONFIG", "GET"), arity("config|get"))
    finally:
        r.config_set("maxmemory", orig_mem)
        r.config_set("maxmemory-policy", orig_pol)
    c.eq("CONFIG restored", r.config_get("maxmemory"), {"maxmemory": orig_mem})
    c.eq("CONFIG restored policy", r.config_get("maxmemory-policy"), {"maxmemory-policy": orig_pol})


def check_db(c, ctx):
    r = ctx.r
    r1 = ctx.client(db=1)
    c.eq("FLUSHALL", r.flushall(), True)
    c.eq("DBSIZE empty", r.dbsize(), 0)
    r.mset({"db:a": "1", "db:b": "2", "db:c": "3"})
    r1.set("db:x", "1")
    c.eq("DBSIZE", r.dbsize(), 3)
    c.eq("DBSIZE db1", r1.dbsize(), 1)
    c.err("DBSIZE arity", lambda: ctx.raw("DBSIZE", "x"), arity("dbsize"))
    c.eq("FLUSHDB", r.flushdb(), True)
    c.eq("FLUSHDB only current", (r.dbsize(), r1.dbsize()), (0, 1))
    r.set("db:a", "1")
    c.eq("FLUSHDB ASYNC", r.flushdb(asynchronous=True), True)
    c.eq("FLUSHDB ASYNC empty", r.dbsize(), 0)
    c.eq("FLUSHDB SYNC", ctx.raw("FLUSHDB", "SYNC"), "OK")
    c.err("FLUSHDB bad arg", lambda: ctx.raw("FLUSHDB", "NOW"), SYNTAX)
    r.set("db:a", "1")
    c.eq("FLUSHALL ASYNC", r.flushall(asynchronous=True), True)
    c.eq("FLUSHALL all dbs", (r.dbsize(), r1.dbsize()), (0, 0))
    c.eq("FLUSHALL SYNC", ctx.raw("FLUSHALL", "SYNC"), "OK")
    c.err("FLUSHALL bad arg", lambda: ctx.raw("FLUSHALL", "NOW"), SYNTAX)
    t = r.time()
    c.ok("TIME tuple", isinstance(t, tuple) and len(t) == 2 and all(isinstance(x, int) for x in t), t)
    c.ok("TIME usec range", 0 <= t[1] < 1000000, t)
    c.ok("TIME close to local clock", abs(t[0] + t[1] / 1e6 - time.time()) < 5, (t, time.time()))
    raw_t = ctx.raw("TIME")
    c.ok("TIME raw strings", isinstance(raw_t, list) and len(raw_t) == 2 and raw_t[0].isdigit(), raw_t)
    c.err("TIME arity", lambda: ctx.raw("TIME", "x"), arity("time"))
    r1.close()


# --------------------------------------------------------------------------
# strings
# --------------------------------------------------------------------------


def check_get_set(c, ctx):
    r = ctx.r
    r.flushdb()
    c.eq("GET missing", r.get("s:missing"), None)
    c.eq("SET", r.set("s:k", "v1"), True)
    c.eq("GET", r.get("s:k"), "v1")
    c.eq("SET empty value", r.set("s:empty", ""), True)
    c.eq("GET empty value", r.get("s:empty"), "")
    c.eq("SET binary-ish", r.set("s:uni", "ключ\n\x00x"), True)
    c.eq("GET binary-ish", r.get("s:uni"), "ключ\n\x00x")
    c.err("GET arity", lambda: ctx.raw("GET"), arity("get"))
    c.err("GET arity 2", lambda: ctx.raw("GET", "a", "b"), arity("get"))
    c.err("SET arity", lambda: ctx.raw("SET", "a"), arity("set"))

    # EX / PX / EXAT / PXAT
    c.eq("SET EX", r.set("s:ex", "v", ex=100), True)
    c.between("SET EX ttl", r.ttl("s:ex"), 99, 100)
    c.eq("SET PX", r.set("s:px", "v", px=100000), True)
    c.between("SET PX pttl", r.pttl("s:px"), 99000, 100000)
    now = int(time.time())
    c.eq("SET EXAT", r.set("s:exat", "v", exat=now + 200), True)
    c.eq("SET EXAT expiretime", r.expiretime("s:exat"), now + 200)
    now_ms = int(time.time() * 1000)
    c.eq("SET PXAT", r.set("s:pxat", "v", pxat=now_ms + 300000), True)
    c.eq("SET PXAT pexpiretime", r.pexpiretime("s:pxat"), now_ms + 300000)
    c.eq("SET plain clears TTL", (r.set("s:ex", "v2"), r.ttl("s:ex")), (True, -1))

    # NX / XX
    c.eq("SET NX existing", r.set("s:k", "v2", nx=True), None)
    c.eq("SET NX existing unchanged", r.get("s:k"), "v1")
    c.eq("SET NX new", r.set("s:nx", "v", nx=True), True)
    c.eq("SET XX missing", r.set("s:xx", "v", xx=True), None)
    c.eq("SET XX missing not created", r.exists("s:xx"), 0)
    c.eq("SET XX existing", r.set("s:k", "v2", xx=True), True)
    c.eq("SET XX existing value", r.get("s:k"), "v2")
    c.eq("SET NX raw nil", ctx.raw("SET", "s:k", "x", "NX"), None)

    # KEEPTTL
    r.set("s:kt", "v", ex=500)
    c.eq("SET KEEPTTL", r.set("s:kt", "v2", keepttl=True), True)
    c.between("SET KEEPTTL ttl kept", r.ttl("s:kt"), 499, 500)
    c.eq("SET KEEPTTL value", r.get("s:kt"), "v2")
    c.eq("SET KEEPTTL no ttl", (r.set("s:k", "v3", keepttl=True), r.ttl("s:k")), (True, -1))

    # GET option
    c.eq("SET GET old", r.set("s:k", "v4", get=True), "v3")
    c.eq("SET GET new value", r.get("s:k"), "v4")
    c.eq("SET GET missing", r.set("s:g", "v", get=True), None)
    c.eq("SET GET missing created", r.get("s:g"), "v")
    c.eq("SET NX GET existing", r.set("s:k", "zz", nx=True, get=True), "v4")
    c.eq("SET NX GET existing unchanged", r.get("s:k"), "v4")
    c.eq("SET NX GET missing", r.set("s:nxg", "new", nx=True, get=True), None)
    c.eq("SET NX GET missing set", r.get("s:nxg"), "new")
    c.eq("SET XX GET missing", r.set("s:xxg", "new", xx=True, get=True), None)
    c.eq("SET XX GET missing not set", r.exists("s:xxg"), 0)
    c.eq("SET XX GET existing", r.set("s:nxg", "newer", xx=True, get=True), "new")
    c.eq("SET GET EX", (r.set("s:nxg", "x", get=True, ex=50), r.ttl("s:nxg")), ("newer", 50))
    c.eq("SET options case-insensitive", ctx.raw("SET", "s:ci", "v", "ex", 10, "nx"), "OK")

    # error cases
    c.err("SET NX XX", lambda: ctx.raw("SET", "s:k", "v", "NX", "XX"), SYNTAX)
    c.err("SET EX PX", lambda: ctx.raw("SET", "s:k", "v", "EX", 10, "PX", 100), SYNTAX)
    c.err("SET EX EXAT", lambda: ctx.raw("SET", "s:k", "v", "EX", 10, "EXAT", now + 10), SYNTAX)
    c.err("SET KEEPTTL EX", lambda: ctx.raw("SET", "s:k", "v", "KEEPTTL", "EX", 10), SYNTAX)
    c.err("SET EX missing value", lambda: ctx.raw("SET", "s:k", "v", "EX"), SYNTAX)
    c.err("SET unknown option", lambda: ctx.raw("SET", "s:k", "v", "FOO"), SYNTAX)
    c.err("SET EX 0", lambda: ctx.raw("SET", "s:k", "v", "EX", 0), invalid_expire("set"))
    c.err("SET EX -1", lambda: ctx.raw("SET", "s:k", "v", "EX", -1), invalid_expire("set"))
    c.err("SET PX 0", lambda: ctx.raw("SET", "s:k", "v", "PX", 0), invalid_expire("set"))
    c.err("SET EXAT 0", lambda: ctx.raw("SET", "s:k", "v", "EXAT", 0), invalid_expire("set"))
    c.err("SET EX overflow", lambda: ctx.raw("SET", "s:k", "v", "EX", LLONG_MAX), invalid_expire("set"))
    c.err("SET PX overflow", lambda: ctx.raw("SET", "s:k", "v", "PX", LLONG_MAX), invalid_expire("set"))
    c.err("SET EX not int", lambda: ctx.raw("SET", "s:k", "v", "EX", "abc"), NOT_INT)
    c.err("SET EX float", lambda: ctx.raw("SET", "s:k", "v", "EX", "1.5"), NOT_INT)
    c.eq("SET errors left value", r.get("s:k"), "v4")


def check_set_variants(c, ctx):
    r = ctx.r
    r.flushdb()
    c.eq("SETNX new", r.setnx("sv:a", "1"), True)
    c.eq("SETNX existing", r.setnx("sv:a", "2"), False)
    c.eq("SETNX raw", ctx.raw("SETNX", "sv:a", "3"), 0)
    c.eq("SETNX value", r.get("sv:a"), "1")
    c.err("SETNX arity", lambda: ctx.raw("SETNX", "sv:a"), arity("setnx"))

    c.eq("SETEX", r.setex("sv:ex", 100, "v"), True)
    c.between("SETEX ttl", r.ttl("sv:ex"), 99, 100)
    c.eq("SETEX value", r.get("sv:ex"), "v")
    c.err("SETEX 0", lambda: ctx.raw("SETEX", "sv:ex", 0, "v"), invalid_expire("setex"))
    c.err("SETEX -5", lambda: ctx.raw("SETEX", "sv:ex", -5, "v"), invalid_expire("setex"))
    c.err("SETEX not int", lambda: ctx.raw("SETEX", "sv:ex", "x", "v"), NOT_INT)
    c.err("SETEX overflow", lambda: ctx.raw("SETEX", "sv:ex", LLONG_MAX, "v"), invalid_expire("setex"))
    c.err("SETEX arity", lambda: ctx.raw("SETEX", "sv:ex", 10), arity("setex"))

    c.eq("PSETEX", r.psetex("sv:px", 100000, "v"), True)
    c.between("PSETEX pttl", r.pttl("sv:px"), 99000, 100000)
    c.err("PSETEX 0", lambda: ctx.raw("PSETEX", "sv:px", 0, "v"), invalid_expire("psetex"))
    c.err("PSETEX not int", lambda: ctx.raw("PSETEX", "sv:px", "1.5", "v"), NOT_INT)

    c.eq("MSET", r.mset({"sv:m1": "a", "sv:m2": "b", "sv:m3": "c"}), True)
    c.eq("MGET", r.mget("sv:m1", "sv:missing", "sv:m3"), ["a", None, "c"])
    c.eq("MGET single", r.mget("sv:m2"), ["b"])
    c.eq("MSET dup keys last wins", (ctx.raw("MSET", "sv:d", "1", "sv:d", "2"), r.get("sv:d")), ("OK", "2"))
    c.err("MSET odd args", lambda: ctx.raw("MSET", "sv:m1", "a", "sv:m2"), arity("mset"))
    c.err("MSET arity", lambda: ctx.raw("MSET"), arity("mset"))
    c.err("MGET arity", lambda: ctx.raw("MGET"), arity("mget"))
    r.setex("sv:m1", 100, "a")
    r.mset({"sv:m1": "A"})
    c.eq("MSET clears TTL", r.ttl("sv:m1"), -1)

    c.eq("MSETNX all new", r.msetnx({"sv:n1": "1", "sv:n2": "2"}), True)
    c.eq("MSETNX one exists", r.msetnx({"sv:n2": "x", "sv:n3": "3"}), False)
    c.eq("MSETNX nothing set", (r.get("sv:n2"), r.exists("sv:n3")), ("2", 0))
    c.eq("MSETNX raw", ctx.raw("MSETNX", "sv:n1", "z"), 0)
    c.err("MSETNX odd", lambda: ctx.raw("MSETNX", "sv:n9", "1", "sv:n8"), arity("msetnx"))

    r.setex("sv:gs", 100, "old")
    c.eq("GETSET", r.getset("sv:gs", "new"), "old")
    c.eq("GETSET value", r.get("sv:gs"), "new")
    c.eq("GETSET clears TTL", r.ttl("sv:gs"), -1)
    c.eq("GETSET missing", r.getset("sv:gs2", "v"), None)
    c.eq("GETSET missing created", r.get("sv:gs2"), "v")
    c.err("GETSET arity", lambda: ctx.raw("GETSET", "sv:gs"), arity("getset"))

    c.eq("GETDEL", r.getdel("sv:gs"), "new")
    c.eq("GETDEL deleted", r.exists("sv:gs"), 0)
    c.eq("GETDEL missing", r.getdel("sv:gs"), None)
    c.err("GETDEL arity", lambda: ctx.raw("GETDEL"), arity("getdel"))


def check_getex(c, ctx):
    r = ctx.r
    r.flushdb()
    r.set("gx:k", "v")
    c.eq("GETEX plain", r.getex("gx:k"), "v")
    c.eq("GETEX plain no ttl", r.ttl("gx:k"), -1)
    c.eq("GETEX EX", r.getex("gx:k", ex=100), "v")
    c.between("GETEX EX ttl", r.ttl("gx:k"), 99, 100)
    c.eq("GETEX PX", r.getex("gx:k", px=200000), "v")
    c.between("GETEX PX pttl", r.pttl("gx:k"), 199000, 200000)
    now = int(time.time())
    c.eq("GETEX EXAT", r.getex("gx:k", exat=now + 300), "v")
    c.eq("GETEX EXAT expiretime", r.expiretime("gx:k"), now + 300)
    now_ms = int(time.time() * 1000)
    c.eq("GETEX PXAT", r.getex("gx:k", pxat=now_ms + 400000), "v")
    c.eq("GETEX PXAT pexpiretime", r.pexpiretime("gx:k"), now_ms + 400000)
    c.eq("GETEX PERSIST", r.getex("gx:k", persist=True), "v")
    c.eq("GETEX PERSIST ttl", r.ttl("gx:k"), -1)
    c.eq("GETEX missing", r.getex("gx:missing", ex=10), None)
    c.eq("GETEX missing not created", r.exists("gx:missing"), 0)
    c.err("GETEX EX 0", lambda: ctx.raw("GETEX", "gx:k", "EX", 0), invalid_expire("getex"))
    c.err("GETEX PX -1", lambda: ctx.raw("GETEX", "gx:k", "PX", -1), invalid_expire("getex"))
    c.err("GETEX EX overflow", lambda: ctx.raw("GETEX", "gx:k", "EX", LLONG_MAX), invalid_expire("getex"))
    c.err("GETEX EX not int", lambda: ctx.raw("GETEX", "gx:k", "EX", "x"), NOT_INT)
    c.err("GETEX EX PERSIST", lambda: ctx.raw("GETEX", "gx:k", "EX", 10, "PERSIST"), SYNTAX)
    c.err("GETEX EX PX", lambda: ctx.raw("GETEX", "gx:k", "EX", 10, "PX", 10), SYNTAX)
    c.err("GETEX bad option", lambda: ctx.raw("GETEX", "gx:k", "FOO"), SYNTAX)
    c.err("GETEX EX no value", lambda: ctx.raw("GETEX", "gx:k", "EX"), SYNTAX)
    c.err("GETEX arity", lambda: ctx.raw("GETEX"), arity("getex"))
    c.eq("GETEX errors left no ttl", r.ttl("gx:k"), -1)


def check_append_strlen_range(c, ctx):
    r = ctx.r
    r.flushdb()
    c.eq("APPEND new", r.append("ap:k", "Hello"), 5)
    c.eq("APPEND existing", r.append("ap:k", " World"), 11)
    c.eq("APPEND value", r.get("ap:k"), "Hello World")
    c.eq("APPEND empty", r.append("ap:k", ""), 11)
    c.eq("APPEND empty to missing", (r.append("ap:e", ""), r.exists("ap:e")), (0, 1))
    r.set("ap:n", 12)
    c.eq("APPEND to int", (r.append("ap:n", "3"), r.get("ap:n")), (3, "123"))
    r.setex("ap:t", 100, "x")
    r.append("ap:t", "y")
    c.between("APPEND keeps TTL", r.ttl("ap:t"), 99, 100)
    c.err("APPEND arity", lambda: ctx.raw("APPEND", "ap:k"), arity("append"))

    c.eq("STRLEN", r.strlen("ap:k"), 11)
    c.eq("STRLEN missing", r.strlen("ap:missing"), 0)
    r.set("ap:u", "é")
    c.eq("STRLEN bytes", r.strlen("ap:u"), 2)
    r.set("ap:i", 12345)
    c.eq("STRLEN int", r.strlen("ap:i"), 5)
    c.err("STRLEN arity", lambda: ctx.raw("STRLEN"), arity("strlen"))

    r.set("ap:r", "This is a string")
    c.eq("GETRANGE 0 3", r.getrange("ap:r", 0, 3), "This")
    c.eq("GETRANGE -3 -1", r.getrange("ap:r", -3, -1), "ing")
    c.eq("GETRANGE 0 -1", r.getrange("ap:r", 0, -1), "This is a string")
    c.eq("GETRANGE 10 100", r.getrange("ap:r", 10, 100), "string")
    c.eq("GETRANGE start>end", r.getrange("ap:r", 5, 3), "")
    c.eq("GETRANGE out of range", r.getrange("ap:r", 100, 200), "")
    c.eq("GETRANGE -100 3", r.getrange("ap:r", -100, 3), "This")
    c.eq("GETRANGE missing", r.getrange("ap:missing", 0, -1), "")
    c.eq("GETRANGE int value", r.getrange("ap:i", 1, 2), "23")
    c.err("GETRANGE not int", lambda: ctx.raw("GETRANGE", "ap:r", "a", 1), NOT_INT)
    c.err("GETRANGE arity", lambda: ctx.raw("GETRANGE", "ap:r", 0), arity("getrange"))

    r.set("ap:s", "Hello World")
    c.eq("SETRANGE", r.setrange("ap:s", 6, "Redis"), 11)
    c.eq("SETRANGE value", r.get("ap:s"), "Hello Redis")
    c.eq("SETRANGE extend", r.setrange("ap:s", 11, "!!"), 13)
    c.eq("SETRANGE pad", r.setrange("ap:p", 5, "x"), 6)
    c.eq("SETRANGE pad zeros", r.get("ap:p"), "\x00" * 5 + "x")
    c.eq("SETRANGE empty on missing", r.setrange("ap:none", 10, ""), 0)
    c.eq("SETRANGE empty not created", r.exists("ap:none"), 0)
    c.eq("SETRANGE empty on existing", r.setrange("ap:s", 100, ""), 13)
    c.eq("SETRANGE on int", (r.setrange("ap:i", 0, "9"), r.get("ap:i")), (5, "92345"))
    c.err("SETRANGE negative", lambda: ctx.raw("SETRANGE", "ap:s", -1, "x"), "offset is out of range")
    c.err("SETRANGE too big", lambda: ctx.raw("SETRANGE", "ap:s", 512 * 1024 * 1024, "x"),
          "string exceeds maximum allowed size")
    c.err("SETRANGE not int", lambda: ctx.raw("SETRANGE", "ap:s", "x", "y"), NOT_INT)
    c.err("SETRANGE arity", lambda: ctx.raw("SETRANGE", "ap:s", 1), arity("setrange"))


def check_incr_decr(c, ctx):
    r = ctx.r
    r.flushdb()
    c.eq("INCR missing", r.incr("n:a"), 1)
    c.eq("INCR", r.incr("n:a"), 2)
    c.eq("INCRBY", r.incrby("n:a", 10), 12)
    c.eq("INCRBY negative", r.incrby("n:a", -20), -8)
    c.eq("DECR", r.decr("n:a"), -9)
    c.eq("DECRBY", r.decrby("n:a", 1), -10)
    c.eq("DECRBY negative", r.decrby("n:a", -15), 5)
    c.eq("DECR missing", r.decr("n:b"), -1)
    c.eq("DECRBY missing", r.decrby("n:c", 5), -5)
    c.eq("GET after INCR", r.get("n:a"), "5")
    r.setex("n:t", 100, "1")
    r.incr("n:t")
    c.between("INCR keeps TTL", r.ttl("n:t"), 99, 100)
    r.set("n:neg", "-0")
    c.err("INCR on '-0' (not canonical)", lambda: r.incr("n:neg"), NOT_INT)

    for bad in ("abc", "1.5", " 1", "1 ", "", "0x10", "99999999999999999999"):
        r.set("n:bad", bad)
        c.err("INCR %r" % bad, lambda: r.incr("n:bad"), NOT_INT)
    c.eq("INCR error left value", r.get("n:bad"), "99999999999999999999")
    c.err("INCRBY not int", lambda: ctx.raw("INCRBY", "n:a", "x"), NOT_INT)
    c.err("INCRBY float", lambda: ctx.raw("INCRBY", "n:a", "1.0"), NOT_INT)
    c.err("DECRBY not int", lambda: ctx.raw("DECRBY", "n:a", "x"), NOT_INT)

    r.set("n:max", LLONG_MAX)
    c.err("INCR overflow", lambda: r.incr("n:max"), "increment or decrement would overflow")
    c.err("INCRBY overflow", lambda: r.incrby("n:a", LLONG_MAX), "increment or decrement would overflow")
    r.set("n:min", LLONG_MIN)
    c.err("DECR overflow", lambda: r.decr("n:min"), "increment or decrement would overflow")
    c.eq("DECRBY to LLONG_MIN", (r.set("n:z", -1), r.decrby("n:z", LLONG_MAX)), (True, LLONG_MIN))
    c.err("DECRBY LLONG_MIN", lambda: ctx.raw("DECRBY", "n:a", LLONG_MIN), "decrement would overflow")
    c.eq("INCRBY LLONG_MIN ok", (r.set("n:y", 0), r.incrby("n:y", LLONG_MIN)), (True, LLONG_MIN))
    c.err("INCR arity", lambda: ctx.raw("INCR"), arity("incr"))
    c.err("INCRBY arity", lambda: ctx.raw("INCRBY", "n:a"), arity("incrby"))
    c.err("DECR arity", lambda: ctx.raw("DECR", "a", "b"), arity("decr"))

    # INCRBYFLOAT (raw replies are bulk strings in both protocols)
    r.set("f:a", "10.50")
    c.eq("INCRBYFLOAT", ctx.raw("INCRBYFLOAT", "f:a", "0.1"), "10.6")
    c.eq("INCRBYFLOAT negative", ctx.raw("INCRBYFLOAT", "f:a", "-5"), "5.6")
    r.set("f:b", "5.0e3")
    c.eq("INCRBYFLOAT exp", ctx.raw("INCRBYFLOAT", "f:b", "2.0e2"), "5200")
    c.eq("INCRBYFLOAT stored", r.get("f:b"), "5200")
    c.eq("INCRBYFLOAT missing", ctx.raw("INCRBYFLOAT", "f:new", "3"), "3")
    c.eq("INCRBYFLOAT on int", (r.set("f:i", 3), ctx.raw("INCRBYFLOAT", "f:i", "1.5")), (True, "4.5"))
    c.eq("INCRBYFLOAT redis-py float", r.incrbyfloat("f:i", 0.5), 5.0)
    c.eq("INCRBYFLOAT integral result", r.get("f:i"), "5")
    r.set("f:bad", "abc")
    c.err("INCRBYFLOAT bad value", lambda: r.incrbyfloat("f:bad", 1), "value is not a valid float")
    c.err("INCRBYFLOAT bad incr", lambda: ctx.raw("INCRBYFLOAT", "f:a", "abc"), "value is not a valid float")
    c.err("INCRBYFLOAT inf", lambda: ctx.raw("INCRBYFLOAT", "f:a", "inf"), "increment would produce NaN or Infinity")
    c.err("INCRBYFLOAT nan", lambda: ctx.raw("INCRBYFLOAT", "f:a", "nan"), "value is not a valid float")
    c.err("INCRBYFLOAT arity", lambda: ctx.raw("INCRBYFLOAT", "f:a"), arity("incrbyfloat"))
    r.set("f:s", "1.5")
    c.err("INCR on float string", lambda: r.incr("f:s"), NOT_INT)


# --------------------------------------------------------------------------
# keys
# --------------------------------------------------------------------------


def check_del_exists_type(c, ctx):
    r = ctx.r
    r.flushdb()
    r.mset({"k:a": "1", "k:b": "2", "k:c": "3", "k:d": "4"})
    c.eq("EXISTS", r.exists("k:a"), 1)
    c.eq("EXISTS multi", r.exists("k:a", "k:b", "k:missing"), 2)
    c.eq("EXISTS duplicates counted", r.exists("k:a", "k:a", "k:a"), 3)
    c.eq("EXISTS missing", r.exists("k:missing"), 0)
    c.err("EXISTS arity", lambda: ctx.raw("EXISTS"), arity("exists"))
    c.eq("DEL", r.delete("k:a"), 1)
    c.eq("DEL missing", r.delete("k:a"), 0)
    c.eq("DEL multi with dup", r.delete("k:b", "k:b", "k:missing"), 1)
    c.err("DEL arity", lambda: ctx.raw("DEL"), arity("del"))
    c.eq("UNLINK", r.unlink("k:c", "k:d", "k:missing"), 2)
    c.eq("UNLINK removed", r.exists("k:c", "k:d"), 0)
    c.err("UNLINK arity", lambda: ctx.raw("UNLINK"), arity("unlink"))
    r.set("k:t", "v")
    c.eq("TYPE string", r.type("k:t"), "string")
    c.eq("TYPE missing", r.type("k:missing"), "none")
    c.eq("TYPE raw", ctx.raw("TYPE", "k:t"), "string")
    c.err("TYPE arity", lambda: ctx.raw("TYPE"), arity("type"))
    r.mset({"k:t1": "1", "k:t2": "2"})
    c.eq("TOUCH", r.touch("k:t1", "k:t2", "k:missing"), 2)
    c.eq("TOUCH dup", r.touch("k:t1", "k:t1"), 2)
    c.err("TOUCH arity", lambda: ctx.raw("TOUCH"), arity("touch"))


def check_rename_copy(c, ctx):
    r = ctx.r
    r1 = ctx.client(db=1)
    r.flushall()
    r.set("rn:a", "va", ex=100)
    c.eq("RENAME", r.rename("rn:a", "rn:b"), True)
    c.eq("RENAME old gone", r.exists("rn:a"), 0)
    c.eq("RENAME value", r.get("rn:b"), "va")
    c.between("RENAME keeps TTL", r.ttl("rn:b"), 99, 100)
    r.set("rn:c", "vc")
    c.eq("RENAME overwrite", r.rename("rn:c", "rn:b"), True)
    c.eq("RENAME overwrite value+ttl", (r.get("rn:b"), r.ttl("rn:b")), ("vc", -1))
    c.eq("RENAME same key", r.rename("rn:b", "rn:b"), True)
    c.err("RENAME missing", lambda: r.rename("rn:missing", "rn:x"), "no such key")
    c.err("RENAME same missing", lambda: r.rename("rn:missing", "rn:missing"), "no such key")
    c.err("RENAME arity", lambda: ctx.raw("RENAME", "rn:b"), arity("rename"))

    r.set("rn:d", "vd")
    c.eq("RENAMENX existing target", r.renamenx("rn:d", "rn:b"), False)
    c.eq("RENAMENX unchanged", (r.get("rn:d"), r.get("rn:b")), ("vd", "vc"))
    c.eq("RENAMENX", r.renamenx("rn:d", "rn:e"), True)
    c.eq("RENAMENX moved", (r.exists("rn:d"), r.get("rn:e")), (0, "vd"))
    c.eq("RENAMENX same key", ctx.raw("RENAMENX", "rn:e", "rn:e"), 0)
    c.err("RENAMENX missing", lambda: r.renamenx("rn:missing", "rn:x"), "no such key")

    r.set("cp:src", "v1", ex=100)
    c.eq("COPY", r.copy("cp:src", "cp:dst"), True)
    c.eq("COPY value", r.get("cp:dst"), "v1")
    c.between("COPY copies TTL", r.ttl("cp:dst"), 99, 100)
    c.eq("COPY src intact", r.get("cp:src"), "v1")
    r.set("cp:dst", "other")
    c.eq("COPY existing dst", r.copy("cp:src", "cp:dst"), False)
    c.eq("COPY existing unchanged", r.get("cp:dst"), "other")
    c.eq("COPY REPLACE", r.copy("cp:src", "cp:dst", replace=True), True)
    c.eq("COPY REPLACE value", r.get("cp:dst"), "v1")
    c.eq("COPY missing src", r.copy("cp:missing", "cp:x"), False)
    c.eq("COPY DB", r.copy("cp:src", "cp:src", destination_db=1), True)
    c.eq("COPY DB value", r1.get("cp:src"), "v1")
    c.between("COPY DB ttl", r1.ttl("cp:src"), 99, 100)
    c.eq("COPY DB existing", r.copy("cp:src", "cp:src", destination_db=1), False)
    c.eq("COPY DB REPLACE", ctx.raw("COPY", "cp:dst", "cp:src", "DB", 1, "REPLACE"), 1)
    c.eq("COPY is independent", (r.append("cp:src", "x"), r1.get("cp:src")), (3, "v1"))
    c.err("COPY same key", lambda: r.copy("cp:src", "cp:src"), "source and destination objects are the same")
    c.err("COPY DB 16", lambda: ctx.raw("COPY", "cp:src", "cp:x", "DB", 16), "DB index is out of range")
    c.err("COPY DB abc", lambda: ctx.raw("COPY", "cp:src", "cp:x", "DB", "abc"), NOT_INT)
    c.err("COPY bad option", lambda: ctx.raw("COPY", "cp:src", "cp:x", "FOO"), SYNTAX)
    c.err("COPY arity", lambda: ctx.raw("COPY", "cp:src"), arity("copy"))
    r1.flushdb()
    r1.close()


def check_keys_scan_random(c, ctx):
    r = ctx.r
    r.flushdb()
    c.eq("RANDOMKEY empty", r.randomkey(), None)
    c.eq("KEYS empty", r.keys("*"), [])
    words = ["hello", "hallo", "hxllo", "hllo", "heeeello", "h?llo", "other"]
    r.mset({w: "1" for w in words})
    c.eq("KEYS *", sorted(r.keys("*")), sorted(words))
    c.eq("KEYS h?llo", sorted(r.keys("h?llo")), sorted(["hello", "hallo", "hxllo", "h?llo"]))
    c.eq("KEYS h*llo", sorted(r.keys("h*llo")), sorted(["hello", "hallo", "hxllo", "hllo", "heeeello", "h?llo"]))
    c.eq("KEYS h[ae]llo", sorted(r.keys("h[ae]llo")), ["hallo", "hello"])
    c.eq("KEYS h[^e]llo", sorted(r.keys("h[^e]llo")), sorted(["hallo", "hxllo", "h?llo"]))
    c.eq("KEYS h[a-b]llo", r.keys("h[a-b]llo"), ["hallo"])
    c.eq("KEYS escaped ?", r.keys("h\\?llo"), ["h?llo"])
    c.eq("KEYS exact", r.keys("other"), ["other"])
    c.eq("KEYS no match", r.keys("zzz*"), [])
    c.err("KEYS arity", lambda: ctx.raw("KEYS"), arity("keys"))
    c.ok("RANDOMKEY", r.randomkey() in words, None)
    c.err("RANDOMKEY arity", lambda: ctx.raw("RANDOMKEY", "x"), arity("randomkey"))

    r.flushdb()
    expected = {"scan:%d" % i for i in range(250)}
    r.mset({k: "v" for k in expected})
    r.mset({"other:%d" % i: "v" for i in range(20)})
    c.eq("SCAN full MATCH COUNT", set(r.scan_iter(match="scan:*", count=10)), expected)
    c.eq("SCAN full no args", len(set(r.scan_iter())), 270)
    c.eq("SCAN TYPE string", len(set(r.scan_iter(_type="string"))), 270)
    c.eq("SCAN TYPE hash", list(r.scan_iter(_type="hash")), [])
    c.eq("SCAN MATCH TYPE", set(r.scan_iter(match="other:*", count=1000, _type="string")),
         {"other:%d" % i for i in range(20)})
    cur, keys = r.scan(0, count=5)
    c.ok("SCAN cursor int", isinstance(cur, int) and cur != 0, cur)
    c.ok("SCAN page", isinstance(keys, list) and 1 <= len(keys) <= 20, keys)
    cur, keys = r.scan(0, count=10000)
    c.eq("SCAN big COUNT single page", (cur, len(keys)), (0, 270))
    rawpage = ctx.raw("SCAN", 0, "COUNT", 10000)
    c.ok("SCAN raw cursor is string", isinstance(rawpage[0], str) and rawpage[0] == "0", rawpage[0])
    c.err("SCAN bad cursor", lambda: ctx.raw("SCAN", "abc"), "invalid cursor")
    c.err("SCAN COUNT 0", lambda: ctx.raw("SCAN", 0, "COUNT", 0), SYNTAX)
    c.err("SCAN COUNT abc", lambda: ctx.raw("SCAN", 0, "COUNT", "abc"), NOT_INT)
    c.err("SCAN bad option", lambda: ctx.raw("SCAN", 0, "FOO"), SYNTAX)
    c.err("SCAN MATCH no value", lambda: ctx.raw("SCAN", 0, "MATCH"), SYNTAX)
    c.err("SCAN arity", lambda: ctx.raw("SCAN"), arity("scan"))


def check_expire_family(c, ctx):
    r = ctx.r
    r.flushdb()
    r.set("e:k", "v")
    c.eq("TTL no expire", r.ttl("e:k"), -1)
    c.eq("PTTL no expire", r.pttl("e:k"), -1)
    c.eq("TTL missing", r.ttl("e:missing"), -2)
    c.eq("PTTL missing", r.pttl("e:missing"), -2)
    c.eq("EXPIRETIME no expire", r.expiretime("e:k"), -1)
    c.eq("EXPIRETIME missing", r.expiretime("e:missing"), -2)
    c.eq("PEXPIRETIME no expire", r.pexpiretime("e:k"), -1)
    c.eq("PEXPIRETIME missing", r.pexpiretime("e:missing"), -2)

    c.eq("EXPIRE", r.expire("e:k", 100), True)
    c.between("EXPIRE ttl", r.ttl("e:k"), 99, 100)
    c.between("EXPIRE pttl", r.pttl("e:k"), 99000, 100000)
    c.eq("EXPIRE missing", r.expire("e:missing", 100), False)
    c.eq("EXPIRE raw int", ctx.raw("EXPIRE", "e:k", 100), 1)
    c.eq("PEXPIRE", r.pexpire("e:k", 50000), True)
    c.between("PEXPIRE pttl", r.pttl("e:k"), 49000, 50000)
    now = int(time.time())
    c.eq("EXPIREAT", r.expireat("e:k", now + 1000), True)
    c.eq("EXPIRETIME", r.expiretime("e:k"), now + 1000)
    c.eq("PEXPIRETIME of EXPIREAT", r.pexpiretime("e:k"), (now + 1000) * 1000)
    now_ms = int(time.time() * 1000)
    c.eq("PEXPIREAT", r.pexpireat("e:k", now_ms + 2000000), True)
    c.eq("PEXPIRETIME", r.pexpiretime("e:k"), now_ms + 2000000)
    c.eq("EXPIRETIME rounds", r.expiretime("e:k"), (now_ms + 2000000 + 500) // 1000)
    c.eq("PERSIST", r.persist("e:k"), True)
    c.eq("PERSIST ttl", r.ttl("e:k"), -1)
    c.eq("PERSIST no ttl", r.persist("e:k"), False)
    c.eq("PERSIST missing", r.persist("e:missing"), False)

    # NX XX GT LT  (a key without TTL counts as infinite TTL for GT/LT)
    c.eq("EXPIRE XX no ttl", r.expire("e:k", 100, xx=True), False)
    c.eq("EXPIRE GT no ttl", r.expire("e:k", 100, gt=True), False)
    c.eq("EXPIRE NX no ttl", r.expire("e:k", 100, nx=True), True)
    c.eq("EXPIRE NX has ttl", r.expire("e:k", 200, nx=True), False)
    c.eq("EXPIRE XX has ttl", r.expire("e:k", 150, xx=True), True)
    c.between("EXPIRE XX applied", r.ttl("e:k"), 149, 150)
    c.eq("EXPIRE GT smaller", r.expire("e:k", 100, gt=True), False)
    c.eq("EXPIRE GT larger", r.expire("e:k", 300, gt=True), True)
    c.eq("EXPIRE LT larger", r.expire("e:k", 400, lt=True), False)
    c.eq("EXPIRE LT smaller", r.expire("e:k", 200, lt=True), True)
    c.between("EXPIRE LT applied", r.ttl("e:k"), 199, 200)
    r.persist("e:k")
    c.eq("EXPIRE LT no ttl", r.expire("e:k", 100, lt=True), True)
    c.eq("PEXPIRE GT", r.pexpire("e:k", 200000, gt=True), True)
    c.eq("PEXPIRE NX", r.pexpire("e:k", 200000, nx=True), False)
    c.eq("EXPIREAT LT", r.expireat("e:k", int(time.time()) + 50, lt=True), True)
    c.eq("PEXPIREAT XX", r.pexpireat("e:k", int(time.time() * 1000) + 60000, xx=True), True)
    c.eq("EXPIRE options case-insensitive", ctx.raw("EXPIRE", "e:k", 10, "lt"), 1)
    c.err("EXPIRE NX XX", lambda: ctx.raw("EXPIRE", "e:k", 10, "NX", "XX"),
          "NX and XX, GT or LT options at the same time are not compatible")
    c.err("EXPIRE NX GT", lambda: ctx.raw("EXPIRE", "e:k", 10, "NX", "GT"),
          "NX and XX, GT or LT options at the same time are not compatible")
    c.err("EXPIRE GT LT", lambda: ctx.raw("EXPIRE", "e:k", 10, "GT", "LT"),
          "GT and LT options at the same time are not compatible")
    c.err("EXPIRE bad option", lambda: ctx.raw("EXPIRE", "e:k", 10, "FOO"), "Unsupported option FOO")
    c.err("EXPIRE not int", lambda: ctx.raw("EXPIRE", "e:k", "abc"), NOT_INT)
    c.err("EXPIRE float", lambda: ctx.raw("EXPIRE", "e:k", "1.5"), NOT_INT)
    c.err("EXPIRE overflow", lambda: ctx.raw("EXPIRE", "e:k", LLONG_MAX), invalid_expire("expire"))
    c.err("PEXPIRE overflow", lambda: ctx.raw("PEXPIRE", "e:k", LLONG_MAX), invalid_expire("pexpire"))
    c.err("EXPIREAT overflow", lambda: ctx.raw("EXPIREAT", "e:k", LLONG_MAX), invalid_expire("expireat"))
    c.err("EXPIRE arity", lambda: ctx.raw("EXPIRE", "e:k"), arity("expire"))
    c.err("TTL arity", lambda: ctx.raw("TTL"), arity("ttl"))
    c.err("PERSIST arity", lambda: ctx.raw("PERSIST"), arity("persist"))
    c.err("EXPIRETIME arity", lambda: ctx.raw("EXPIRETIME"), arity("expiretime"))

    # non-positive / past expire times delete the key immediately
    r.set("e:del1", "v")
    c.eq("EXPIRE -1 deletes", (r.expire("e:del1", -1), r.exists("e:del1")), (True, 0))
    r.set("e:del2", "v")
    c.eq("EXPIRE 0 deletes", (r.expire("e:del2", 0), r.exists("e:del2")), (True, 0))
    r.set("e:del3", "v")
    c.eq("PEXPIREAT past deletes", (r.pexpireat("e:del3", 1000), r.exists("e:del3")), (True, 0))
    r.set("e:del4", "v")
    c.eq("EXPIREAT 0 deletes", (ctx.raw("EXPIREAT", "e:del4", 0), r.exists("e:del4")), (1, 0))
    r.set("e:del5", "v")
    c.eq("EXPIRE -1 GT no-ttl", r.expire("e:del5", -1, gt=True), False)
    c.eq("EXPIRE -1 LT no-ttl deletes", (r.expire("e:del5", -1, lt=True), r.exists("e:del5")), (True, 0))


def check_expiry_observed(c, ctx):
    """The only sleep in the script (~0.25 s): keys set with short PX/PEXPIRE
    must be gone afterwards, and expired_keys must account for them."""
    r = ctx.r
    r.flushdb()
    r.config_resetstat()
    now_ms = int(time.time() * 1000)
    r.set("x:set_px", "v", px=100)
    r.psetex("x:psetex", 100, "v")
    r.set("x:pexpire", "v")
    r.pexpire("x:pexpire", 100)
    r.set("x:getex", "v")
    r.getex("x:getex", px=100)
    r.set("x:pxat", "v", pxat=now_ms + 100)
    r.set("x:keep", "v", px=100000)
    c.between("PTTL short", r.pttl("x:set_px"), 1, 100)
    time.sleep(0.25)
    c.eq("expired GET", r.get("x:set_px"), None)
    c.eq("expired TTL", r.ttl("x:psetex"), -2)
    c.eq("expired EXISTS", r.exists("x:pexpire", "x:getex", "x:pxat"), 0)
    c.eq("expired DBSIZE", r.dbsize(), 1)
    c.eq("expired KEYS", r.keys("*"), ["x:keep"])
    c.eq("expired SET XX", r.set("x:set_px", "v", xx=True), None)
    c.eq("expired SETNX", r.setnx("x:psetex", "new"), True)
    c.eq("expired_keys stat", r.info("stats")["expired_keys"], 5)


def check_object(c, ctx):
    r = ctx.r
    r.flushdb()
    r.set("o:int", "12345")
    r.set("o:negint", "-42")
    r.set("o:emb", "hello")
    r.set("o:emb44", "x" * 44)
    r.set("o:raw45", "x" * 45)
    r.set("o:lead0", "0123")
    r.set("o:float", "1.5")
    r.set("o:bigint", "123456789012345678901")
    c.eq("OBJECT ENCODING int", r.object("encoding", "o:int"), "int")
    c.eq("OBJECT ENCODING negative int", r.object("encoding", "o:negint"), "int")
    c.eq("OBJECT ENCODING embstr", r.object("encoding", "o:emb"), "embstr")
    c.eq("OBJECT ENCODING embstr 44", r.object("encoding", "o:emb44"), "embstr")
    c.eq("OBJECT ENCODING raw 45", r.object("encoding", "o:raw45"), "raw")
    c.eq("OBJECT ENCODING leading zero", r.object("encoding", "o:lead0"), "embstr")
    c.eq("OBJECT ENCODING float", r.object("encoding", "o:float"), "embstr")
    c.eq("OBJECT ENCODING > int64", r.object("encoding", "o:bigint"), "embstr")
    r.append("o:emb", "!")
    c.eq("OBJECT ENCODING after APPEND", r.object("encoding", "o:emb"), "raw")
    r.setrange("o:emb44", 0, "y")
    c.eq("OBJECT ENCODING after SETRANGE", r.object("encoding", "o:emb44"), "raw")
    r.incr("o:int")
    c.eq("OBJECT ENCODING after INCR", r.object("encoding", "o:int"), "int")
    r.set("o:f", "1")
    r.incrbyfloat("o:f", 0.5)
    c.eq("OBJECT ENCODING after INCRBYFLOAT", r.object("encoding", "o:f"), "embstr")
    c.eq("OBJECT ENCODING missing", r.object("encoding", "o:missing"), None)
    c.eq("OBJECT ENCODING raw missing", ctx.raw("OBJECT", "ENCODING", "o:missing"), None)

    c.eq("OBJECT REFCOUNT string", r.object("refcount", "o:raw45"), 1)
    c.eq("OBJECT REFCOUNT big int", (r.set("o:i2", 123456), r.object("refcount", "o:i2")), (True, 1))
    # small integers (0..9999) are shared objects under a non-LRU/LFU-with-maxmemory setup
    c.eq("OBJECT REFCOUNT shared int", (r.set("o:i3", 100), r.object("refcount", "o:i3")), (True, 2147483647))
    c.eq("OBJECT REFCOUNT missing", r.object("refcount", "o:missing"), None)

    idle = r.object("idletime", "o:raw45")
    c.ok("OBJECT IDLETIME int >= 0", isinstance(idle, int) and idle >= 0, idle)
    c.eq("OBJECT IDLETIME missing", r.object("idletime", "o:missing"), None)
    c.err("OBJECT FREQ non-LFU", lambda: r.object("freq", "o:raw45"),
          "An LFU maxmemory policy is not selected")
    c.eq("OBJECT FREQ missing", ctx.raw("OBJECT", "FREQ", "o:missing"), None)
    pol = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        r.config_set("maxmemory-policy", "allkeys-lfu")
        freq = r.object("freq", "o:raw45")
        c.ok("OBJECT FREQ under LFU", isinstance(freq, int) and freq >= 0, freq)
        c.err("OBJECT IDLETIME under LFU", lambda: r.object("idletime", "o:raw45"),
              "An LFU maxmemory policy is selected, idle time not tracked")
    finally:
        r.config_set("maxmemory-policy", pol)
    c.err("OBJECT unknown subcommand", lambda: ctx.raw("OBJECT", "FOO", "o:emb"), "unknown subcommand 'FOO'")
    c.err("OBJECT ENCODING arity", lambda: ctx.raw("OBJECT", "ENCODING"), arity("object|encoding"))
    help_lines = ctx.raw("OBJECT", "HELP")
    c.ok("OBJECT HELP", isinstance(help_lines, list) and len(help_lines) > 3, help_lines)


# --------------------------------------------------------------------------
# transactions
# --------------------------------------------------------------------------


def raw_conn(ctx):
    """A dedicated connection for hand-driven MULTI/EXEC (no callbacks)."""
    cl = ctx.client(single=True)
    conn = cl.connection

    def cmd(*args):
        conn.send_command(*args)
        return conn.read_response()

    return cl, cmd


def check_multi_exec(c, ctx):
    r = ctx.r
    r.flushdb()
    p = r.pipeline(transaction=True)
    p.set("t:a", "1").incr("t:a").incrby("t:a", 5).get("t:a").exists("t:a", "t:missing")
    c.eq("MULTI/EXEC pipeline", p.execute(), [True, 2, 7, "7", 1])
    with r.pipeline(transaction=True) as p:
        c.eq("MULTI/EXEC empty", p.execute(), [])

    # runtime errors inside EXEC do not abort the other commands
    r.set("t:str", "abc")
    p = r.pipeline(transaction=True)
    p.set("t:b", "1").incr("t:str").incr("t:b")
    res = p.execute(raise_on_error=False)
    c.eq("EXEC runtime error len", len(res), 3)
    c.eq("EXEC runtime error others", (res[0], res[2]), (True, 2))
    c.ok("EXEC runtime error item", isinstance(res[1], redis.ResponseError) and NOT_INT in str(res[1]), res[1])
    p = r.pipeline(transaction=True)
    p.incr("t:str")
    c.err("EXEC runtime error raises", p.execute, NOT_INT)

    cl, cmd = raw_conn(ctx)
    c.eq("MULTI raw", cmd("MULTI"), "OK")
    c.eq("QUEUED", cmd("SET", "t:raw", "1"), "QUEUED")
    c.eq("QUEUED 2", cmd("INCR", "t:raw"), "QUEUED")
    c.err("MULTI nested", lambda: cmd("MULTI"), "MULTI calls can not be nested")
    c.err("WATCH inside MULTI", lambda: cmd("WATCH", "t:raw"), "WATCH inside MULTI is not allowed")
    c.eq("EXEC raw", cmd("EXEC"), ["OK", 2])
    c.err("EXEC without MULTI", lambda: cmd("EXEC"), "EXEC without MULTI")
    c.err("DISCARD without MULTI", lambda: cmd("DISCARD"), "DISCARD without MULTI")

    # DISCARD
    c.eq("MULTI for DISCARD", cmd("MULTI"), "OK")
    c.eq("QUEUED before DISCARD", cmd("SET", "t:disc", "1"), "QUEUED")
    c.eq("DISCARD", cmd("DISCARD"), "OK")
    c.eq("DISCARD not applied", r.exists("t:disc"), 0)
    c.eq("after DISCARD normal mode", cmd("SET", "t:disc2", "1"), "OK")
    p = r.pipeline(transaction=True)
    p.set("t:reset", "1")
    p.reset()
    c.eq("pipeline reset discards", (p.execute(), r.exists("t:reset")), ([], 0))

    # EXECABORT on a queued error
    c.eq("MULTI for EXECABORT", cmd("MULTI"), "OK")
    c.err("queued arity error", lambda: cmd("SET", "t:abort"), arity("set"))
    c.err("queued unknown command", lambda: cmd("NOSUCHCMD"), "unknown command")
    c.eq("QUEUED after error", cmd("SET", "t:abort", "1"), "QUEUED")
    c.err("EXECABORT raw", lambda: cmd("EXEC"), "Transaction discarded because of previous errors",
          exc=redis.exceptions.ExecAbortError)
    c.eq("EXECABORT nothing applied", r.exists("t:abort"), 0)
    c.eq("after EXECABORT normal mode", cmd("PING"), "PONG")
    cl.close()

    p = r.pipeline(transaction=True)
    p.set("t:abort2", "1")
    p.execute_command("SET", "t:abort2")
    try:
        p.execute()
        c._fail("pipeline EXECABORT", "exception", "no exception")
    except redis.exceptions.ExecAbortError:
        c._pass()
    except redis.ResponseError as e:
        # redis-py re-raises the first queued error instead of the EXECABORT
        c.ok("pipeline EXECABORT", "EXECABORT" in str(e) or arity("set") in str(e), str(e))
    c.eq("pipeline EXECABORT nothing applied", r.exists("t:abort2"), 0)


def check_watch(c, ctx):
    r = ctx.r
    r.flushdb()
    other = ctx.client()
    r.set("w:k", "1")

    with r.pipeline() as p:
        p.watch("w:k")
        c.eq("WATCH immediate read", p.get("w:k"), "1")
        other.set("w:k", "2")
        p.multi()
        p.set("w:k", "3")
        c.err("WATCH conflict", p.execute, "", exc=redis.WatchError)
    c.eq("WATCH conflict value kept", r.get("w:k"), "2")

    with r.pipeline() as p:
        p.watch("w:k")
        p.multi()
        p.incr("w:k")
        c.eq("WATCH no conflict", p.execute(), [3])

    with r.pipeline() as p:
        p.watch("w:k")
        c.eq("UNWATCH", p.unwatch(), True)
        other.set("w:k", "10")
        p.multi()
        p.incr("w:k")
        c.eq("UNWATCH then EXEC", p.execute(), [11])

    # watching a missing key that gets created; watched key that expires/deleted
    with r.pipeline() as p:
        p.watch("w:new")
        other.set("w:new", "x")
        p.multi()
        p.set("w:new", "y")
        c.err("WATCH missing key created", p.execute, "", exc=redis.WatchError)
    with r.pipeline() as p:
        p.watch("w:new")
        other.delete("w:new")
        p.multi()
        p.set("w:new", "z")
        c.err("WATCH key deleted", p.execute, "", exc=redis.WatchError)
    with r.pipeline() as p:
        p.watch("w:k")
        other.set("w:unrelated", "x")
        p.multi()
        p.get("w:k")
        c.eq("WATCH unrelated write", p.execute(), ["11"])

    # raw: WATCH/UNWATCH replies and EXEC nil after conflict
    cl, cmd = raw_conn(ctx)
    c.eq("WATCH raw", cmd("WATCH", "w:k", "w:k2"), "OK")
    other.set("w:k", "20")
    cmd("MULTI")
    cmd("GET", "w:k")
    c.eq("EXEC nil after conflict", cmd("EXEC"), None)
    c.eq("UNWATCH raw", cmd("UNWATCH"), "OK")
    c.eq("UNWATCH outside watch", cmd("UNWATCH"), "OK")
    c.err("WATCH arity", lambda: cmd("WATCH"), arity("watch"))
    # FLUSHDB touches watched keys
    cmd("WATCH", "w:k")
    other.flushdb()
    cmd("MULTI")
    cmd("SET", "w:k", "1")
    c.eq("WATCH + FLUSHDB aborts", cmd("EXEC"), None)
    cl.close()
    other.close()


def check_lock(c, ctx):
    """redis-py's Lock: acquire is SET NX PX, extend and release are Lua
    scripts run with EVALSHA (loaded on first use)."""
    r = ctx.r
    r.flushdb()
    other = ctx.client()
    lock = r.lock("lk:res", timeout=10)
    c.ok("Lock acquire", lock.acquire(blocking=False))
    c.ok("Lock owned", lock.owned())
    rival = other.lock("lk:res", timeout=10)
    c.ok("Lock held elsewhere", not rival.acquire(blocking=False))
    c.ok("Lock extend", lock.extend(20))
    c.between("Lock extended TTL", r.pttl("lk:res"), 20000, 30000)
    c.ok("Lock reacquire", lock.reacquire())
    c.between("Lock reacquired TTL", r.pttl("lk:res"), 1, 10000)
    c.err("Lock extend of another's lock", lambda: rival.extend(5), "", exc=redis.exceptions.LockError)
    lock.release()
    c.eq("Lock released", r.exists("lk:res"), 0)
    c.err("Lock release twice", lock.release, "", exc=redis.exceptions.LockError)
    c.ok("Lock acquire after release", rival.acquire(blocking=False))
    rival.release()
    other.close()


# --------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------

def check_big_pipeline(c, ctx):
    """The issue 37 case: a non-transactional pipeline of 40,000 commands,
    written whole before any reply is read (as redis-py pipelines do), with
    a socket timeout so that a server that stops reading fails, not hangs."""
    r = redis.Redis(host=ctx.host, port=ctx.port, password=ctx.password,
                    protocol=ctx.protocol, socket_timeout=30, **ctx.tls)
    r.set("p:big", b"x" * 1000)
    p = r.pipeline(transaction=False)
    for i in range(20000):
        p.set("p:k%d" % i, b"v" * 1000)
        p.get("p:big")
    try:
        replies = p.execute()
    except redis.RedisError as e:
        c._fail("40,000-command pipeline", "every reply", repr(e))
        return
    finally:
        r.close()
    c.eq("40,000-command pipeline replies", len(replies), 40000)
    c.ok("40,000-command pipeline values",
         all(ok is True and v == b"x" * 1000 for ok, v in zip(replies[::2], replies[1::2])))
    c.eq("40,000-command pipeline keys", ctx.r.dbsize(), 20001)


def wait_bgsave(r, timeout=10.0):
    deadline = time.time() + timeout
    while r.info("persistence")["rdb_bgsave_in_progress"] and time.time() < deadline:
        time.sleep(0.02)
    return r.info("persistence")


def check_persistence(c, ctx):
    """SAVE/BGSAVE/LASTSAVE as redis-py's own tests use them (test_bgsave,
    test_lastsave) and as a client sees the counters after a save."""
    r = ctx.r
    r.flushall()
    r.set("persist:a", "1")
    c.eq("SAVE", r.save(), True)
    info = r.info("persistence")
    c.eq("SAVE resets changes", info["rdb_changes_since_last_save"], 0)
    c.eq("SAVE status", info["rdb_last_bgsave_status"], "ok")
    last = r.lastsave()
    c.ok("LASTSAVE datetime", hasattr(last, "timestamp") and abs(last.timestamp() - time.time()) < 60, last)
    # RESP2 clients get True; RESP3 ones the status text (as from Redis).
    started = (True, "Background saving started")
    got = r.bgsave()
    c.ok("BGSAVE", got in started, got)
    wait_bgsave(r)
    got = r.bgsave(True)
    c.ok("BGSAVE SCHEDULE", got in started, got)
    info = wait_bgsave(r)
    c.eq("BGSAVE done", info["rdb_bgsave_in_progress"], 0)
    c.eq("BGSAVE status", info["rdb_last_bgsave_status"], "ok")
    c.err("BGSAVE bad arg", lambda: ctx.raw("BGSAVE", "NOW"), SYNTAX)
    c.err("SAVE arity", lambda: ctx.raw("SAVE", "x"), arity("save"))
    r.flushall()


FAMILIES = [
    ("PING/ECHO", check_ping_echo),
    ("HELLO", check_hello),
    ("AUTH", check_auth),
    ("SELECT/SWAPDB", check_select_swapdb),
    ("CLIENT", check_client),
    ("QUIT", check_quit),
    ("COMMAND", check_command),
    ("INFO/RESETSTAT", check_info),
    ("CONFIG", check_config),
    ("DBSIZE/FLUSH*/TIME", check_db),
    ("GET/SET", check_get_set),
    ("SETNX/SETEX/MSET/GETSET/GETDEL", check_set_variants),
    ("GETEX", check_getex),
    ("APPEND/STRLEN/GETRANGE/SETRANGE", check_append_strlen_range),
    ("INCR/DECR/INCRBYFLOAT", check_incr_decr),
    ("DEL/UNLINK/EXISTS/TYPE/TOUCH", check_del_exists_type),
    ("RENAME/RENAMENX/COPY", check_rename_copy),
    ("KEYS/SCAN/RANDOMKEY", check_keys_scan_random),
    ("EXPIRE*/TTL/PERSIST", check_expire_family),
    ("expiry (short sleep)", check_expiry_observed),
    ("OBJECT", check_object),
    ("MULTI/EXEC/DISCARD", check_multi_exec),
    ("WATCH/UNWATCH", check_watch),
    ("Lock (EVALSHA)", check_lock),
    ("Pipeline written whole", check_big_pipeline),
    ("SAVE/BGSAVE/LASTSAVE", check_persistence),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--protocol", type=int, choices=(2, 3), action="append",
                    help="RESP version to test (repeatable; default: 2 then 3)")
    ap.add_argument("--password", default=None)
    ap.add_argument("--tcp-port", type=int, help="the plain port INFO reports (default: --port)")
    ap.add_argument("--tls-ca", help="connect with TLS, trusting this CA file (PEM)")
    ap.add_argument("--tls-cert", help="the client certificate (PEM), with --tls-ca")
    ap.add_argument("--tls-key", help="the client certificate's key (PEM), with --tls-ca")
    args = ap.parse_args()
    tls = None
    if args.tls_ca:
        tls = dict(ssl=True, ssl_ca_certs=args.tls_ca, ssl_certfile=args.tls_cert,
                   ssl_keyfile=args.tls_key)
    # redis-py 8 marks SETEX/PSETEX/GETSET... wrappers deprecated; we still test them
    warnings.filterwarnings("ignore", category=DeprecationWarning)

    checker = Checker()
    for proto in args.protocol or [2, 3]:
        print("== protocol %d ==" % proto)
        ctx = Ctx(args.host, args.port, proto, args.password, tls)
        ctx.tcp_port = args.tcp_port or args.port
        ctx.r.flushall()
        for label, fn in FAMILIES:
            checker.run_family("[RESP%d] %s" % (proto, label), fn, ctx)
        ctx.r.flushall()
        ctx.r.close()

    for fam, name, expected, got in checker.failures:
        print("FAILED [%s] %s: expected %r, got %r" % (fam, name, expected, got))
    print("%d passed, %d failed" % (checker.passed, len(checker.failures)))
    return 0 if not checker.failures else 1


if __name__ == "__main__":
    sys.exit(main())
