//! Client-side caching (`CLIENT TRACKING`): invalidations in RESP3 pushes
//! and on `__redis__:invalidate` for a redirect target, BCAST prefixes,
//! OPTIN/NOLOOP, FLUSHALL, and the introspection subcommands.

use crate::common::{err, resp, run, Raw, TestServer};

fn client_id(r: &mut Raw) -> String {
    r.send(b"CLIENT ID\r\n");
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        line.extend(r.read_exact_len(1));
    }
    String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned()
}

/// A RESP2 client subscribed to `__redis__:invalidate`, and its id.
fn redirect_target(s: &TestServer) -> (Raw, String) {
    let mut r = s.raw();
    let id = client_id(&mut r);
    r.roundtrip(
        &resp(&[b"SUBSCRIBE", b"__redis__:invalidate"]),
        b"*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n",
    );
    (r, id)
}

fn invalidation_message(keys: &[&str]) -> Vec<u8> {
    let mut m = format!(
        "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*{}\r\n",
        keys.len()
    );
    for k in keys {
        m.push_str(&format!("${}\r\n{}\r\n", k.len(), k));
    }
    m.into_bytes()
}

#[test]
fn default_mode_invalidates_read_keys_once_through_a_redirect() {
    let s = TestServer::start();
    let (mut target, id) = redirect_target(&s);
    let mut r = s.client();
    let mut w = s.client();
    let _: () = run(&mut r, &["CLIENT", "TRACKING", "on", "REDIRECT", &id]).unwrap();
    let _: () = run(&mut w, &["SET", "a", "1"]).unwrap();
    let _: () = run(&mut w, &["SET", "b", "1"]).unwrap();
    let _: Option<String> = run(&mut r, &["GET", "a"]).unwrap();
    let _: i64 = run(&mut w, &["INCR", "b"]).unwrap(); // not read: no message
    let _: i64 = run(&mut w, &["INCR", "a"]).unwrap();
    let _: i64 = run(&mut w, &["INCR", "a"]).unwrap(); // already invalidated
    let _: () = run(&mut w, &["FLUSHALL"]).unwrap();
    let mut want = invalidation_message(&["a"]);
    // FLUSHALL: every key, as a null (RESP2's `$-1`, as Redis sends it).
    want.extend_from_slice(b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n");
    assert_eq!(
        String::from_utf8_lossy(&target.read_exact_len(want.len())),
        String::from_utf8_lossy(&want)
    );
    assert_eq!(
        run::<i64>(&mut r, &["CLIENT", "GETREDIR"])
            .unwrap()
            .to_string(),
        id
    );
    let _: () = run(&mut r, &["CLIENT", "TRACKING", "off"]).unwrap();
    assert_eq!(run::<i64>(&mut r, &["CLIENT", "GETREDIR"]).unwrap(), -1);
}

#[test]
fn resp3_clients_get_pushes_and_bcast_batches_a_command() {
    let s = TestServer::start();
    let mut r = s.raw();
    r.hello3();
    r.roundtrip(
        &resp(&[
            b"CLIENT",
            b"TRACKING",
            b"on",
            b"BCAST",
            b"PREFIX",
            b"a:",
            b"NOLOOP",
        ]),
        b"+OK\r\n",
    );
    let mut w = s.client();
    let _: () = run(&mut w, &["MSET", "a:1", "x", "b:1", "y", "a:2", "z"]).unwrap();
    // One push for the whole MSET, with the keys under the prefix.
    let want = b">2\r\n$10\r\ninvalidate\r\n*2\r\n$3\r\na:1\r\n$3\r\na:2\r\n";
    assert_eq!(
        String::from_utf8_lossy(&r.read_exact_len(want.len())),
        String::from_utf8_lossy(want)
    );
    // The client's own write is left out (NOLOOP): nothing before PONG.
    r.roundtrip(b"SET a:3 v\r\n", b"+OK\r\n");
    r.roundtrip(b"PING\r\n", b"+PONG\r\n");
    r.roundtrip(
        &resp(&[b"CLIENT", b"TRACKINGINFO"]),
        b"%3\r\n$5\r\nflags\r\n~3\r\n$2\r\non\r\n$5\r\nbcast\r\n$6\r\nnoloop\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*1\r\n$2\r\na:\r\n",
    );
}

#[test]
fn optin_tracks_only_after_caching_yes() {
    let s = TestServer::start();
    let mut r = s.raw();
    r.hello3();
    r.roundtrip(b"CLIENT TRACKING on OPTIN\r\n", b"+OK\r\n");
    r.roundtrip(b"GET k1\r\n", b"_\r\n");
    r.roundtrip(b"CLIENT CACHING yes\r\n", b"+OK\r\n");
    r.roundtrip(b"GET k2\r\n", b"_\r\n");
    let mut w = s.client();
    let _: () = run(&mut w, &["SET", "k1", "1"]).unwrap();
    let _: () = run(&mut w, &["SET", "k2", "1"]).unwrap();
    let want = b">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nk2\r\n";
    assert_eq!(r.read_exact_len(want.len()), want);
}

#[test]
fn tracking_options_are_refused_as_redis_refuses_them() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        err(&mut c, &["CLIENT", "TRACKING", "on", "PREFIX", "a"]),
        "ERR PREFIX option requires BCAST mode to be enabled"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "TRACKING", "on", "REDIRECT", "999999"]),
        "ERR The client ID you want redirect to does not exist"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"]),
        "ERR You can't specify both OPTIN mode and OPTOUT mode"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "TRACKING", "maybe"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "CACHING", "yes"]),
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
    );
    let info: redis::Value = run(&mut c, &["CLIENT", "TRACKINGINFO"]).unwrap();
    assert!(format!("{info:?}").contains("off"));
}
