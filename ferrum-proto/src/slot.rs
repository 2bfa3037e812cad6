//! Hash slots: which of Redis Cluster's 16384 slots a key belongs to. The
//! server routes by it in cluster mode, and ferrum-bench's cluster-aware
//! client sends each key to its slot's node.
//!
//! A key's slot is CRC16 (the XMODEM variant: polynomial 0x1021, initial
//! value 0, no reflection) of the key modulo 16384, as the Redis Cluster
//! specification defines it. A hash tag narrows what is hashed: when the
//! key holds a `{` followed later by a `}` with at least one byte between
//! them, only the bytes between the first `{` and the first `}` after it
//! are hashed, so `{user1}.name` and `{user1}.mail` share a slot.

/// How many hash slots a cluster has.
pub const SLOTS: usize = 16384;

/// The CRC16/XMODEM table, one entry per byte value, built at compile time.
const TABLE: [u16; 256] = table();

const fn table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        t[i] = crc;
        i += 1;
    }
    t
}

/// CRC16/XMODEM of `bytes`.
pub fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ TABLE[usize::from((crc >> 8) as u8 ^ b)]
    })
}

/// The part of `key` that decides its slot: the hash tag when there is a
/// non-empty one, else the whole key.
pub fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    let rest = &key[open + 1..];
    match rest.iter().position(|&b| b == b'}') {
        Some(close) if close > 0 => &rest[..close],
        _ => key,
    }
}

/// The hash slot of `key`, `0..16384`.
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) & (SLOTS as u16 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_matches_the_xmodem_check_value() {
        // The check value of CRC-16/XMODEM, as the cluster spec gives it.
        assert_eq!(crc16(b"123456789"), 0x31c3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn slots_match_redis() {
        // `CLUSTER KEYSLOT` as Redis 7.0.15 answered it.
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"hello"), 866);
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn hash_tags_follow_the_first_braces() {
        assert_eq!(hash_tag(b"{user1}.name"), b"user1");
        assert_eq!(key_slot(b"{user1}.name"), key_slot(b"user1"));
        // The first `}` after the first `{` ends the tag.
        assert_eq!(hash_tag(b"a{b}c{d}"), b"b");
        assert_eq!(hash_tag(b"{a{b}c}"), b"a{b");
        // An empty or unclosed tag hashes the whole key.
        assert_eq!(hash_tag(b"{}x"), b"{}x");
        assert_eq!(hash_tag(b"{}{x}"), b"{}{x}");
        assert_eq!(hash_tag(b"x{y"), b"x{y");
        assert_eq!(hash_tag(b"}{x}"), b"x");
    }
}
