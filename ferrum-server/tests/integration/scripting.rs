//! Lua scripting against a real server: `EVAL`/`EVALSHA` and the script
//! cache, `FUNCTION LOAD`/`FCALL`, the conversions between Lua and RESP2
//! and RESP3, `redis.call`/`redis.pcall` errors, and how scripts meet
//! INFO, `COMMAND GETKEYS`, `MONITOR` and `CLIENT PAUSE`.

use std::time::{Duration, Instant};

use redis::Value;

use crate::common::{err, info_fields, run, TestServer};

const LIBRARY: &str = "#!lua name=mylib
redis.register_function('put', function(keys, args) return redis.call('set', keys[1], args[1]) end)
redis.register_function{function_name='peek', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}";

#[test]
fn eval_evalsha_and_the_script_cache() {
    let s = TestServer::start();
    let mut c = s.client();
    let n: i64 = run(
        &mut c,
        &["EVAL", "return #KEYS + #ARGV * 10", "2", "a", "b", "x"],
    )
    .unwrap();
    assert_eq!(n, 12);
    let sha: String = run(&mut c, &["SCRIPT", "LOAD", "return ARGV[1]"]).unwrap();
    assert_eq!(sha.len(), 40);
    let echoed: String = run(&mut c, &["EVALSHA", &sha.to_uppercase(), "0", "hi"]).unwrap();
    assert_eq!(echoed, "hi");
    let missing = "ffffffffffffffffffffffffffffffffffffffff";
    let exists: Vec<i64> = run(&mut c, &["SCRIPT", "EXISTS", &sha, missing]).unwrap();
    assert_eq!(exists, [1, 0]);
    assert_eq!(
        err(&mut c, &["EVALSHA", missing, "0"]),
        "NOSCRIPT No matching script. Please use EVAL."
    );
    assert_eq!(
        info_fields(&mut c, "memory")["number_of_cached_scripts"],
        "2"
    );
    let _: () = run(&mut c, &["SCRIPT", "FLUSH"]).unwrap();
    let exists: Vec<i64> = run(&mut c, &["SCRIPT", "EXISTS", &sha]).unwrap();
    assert_eq!(exists, [0]);
    assert_eq!(
        info_fields(&mut c, "memory")["number_of_cached_scripts"],
        "0"
    );
    assert_eq!(
        err(&mut c, &["EVAL", "return 1", "-1"]),
        "ERR Number of keys can't be negative"
    );
}

/// Each cached script used to hold a slot of mlua's reference stack,
/// which ran out near 8,000 scripts.
#[test]
fn the_cache_holds_ten_thousand_scripts() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut pipe = redis::pipe();
    for i in 0..10_000 {
        pipe.cmd("SCRIPT").arg("LOAD").arg(format!("return {i}"));
    }
    let shas: Vec<String> = pipe.query(&mut c).unwrap();
    let last: i64 = run(&mut c, &["EVALSHA", &shas[9_999], "0"]).unwrap();
    assert_eq!(last, 9_999);
    assert_eq!(
        info_fields(&mut c, "memory")["number_of_cached_scripts"],
        "10000"
    );
}

#[test]
fn lua_values_become_resp2_replies_as_in_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    let reply = |c: &mut redis::Connection, script: &str| -> Value {
        run(c, &["EVAL", script, "0"]).unwrap()
    };
    assert_eq!(reply(&mut c, "return 3.99"), Value::Int(3));
    assert_eq!(reply(&mut c, "return true"), Value::Int(1));
    assert_eq!(reply(&mut c, "return false"), Value::Nil);
    assert_eq!(
        reply(&mut c, "return {ok='FINE'}"),
        Value::SimpleString("FINE".to_owned())
    );
    // An array ends at its first nil, as Lua's length does.
    assert_eq!(
        reply(&mut c, "return {1, 'two', nil, 4}"),
        Value::Array(vec![Value::Int(1), Value::BulkString(b"two".to_vec())])
    );
    assert_eq!(
        err(&mut c, &["EVAL", "return {err='MY failure'}", "0"]),
        "MY failure"
    );
    assert_eq!(
        err(
            &mut c,
            &["EVAL", "return redis.error_reply('OOPS it broke')", "0"]
        ),
        "OOPS it broke"
    );
}

#[test]
fn resp3_callers_and_setresp_get_maps_and_doubles() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["HSET", "h", "f", "v"]).unwrap();
    let mut raw = s.raw();
    raw.hello3();
    let hgetall = "redis.setresp(3) return redis.call('hgetall', KEYS[1])";
    raw.roundtrip(
        &crate::common::resp(&[b"EVAL", hgetall.as_bytes(), b"1", b"h"]),
        b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n",
    );
    raw.roundtrip(
        &crate::common::resp(&[b"EVAL", b"return {double=3.5}", b"0"]),
        b",3.5\r\n",
    );
    // A RESP2 caller gets the map flattened, whatever the script chose.
    let flat: Vec<String> = run(&mut c, &["EVAL", hgetall, "1", "h"]).unwrap();
    assert_eq!(flat, ["f", "v"]);
    let e = err(&mut c, &["EVAL", "redis.setresp(4)", "0"]);
    assert!(e.starts_with("ERR RESP version must be 2 or 3."), "{e}");
}

#[test]
fn call_raises_and_pcall_returns_command_errors() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "s", "text"]).unwrap();
    let e = err(
        &mut c,
        &["EVAL", "return redis.call('incr', KEYS[1])", "1", "s"],
    );
    assert!(
        e.starts_with("ERR value is not an integer or out of range"),
        "{e}"
    );
    // A tail-called redis.call names the script's line too, as in Redis.
    let e = err(&mut c, &["EVAL", "return redis.call('nosuch')", "0"]);
    assert!(e.ends_with("on @user_script:1."), "{e}");
    let e = err(&mut c, &["EVAL", "redis.call('nosuch') return 1", "0"]);
    assert!(
        e.starts_with("ERR Unknown Redis command called from script"),
        "{e}"
    );
    assert!(e.ends_with("on @user_script:1."), "{e}");
    let text: String = run(
        &mut c,
        &[
            "EVAL",
            "return redis.pcall('incr', KEYS[1])['err']",
            "1",
            "s",
        ],
    )
    .unwrap();
    assert_eq!(text, "ERR value is not an integer or out of range");
    let e = err(&mut c, &["EVAL", "redis.call('blpop', 'l', 0)", "0"]);
    assert!(
        e.starts_with("ERR This Redis command is not allowed from script"),
        "{e}"
    );
    let e = err(&mut c, &["EVAL_RO", "redis.call('set', 'k', 'v')", "0"]);
    assert!(
        e.starts_with("ERR Write commands are not allowed from read-only scripts."),
        "{e}"
    );
    let e = err(
        &mut c,
        &["EVAL_RO", "redis.call('publish', 'ch', 'm')", "0"],
    );
    assert!(
        e.starts_with("ERR Write commands are not allowed from read-only scripts."),
        "{e}"
    );
    let e = err(&mut c, &["EVAL", "x = 1", "0"]);
    assert!(e.contains("Attempt to modify a readonly table"), "{e}");
}

#[test]
fn functions_load_call_and_keep_their_flags() {
    let s = TestServer::start();
    let mut c = s.client();
    let name: String = run(&mut c, &["FUNCTION", "LOAD", LIBRARY]).unwrap();
    assert_eq!(name, "mylib");
    let _: () = run(&mut c, &["FCALL", "put", "1", "k", "v"]).unwrap();
    let v: String = run(&mut c, &["FCALL_RO", "peek", "1", "k"]).unwrap();
    assert_eq!(v, "v");
    assert_eq!(
        err(&mut c, &["FCALL_RO", "put", "1", "k", "w"]),
        "ERR Can not execute a script with write flag using *_ro command."
    );
    assert_eq!(
        err(&mut c, &["FUNCTION", "LOAD", LIBRARY]),
        "ERR Library 'mylib' already exists"
    );
    let memory = info_fields(&mut c, "memory");
    assert_eq!(memory["number_of_libraries"], "1");
    assert_eq!(memory["number_of_functions"], "2");
    assert_eq!(memory["used_memory_functions"], LIBRARY.len().to_string());
    let _: () = run(&mut c, &["FUNCTION", "DELETE", "mylib"]).unwrap();
    assert_eq!(
        err(&mut c, &["FCALL", "put", "1", "k", "v"]),
        "ERR Function not found"
    );
}

#[test]
fn info_memory_reports_the_vm_and_the_cache() {
    let s = TestServer::start();
    let mut c = s.client();
    let memory = info_fields(&mut c, "memory");
    let vm: u64 = memory["used_memory_vm_eval"].parse().unwrap();
    assert!(vm > 0, "the VM's heap is known before any script ran");
    assert_eq!(memory["used_memory_lua"], memory["used_memory_vm_eval"]);
    assert_eq!(
        memory["used_memory_vm_total"],
        memory["used_memory_vm_eval"]
    );
    let script = "return redis.call('incr', KEYS[1])";
    for _ in 0..2_000 {
        let _: i64 = run(&mut c, &["EVAL", script, "1", "x"]).unwrap();
    }
    let memory = info_fields(&mut c, "memory");
    let scripts = (script.len() + 40).to_string();
    assert_eq!(memory["used_memory_scripts_eval"], scripts);
    assert_eq!(memory["used_memory_scripts"], scripts);
    // The collector steps every 50 scripts, so garbage stays bounded
    // (Redis's test allows 100 KB after 10,000 runs).
    let lua: u64 = memory["used_memory_lua"].parse().unwrap();
    assert!(lua < 1024 * 100, "used_memory_lua {lua}");
}

#[test]
fn cmsgpack_packs_redis_smoke_test_tables() {
    let s = TestServer::start();
    let mut c = s.client();
    let script = "local a, m = {}, {}
        for i = 1, 100000 do a[i] = i; m[tostring(i)] = i end
        local d = cmsgpack.unpack(cmsgpack.pack({a = a, m = m}))
        return {#d.a, d.m['100000']}";
    let got: Vec<i64> = run(&mut c, &["EVAL", script, "0"]).unwrap();
    assert_eq!(got, [100_000, 100_000]);
    let e = err(
        &mut c,
        &[
            "EVAL",
            "return cmsgpack.unpack(string.rep('\\145', 100000))",
            "0",
        ],
    );
    assert!(e.contains("stack overflow"), "{e}");
}

#[test]
fn command_getkeys_finds_scripts_keys() {
    let s = TestServer::start();
    let mut c = s.client();
    let keys: Vec<String> = run(
        &mut c,
        &["COMMAND", "GETKEYS", "EVAL", "return 1", "2", "a", "b", "c"],
    )
    .unwrap();
    assert_eq!(keys, ["a", "b"]);
    let keys: Vec<String> =
        run(&mut c, &["COMMAND", "GETKEYS", "FCALL_RO", "f", "1", "k"]).unwrap();
    assert_eq!(keys, ["k"]);
    let none: Vec<String> = run(&mut c, &["COMMAND", "GETKEYS", "EVAL", "return 1", "0"]).unwrap();
    assert!(none.is_empty());
}

#[test]
fn monitor_shows_a_scripts_commands_after_it_as_lua() {
    let s = TestServer::start();
    let mut monitor = s.raw();
    monitor.roundtrip(b"MONITOR\r\n", b"+OK\r\n");
    let mut c = s.client();
    let _: () = run(
        &mut c,
        &["EVAL", "redis.call('set', KEYS[1], 'v')", "1", "k"],
    )
    .unwrap();
    let mut lines = String::new();
    let mut buf = [0u8; 512];
    while lines.matches("\r\n").count() < 2 {
        use std::io::Read;
        let n = monitor.stream.read(&mut buf).expect("monitor line");
        assert!(n > 0, "monitor closed");
        lines.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let lines: Vec<&str> = lines.lines().collect();
    assert!(lines[0].contains("\"EVAL\""), "{lines:?}");
    assert!(
        lines[1].contains("[0 lua] \"set\" \"k\" \"v\""),
        "{lines:?}"
    );
}

#[test]
fn client_pause_write_holds_scripts_that_may_write() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["CLIENT", "PAUSE", "60000", "WRITE"]).unwrap();
    // Read-only forms and no-writes scripts run at once.
    let v: Value = run(&mut c, &["EVAL_RO", "return redis.call('get', 'k')", "0"]).unwrap();
    assert_eq!(v, Value::Nil);
    let ro = "#!lua flags=no-writes\nreturn 1";
    let one: i64 = run(&mut c, &["EVAL", ro, "0"]).unwrap();
    assert_eq!(one, 1);
    let mut writer = s.raw();
    writer.send(&crate::common::resp(&[
        b"EVAL",
        b"return redis.call('set', 'k', 'v')",
        b"0",
    ]));
    let deadline = Instant::now() + Duration::from_secs(30);
    while info_fields(&mut c, "clients")["blocked_clients"] != "1" {
        assert!(Instant::now() < deadline, "the script was never held");
        std::thread::sleep(Duration::from_millis(5));
    }
    let v: Value = run(&mut c, &["GET", "k"]).unwrap();
    assert_eq!(v, Value::Nil, "the held script has not run");
    let _: () = run(&mut c, &["CLIENT", "UNPAUSE"]).unwrap();
    assert_eq!(writer.read_exact_len(5), b"+OK\r\n");
}

#[test]
fn keys_do_not_expire_under_a_pause() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v", "PX", "1"]).unwrap();
    let _: () = run(&mut c, &["CLIENT", "PAUSE", "60000", "WRITE"]).unwrap();
    s.advance(&mut c, 10);
    let v: Value = run(&mut c, &["GET", "k"]).unwrap();
    assert_eq!(v, Value::Nil, "an expired key reads as missing");
    assert_eq!(info_fields(&mut c, "stats")["expired_keys"], "0");
    let _: () = run(&mut c, &["CLIENT", "UNPAUSE"]).unwrap();
    let v: Value = run(&mut c, &["GET", "k"]).unwrap();
    assert_eq!(v, Value::Nil);
    assert_eq!(info_fields(&mut c, "stats")["expired_keys"], "1");
}

/// FerrumKV has no replicas, so `min-replicas-to-write` refuses every
/// write: commands, scripts declared to write, writes a script calls, and
/// an `EXEC` whose queue writes. Reads and no-writes scripts go on.
#[test]
fn min_replicas_to_write_refuses_writes_with_noreplicas() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut other = s.client();
    let _: () = run(&mut c, &["SET", "x", "v"]).unwrap();
    let _: () = run(&mut c, &["MULTI"]).unwrap();
    let _: () = run(&mut c, &["INCR", "n"]).unwrap();
    let _: () = run(&mut other, &["CONFIG", "SET", "min-replicas-to-write", "1"]).unwrap();
    let refused = "NOREPLICAS Not enough good replicas to write.";
    assert_eq!(
        err(&mut c, &["EXEC"]),
        format!("EXECABORT Transaction discarded because of: {refused}")
    );
    assert_eq!(err(&mut c, &["SET", "x", "w"]), refused);
    assert_eq!(err(&mut c, &["EVAL", "#!lua\nreturn 1", "0"]), refused);
    let e = err(&mut c, &["EVAL", "redis.call('set', 'x', 'w')", "0"]);
    assert!(e.starts_with(refused), "{e}");
    let v: String = run(
        &mut c,
        &[
            "EVAL",
            "#!lua flags=no-writes\nreturn redis.call('get', 'x')",
            "0",
        ],
    )
    .unwrap();
    assert_eq!(v, "v");
    let _: () = run(&mut c, &["CONFIG", "SET", "min-replicas-max-lag", "0"]).unwrap();
    let _: () = run(&mut c, &["SET", "x", "w"]).unwrap();
}

/// Registered callbacks stay in Lua, so a library may register more
/// functions than mlua's reference stack has slots (about 8,000).
#[test]
fn a_library_registers_nine_thousand_functions() {
    let s = TestServer::start();
    let mut c = s.client();
    let code = "#!lua name=many
        for i = 1, 9000 do redis.register_function('f' .. i, function() return i end) end";
    // FUNCTION LOAD stops a library's code after 500 ms, as Redis does. A
    // debug build on a loaded machine can take that long here; then the
    // only acceptable failure is that timeout, and nothing was registered.
    let loaded: redis::RedisResult<String> = run(&mut c, &["FUNCTION", "LOAD", code]);
    let name = match loaded {
        Ok(name) => name,
        Err(e) => {
            assert!(e.to_string().contains("FUNCTION LOAD timeout"), "{e}");
            assert_eq!(info_fields(&mut c, "memory")["number_of_functions"], "0");
            return;
        }
    };
    assert_eq!(name, "many");
    let last: i64 = run(&mut c, &["FCALL", "F9000", "0"]).unwrap();
    assert_eq!(last, 9000);
    assert_eq!(info_fields(&mut c, "memory")["number_of_functions"], "9000");
}
