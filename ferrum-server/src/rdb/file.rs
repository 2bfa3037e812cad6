//! RDB files as Redis 7.0 writes and reads them (RDB version 10): the
//! `REDIS0010` header, aux fields, function libraries, then `SELECTDB`
//! records each followed by keys of that database (each optionally
//! preceded by its expiry in milliseconds and its LRU idle time or LFU
//! counter), then `EOF` and a CRC-64 of everything before it (0 when
//! `rdbchecksum no`). Redis writes each database once, after `RESIZEDB`
//! size hints; a snapshot taken shard by shard writes a database in
//! several runs without hints, which every reader, Redis's included,
//! loads the same.
//!
//! [`Writer`] streams a file ([`encode_select_db`] and [`encode_key`]
//! build its records); [`read`] parses one, handing each key to a
//! callback, and refuses a truncated or corrupt file with the byte offset
//! where it went wrong. Files of RDB versions 1 to 10 load, as in Redis
//! 7.0; module data is refused, as FerrumKV has no modules.

use std::io::{self, Write};

use ferrum_store::{Value, ValueRef};

use super::{
    crc64_update, is_empty_collection, object_type, put_len, put_str, put_str_packed, read_value,
    write_value, Reader, RDB_VERSION,
};

const OP_FUNCTION2: u8 = 245;
const OP_FUNCTION_PRE_GA: u8 = 246;
const OP_MODULE_AUX: u8 = 247;
const OP_IDLE: u8 = 248;
const OP_FREQ: u8 = 249;
const OP_AUX: u8 = 250;
const OP_RESIZEDB: u8 = 251;
const OP_EXPIRETIME_MS: u8 = 252;
const OP_EXPIRETIME: u8 = 253;
const OP_SELECTDB: u8 = 254;
const OP_EOF: u8 = 255;

/// The module value types (6 and 7), which need a module to load.
const T_MODULE: u8 = 6;
const T_MODULE_2: u8 = 7;

/// What a key carries for the eviction policy, as Redis writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Recency {
    /// Nothing (no LRU/LFU policy).
    None,
    /// `RDB_OPCODE_IDLE`: seconds since the last access (LRU policies).
    IdleSeconds(u64),
    /// `RDB_OPCODE_FREQ`: the LFU counter (LFU policies).
    Freq(u8),
}

/// Writes an RDB file to `W` as it goes (a file through a `BufWriter`, or
/// a `Vec`), keeping the running checksum, so a snapshot never holds a
/// second copy of the dataset.
pub(crate) struct Writer<W: Write> {
    out: W,
    /// The CRC-64 of everything written so far; `None` with
    /// `rdbchecksum no`, which writes 0 as the checksum.
    crc: Option<u64>,
    /// One record, built before it is written.
    record: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// A file with its header and these aux fields (`redis-ver`,
    /// `ctime`...), which readers that do not know them skip.
    ///
    /// # Errors
    /// When `out` fails.
    pub(crate) fn new(out: W, aux: &[(&str, &[u8])], checksum: bool) -> io::Result<Writer<W>> {
        let mut w = Writer {
            out,
            crc: checksum.then_some(0),
            record: format!("REDIS{RDB_VERSION:04}").into_bytes(),
        };
        for (name, value) in aux {
            w.record.push(OP_AUX);
            put_str(&mut w.record, name.as_bytes());
            put_str(&mut w.record, value);
        }
        w.flush_record()?;
        Ok(w)
    }

    fn flush_record(&mut self) -> io::Result<()> {
        if let Some(crc) = &mut self.crc {
            *crc = crc64_update(*crc, &self.record);
        }
        self.out.write_all(&self.record)?;
        self.record.clear();
        Ok(())
    }

    /// A function library's code (`RDB_OPCODE_FUNCTION2`).
    ///
    /// # Errors
    /// When `out` fails.
    pub(crate) fn function(&mut self, code: &[u8]) -> io::Result<()> {
        self.record.push(OP_FUNCTION2);
        put_str(&mut self.record, code);
        self.flush_record()
    }

    /// Records encoded elsewhere ([`encode_select_db`], [`encode_key`]),
    /// as they are.
    ///
    /// # Errors
    /// When `out` fails.
    pub(crate) fn records(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Some(crc) = &mut self.crc {
            *crc = crc64_update(*crc, bytes);
        }
        self.out.write_all(bytes)
    }

    /// An aux field after the keys (Redis reads them anywhere before
    /// `EOF`): for what is only known once the keys are written.
    ///
    /// # Errors
    /// When `out` fails.
    pub(crate) fn aux(&mut self, name: &str, value: &[u8]) -> io::Result<()> {
        self.record.push(OP_AUX);
        put_str(&mut self.record, name.as_bytes());
        put_str(&mut self.record, value);
        self.flush_record()
    }

    /// Ends the file: `EOF`, then the checksum (0 without one). Returns
    /// the output, flushed.
    ///
    /// # Errors
    /// When `out` fails.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        self.record.push(OP_EOF);
        self.flush_record()?;
        let crc = self.crc.unwrap_or(0);
        self.out.write_all(&crc.to_le_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Appends the record that makes `db` the current database (no size
/// hints: records of one database may come in several runs).
pub(crate) fn encode_select_db(out: &mut Vec<u8>, db: usize) {
    out.push(OP_SELECTDB);
    put_len(out, db);
}

/// Appends one key's records: its expiry (Unix milliseconds), its idle
/// time or LFU counter, then the key and its value, strings compressed
/// with LZF where that pays when `compress` (`rdbcompression`).
pub(crate) fn encode_key(
    out: &mut Vec<u8>,
    key: &[u8],
    value: ValueRef<'_>,
    expires_ms: Option<u64>,
    recency: Recency,
    compress: bool,
) {
    if let Some(at) = expires_ms {
        out.push(OP_EXPIRETIME_MS);
        out.extend_from_slice(&at.to_le_bytes());
    }
    match recency {
        Recency::None => {}
        Recency::IdleSeconds(s) => {
            out.push(OP_IDLE);
            put_len(out, usize::try_from(s).unwrap_or(usize::MAX));
        }
        Recency::Freq(f) => out.extend_from_slice(&[OP_FREQ, f]),
    }
    // The object's type byte goes before the key.
    out.push(object_type(&value));
    put_str_packed(out, key, compress);
    write_value(out, value, compress);
}

/// One key read from a file.
#[derive(Debug)]
pub(crate) struct Key {
    pub(crate) db: usize,
    pub(crate) key: Vec<u8>,
    pub(crate) value: Value,
    /// Unix time in milliseconds.
    pub(crate) expires_ms: Option<u64>,
    pub(crate) recency: Recency,
    /// The offset just past this key's record: how far the read is.
    pub(crate) end: usize,
    /// Its place among the file's key records, from 0 (the empty
    /// collections skipped count too).
    pub(crate) index: usize,
}

/// What a file holds beside its keys.
#[derive(Debug, Default)]
pub(crate) struct Header {
    /// The RDB version the file was written in.
    pub(crate) version: u16,
    /// Aux fields, as written.
    pub(crate) aux: Vec<(Vec<u8>, Vec<u8>)>,
    /// Function libraries' code.
    pub(crate) functions: Vec<Vec<u8>>,
    /// Keys holding an empty list, hash, set or sorted set, which are
    /// skipped as Redis skips them (older Redis versions could write them).
    pub(crate) empty_keys: Vec<Vec<u8>>,
}

/// Why a file did not load, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoadError {
    /// The byte offset of the record that failed.
    pub(crate) offset: usize,
    pub(crate) reason: String,
    /// The key being read, when the failure is in a key's record.
    pub(crate) key: Option<Vec<u8>>,
    /// The RDB type of the value being read.
    pub(crate) rdb_type: Option<u8>,
    /// Keys read whole before the failure.
    pub(crate) keys_read: usize,
}

impl LoadError {
    fn at(offset: usize, reason: &str) -> LoadError {
        LoadError {
            offset,
            reason: reason.to_owned(),
            key: None,
            rdb_type: None,
            keys_read: 0,
        }
    }

    /// The failure as `redis-check-rdb` reports one, line by line: the
    /// offset and reason, the key and type being read, the keys read.
    pub(crate) fn report(&self) -> Vec<String> {
        let mut lines = vec![
            "--- RDB ERROR DETECTED ---".to_owned(),
            format!("[offset {}] {}", self.offset, self.reason),
        ];
        if let Some(key) = &self.key {
            lines.push(format!(
                "[additional info] Reading key '{}'",
                String::from_utf8_lossy(key)
            ));
        }
        if let Some(t) = self.rdb_type {
            lines.push(format!(
                "[additional info] Reading type {t} ({})",
                type_name(t)
            ));
        }
        lines.push(format!("[info] {} keys read", self.keys_read));
        lines
    }
}

/// An RDB type's name, as `redis-check-rdb` prints it.
fn type_name(t: u8) -> &'static str {
    const NAMES: [&str; 20] = [
        "string",
        "list-linked",
        "set-hashtable",
        "zset-v1",
        "hash-hashtable",
        "zset-v2",
        "module-value",
        "module-value",
        "",
        "hash-zipmap",
        "list-ziplist",
        "set-intset",
        "zset-ziplist",
        "hash-ziplist",
        "quicklist",
        "stream",
        "hash-listpack",
        "zset-listpack",
        "quicklist-v2",
        "stream-v2",
    ];
    NAMES.get(usize::from(t)).copied().unwrap_or("unknown")
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte offset {}", self.reason, self.offset)
    }
}

impl std::error::Error for LoadError {}

/// Parses `file`, handing each key to `on_key` in file order (which may
/// refuse it, ending the load with its reason). Nothing after a failure
/// is read: the caller decides what a partial load means.
///
/// # Errors
/// A [`LoadError`] naming the offset of a bad header, record or
/// checksum, a truncated file, or the key `on_key` refused.
pub(crate) fn read(
    file: &[u8],
    mut on_key: impl FnMut(Key) -> Result<(), String>,
) -> Result<Header, LoadError> {
    let fail = LoadError::at;
    let version = file
        .get(..9)
        .filter(|h| h.starts_with(b"REDIS"))
        .and_then(|h| std::str::from_utf8(&h[5..]).ok())
        .and_then(|v| v.parse::<u16>().ok())
        .ok_or_else(|| fail(0, "not an RDB file (no REDIS header)"))?;
    if !(1..=RDB_VERSION).contains(&version) {
        return Err(fail(
            5,
            &format!("can't handle RDB format version {version}"),
        ));
    }
    let mut header = Header {
        version,
        ..Header::default()
    };
    let mut r = Reader::new(file, 9);
    let (mut db, mut expires_ms, mut recency) = (0usize, None, Recency::None);
    let mut keys_read = 0;
    let mut records = 0;
    loop {
        let at = r.pos;
        let truncated = || fail(at, "unexpected end of file");
        let op = r.byte().ok_or_else(truncated)?;
        match op {
            OP_EOF => {
                if version >= 5 {
                    let stored = r.take(8).ok_or_else(truncated)?;
                    let stored = u64::from_le_bytes(stored.try_into().map_err(|_| truncated())?);
                    let computed = crc64_update(0, &file[..at + 1]);
                    if stored != 0 && stored != computed {
                        return Err(fail(
                            at + 1,
                            "RDB CRC error: the checksum does not match the contents",
                        ));
                    }
                }
                return Ok(header);
            }
            OP_AUX => {
                let name = r.string().ok_or_else(|| fail(at, "bad aux field"))?;
                let value = r.string().ok_or_else(|| fail(at, "bad aux field"))?;
                header.aux.push((name, value));
            }
            OP_FUNCTION2 => {
                let code = r.string().ok_or_else(|| fail(at, "bad function library"))?;
                header.functions.push(code);
            }
            OP_FUNCTION_PRE_GA => {
                return Err(fail(at, "pre-release function format not supported"))
            }
            OP_MODULE_AUX => return Err(fail(at, "module data not supported (no modules)")),
            OP_SELECTDB => db = r.len().ok_or_else(|| fail(at, "bad SELECTDB"))?,
            OP_RESIZEDB => {
                r.len().ok_or_else(|| fail(at, "bad RESIZEDB"))?;
                r.len().ok_or_else(|| fail(at, "bad RESIZEDB"))?;
            }
            OP_EXPIRETIME_MS => {
                let b = r.take(8).ok_or_else(truncated)?;
                expires_ms = Some(u64::from_le_bytes(b.try_into().map_err(|_| truncated())?));
            }
            OP_EXPIRETIME => {
                let b = r.take(4).ok_or_else(truncated)?;
                let secs = u32::from_le_bytes(b.try_into().map_err(|_| truncated())?);
                expires_ms = Some(u64::from(secs) * 1000);
            }
            OP_IDLE => {
                let s = r.len().ok_or_else(|| fail(at, "bad IDLE"))?;
                recency = Recency::IdleSeconds(s as u64);
            }
            OP_FREQ => recency = Recency::Freq(r.byte().ok_or_else(truncated)?),
            T_MODULE | T_MODULE_2 => {
                return Err(fail(at, "module data not supported (no modules)"))
            }
            t => {
                let key = r.string().ok_or_else(|| {
                    fail(
                        at,
                        if r.short {
                            "unexpected end of file"
                        } else {
                            "bad key"
                        },
                    )
                })?;
                let value = read_value(&mut r, t).map_err(|why| {
                    let reason = if r.short {
                        "unexpected end of file (in a value)"
                    } else {
                        why.0
                    };
                    LoadError {
                        key: Some(key.clone()),
                        rdb_type: Some(t),
                        keys_read,
                        ..fail(at, reason)
                    }
                })?;
                let index = records;
                records += 1;
                if is_empty_collection(&value) {
                    header.empty_keys.push(key);
                    expires_ms = None;
                    recency = Recency::None;
                    continue;
                }
                on_key(Key {
                    db,
                    key,
                    value,
                    expires_ms: expires_ms.take(),
                    recency: std::mem::replace(&mut recency, Recency::None),
                    end: r.pos,
                    index,
                })
                .map_err(|reason| LoadError {
                    reason,
                    keys_read,
                    ..fail(at, "")
                })?;
                keys_read += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrum_store::types::{Hash, Set, ZSet};

    fn values() -> Vec<(&'static str, Value)> {
        let list = super::super::list_of((0..300).map(|i| format!("item {i}").into_bytes()));
        let mut set = Set::new();
        for m in ["a", "b", "12", "-7"] {
            set.insert(m.as_bytes());
        }
        let mut hash = Hash::new();
        hash.set(b"field", b"value");
        hash.set(b"n", b"42");
        let mut zset = ZSet::new();
        zset.insert(b"one", 1.0);
        zset.insert(b"inf", f64::INFINITY);
        zset.insert(b"neg", -2.5);
        vec![
            ("str", Value::str(b"hello")),
            ("int", Value::str(b"12345")),
            ("big", Value::str(&vec![b'x'; 100_000])),
            ("empty", Value::str(b"")),
            ("list", list.into()),
            ("set", set.into()),
            ("hash", hash.into()),
            ("zset", zset.into()),
        ]
    }

    fn file(checksum: bool) -> Vec<u8> {
        let aux: [(&str, &[u8]); 2] = [("redis-ver", b"7.0.15"), ("redis-bits", b"64")];
        let mut w = Writer::new(Vec::new(), &aux, checksum).expect("in memory");
        w.function(b"#!lua name=lib\nredis.register_function('f', function() return 1 end)")
            .expect("in memory");
        let vals = values();
        let mut rec = Vec::new();
        encode_select_db(&mut rec, 0);
        for (i, (k, v)) in vals.iter().enumerate() {
            let recency = match i % 3 {
                0 => Recency::None,
                1 => Recency::IdleSeconds(i as u64 * 100),
                _ => Recency::Freq(i as u8),
            };
            let expires = (i == 2).then_some(4_000_000_000_000);
            encode_key(
                &mut rec,
                k.as_bytes(),
                v.as_ref(),
                expires,
                recency,
                i % 2 == 0,
            );
        }
        encode_select_db(&mut rec, 3);
        encode_key(
            &mut rec,
            b"other",
            Value::str(b"db3").as_ref(),
            None,
            Recency::None,
            true,
        );
        w.records(&rec).expect("in memory");
        w.finish().expect("in memory")
    }

    #[test]
    fn every_type_round_trips_through_a_file() {
        for checksum in [true, false] {
            let bytes = file(checksum);
            assert!(bytes.starts_with(b"REDIS0010"));
            let mut keys = Vec::new();
            let header = read(&bytes, |k| {
                keys.push(k);
                Ok(())
            })
            .expect("loads");
            assert_eq!(header.version, 10);
            assert_eq!(header.aux[0], (b"redis-ver".to_vec(), b"7.0.15".to_vec()));
            assert_eq!(header.functions.len(), 1);
            let vals = values();
            assert_eq!(keys.len(), vals.len() + 1);
            for (i, ((name, v), k)) in vals.iter().zip(&keys).enumerate() {
                assert_eq!((k.db, k.key.as_slice()), (0, name.as_bytes()));
                assert_eq!(
                    crate::rdb::serialize(k.value.as_ref()),
                    crate::rdb::serialize(v.as_ref()),
                    "{name}"
                );
                assert_eq!(k.expires_ms, (i == 2).then_some(4_000_000_000_000));
                let want = match i % 3 {
                    0 => Recency::None,
                    1 => Recency::IdleSeconds(i as u64 * 100),
                    _ => Recency::Freq(i as u8),
                };
                assert_eq!(k.recency, want);
            }
            assert_eq!(
                (keys[vals.len()].db, keys[vals.len()].key.as_slice()),
                (3, &b"other"[..])
            );
        }
    }

    #[test]
    fn keys_of_empty_collections_are_skipped_and_named() {
        let mut w = Writer::new(Vec::new(), &[], true).expect("in memory");
        let mut rec = Vec::new();
        encode_select_db(&mut rec, 0);
        let empty: Value = Set::new().into();
        encode_key(
            &mut rec,
            b"empty-set",
            empty.as_ref(),
            None,
            Recency::Freq(3),
            false,
        );
        encode_key(
            &mut rec,
            b"kept",
            Value::str(b"v").as_ref(),
            None,
            Recency::None,
            false,
        );
        w.records(&rec).expect("in memory");
        let bytes = w.finish().expect("in memory");
        let mut keys = Vec::new();
        let header = read(&bytes, |k| {
            keys.push(k);
            Ok(())
        })
        .expect("loads");
        assert_eq!(header.empty_keys, vec![b"empty-set".to_vec()]);
        assert_eq!(keys.len(), 1);
        // The skipped key's FREQ does not stick to the next one.
        assert_eq!(
            (keys[0].key.as_slice(), keys[0].recency),
            (&b"kept"[..], Recency::None)
        );
    }

    #[test]
    fn a_truncated_or_corrupt_file_is_refused_with_its_offset() {
        let bytes = file(true);
        // Cut anywhere: refused, never a panic, never a silent success.
        for cut in (0..bytes.len() - 1).step_by(97) {
            let err = read(&bytes[..cut], |_| Ok(())).expect_err("truncated");
            assert!(err.offset <= cut, "{err} for a cut at {cut}");
        }
        // One flipped byte in a value: the checksum says so, at the end.
        let mut bad = bytes.clone();
        let at = bytes.len() / 2;
        bad[at] ^= 0x55;
        let err = read(&bad, |_| Ok(())).expect_err("corrupt");
        assert!(!err.reason.is_empty());
        assert!(read(b"RADIS0010", |_| Ok(()))
            .unwrap_err()
            .reason
            .contains("REDIS"));
        let newer = read(b"REDIS0011\xff", |_| Ok(())).unwrap_err();
        assert_eq!(
            newer.to_string(),
            "can't handle RDB format version 11 at byte offset 5"
        );
        // A key the caller refuses stops the load there.
        let err = read(&bytes, |k| {
            if k.key == b"set" {
                Err("no".into())
            } else {
                Ok(())
            }
        })
        .expect_err("refused");
        assert_eq!(err.reason, "no");
    }

    #[test]
    fn a_refused_value_is_reported_with_its_key_and_type() {
        let mut bytes = b"REDIS0010".to_vec();
        bytes.push(super::super::T_STRING);
        put_str(&mut bytes, b"fine");
        put_str(&mut bytes, b"v");
        let at = bytes.len();
        // An intset of width 3: no such width.
        bytes.push(super::super::T_SET_INTSET);
        put_str(&mut bytes, b"odd");
        put_str(&mut bytes, &[3, 0, 0, 0, 1, 0, 0, 0, 1, 2, 3]);
        bytes.push(OP_EOF);
        bytes.extend_from_slice(&[0; 8]);
        let err = read(&bytes, |_| Ok(())).expect_err("corrupt");
        assert_eq!(
            err.report(),
            [
                "--- RDB ERROR DETECTED ---".to_owned(),
                format!("[offset {at}] Intset integrity check failed."),
                "[additional info] Reading key 'odd'".to_owned(),
                "[additional info] Reading type 11 (set-intset)".to_owned(),
                "[info] 1 keys read".to_owned(),
            ]
        );
    }
}

/// Files both ways with Debian's redis-server 7.0.15, when it is installed
/// (CI installs it): Redis writes every type in its own encodings, this
/// reads them; this writes them back and `redis-check-rdb` and a second
/// redis-server load the result, key for key the same.
#[cfg(test)]
mod with_redis {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::Duration;

    use super::*;

    struct Redis {
        child: Child,
        stream: TcpStream,
    }

    impl Drop for Redis {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port")
    }

    fn start(dir: &Path, file: &str) -> Option<Redis> {
        let port = free_port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--enable-debug-command", "yes"])
            .args(["--dir", dir.to_str()?, "--dbfilename", file])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut redis = None;
        for _ in 0..100 {
            if let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) {
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .ok()?;
                redis = Some(stream);
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Redis {
            child,
            stream: redis.expect("redis-server accepts connections"),
        })
    }

    impl Redis {
        /// Sends a command and returns its reply's bytes (one reply, read
        /// until it parses).
        fn call(&mut self, args: &[&[u8]]) -> ferrum_proto::Frame {
            use tokio_util::codec::Decoder;
            let mut req = format!("*{}\r\n", args.len()).into_bytes();
            for a in args {
                req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                req.extend_from_slice(a);
                req.extend_from_slice(b"\r\n");
            }
            self.stream.write_all(&req).expect("send");
            let mut codec = ferrum_proto::RespCodec::client(ferrum_proto::Limits::default());
            let mut buf = bytes::BytesMut::new();
            let mut chunk = [0u8; 65536];
            loop {
                if let Some(f) = codec.decode(&mut buf).expect("valid reply") {
                    return f;
                }
                let n = self.stream.read(&mut chunk).expect("reply");
                assert!(n > 0, "redis-server closed");
                buf.extend_from_slice(&chunk[..n]);
            }
        }

        fn dump(&mut self, key: &[u8]) -> Vec<u8> {
            match self.call(&[b"DUMP", key]) {
                ferrum_proto::Frame::Bulk(b) => b.to_vec(),
                other => panic!("DUMP {key:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn redis_files_load_here_and_files_from_here_load_in_redis() {
        if Command::new("redis-server")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("redis-server is not installed: skipping the RDB interop test");
            return;
        }
        let dir = std::env::temp_dir().join(format!("ferrum-rdb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut redis = start(&dir, "theirs.rdb").expect("redis-server starts");
        let long = vec![b'L'; 200];
        let many: Vec<Vec<u8>> = (0..300).map(|i| format!("m{i}").into_bytes()).collect();
        let mut commands: Vec<Vec<&[u8]>> = vec![
            vec![b"SET", b"str", b"hello"],
            vec![b"SET", b"int", b"-12345"],
            vec![b"SET", b"long", &long],
            vec![b"SET", b"ttl", b"x", b"PX", b"100000000"],
            vec![b"RPUSH", b"list", b"a", b"b", b"1"],
            vec![b"SADD", b"intset", b"1", b"2", b"-3"],
            vec![b"SADD", b"set", b"a", b"b"],
            vec![b"HSET", b"hash", b"f", b"v", b"n", b"1"],
            vec![b"ZADD", b"zset", b"1", b"a", b"2.5", b"b"],
            vec![b"XADD", b"stream", b"1-1", b"f", b"v"],
            vec![b"XADD", b"stream", b"2-1", b"f", b"w"],
            vec![b"XGROUP", b"CREATE", b"stream", b"g", b"0"],
            vec![
                b"XREADGROUP",
                b"GROUP",
                b"g",
                b"c",
                b"STREAMS",
                b"stream",
                b">",
            ],
            vec![b"SELECT", b"2"],
            vec![b"SET", b"in-db-2", b"y"],
            vec![b"SELECT", b"0"],
        ];
        let (mut big_list, mut big_hash, mut big_zset, mut big_set) = (
            vec![&b"RPUSH"[..], b"biglist"],
            vec![&b"HSET"[..], b"bighash"],
            vec![&b"ZADD"[..], b"bigzset"],
            vec![&b"SADD"[..], b"bigset"],
        );
        for m in &many {
            big_list.extend([&m[..], &long]);
            big_hash.extend([&m[..], &long]);
            big_zset.extend([&b"1.5"[..], &m[..]]);
            big_set.push(m);
        }
        commands.extend([big_list, big_hash, big_zset, big_set]);
        for c in &commands {
            redis.call(c);
        }
        redis.call(&[b"SAVE"]);
        let theirs = std::fs::read(dir.join("theirs.rdb")).expect("Redis saved");
        let mut keys = Vec::new();
        let header = read(&theirs, |k| {
            keys.push(k);
            Ok(())
        })
        .expect("Redis's file loads");
        assert_eq!(header.version, 10);
        assert_eq!(keys.len(), 15);
        for k in keys.iter().filter(|k| k.db == 0) {
            // What this read from the file is what Redis DUMPs for the key.
            let dumped =
                crate::rdb::restore_payload(&redis.dump(&k.key), true).expect("Redis's DUMP");
            assert_eq!(
                crate::rdb::serialize(k.value.as_ref()),
                crate::rdb::serialize(dumped.as_ref()),
                "{}",
                String::from_utf8_lossy(&k.key)
            );
        }
        assert!(keys
            .iter()
            .find(|k| k.key == b"ttl")
            .unwrap()
            .expires_ms
            .is_some());
        // Written here, loaded by Redis.
        let mut w = Writer::new(Vec::new(), &[("redis-ver", b"7.0.15")], true).expect("in memory");
        let mut rec = Vec::new();
        for db in [0, 2] {
            encode_select_db(&mut rec, db);
            for k in keys.iter().filter(|k| k.db == db) {
                let compress = db == 0;
                encode_key(
                    &mut rec,
                    &k.key,
                    k.value.as_ref(),
                    k.expires_ms,
                    k.recency,
                    compress,
                );
            }
        }
        w.records(&rec).expect("in memory");
        let ours = w.finish().expect("in memory");
        std::fs::write(dir.join("ours.rdb"), ours).expect("write");
        let check = Command::new("redis-check-rdb")
            .arg(dir.join("ours.rdb"))
            .output();
        if let Ok(out) = check {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        let mut again = start(&dir, "ours.rdb").expect("redis-server loads ours");
        let size = again.call(&[b"DBSIZE"]);
        assert_eq!(size, ferrum_proto::Frame::Integer(14));
        // Hash and set order differs from server to server: compare
        // Redis's order-independent digests.
        for k in keys.iter().filter(|k| k.db == 0) {
            let digest = |r: &mut Redis| r.call(&[b"DEBUG", b"DIGEST-VALUE", &k.key]);
            let theirs = digest(&mut redis);
            assert!(
                matches!(theirs, ferrum_proto::Frame::Array(_)),
                "{theirs:?}"
            );
            assert_eq!(digest(&mut again), theirs, "{:?}", k.key);
        }
        drop((redis, again));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
