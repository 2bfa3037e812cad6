//! redis.conf's lexical syntax, as redis-server reads it: lines split into
//! words by `sdssplitargs` (and words quoted back by `sdscatrepr`), and
//! the integer and memory-size forms of `string2ll` and `memtoull`. Pure functions over
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

/// Redis's `string2ll`: an optional `-`, then `0` or digits without a leading
/// zero, fitting an `i64`. No `+`, no spaces.
pub(super) fn parse_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let canonical = if digits.starts_with('0') {
        s == "0"
    } else {
        !digits.is_empty()
    };
    if canonical && digits.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// Redis's `memtoull`: digits, then an optional unit `b`, `k` (1000), `kb`
/// (1024), `m`, `mb`, `g`, `gb`, any case. Unlike Redis, at least one digit
/// is required (Redis reads `""` and `"kb"` as 0).
pub(super) fn parse_memory(s: &str) -> Option<u64> {
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

/// C's `isspace` in the "C" locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Splits a line into words by Redis's `sdssplitargs` rules; `None` for
/// unbalanced quotes.
///
/// Outside quotes a word ends at space, tab, CR or LF. `"..."` understands
/// `\n \r \t \b \a`, `\xHH` and `\<any>`; `'...'` understands only `\'`. A
/// quote may start mid-word (`a"b c"` is `ab c`), but a closing quote must be
/// followed by whitespace or the end. As in C, a NUL byte ends the line.
pub(super) fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    // One past the end reads as NUL, like the C string terminator.
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let hex = |b: u8| (b as char).to_digit(16);
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        while at(i) != 0 && is_space(at(i)) {
            i += 1;
        }
        if at(i) == 0 {
            return Some(words);
        }
        let mut word = Vec::new();
        let (mut in_double, mut in_single) = (false, false);
        loop {
            let c = at(i);
            if in_double {
                match (c, at(i + 1)) {
                    (b'\\', b'x') if hex(at(i + 2)).is_some() && hex(at(i + 3)).is_some() => {
                        let value = hex(at(i + 2)).unwrap_or(0) * 16 + hex(at(i + 3)).unwrap_or(0);
                        word.push(u8::try_from(value).unwrap_or(0));
                        i += 3;
                    }
                    (b'\\', next) if next != 0 => {
                        i += 1;
                        word.push(match next {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                    }
                    (b'"', next) => {
                        if next != 0 && !is_space(next) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    (0, _) => return None,
                    _ => word.push(c),
                }
            } else if in_single {
                match (c, at(i + 1)) {
                    (b'\\', b'\'') => {
                        i += 1;
                        word.push(b'\'');
                    }
                    (b'\'', next) => {
                        if next != 0 && !is_space(next) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    (0, _) => return None,
                    _ => word.push(c),
                }
            } else {
                match c {
                    0 => break,
                    b' ' | b'\n' | b'\r' | b'\t' => {
                        i += 1;
                        break;
                    }
                    b'"' => in_double = true,
                    b'\'' => in_single = true,
                    _ => word.push(c),
                }
            }
            i += 1;
        }
        words.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| (*w).to_owned()).collect()
    }

    fn lossy(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    #[test]
    fn integers_follow_string2ll() {
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("42"), Some(42));
        assert_eq!(parse_int("-42"), Some(-42));
        assert_eq!(parse_int("9223372036854775807"), Some(i64::MAX));
        for text in [
            "",
            "-",
            "+1",
            "01",
            "-0",
            " 1",
            "1 ",
            "1k",
            "1.0",
            "9223372036854775808",
        ] {
            assert_eq!(parse_int(text), None, "{text:?}");
        }
    }

    #[test]
    fn split_args_follows_sdssplitargs() {
        let split = |line: &str| {
            split_args(line.as_bytes())
                .map(|w| w.into_iter().map(|w| lossy(&w)).collect::<Vec<_>>())
        };
        assert_eq!(split("  a   b\tc  "), Some(words(&["a", "b", "c"])));
        assert_eq!(split(""), Some(vec![]));
        assert_eq!(
            split("\x0b\x0c a"),
            Some(words(&["a"])),
            "leading isspace() is skipped"
        );
        assert_eq!(
            split(r#"requirepass "a b""#),
            Some(words(&["requirepass", "a b"]))
        );
        assert_eq!(split(r#""" x"#), Some(words(&["", "x"])));
        assert_eq!(split(r#""\n\r\t\"\\\q""#), Some(words(&["\n\r\t\"\\q"])));
        assert_eq!(split(r#""\x41\x7a\xZZ""#), Some(words(&["AzxZZ"])));
        assert_eq!(split(r"'it\'s \n'"), Some(words(&[r"it's \n"])));
        assert_eq!(
            split(r#"a"b c"d"#),
            None,
            "a closing quote must end the word"
        );
        assert_eq!(
            split(r#"a"b c" d"#),
            Some(words(&["ab c", "d"])),
            "a quote may start mid-word"
        );
        assert_eq!(split(r#""open"#), None);
        assert_eq!(split("'open"), None);
        assert_eq!(split(r#""trailing\"#), None);
        assert_eq!(split_args(b"\"\\xff\""), Some(vec![vec![0xff]]));
    }
}
