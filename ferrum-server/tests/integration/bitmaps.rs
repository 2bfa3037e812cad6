//! Bitmaps: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO,
//! with replies and errors as Redis 7.0 gives them.

use crate::common::{err, run, TestServer};

#[test]
fn setbit_getbit_grow_the_string_msb_first() {
    let s = TestServer::start();
    let mut c = s.client();
    let old: i64 = run(&mut c, &["SETBIT", "k", "1", "1"]).unwrap();
    assert_eq!(old, 0);
    let v: Vec<u8> = run(&mut c, &["GET", "k"]).unwrap();
    assert_eq!(v, [0x40]);
    let old: i64 = run(&mut c, &["SETBIT", "k", "1", "0"]).unwrap();
    assert_eq!(old, 1);
    let _: i64 = run(&mut c, &["SETBIT", "k", "17", "1"]).unwrap();
    let v: Vec<u8> = run(&mut c, &["GET", "k"]).unwrap();
    assert_eq!(v, [0, 0, 0x40]);
    assert_eq!(run::<i64>(&mut c, &["GETBIT", "k", "17"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["GETBIT", "k", "1000"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["GETBIT", "nokey", "0"]).unwrap(), 0);
    // The TTL survives a bit change.
    let _: i64 = run(&mut c, &["EXPIRE", "k", "100"]).unwrap();
    let _: i64 = run(&mut c, &["SETBIT", "k", "0", "1"]).unwrap();
    assert!(run::<i64>(&mut c, &["TTL", "k"]).unwrap() > 0);
}

#[test]
fn bit_errors_match_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["LPUSH", "l", "a"]).unwrap();
    assert!(err(&mut c, &["SETBIT", "l", "0", "1"]).starts_with("WRONGTYPE"));
    assert_eq!(
        err(&mut c, &["SETBIT", "k", "4294967296", "1"]),
        "ERR bit offset is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["SETBIT", "k", "0", "2"]),
        "ERR bit is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["BITPOS", "k", "2"]),
        "ERR The bit argument must be 1 or 0."
    );
    assert_eq!(
        err(&mut c, &["BITOP", "NOT", "d", "a", "b"]),
        "ERR BITOP NOT must be called with a single source key."
    );
    assert_eq!(
        err(&mut c, &["BITOP", "NAND", "d", "a"]),
        "ERR syntax error"
    );
    let _: () = run(&mut c, &["SET", "s", "x"]).unwrap();
    assert_eq!(err(&mut c, &["BITCOUNT", "s", "0"]), "ERR syntax error");
}

#[test]
fn bitcount_and_bitpos_in_bytes_and_bits() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "foobar"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["BITCOUNT", "k"]).unwrap(), 26);
    assert_eq!(run::<i64>(&mut c, &["BITCOUNT", "k", "1", "1"]).unwrap(), 6);
    assert_eq!(
        run::<i64>(&mut c, &["BITCOUNT", "k", "5", "30", "BIT"]).unwrap(),
        17
    );
    assert_eq!(
        run::<i64>(&mut c, &["BITCOUNT", "k", "-1", "-2"]).unwrap(),
        0
    );
    let _: () = run(&mut c, &["SET", "p", "\u{0}\u{ff}\u{0}"]).unwrap();
    // "\xff" as UTF-8 is two bytes (c3 bf): bytes are 00 c3 bf 00.
    assert_eq!(run::<i64>(&mut c, &["BITPOS", "p", "1"]).unwrap(), 8);
    assert_eq!(run::<i64>(&mut c, &["BITPOS", "p", "1", "2"]).unwrap(), 16);
    assert_eq!(
        run::<i64>(&mut c, &["BITPOS", "p", "0", "9", "-1", "BIT"]).unwrap(),
        10
    );
    let _: () = run(&mut c, &["SET", "ones", "\u{7f}"]).unwrap();
    let _: i64 = run(&mut c, &["SETBIT", "ones", "0", "1"]).unwrap();
    // All ones: a clear bit is "found" past the end unless an end is given.
    assert_eq!(run::<i64>(&mut c, &["BITPOS", "ones", "0"]).unwrap(), 8);
    assert_eq!(
        run::<i64>(&mut c, &["BITPOS", "ones", "0", "0", "-1"]).unwrap(),
        -1
    );
    assert_eq!(run::<i64>(&mut c, &["BITPOS", "nokey", "0"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["BITPOS", "nokey", "1"]).unwrap(), -1);
}

#[test]
fn bitop_pads_with_zeros_and_deletes_on_empty() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "a", "\u{1}\u{2}"]).unwrap();
    let _: () = run(&mut c, &["SET", "b", "\u{3}"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["BITOP", "OR", "d", "a", "b", "missing"]).unwrap(),
        2
    );
    assert_eq!(run::<Vec<u8>>(&mut c, &["GET", "d"]).unwrap(), [3, 2]);
    assert_eq!(
        run::<i64>(&mut c, &["BITOP", "AND", "d", "a", "b"]).unwrap(),
        2
    );
    assert_eq!(run::<Vec<u8>>(&mut c, &["GET", "d"]).unwrap(), [1, 0]);
    assert_eq!(run::<i64>(&mut c, &["BITOP", "NOT", "d", "b"]).unwrap(), 1);
    assert_eq!(run::<Vec<u8>>(&mut c, &["GET", "d"]).unwrap(), [0xfc]);
    assert_eq!(
        run::<i64>(&mut c, &["BITOP", "XOR", "d", "x", "y"]).unwrap(),
        0
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "d"]).unwrap(), 0);
}

#[test]
fn bitfield_get_set_incrby_and_overflow() {
    let s = TestServer::start();
    let mut c = s.client();
    let r: Vec<Option<i64>> = run(
        &mut c,
        &[
            "BITFIELD", "bf", "SET", "u8", "#1", "200", "GET", "u8", "8", "GET", "i8", "8",
        ],
    )
    .unwrap();
    assert_eq!(r, [Some(0), Some(200), Some(-56)]);
    let r: Vec<Option<i64>> = run(
        &mut c,
        &[
            "BITFIELD", "bf", "INCRBY", "u8", "8", "100", "OVERFLOW", "SAT", "INCRBY", "u8", "8",
            "100", "OVERFLOW", "FAIL", "INCRBY", "u8", "8", "1",
        ],
    )
    .unwrap();
    assert_eq!(r, [Some(44), Some(144), Some(145)]);
    let r: Vec<Option<i64>> = run(
        &mut c,
        &[
            "BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "i5", "0", "100",
        ],
    )
    .unwrap();
    assert_eq!(r, [None]);
    let r: Vec<Option<i64>> = run(&mut c, &["BITFIELD_RO", "bf", "GET", "u8", "8"]).unwrap();
    assert_eq!(r, [Some(145)]);
    let r: Vec<Option<i64>> = run(&mut c, &["BITFIELD", "bf"]).unwrap();
    assert!(r.is_empty());
    assert_eq!(
        err(&mut c, &["BITFIELD_RO", "bf", "SET", "u8", "0", "1"]),
        "ERR BITFIELD_RO only supports the GET subcommand"
    );
    assert_eq!(
        err(&mut c, &["BITFIELD", "bf", "GET", "u64", "0"]),
        "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
    );
    assert_eq!(
        err(&mut c, &["BITFIELD", "bf", "OVERFLOW", "NOPE"]),
        "ERR Invalid OVERFLOW type specified"
    );
}

#[test]
fn bit_writes_count_changes_for_info() {
    let s = TestServer::start();
    let mut c = s.client();
    let dirty = |c: &mut redis::Connection| -> u64 {
        let info: String = run(c, &["INFO", "persistence"]).unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let d0 = dirty(&mut c);
    let _: i64 = run(&mut c, &["SETBIT", "k", "0", "0"]).unwrap();
    assert_eq!(dirty(&mut c), d0 + 1);
    let _: i64 = run(&mut c, &["SETBIT", "k", "0", "0"]).unwrap();
    assert_eq!(dirty(&mut c), d0 + 1);
    let _: () = run(&mut c, &["SET", "x", "y"]).unwrap();
    assert_eq!(dirty(&mut c), d0 + 2);
}
