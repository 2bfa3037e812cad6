//! `DEBUG DIGEST` and `DEBUG DIGEST-VALUE`: Redis's SHA-1 digests of the
//! dataset and of single values, computed as Redis 7.0 computes them, so
//! the same data gives the same digest on both servers (Redis's test suite
//! compares digests across `DEBUG RELOAD` and restarts).
//!
//! Ordered parts (list elements, a stream's entries) are chained with
//! [`mix`]; unordered ones (set members, hash fields, sorted set members,
//! the keys of a database) are combined with [`xor`], so their order does
//! not matter.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::StreamId;
use ferrum_store::{Access, Collection, ValueRef};

use super::{CmdResult, Ctx};

/// A 20-byte SHA-1 digest.
pub(crate) type Digest = [u8; 20];

fn sha1(data: &[u8]) -> Digest {
    sha1_smol::Sha1::from(data).digest().bytes()
}

/// `digest ^= SHA1(data)`: order-independent.
fn xor(digest: &mut Digest, data: &[u8]) {
    for (d, h) in digest.iter_mut().zip(sha1(data)) {
        *d ^= h;
    }
}

/// `digest = SHA1(digest ^ SHA1(data))`: order-dependent.
fn mix(digest: &mut Digest, data: &[u8]) {
    xor(digest, data);
    *digest = sha1(digest);
}

/// Redis's object type numbers (`OBJ_STRING`...), which the digest mixes
/// in first.
fn type_code(v: &ValueRef<'_>) -> u32 {
    match v {
        ValueRef::Str(_) => 0,
        ValueRef::Coll(c) => match &**c {
            Collection::List(_) => 1,
            Collection::Set(_) => 2,
            Collection::ZSet(_) => 3,
            Collection::Hash(_) => 4,
            Collection::Stream(_) => 6,
        },
    }
}

/// Mixes a value (and whether it has a TTL) into `digest`, as Redis's
/// `xorObjectDigest`.
pub(crate) fn add_value(digest: &mut Digest, v: ValueRef<'_>, has_ttl: bool) {
    mix(digest, &type_code(&v).to_be_bytes());
    match v {
        ValueRef::Str(s) => mix(digest, s),
        ValueRef::Coll(c) => match &*c {
            Collection::List(l) => l.iter().for_each(|e| mix(digest, e)),
            Collection::Set(s) => s.iter().for_each(|m| xor(digest, &m)),
            Collection::ZSet(z) => {
                for (m, score) in z.range_by_rank(0, z.len()) {
                    let mut element = Digest::default();
                    mix(&mut element, &m);
                    mix(&mut element, crate::script::format_g(score, 17).as_bytes());
                    xor(digest, &element);
                }
            }
            Collection::Hash(h) => {
                for (f, v) in h.iter() {
                    let mut element = Digest::default();
                    mix(&mut element, f);
                    mix(&mut element, v);
                    xor(digest, &element);
                }
            }
            Collection::Stream(s) => {
                for (id, fields) in s.range(StreamId::MIN, StreamId::MAX, usize::MAX, false) {
                    mix(digest, format!("{}.{}", id.ms, id.seq).as_bytes());
                    for (f, v) in fields {
                        mix(digest, f);
                        mix(digest, v);
                    }
                }
            }
        },
    }
    if has_ttl {
        xor(digest, b"!!expire!!");
    }
}

/// The digest of one key and its value, which [`Dataset`] combines.
pub(crate) fn key_digest(key: &[u8], v: ValueRef<'_>, has_ttl: bool) -> Digest {
    let mut digest = Digest::default();
    mix(&mut digest, key);
    add_value(&mut digest, v, has_ttl);
    digest
}

/// A dataset's digest, built database by database, in ascending order.
#[derive(Default)]
pub(crate) struct Dataset {
    digest: Digest,
}

impl Dataset {
    /// Starts database `db`, which is not empty.
    pub(crate) fn database(&mut self, db: usize) {
        mix(&mut self.digest, &(db as u32).to_be_bytes());
    }

    /// Adds one key of the current database (Redis's `xorDigest` of the
    /// key's digest: the digest of it is what is combined).
    pub(crate) fn key(&mut self, key_digest: &Digest) {
        xor(&mut self.digest, key_digest);
    }

    /// The digest so far.
    pub(crate) fn finish(self) -> Digest {
        self.digest
    }
}

/// A digest as Redis prints it: 40 lower-case hex digits.
pub(crate) fn hex(digest: &Digest) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `DEBUG DIGEST`: the whole dataset's digest; 40 zeros when it is empty.
pub(crate) fn dataset(ctx: &mut Ctx<'_>) -> CmdResult {
    let now = ctx.now;
    let store = ctx.store();
    let mut ks = store.lock_all();
    let mut all = Dataset::default();
    for db in 0..store.databases() {
        if ks.dbsize(db) == 0 {
            continue;
        }
        all.database(db);
        for shard in ks.shards() {
            shard.for_each_key(db, now, |key, e| {
                all.key(&key_digest(key, e.value(), e.expires_at().is_some()));
            });
        }
    }
    Ok(Frame::Simple(Bytes::from(hex(&all.finish()))))
}

/// `DEBUG DIGEST-VALUE key...`: each value's digest (without its key's),
/// 40 zeros for a missing key.
pub(crate) fn values(ctx: &mut Ctx<'_>, keys: &[Bytes]) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    let replies = keys
        .iter()
        .map(|key| {
            let mut ks = ctx.store().lock_key(key);
            let mut digest = Digest::default();
            if let Some(e) = ks.shard(key).lookup(db, key, now, Access::Peek) {
                add_value(&mut digest, e.value(), e.expires_at().is_some());
            }
            Frame::Simple(Bytes::from(hex(&digest)))
        })
        .collect();
    Ok(Frame::Array(replies))
}
