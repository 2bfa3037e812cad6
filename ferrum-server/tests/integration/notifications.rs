//! Keyspace notifications (`notify-keyspace-events`): which events a write
//! sends, on which channels, and nothing at all by default.

use crate::common::{err, resp, run, Raw, TestServer};

/// A raw client subscribed to every channel (`PSUBSCRIBE *`).
fn listener(s: &TestServer) -> Raw {
    let mut sub = s.raw();
    sub.roundtrip(
        &resp(&[b"PSUBSCRIBE", b"*"]),
        b"*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n",
    );
    sub
}

/// Reads one `pmessage * channel payload` and checks it.
fn expect_event(sub: &mut Raw, channel: &str, payload: &str) {
    let want = format!(
        "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n${}\r\n{}\r\n${}\r\n{}\r\n",
        channel.len(),
        channel,
        payload.len(),
        payload
    );
    let got = sub.read_exact_len(want.len());
    assert_eq!(String::from_utf8_lossy(&got), want);
}

fn config_set(c: &mut redis::Connection, value: &str) {
    let _: () = run(c, &["CONFIG", "SET", "notify-keyspace-events", value]).expect("config set");
}

#[test]
fn flags_are_validated_and_read_back_canonically() {
    let s = TestServer::start();
    let mut c = s.client();
    for (given, shown) in [("KA", "AK"), ("gKE", "gKE"), ("Kmn", "nKm"), ("", "")] {
        config_set(&mut c, given);
        let v: Vec<String> = run(&mut c, &["CONFIG", "GET", "notify-keyspace-events"]).unwrap();
        assert_eq!(v[1], shown, "{given}");
    }
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "KQ"]),
        "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
    );
}

#[test]
fn writes_send_keyspace_and_keyevent_messages_of_enabled_classes_only() {
    let s = TestServer::start();
    let mut c = s.client();
    config_set(&mut c, "KEl");
    let mut sub = listener(&s);
    let _: () = run(&mut c, &["SET", "foo", "bar"]).unwrap(); // strings are masked
    let _: i64 = run(&mut c, &["RPUSH", "mylist", "a"]).unwrap();
    let _: Option<String> = run(&mut c, &["LPOP", "mylist"]).unwrap();
    let _: Option<String> = run(&mut c, &["LPOP", "mylist"]).unwrap(); // nothing popped
    expect_event(&mut sub, "__keyspace@0__:mylist", "rpush");
    expect_event(&mut sub, "__keyevent@0__:rpush", "mylist");
    expect_event(&mut sub, "__keyspace@0__:mylist", "lpop");
    expect_event(&mut sub, "__keyevent@0__:lpop", "mylist");

    // Generic events, `del` of a drained collection, and no event for a
    // command that changed nothing.
    config_set(&mut c, "Kgs");
    let _: i64 = run(&mut c, &["SADD", "s", "a"]).unwrap();
    let _: i64 = run(&mut c, &["SREM", "s", "x"]).unwrap();
    let _: i64 = run(&mut c, &["SREM", "s", "a"]).unwrap();
    let _: i64 = run(&mut c, &["EXPIRE", "foo", "100"]).unwrap();
    let _: () = run(&mut c, &["RENAME", "foo", "bar"]).unwrap();
    let _: i64 = run(&mut c, &["DEL", "bar", "missing"]).unwrap();
    expect_event(&mut sub, "__keyspace@0__:s", "sadd");
    expect_event(&mut sub, "__keyspace@0__:s", "srem");
    expect_event(&mut sub, "__keyspace@0__:s", "del");
    expect_event(&mut sub, "__keyspace@0__:foo", "expire");
    expect_event(&mut sub, "__keyspace@0__:foo", "rename_from");
    expect_event(&mut sub, "__keyspace@0__:bar", "rename_to");
    expect_event(&mut sub, "__keyspace@0__:bar", "del");

    // `new` only for a key that did not exist.
    config_set(&mut c, "En");
    let _: () = run(&mut c, &["SET", "k", "1"]).unwrap();
    let _: () = run(&mut c, &["SET", "k", "2"]).unwrap();
    let _: () = run(&mut c, &["SET", "k2", "1"]).unwrap();
    expect_event(&mut sub, "__keyevent@0__:new", "k");
    expect_event(&mut sub, "__keyevent@0__:new", "k2");
}

#[test]
fn expired_keys_are_reported_lazily_and_in_the_background() {
    let s = TestServer::start();
    let mut c = s.client();
    config_set(&mut c, "Ex");
    let mut sub = listener(&s);
    // Lazily: the next command touching the key expires it.
    let _: () = run(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).unwrap();
    let _: () = run(&mut c, &["SET", "lazy", "1", "PX", "100"]).unwrap();
    s.advance(&mut c, 200);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "lazy"]).unwrap(), 0);
    expect_event(&mut sub, "__keyevent@0__:expired", "lazy");
    // In the background: nobody touches the key.
    let _: () = run(&mut c, &["SET", "bg", "1", "PX", "100"]).unwrap();
    s.advance(&mut c, 200);
    let _: () = run(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]).unwrap();
    expect_event(&mut sub, "__keyevent@0__:expired", "bg");
}

#[test]
fn a_paused_cron_expires_nothing_in_the_background() {
    let s = TestServer::start();
    let mut c = s.client();
    config_set(&mut c, "Ex");
    let mut sub = listener(&s);
    let _: () = run(&mut c, &["DEBUG", "PAUSE-CRON", "1"]).unwrap();
    let _: () = run(&mut c, &["SET", "bg", "1", "PX", "100"]).unwrap();
    s.advance(&mut c, 200);
    // Several of the cron's ticks (10 a second) go by: none removes it.
    std::thread::sleep(std::time::Duration::from_millis(400));
    let info: String = run(&mut c, &["INFO", "stats"]).unwrap();
    assert!(info.contains("expired_keys:0\r\n"), "{info}");
    let _: () = run(&mut c, &["DEBUG", "PAUSE-CRON", "0"]).unwrap();
    expect_event(&mut sub, "__keyevent@0__:expired", "bg");
}

#[test]
fn evicted_keys_are_reported() {
    let s = TestServer::start();
    let mut c = s.client();
    config_set(&mut c, "Ee");
    let mut sub = listener(&s);
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
    )
    .unwrap();
    let _: () = run(&mut c, &["SET", "victim", "1"]).unwrap();
    // A limit below one key's cost: lowering it evicts at once.
    let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory", "1"]).unwrap();
    expect_event(&mut sub, "__keyevent@0__:evicted", "victim");
    let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory", "0"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 0);
}

#[test]
fn nothing_is_published_by_default() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut sub = listener(&s);
    let _: () = run(&mut c, &["SET", "foo", "bar"]).unwrap();
    let _: i64 = run(&mut c, &["DEL", "foo"]).unwrap();
    // The first message the listener sees is this one, not an event.
    assert_eq!(run::<i64>(&mut c, &["PUBLISH", "mark", "x"]).unwrap(), 1);
    let want = b"*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$4\r\nmark\r\n$1\r\nx\r\n";
    assert_eq!(sub.read_exact_len(want.len()), want);
}

/// Stream events as Redis 7.0.15 sends them for the same sequence
/// (checked against redis-server): `xtrim` after an XADD that trimmed, the
/// `xgroup-*` events of XGROUP, and `xgroup-createconsumer` when
/// XREADGROUP, XCLAIM or XAUTOCLAIM create the consumer they name; nothing
/// for a call that changed nothing.
#[test]
fn stream_and_consumer_group_events() {
    let s = TestServer::start();
    let mut c = s.client();
    config_set(&mut c, "Kt");
    let mut sub = listener(&s);
    let cmds: &[&[&str]] = &[
        &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "Bob"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "Bob"], // exists: nothing
        &["XADD", "s", "1-0", "f", "v"],
        &["XADD", "s", "MAXLEN", "1", "2-0", "f", "v"], // xadd, xtrim
        &["XADD", "s", "MAXLEN", "1", "3-0", "f", "v"], // xadd, xtrim
        &["XTRIM", "s", "MAXLEN", "1"],                 // nothing trimmed
        &["XREADGROUP", "GROUP", "g", "Alice", "STREAMS", "s", ">"],
        &["XREADGROUP", "GROUP", "g", "Alice", "STREAMS", "s", ">"], // Alice exists
        &["XCLAIM", "s", "g", "Mike", "0", "3-0", "FORCE"],
        &["XAUTOCLAIM", "s", "g", "Zed", "0", "0"],
        &["XGROUP", "SETID", "s", "g", "0"],
        &["XGROUP", "DELCONSUMER", "s", "g", "Lee"], // no such consumer: nothing
        &["XGROUP", "DELCONSUMER", "s", "g", "Bob"],
        &["XGROUP", "DESTROY", "s", "g"],
        &["XGROUP", "DESTROY", "s", "g"], // gone already: nothing
    ];
    for cmd in cmds {
        let _: redis::Value = run(&mut c, cmd).unwrap();
    }
    for event in [
        "xgroup-create",
        "xgroup-createconsumer",
        "xadd",
        "xadd",
        "xtrim",
        "xadd",
        "xtrim",
        "xgroup-createconsumer",
        "xgroup-createconsumer",
        "xgroup-createconsumer",
        "xgroup-setid",
        "xgroup-delconsumer",
        "xgroup-destroy",
    ] {
        expect_event(&mut sub, "__keyspace@0__:s", event);
    }
    // The last event was the last one sent.
    let _: i64 = run(&mut c, &["XDEL", "s", "3-0"]).unwrap();
    expect_event(&mut sub, "__keyspace@0__:s", "xdel");
}
