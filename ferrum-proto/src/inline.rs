//! Inline commands: `SET k "hello world"\r\n` typed into telnet.
//!
//! Arguments are split by the rules of Redis's `sdssplitargs` (src/sds.c),
//! which `processInlineBuffer` uses: blanks separate arguments; `"..."`
//! understands `\n \r \t \b \a \xHH` and `\<c>` escapes; `'...'` understands
//! only `\'`; a closing quote must be followed by a blank or the end; a quote
//! may open in the middle of a word (`a"b c"` is `ab c`). Redis passes the line
//! to `sdssplitargs` as a C string, so a NUL byte ends it.

use bytes::Bytes;

use crate::{Frame, ProtoError};

/// Splits a line into words by Redis's `sdssplitargs` rules (see the
/// module docs), as redis-server splits inline commands and redis.conf
/// lines.
///
/// ```
/// let words = ferrum_proto::split_args(br#"SET k "hello world\n" 'it\'s'"#).unwrap();
/// assert_eq!(words, [&b"SET"[..], b"k", b"hello world\n", b"it's"]);
/// assert!(ferrum_proto::split_args(b"\"open").is_err());
/// ```
///
/// # Errors
///
/// [`ProtoError::UnbalancedQuotes`] for an unterminated quote or a closing
/// quote followed by a non-blank, exactly where `sdssplitargs` returns NULL.
pub fn split_args(line: &[u8]) -> Result<Vec<Vec<u8>>, ProtoError> {
    split_with(line, |word| word)
}

/// Splits one inline command line (without its terminator) into
/// bulk-string frames.
pub(crate) fn split_frames(line: &[u8]) -> Result<Vec<Frame>, ProtoError> {
    split_with(line, |word| Frame::Bulk(Bytes::from(word)))
}

/// The `sdssplitargs` loop, each word handed to `word` as it ends.
fn split_with<T>(line: &[u8], mut word: impl FnMut(Vec<u8>) -> T) -> Result<Vec<T>, ProtoError> {
    let line = match line.iter().position(|&b| b == 0) {
        Some(nul) => &line[..nul],
        None => line,
    };
    // Reading past the end yields NUL, as reading a C string does.
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        while is_c_space(at(i)) {
            i += 1;
        }
        if at(i) == 0 {
            return Ok(args);
        }
        let mut arg = Vec::new();
        let mut quote = Quote::None;
        loop {
            let c = at(i);
            let done = match quote {
                Quote::Double => {
                    if c == b'\\' && at(i + 1) == b'x' && is_hex(at(i + 2)) && is_hex(at(i + 3)) {
                        arg.push(hex(at(i + 2)) * 16 + hex(at(i + 3)));
                        i += 3;
                        false
                    } else if c == b'\\' && at(i + 1) != 0 {
                        i += 1;
                        arg.push(match at(i) {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                        false
                    } else if c == b'"' {
                        closing_quote(at(i + 1))?
                    } else if c == 0 {
                        return Err(ProtoError::UnbalancedQuotes);
                    } else {
                        arg.push(c);
                        false
                    }
                }
                Quote::Single => {
                    if c == b'\\' && at(i + 1) == b'\'' {
                        i += 1;
                        arg.push(b'\'');
                        false
                    } else if c == b'\'' {
                        closing_quote(at(i + 1))?
                    } else if c == 0 {
                        return Err(ProtoError::UnbalancedQuotes);
                    } else {
                        arg.push(c);
                        false
                    }
                }
                Quote::None => match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => true,
                    b'"' => {
                        quote = Quote::Double;
                        false
                    }
                    b'\'' => {
                        quote = Quote::Single;
                        false
                    }
                    _ => {
                        arg.push(c);
                        false
                    }
                },
            };
            // sdssplitargs steps past the byte it stopped on unless it is the
            // end of the string; `i` may have moved inside an escape above.
            if at(i) != 0 {
                i += 1;
            }
            if done {
                break;
            }
        }
        args.push(word(arg));
    }
}

#[derive(Clone, Copy)]
enum Quote {
    None,
    Double,
    Single,
}

/// A closing quote ends the argument only if a blank or the end follows.
fn closing_quote(next: u8) -> Result<bool, ProtoError> {
    if next != 0 && !is_c_space(next) {
        Err(ProtoError::UnbalancedQuotes)
    } else {
        Ok(true)
    }
}

/// C's `isspace` in the "C" locale, which (unlike
/// [`u8::is_ascii_whitespace`]) includes vertical tab.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

fn hex(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Result<Vec<Vec<u8>>, String> {
        split_args(line.as_bytes()).map_err(|e| e.to_string())
    }

    fn ok(args: &[&str]) -> Result<Vec<Vec<u8>>, String> {
        Ok(args.iter().map(|a| a.as_bytes().to_vec()).collect())
    }

    #[test]
    fn blanks_separate_words() {
        assert_eq!(split("SET  k\tv "), ok(&["SET", "k", "v"]));
        assert_eq!(split("   "), ok(&[]));
        assert_eq!(split(""), ok(&[]));
        assert_eq!(
            split("a\x0bb"),
            ok(&["a\x0bb"]),
            "\\v is blank only between words"
        );
        assert_eq!(split("\x0ba"), ok(&["a"]));
    }

    #[test]
    fn double_quotes_understand_escapes() {
        assert_eq!(
            split(r#"SET k "hello world\n\x41\"""#),
            ok(&["SET", "k", "hello world\nA\""])
        );
        assert_eq!(split(r#""\q""#), ok(&["q"]));
        assert_eq!(split(r#""""#), ok(&[""]));
        assert_eq!(split(r#""\xzz""#), ok(&["xzz"]));
    }

    #[test]
    fn single_quotes_understand_only_escaped_quote() {
        assert_eq!(split(r"'it\'s \n'"), ok(&["it's \\n"]));
    }

    #[test]
    fn quote_opens_mid_word() {
        assert_eq!(split(r#"a"b c" d"#), ok(&["ab c", "d"]));
    }

    #[test]
    fn unbalanced_quotes_are_errors() {
        let err = Err("Protocol error: unbalanced quotes in request".to_string());
        assert_eq!(split(r#"GET "unclosed"#), err);
        assert_eq!(split(r#"GET 'unclosed"#), err);
        assert_eq!(split(r#"GET "a"b"#), err);
        assert_eq!(split(r#"GET 'a'b"#), err);
        assert_eq!(split(r#"GET "a\"#), err);
    }

    /// redis.conf lines, which redis-server splits with the same function.
    #[test]
    fn config_lines_split_the_same_way() {
        assert_eq!(
            split("\x0b\x0c a"),
            ok(&["a"]),
            "leading isspace() is skipped"
        );
        assert_eq!(split(r#"requirepass "a b""#), ok(&["requirepass", "a b"]));
        assert_eq!(split(r#""" x"#), ok(&["", "x"]));
        assert_eq!(split(r#""\n\r\t\"\\\q""#), ok(&["\n\r\t\"\\q"]));
        assert_eq!(split(r#""\x41\x7a\xZZ""#), ok(&["AzxZZ"]));
        assert_eq!(split_args(b"\"\\xff\"").ok(), Some(vec![vec![0xff]]));
    }

    #[test]
    fn nul_ends_the_line_like_a_c_string() {
        assert_eq!(split("GET a\0b c"), ok(&["GET", "a"]));
        assert_eq!(
            split("GET \"a\0\""),
            Err("Protocol error: unbalanced quotes in request".into())
        );
    }
}
