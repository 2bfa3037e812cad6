//! redis.conf's lexical syntax, as redis-server reads it, beyond what the
//! protocol shares with it: words quoted back as `sdscatrepr` quotes them,
//! lines trimmed as `sdstrim` trims them, and `memtoull`'s memory sizes.
//! Splitting a line into words (`sdssplitargs`) and integers
//! (`string2ll`) are ferrum-proto's [`ferrum_proto::split_args`] and
//! [`ferrum_proto::parse_i64`]: redis-server reads inline commands, integer
//! arguments and redis.conf by the same two functions. Pure functions over
//! bytes and strings; what the words mean is [`super`]'s table.

use std::fmt::Write as _;

/// `bytes` as text, any invalid UTF-8 replaced, for messages.
pub(super) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Redis's `sdscatrepr`: appends `word` to `out` in double quotes, with
/// `\\`, `\"`, `\n`, `\r`, `\t`, `\a`, `\b` and `\xHH` escapes, so that
/// `sdssplitargs` reads it back as the same bytes.
pub(crate) fn push_repr(out: &mut String, word: &[u8]) {
    out.push('"');
    for &b in word {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            b if b.is_ascii_graphic() || b == b' ' => out.push(b as char),
            b => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
}

/// Redis's `memtoull`: digits, then an optional unit `b`, `k` (1000), `kb`
/// (1024), `m`, `mb`, `g`, `gb`, any case. Unlike Redis, at least one digit
/// is required (Redis reads `""` and `"kb"` as 0).
pub(crate) fn parse_memory(s: &str) -> Option<u64> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if digits.is_empty() {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(multiplier)
}

/// Strips what Redis's `sdstrim(line, " \t\r\n")` strips.
pub(super) fn trim(mut line: &[u8]) -> &[u8] {
    let strip = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    while line.first().is_some_and(strip) {
        line = &line[1..];
    }
    while line.last().is_some_and(strip) {
        line = &line[..line.len() - 1];
    }
    line
}
