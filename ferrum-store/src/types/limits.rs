//! The thresholds that decide when a small collection leaves its packed
//! encoding (`hash-max-listpack-entries` and friends), held process-wide.
//!
//! Redis keeps these in `server.*` globals that every `t_*.c` file reads on
//! each write. FerrumKV does the same with one set of relaxed atomics behind
//! [`EncodingLimits::current`] and [`EncodingLimits::install`]. The
//! trade-off: the collection types need no configuration handle threaded
//! through every call (their API stays `insert(member)`), and a change takes
//! effect on the next write anywhere, as `CONFIG SET` does in Redis; the cost
//! is that every store in the process shares one set of thresholds, so two
//! servers started in one test process cannot be given different ones (the
//! collection types' own tests therefore only use the defaults, crossing them
//! with enough or long enough elements). A collection already converted stays
//! converted when the limits are raised, as in Redis.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// The encoding thresholds, Redis 7.0.15's defaults (plus Redis 7.2's
/// `set-max-listpack-*`, since FerrumKV packs small string sets too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodingLimits {
    /// `hash-max-listpack-entries`: most fields a packed hash holds.
    pub hash_max_listpack_entries: u64,
    /// `hash-max-listpack-value`: longest field or value a packed hash holds.
    pub hash_max_listpack_value: u64,
    /// `set-max-intset-entries`: most members an intset holds.
    pub set_max_intset_entries: u64,
    /// `set-max-listpack-entries`: most members a packed string set holds.
    pub set_max_listpack_entries: u64,
    /// `set-max-listpack-value`: longest member a packed string set holds.
    pub set_max_listpack_value: u64,
    /// `zset-max-listpack-entries`: most members a packed sorted set holds.
    pub zset_max_listpack_entries: u64,
    /// `zset-max-listpack-value`: longest member a packed sorted set holds.
    pub zset_max_listpack_value: u64,
    /// `list-max-listpack-size`: a list node's limit; positive is a count of
    /// entries, -1..=-5 is 4, 8, 16, 32 or 64 KiB (other negatives: 64 KiB).
    pub list_max_listpack_size: i64,
    /// `list-compress-depth`: accepted and reported, never acted on (FerrumKV
    /// does not compress list nodes).
    pub list_compress_depth: u64,
    /// `stream-node-max-entries`: entries per node of a stream, which
    /// approximate trimming removes whole (0: no limit).
    pub stream_node_max_entries: u64,
}

impl EncodingLimits {
    /// Redis 7.0.15's defaults (`CONFIG GET` on a stock `redis-server`).
    pub const DEFAULT: EncodingLimits = EncodingLimits {
        hash_max_listpack_entries: 512,
        hash_max_listpack_value: 64,
        set_max_intset_entries: 512,
        // 7.0 has no listpack sets; 7.2's `set-max-listpack-entries`
        // (128 there) is off here unless set.
        set_max_listpack_entries: 0,
        set_max_listpack_value: 64,
        zset_max_listpack_entries: 128,
        zset_max_listpack_value: 64,
        list_max_listpack_size: -2,
        list_compress_depth: 0,
        stream_node_max_entries: 100,
    };

    /// The limits every collection in the process uses now.
    pub fn current() -> EncodingLimits {
        let u = |a: &AtomicU64| a.load(Ordering::Relaxed);
        EncodingLimits {
            hash_max_listpack_entries: u(&CURRENT.hash_entries),
            hash_max_listpack_value: u(&CURRENT.hash_value),
            set_max_intset_entries: u(&CURRENT.intset_entries),
            set_max_listpack_entries: u(&CURRENT.set_entries),
            set_max_listpack_value: u(&CURRENT.set_value),
            zset_max_listpack_entries: u(&CURRENT.zset_entries),
            zset_max_listpack_value: u(&CURRENT.zset_value),
            list_max_listpack_size: CURRENT.list_size.load(Ordering::Relaxed),
            list_compress_depth: u(&CURRENT.list_depth),
            stream_node_max_entries: u(&CURRENT.stream_node_entries),
        }
    }

    /// Makes these the limits of every collection in the process (at
    /// startup and after `CONFIG SET`). Each field is stored on its own, so
    /// a write racing with this sees each threshold either old or new.
    pub fn install(&self) {
        let s = |a: &AtomicU64, v: u64| a.store(v, Ordering::Relaxed);
        s(&CURRENT.hash_entries, self.hash_max_listpack_entries);
        s(&CURRENT.hash_value, self.hash_max_listpack_value);
        s(&CURRENT.intset_entries, self.set_max_intset_entries);
        s(&CURRENT.set_entries, self.set_max_listpack_entries);
        s(&CURRENT.set_value, self.set_max_listpack_value);
        s(&CURRENT.zset_entries, self.zset_max_listpack_entries);
        s(&CURRENT.zset_value, self.zset_max_listpack_value);
        CURRENT
            .list_size
            .store(self.list_max_listpack_size, Ordering::Relaxed);
        s(&CURRENT.list_depth, self.list_compress_depth);
        s(&CURRENT.stream_node_entries, self.stream_node_max_entries);
    }

    /// A list node's limits, Redis's `quicklistNodeExceedsLimit`: a
    /// positive size counts entries (with Redis's 8 KiB safety cap on
    /// bytes), a negative one is a byte size.
    pub fn list_node_limits(&self) -> NodeLimits {
        const SIZES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
        let (entries, bytes) = match self.list_max_listpack_size {
            n if n > 0 => (n as usize, 8192),
            0 => (1, 8192),
            n => {
                let i = (n.unsigned_abs() as usize).min(SIZES.len()) - 1;
                (usize::MAX, SIZES[i])
            }
        };
        NodeLimits {
            entries,
            bytes,
            plain: list_packed_threshold(),
        }
    }
}

/// What a list node may hold (see [`EncodingLimits::list_node_limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeLimits {
    /// Most entries in a node.
    pub entries: usize,
    /// Most packed bytes in a node; a node of one entry may hold more.
    pub bytes: usize,
    /// An element this long or longer sits alone in its node, Redis's
    /// "plain" node (see [`set_list_packed_threshold`]).
    pub plain: usize,
}

/// Redis's default packed threshold: 1 GiB.
const PACKED_THRESHOLD_DEFAULT: u64 = 1 << 30;

static PACKED_THRESHOLD: AtomicU64 = AtomicU64::new(PACKED_THRESHOLD_DEFAULT);

/// The length from which a list element gets a node of its own.
fn list_packed_threshold() -> usize {
    PACKED_THRESHOLD.load(Ordering::Relaxed) as usize
}

/// Sets the length from which a list element gets a node of its own
/// (`DEBUG QUICKLIST-PACKED-THRESHOLD`): 0 restores the default, 1 GiB.
/// Refuses, as Redis does, anything above 4 GiB less 1 MiB. Lists keep
/// the nodes they have; the threshold decides where later writes go.
pub fn set_list_packed_threshold(bytes: u64) -> bool {
    if bytes > (1 << 32) - (1 << 20) {
        return false;
    }
    let bytes = if bytes == 0 {
        PACKED_THRESHOLD_DEFAULT
    } else {
        bytes
    };
    PACKED_THRESHOLD.store(bytes, Ordering::Relaxed);
    true
}

impl Default for EncodingLimits {
    fn default() -> EncodingLimits {
        EncodingLimits::DEFAULT
    }
}

struct Current {
    hash_entries: AtomicU64,
    hash_value: AtomicU64,
    intset_entries: AtomicU64,
    set_entries: AtomicU64,
    set_value: AtomicU64,
    zset_entries: AtomicU64,
    zset_value: AtomicU64,
    list_size: AtomicI64,
    list_depth: AtomicU64,
    stream_node_entries: AtomicU64,
}

static CURRENT: Current = {
    let d = EncodingLimits::DEFAULT;
    Current {
        hash_entries: AtomicU64::new(d.hash_max_listpack_entries),
        hash_value: AtomicU64::new(d.hash_max_listpack_value),
        intset_entries: AtomicU64::new(d.set_max_intset_entries),
        set_entries: AtomicU64::new(d.set_max_listpack_entries),
        set_value: AtomicU64::new(d.set_max_listpack_value),
        zset_entries: AtomicU64::new(d.zset_max_listpack_entries),
        zset_value: AtomicU64::new(d.zset_max_listpack_value),
        list_size: AtomicI64::new(d.list_max_listpack_size),
        list_depth: AtomicU64::new(d.list_compress_depth),
        stream_node_entries: AtomicU64::new(d.stream_node_max_entries),
    }
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_limits_follow_redis() {
        let with = |n| EncodingLimits {
            list_max_listpack_size: n,
            ..EncodingLimits::DEFAULT
        };
        let sizes = |n| {
            let l = with(n).list_node_limits();
            (l.entries, l.bytes)
        };
        assert_eq!(sizes(-2), (usize::MAX, 8192));
        assert_eq!(sizes(-1), (usize::MAX, 4096));
        assert_eq!(sizes(-9), (usize::MAX, 65536));
        assert_eq!(sizes(5), (5, 8192));
        assert_eq!(sizes(0), (1, 8192));
    }

    #[test]
    fn the_defaults_are_installed_at_start() {
        // No test in this crate installs other limits (see the module docs).
        assert_eq!(EncodingLimits::current(), EncodingLimits::DEFAULT);
    }
}
