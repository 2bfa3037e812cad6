//! Connection commands: PING, ECHO, QUIT, HELLO, AUTH, SELECT, CLIENT.

use crate::common::{err, resp, run, TestServer};

#[test]
fn ping_echo_quit() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.roundtrip(b"PING\r\n", b"+PONG\r\n");
    raw.roundtrip(&resp(&[b"PING", b"hi"]), b"$2\r\nhi\r\n");
    raw.roundtrip(
        &resp(&[b"PING", b"a", b"b"]),
        b"-ERR wrong number of arguments for 'ping' command\r\n",
    );
    raw.roundtrip(&resp(&[b"ECHO", b"x y"]), b"$3\r\nx y\r\n");
    raw.roundtrip(b"QUIT\r\n", b"+OK\r\n");
    assert!(raw.is_closed());
}

#[test]
fn select_isolates_databases() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "db0"]).unwrap();
    let _: () = run(&mut c, &["SELECT", "5"]).unwrap();
    assert_eq!(run::<Option<String>>(&mut c, &["GET", "k"]).unwrap(), None);
    let _: () = run(&mut c, &["SET", "k", "db5"]).unwrap();
    assert_eq!(
        err(&mut c, &["SELECT", "16"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut c, &["SELECT", "-1"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut c, &["SELECT", "x"]),
        "ERR value is not an integer or out of range"
    );
    let _: () = run(&mut c, &["SELECT", "0"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["GET", "k"]).unwrap(), "db0");
}

#[test]
fn hello_negotiates_resp3() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.send(b"HELLO 3\r\n");
    let reply = String::from_utf8(raw.read_exact_len(1)).unwrap();
    assert_eq!(reply, "%", "HELLO 3 replies with a RESP3 map");
    // Read the rest of the map: 7 pairs, then check a RESP3-only reply type.
    let mut rest = Vec::new();
    while !String::from_utf8_lossy(&rest).contains("modules") {
        rest.extend(raw.read_exact_len(1));
    }
    rest.extend(raw.read_exact_len(b"\r\n*0\r\n".len()));
    raw.roundtrip(b"GET missing\r\n", b"_\r\n");
    raw.roundtrip(b"HELLO 4\r\n", b"-NOPROTO unsupported protocol version\r\n");
    raw.send(b"HELLO 2\r\n");
    let _ = raw.read_exact_len(1);
    let mut more = Vec::new();
    while !String::from_utf8_lossy(&more).contains("modules") {
        more.extend(raw.read_exact_len(1));
    }
    more.extend(raw.read_exact_len(b"\r\n*0\r\n".len()));
    raw.roundtrip(b"GET missing\r\n", b"$-1\r\n");
}

#[test]
fn requirepass_and_auth() {
    let s = TestServer::start_with(&["--requirepass", "s3cret"]);
    let mut raw = s.raw();
    raw.roundtrip(b"GET k\r\n", b"-NOAUTH Authentication required.\r\n");
    raw.roundtrip(
        b"AUTH wrong\r\n",
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
    );
    raw.roundtrip(b"AUTH s3cret\r\n", b"+OK\r\n");
    raw.roundtrip(b"GET k\r\n", b"$-1\r\n");
    let mut other = s.raw();
    raw.roundtrip(b"AUTH default s3cret\r\n", b"+OK\r\n");
    other.send(b"HELLO 3 AUTH default s3cret SETNAME app\r\n");
    assert_eq!(other.read_exact_len(1), b"%");
    // A client library authenticating through the URL works too.
    let client = redis::Client::open(format!("redis://:s3cret@{}/", s.addr)).unwrap();
    let mut c = client.get_connection().unwrap();
    assert_eq!(run::<String>(&mut c, &["PING"]).unwrap(), "PONG");
}

#[test]
fn auth_without_password_configured() {
    let s = TestServer::start();
    let mut c = s.client();
    assert!(err(&mut c, &["AUTH", "x"])
        .starts_with("ERR AUTH <password> called without any password configured"));
}

#[test]
fn client_subcommands() {
    let s = TestServer::start();
    let mut c = s.client();
    let id: i64 = run(&mut c, &["CLIENT", "ID"]).unwrap();
    assert!(id > 0);
    assert_eq!(
        run::<Option<String>>(&mut c, &["CLIENT", "GETNAME"]).unwrap(),
        None
    );
    let _: () = run(&mut c, &["CLIENT", "SETNAME", "worker-1"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["CLIENT", "GETNAME"]).unwrap(),
        "worker-1"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "SETNAME", "bad name"]),
        "ERR Client names cannot contain spaces, newlines or special characters."
    );
    let info: String = run(&mut c, &["CLIENT", "INFO"]).unwrap();
    assert!(
        info.starts_with(&format!("id={id} addr=127.0.0.1:")),
        "{info}"
    );
    assert!(info.contains(" name=worker-1 "), "{info}");

    let mut victim = s.raw();
    victim.roundtrip(b"CLIENT SETNAME victim\r\n", b"+OK\r\n");
    let list: String = run(&mut c, &["CLIENT", "LIST"]).unwrap();
    assert_eq!(list.lines().count(), 2, "{list}");
    let victim_id = list
        .lines()
        .find(|l| l.contains("name=victim"))
        .and_then(|l| l.split(' ').next())
        .and_then(|f| f.strip_prefix("id="))
        .unwrap()
        .to_string();
    assert_eq!(
        run::<i64>(&mut c, &["CLIENT", "KILL", "ID", &victim_id]).unwrap(),
        1
    );
    assert!(victim.is_closed());
    assert_eq!(
        run::<i64>(&mut c, &["CLIENT", "KILL", "ID", "999999"]).unwrap(),
        0
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "KILL", "1.2.3.4:5"]),
        "ERR No such client"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "FOO"]),
        "ERR unknown subcommand 'FOO'. Try CLIENT HELP."
    );
}
