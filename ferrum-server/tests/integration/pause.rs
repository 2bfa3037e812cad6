//! `CLIENT PAUSE` / `CLIENT UNPAUSE`: writes wait, reads and errors do not.

use std::time::Duration;

use crate::common::{err, run, TestServer};

fn blocked_clients(c: &mut redis::Connection) -> i64 {
    let info: String = run(c, &["INFO", "clients"]).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("blocked_clients field")
}

#[test]
fn write_pause_holds_writes_until_unpause() {
    let s = TestServer::start();
    let mut admin = s.client();
    let _: () = run(&mut admin, &["SET", "k", "before"]).unwrap();
    let _: () = run(&mut admin, &["CLIENT", "PAUSE", "60000", "WRITE"]).unwrap();
    // Reads, and commands refused before running, are answered at once.
    assert_eq!(run::<String>(&mut admin, &["GET", "k"]).unwrap(), "before");
    assert_eq!(
        err(&mut admin, &["SET", "k"]),
        "ERR wrong number of arguments for 'set' command"
    );
    let addr = s.addr;
    let writer = std::thread::spawn(move || {
        let mut c = redis::Client::open(format!("redis://{addr}/"))
            .unwrap()
            .get_connection()
            .unwrap();
        run::<()>(&mut c, &["SET", "k", "after"]).unwrap();
    });
    let mut held = false;
    for _ in 0..2000 {
        if blocked_clients(&mut admin) == 1 {
            held = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(held, "the SET was never held");
    assert_eq!(run::<String>(&mut admin, &["GET", "k"]).unwrap(), "before");
    let _: () = run(&mut admin, &["CLIENT", "UNPAUSE"]).unwrap();
    writer.join().expect("writer");
    assert_eq!(run::<String>(&mut admin, &["GET", "k"]).unwrap(), "after");
    assert_eq!(blocked_clients(&mut admin), 0);
}

#[test]
fn pause_arguments_are_checked() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        err(&mut c, &["CLIENT", "PAUSE", "abc"]),
        "ERR timeout is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "PAUSE", "-1"]),
        "ERR timeout is negative"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "PAUSE", "10", "SOME"]),
        "ERR CLIENT PAUSE mode must be WRITE or ALL"
    );
}
