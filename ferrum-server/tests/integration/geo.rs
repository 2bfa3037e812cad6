//! GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and the `_RO`
//! forms: members, order and reply shapes as redis-server 7.0.15 gives
//! them for the same data (Redis's test-suite NYC points).

use crate::common::{err, run, TestServer};

fn nyc(c: &mut redis::Connection) {
    let points = [
        ("-73.9454966", "40.747533", "lic market"),
        ("-73.9733487", "40.7648057", "central park n/q/r"),
        ("-73.9903085", "40.7362513", "union square"),
        ("-74.0131604", "40.7126674", "wtc one"),
        ("-73.7858139", "40.6428986", "jfk"),
        ("-73.9375699", "40.7498929", "q4"),
        ("-73.9564142", "40.7480973", "4545"),
    ];
    let mut cmd = redis::cmd("GEOADD");
    cmd.arg("nyc");
    for (lon, lat, m) in points {
        cmd.arg(lon).arg(lat).arg(m);
    }
    assert_eq!(cmd.query::<i64>(c).unwrap(), 7);
}

const CENTER: [&str; 2] = ["-73.9798091", "40.7598464"];

#[test]
fn searches_return_redis_members_in_redis_order() {
    let s = TestServer::start();
    let mut c = s.client();
    nyc(&mut c);
    let asc: Vec<String> = run(
        &mut c,
        &["GEORADIUS", "nyc", CENTER[0], CENTER[1], "3", "km", "ASC"],
    )
    .unwrap();
    assert_eq!(asc, ["central park n/q/r", "4545", "union square"]);
    let desc: Vec<String> = run(
        &mut c,
        &[
            "GEORADIUS_RO",
            "nyc",
            CENTER[0],
            CENTER[1],
            "3",
            "km",
            "DESC",
        ],
    )
    .unwrap();
    assert_eq!(desc, ["union square", "4545", "central park n/q/r"]);
    // Unsorted: the order of Redis's geohash-cell walk.
    let boxed: Vec<String> = run(
        &mut c,
        &[
            "GEOSEARCH",
            "nyc",
            "FROMMEMBER",
            "wtc one",
            "BYBOX",
            "14",
            "14",
            "km",
        ],
    )
    .unwrap();
    assert_eq!(
        boxed,
        [
            "wtc one",
            "union square",
            "central park n/q/r",
            "4545",
            "lic market",
            "q4"
        ]
    );
    let by_member: Vec<String> = run(
        &mut c,
        &["GEORADIUSBYMEMBER_RO", "nyc", "wtc one", "7", "km", "ASC"],
    )
    .unwrap();
    assert_eq!(by_member[0], "wtc one");
    assert!(by_member.contains(&"union square".to_owned()));
}

#[test]
fn with_options_reply_dist_hash_and_coords() {
    let s = TestServer::start();
    let mut c = s.client();
    nyc(&mut c);
    let v: redis::Value = run(
        &mut c,
        &[
            "GEOSEARCH",
            "nyc",
            "FROMLONLAT",
            CENTER[0],
            CENTER[1],
            "BYRADIUS",
            "3",
            "km",
            "WITHDIST",
            "WITHHASH",
            "WITHCOORD",
            "COUNT",
            "1",
        ],
    )
    .unwrap();
    let expected = redis::Value::Array(vec![redis::Value::Array(vec![
        redis::Value::BulkString(b"central park n/q/r".to_vec()),
        redis::Value::BulkString(b"0.7750".to_vec()),
        redis::Value::Int(1791875761332224),
        redis::Value::Array(vec![
            redis::Value::BulkString(b"-73.97334784269332886".to_vec()),
            redis::Value::BulkString(b"40.76480639569881959".to_vec()),
        ]),
    ])]);
    assert_eq!(v, expected);
    let any: Vec<String> = run(
        &mut c,
        &[
            "GEORADIUS",
            "nyc",
            CENTER[0],
            CENTER[1],
            "10",
            "km",
            "COUNT",
            "2",
            "ANY",
        ],
    )
    .unwrap();
    assert_eq!(any.len(), 2);
}

#[test]
fn store_and_storedist_write_a_sorted_set() {
    let s = TestServer::start();
    let mut c = s.client();
    nyc(&mut c);
    let n: i64 = run(
        &mut c,
        &[
            "GEOSEARCHSTORE",
            "d",
            "nyc",
            "FROMLONLAT",
            CENTER[0],
            CENTER[1],
            "BYRADIUS",
            "3",
            "km",
        ],
    )
    .unwrap();
    assert_eq!(n, 3);
    let members: Vec<String> = run(&mut c, &["ZRANGE", "d", "0", "-1"]).unwrap();
    assert_eq!(members, ["union square", "central park n/q/r", "4545"]);
    let n: i64 = run(
        &mut c,
        &[
            "GEORADIUS",
            "nyc",
            CENTER[0],
            CENTER[1],
            "3",
            "km",
            "STOREDIST",
            "dd",
        ],
    )
    .unwrap();
    assert_eq!(n, 3);
    let d: f64 = run(&mut c, &["ZSCORE", "dd", "central park n/q/r"]).unwrap();
    assert!((d - 0.7750).abs() < 1e-3, "{d}");
    // An empty result deletes the destination.
    let n: i64 = run(
        &mut c,
        &[
            "GEORADIUS",
            "nokey",
            CENTER[0],
            CENTER[1],
            "3",
            "km",
            "STORE",
            "dd",
        ],
    )
    .unwrap();
    assert_eq!(n, 0);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "dd"]).unwrap(), 0);
}

#[test]
fn bad_searches_get_redis_errors() {
    let s = TestServer::start();
    let mut c = s.client();
    nyc(&mut c);
    let cases: &[(&[&str], &str)] = &[
        (
            &["GEOSEARCH", "nyc", "BYBOX", "1", "1", "km", "ASC"],
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH",
        ),
        (
            &["GEOSEARCH", "nyc", "FROMLONLAT", "1", "1", "ASC", "WITHDIST"],
            "ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH",
        ),
        (
            &["GEOSEARCH", "nyc", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"],
            "ERR syntax error",
        ),
        (
            &["GEOSEARCH", "nyc", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "ANY"],
            "ERR the ANY argument requires COUNT argument",
        ),
        (
            &["GEORADIUS", "nyc", "1", "1", "-1", "km"],
            "ERR radius cannot be negative",
        ),
        (&["GEORADIUS", "nyc", "1", "1", "x", "km"], "ERR need numeric radius"),
        (
            &["GEORADIUS", "nyc", "200", "100", "1", "km"],
            "ERR invalid longitude,latitude pair 200.000000,100.000000",
        ),
        (
            &["GEORADIUS", "nyc", "1", "1", "1", "km", "COUNT", "0"],
            "ERR COUNT must be > 0",
        ),
        (
            &["GEORADIUS_RO", "nyc", "1", "1", "1", "km", "STORE", "x"],
            "ERR syntax error",
        ),
        (
            &["GEORADIUS", "nyc", "1", "1", "1", "km", "STORE", "x", "WITHDIST"],
            "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
        ),
        (
            &["GEORADIUSBYMEMBER", "nyc", "nope", "1", "km"],
            "ERR could not decode requested zset member",
        ),
        (
            &["GEOSEARCH", "nyc", "FROMLONLAT", "1", "1", "BYBOX", "-1", "1", "km"],
            "ERR height or width cannot be negative",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(&err(&mut c, args), want, "{args:?}");
    }
    run::<()>(&mut c, &["SET", "str", "x"]).unwrap();
    assert!(err(
        &mut c,
        &[
            "GEOSEARCH",
            "str",
            "FROMLONLAT",
            "1",
            "1",
            "BYRADIUS",
            "1",
            "km"
        ]
    )
    .starts_with("WRONGTYPE"));
}
