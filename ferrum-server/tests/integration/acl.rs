//! ACL users: logging in, each rule family (commands, categories,
//! subcommands, first arguments, keys, channels, selectors), the `NOPERM`
//! replies, `ACL LOG`, and the ACL file.

use std::collections::HashMap;

use redis::Value;
use sha2::Digest;

use crate::common::{err, run, TestServer};

/// Runs `ACL SETUSER name rules...`.
fn setuser(c: &mut redis::Connection, name: &str, rules: &[&str]) {
    let mut args = vec!["ACL", "SETUSER", name];
    args.extend_from_slice(rules);
    let _: () = run(c, &args).expect("ACL SETUSER");
}

/// A connection logged in as `user` with `pass`.
fn login(s: &TestServer, user: &str, pass: &str) -> redis::Connection {
    let mut c = s.client();
    let _: () = run(&mut c, &["AUTH", user, pass]).expect("AUTH");
    c
}

/// `value` as text, for map keys and values of `ACL LOG`/`ACL GETUSER`.
fn text(value: &Value) -> String {
    match value {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Int(n) => n.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(" "),
        other => format!("{other:?}"),
    }
}

/// A RESP2 map reply (a flat array of pairs) as a map of texts.
fn fields(value: &Value) -> HashMap<String, String> {
    let Value::Array(items) = value else {
        panic!("not a map: {value:?}");
    };
    items
        .chunks(2)
        .map(|kv| (text(&kv[0]), text(&kv[1])))
        .collect()
}

/// The newest `ACL LOG` entry.
fn last_log(c: &mut redis::Connection) -> HashMap<String, String> {
    match run::<Value>(c, &["ACL", "LOG", "1"]).expect("ACL LOG") {
        Value::Array(entries) => fields(&entries[0]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn users_log_in_only_when_on_and_with_their_passwords() {
    let s = TestServer::start();
    let mut admin = s.client();
    assert_eq!(
        run::<String>(&mut admin, &["ACL", "WHOAMI"]).unwrap(),
        "default"
    );
    setuser(&mut admin, "alice", &[">pw1", ">pw2", "+@all", "~*"]);
    let mut c = s.client();
    assert_eq!(
        err(&mut c, &["AUTH", "alice", "pw1"]),
        "WRONGPASS invalid username-password pair or user is disabled."
    );
    setuser(&mut admin, "alice", &["on", "<pw1"]);
    assert!(run::<()>(&mut c, &["AUTH", "alice", "pw1"]).is_err());
    let _: () = run(&mut c, &["AUTH", "alice", "pw2"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["ACL", "WHOAMI"]).unwrap(), "alice");
    // HELLO ... AUTH logs in too.
    let mut h = s.client();
    let _: Value = run(&mut h, &["HELLO", "2", "AUTH", "alice", "pw2"]).unwrap();
    assert_eq!(run::<String>(&mut h, &["ACL", "WHOAMI"]).unwrap(), "alice");
    assert_eq!(
        err(&mut admin, &["ACL", "SETUSER", "a b"]),
        "ERR Usernames can't contain spaces or null characters"
    );
}

#[test]
fn requirepass_is_the_default_users_password() {
    let s = TestServer::start_with(&["--requirepass", "secret"]);
    let mut c = s.client();
    assert_eq!(
        err(&mut c, &["GET", "k"]),
        "NOAUTH Authentication required."
    );
    let _: () = run(&mut c, &["AUTH", "default", "secret"]).unwrap();
    let _: () = run(&mut c, &["CONFIG", "SET", "requirepass", "other"]).unwrap();
    let mut fresh = s.client();
    assert!(run::<()>(&mut fresh, &["AUTH", "secret"]).is_err());
    let _: () = run(&mut fresh, &["AUTH", "other"]).unwrap();
    let user = run::<Value>(&mut fresh, &["ACL", "GETUSER", "default"]).unwrap();
    let digest = sha2::Sha256::digest(b"other");
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(fields(&user)["passwords"], hex);
}

#[test]
fn user_lines_of_the_configuration() {
    let s = TestServer::start_with(&[
        "--user", "default", "on", "nopass", "~*", "+@all", "-flushdb",
    ]);
    let mut c = s.client();
    assert_eq!(
        err(&mut c, &["FLUSHDB"]),
        "NOPERM this user has no permissions to run the 'flushdb' command"
    );
    // No `&*`: the default user of a `user` line has no channels.
    assert!(err(&mut c, &["PUBLISH", "c", "m"]).starts_with("NOPERM"));
}

#[test]
fn commands_categories_subcommands_and_first_args() {
    let s = TestServer::start();
    let mut admin = s.client();
    setuser(
        &mut admin,
        "u",
        &[
            "on",
            "nopass",
            "~*",
            "+@all",
            "-@string",
            "-client",
            "+client|id",
            "-select",
            "+select|0",
        ],
    );
    let mut c = login(&s, "u", "x");
    assert_eq!(
        err(&mut c, &["SET", "k", "v"]),
        "NOPERM this user has no permissions to run the 'set' command"
    );
    let _: i64 = run(&mut c, &["SADD", "s", "a"]).unwrap();
    let _: i64 = run(&mut c, &["CLIENT", "ID"]).unwrap();
    assert_eq!(
        err(&mut c, &["CLIENT", "LIST"]),
        "NOPERM this user has no permissions to run the 'client|list' command"
    );
    let _: () = run(&mut c, &["SELECT", "0"]).unwrap();
    assert!(err(&mut c, &["SELECT", "1"]).starts_with("NOPERM"));
    let user = fields(&run::<Value>(&mut admin, &["ACL", "GETUSER", "u"]).unwrap());
    // Single commands come in command-table order (Redis: its dict order).
    assert_eq!(
        user["commands"],
        "+@all -@string -select +select|0 -client +client|id"
    );
    assert_eq!(
        err(&mut admin, &["ACL", "SETUSER", "u", "+config|get|x"]),
        "ERR Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported"
    );
    assert_eq!(
        err(&mut admin, &["ACL", "SETUSER", "u", "+nosuch"]),
        "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"
    );
}

#[test]
fn key_patterns_with_read_and_write_permissions() {
    let s = TestServer::start();
    let mut admin = s.client();
    setuser(
        &mut admin,
        "k",
        &["on", "nopass", "+@all", "%R~read*", "%W~write*", "~both*"],
    );
    let _: () = run(&mut admin, &["SET", "read1", "v"]).unwrap();
    let mut c = login(&s, "k", "x");
    assert_eq!(run::<String>(&mut c, &["GET", "read1"]).unwrap(), "v");
    let denied = "NOPERM this user has no permissions to access one of the keys used as arguments";
    assert_eq!(err(&mut c, &["SET", "read1", "v"]), denied);
    assert_eq!(err(&mut c, &["GET", "write1"]), denied);
    let _: i64 = run(&mut c, &["LPUSH", "write1", "a"]).unwrap();
    // Existence and length read no value: either permission will do.
    let _: i64 = run(&mut c, &["EXISTS", "write1"]).unwrap();
    let _: bool = run(&mut c, &["COPY", "read1", "write2"]).unwrap();
    assert_eq!(err(&mut c, &["COPY", "write1", "read2"]), denied);
    let _: () = run(&mut c, &["SET", "both1", "v"]).unwrap();
    assert_eq!(err(&mut c, &["GET", "other"]), denied);
    let user = fields(&run::<Value>(&mut admin, &["ACL", "GETUSER", "k"]).unwrap());
    assert_eq!(user["keys"], "%R~read* %W~write* ~both*");
}

#[test]
fn channel_patterns_for_publish_and_subscribe() {
    let s = TestServer::start();
    let mut admin = s.client();
    setuser(
        &mut admin,
        "p",
        &[
            "on",
            "nopass",
            "+@all",
            "resetchannels",
            "&news.*",
            "&alerts",
        ],
    );
    let mut c = login(&s, "p", "x");
    let _: i64 = run(&mut c, &["PUBLISH", "news.1", "m"]).unwrap();
    let _: i64 = run(&mut c, &["SPUBLISH", "alerts", "m"]).unwrap();
    let denied =
        "NOPERM this user has no permissions to access one of the channels used as arguments";
    assert_eq!(err(&mut c, &["PUBLISH", "sports", "m"]), denied);
    // A pattern subscription must be allowed literally.
    assert_eq!(err(&mut c, &["PSUBSCRIBE", "news.1*"]), denied);
    let mut sub = login(&s, "p", "x");
    let _: Value = run(&mut sub, &["PSUBSCRIBE", "news.*"]).unwrap();
    let clients_before = {
        let mut probe = s.client();
        let list: String = run(&mut probe, &["CLIENT", "LIST"]).unwrap();
        assert!(list.contains("psub=1"), "{list}");
        list.lines().count()
    };
    // Revoking the pattern closes the subscriber, as in Redis.
    setuser(&mut admin, "p", &["resetchannels"]);
    let list: String = run(&mut admin, &["CLIENT", "LIST"]).unwrap();
    assert!(!list.contains("psub=1"), "{list}");
    assert!(list.lines().count() < clients_before);
}

#[test]
fn selectors_allow_a_command_if_any_allows_it() {
    let s = TestServer::start();
    let mut admin = s.client();
    setuser(
        &mut admin,
        "sel",
        &[
            "on",
            "nopass",
            "-@all",
            "(+@write ~write::*)",
            "(+@read",
            "~read::*)",
        ],
    );
    let mut c = login(&s, "sel", "x");
    let _: () = run(&mut c, &["SET", "write::a", "v"]).unwrap();
    let _: Option<String> = run(&mut c, &["GET", "read::a"]).unwrap();
    assert!(err(&mut c, &["GET", "write::a"]).starts_with("NOPERM"));
    let user = run::<Value>(&mut admin, &["ACL", "GETUSER", "sel"]).unwrap();
    let list: Vec<String> = run(&mut admin, &["ACL", "LIST"]).unwrap();
    let line = list
        .iter()
        .find(|l| l.starts_with("user sel "))
        .expect("listed");
    assert_eq!(
        line,
        "user sel on nopass resetchannels -@all (~write::* resetchannels -@all +@write) (~read::* resetchannels -@all +@read)"
    );
    assert!(text(&user).contains("~read::*"));
    assert_eq!(
        err(&mut admin, &["ACL", "SETUSER", "bad", "(~a"]),
        "ERR Unmatched parenthesis in acl selector starting at '(~a'."
    );
}

#[test]
fn acl_log_records_refusals_with_their_context() {
    let s = TestServer::start();
    let mut admin = s.client();
    setuser(
        &mut admin,
        "lg",
        &[">pw", "on", "+set", "+multi", "+exec", "+eval", "~allowed"],
    );
    let mut c = login(&s, "lg", "pw");
    for _ in 0..3 {
        assert!(err(&mut c, &["GET", "allowed"]).starts_with("NOPERM"));
    }
    let entry = last_log(&mut admin);
    assert_eq!(entry["reason"], "command");
    assert_eq!(entry["context"], "toplevel");
    assert_eq!(entry["object"], "get");
    assert_eq!(entry["username"], "lg");
    assert_eq!(entry["count"], "3");
    assert!(entry["client-info"].contains("user=lg"));
    assert!(err(&mut c, &["SET", "other", "v"]).starts_with("NOPERM"));
    let entry = last_log(&mut admin);
    assert_eq!(
        (entry["reason"].as_str(), entry["object"].as_str()),
        ("key", "other")
    );
    // Queued in MULTI: refused at once, the transaction aborts.
    let _: () = run(&mut c, &["MULTI"]).unwrap();
    assert!(err(&mut c, &["GET", "allowed"]).starts_with("NOPERM"));
    assert!(err(&mut c, &["EXEC"]).starts_with("EXECABORT"));
    assert_eq!(last_log(&mut admin)["context"], "multi");
    // From a script: the script's text, the `lua` context.
    let e = err(
        &mut c,
        &["EVAL", "return redis.call('get', 'allowed')", "0"],
    );
    assert!(
        e.contains("The user executing the script can't run this command or subcommand"),
        "{e}"
    );
    assert_eq!(last_log(&mut admin)["context"], "lua");
    // `redis.acl_check_cmd` asks without running or logging.
    let script =
        "return {redis.acl_check_cmd('set', 'allowed', 1), redis.acl_check_cmd('get', 'allowed')}";
    let checks: Vec<Option<i64>> = run(&mut c, &["EVAL", script, "0"]).unwrap();
    assert_eq!(checks, [Some(1), None]);
    // A failed login.
    assert!(run::<()>(&mut s.client(), &["AUTH", "lg", "wrong"]).is_err());
    let entry = last_log(&mut admin);
    assert_eq!(
        (entry["reason"].as_str(), entry["object"].as_str()),
        ("auth", "AUTH")
    );
    let _: () = run(&mut admin, &["ACL", "LOG", "RESET"]).unwrap();
    assert_eq!(
        run::<Vec<Value>>(&mut admin, &["ACL", "LOG"]).unwrap(),
        vec![]
    );
}

#[test]
fn dryrun_cat_genpass_and_deluser() {
    let s = TestServer::start();
    let mut admin = s.client();
    setuser(&mut admin, "d", &["on", ">pw", "+get", "+acl", "~r*"]);
    let dry = |c: &mut redis::Connection, args: &[&str]| {
        let mut all = vec!["ACL", "DRYRUN", "d"];
        all.extend_from_slice(args);
        run::<String>(c, &all).unwrap()
    };
    assert_eq!(dry(&mut admin, &["GET", "r1"]), "OK");
    assert_eq!(
        dry(&mut admin, &["GET", "x"]),
        "This user has no permissions to access the 'x' key"
    );
    assert_eq!(
        dry(&mut admin, &["SET", "r1", "v"]),
        "This user has no permissions to run the 'set' command"
    );
    assert_eq!(
        err(&mut admin, &["ACL", "DRYRUN", "nobody", "GET", "k"]),
        "ERR User 'nobody' not found"
    );
    let cats: Vec<String> = run(&mut admin, &["ACL", "CAT"]).unwrap();
    assert_eq!(cats.len(), 21);
    let tx: Vec<String> = run(&mut admin, &["ACL", "CAT", "transaction"]).unwrap();
    assert!(tx.contains(&"multi".to_owned()) && !tx.contains(&"get".to_owned()));
    assert_eq!(
        run::<String>(&mut admin, &["ACL", "GENPASS"])
            .unwrap()
            .len(),
        64
    );
    assert_eq!(
        run::<String>(&mut admin, &["ACL", "GENPASS", "5"])
            .unwrap()
            .len(),
        2
    );
    // Deleting a user closes its connections.
    let mut c = login(&s, "d", "pw");
    assert_eq!(
        run::<i64>(&mut admin, &["ACL", "DELUSER", "d", "nobody"]).unwrap(),
        1
    );
    assert!(run::<String>(&mut c, &["PING"]).is_err());
    assert_eq!(
        err(&mut admin, &["ACL", "DELUSER", "default"]),
        "ERR The 'default' user cannot be removed"
    );
}

#[test]
fn aclfile_round_trip() {
    let dir = std::env::temp_dir().join(format!("ferrum-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("users.acl");
    std::fs::write(
        &file,
        "user alice on >alice ~* &* +@all\nuser bob on nopass -@all +get ~b*\n",
    )
    .expect("write acl file");
    let dir_text = dir.to_string_lossy().into_owned();
    let s = TestServer::start_with(&["--dir", &dir_text, "--aclfile", "users.acl"]);
    let mut admin = s.client();
    let users: Vec<String> = run(&mut admin, &["ACL", "USERS"]).unwrap();
    assert_eq!(users, ["alice", "bob", "default"]);
    let mut bob = login(&s, "bob", "x");
    assert!(err(&mut bob, &["SET", "b1", "v"]).starts_with("NOPERM"));
    setuser(&mut admin, "carol", &["on", ">carol", "+@read", "~*"]);
    let _: () = run(&mut admin, &["ACL", "SAVE"]).unwrap();
    let saved = std::fs::read_to_string(&file).expect("saved file");
    assert!(saved.contains("user carol on #"), "{saved}");
    // LOAD replaces the users and closes their connections (not default's).
    std::fs::write(
        &file,
        saved.replace("user bob on nopass", "user bob off nopass"),
    )
    .unwrap();
    let _: () = run(&mut admin, &["ACL", "LOAD"]).unwrap();
    assert!(run::<String>(&mut bob, &["PING"]).is_err());
    assert_eq!(run::<String>(&mut admin, &["PING"]).unwrap(), "PONG");
    assert!(run::<()>(&mut s.client(), &["AUTH", "bob", "x"]).is_err());
    let _: () = run(&mut s.client(), &["AUTH", "carol", "carol"]).unwrap();
    std::fs::write(&file, "user alice on\nuser alice off\n").unwrap();
    let e = err(&mut admin, &["ACL", "LOAD"]);
    assert!(e.contains("Duplicate user 'alice' found"), "{e}");
    assert!(run::<Value>(&mut admin, &["ACL", "GETUSER", "carol"]).unwrap() != Value::Nil);
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exec_rechecks_queued_commands_and_kill_by_user() {
    let s = TestServer::start();
    let mut admin = s.client();
    setuser(
        &mut admin,
        "tx",
        &["on", "nopass", "~*", "+multi", "+exec", "+incr"],
    );
    let mut c = login(&s, "tx", "x");
    let _: () = run(&mut c, &["MULTI"]).unwrap();
    let _: String = run(&mut c, &["INCR", "n"]).unwrap();
    setuser(&mut admin, "tx", &["-incr"]);
    // The error is the transaction's one reply element.
    assert_eq!(
        err(&mut c, &["EXEC"]),
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand"
    );
    assert_eq!(last_log(&mut admin)["context"], "multi");
    assert_eq!(
        run::<i64>(&mut admin, &["CLIENT", "KILL", "USER", "tx"]).unwrap(),
        1
    );
    assert!(run::<String>(&mut c, &["PING"]).is_err());
    assert_eq!(
        err(&mut admin, &["CLIENT", "KILL", "USER", "nobody"]),
        "ERR No such user 'nobody'"
    );
}
