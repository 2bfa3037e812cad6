//! Redis's glob-style pattern matching, used by `KEYS`, `SCAN ... MATCH`,
//! `CONFIG GET` and `PSUBSCRIBE`.
//!
//! The language is the one of Redis's `stringmatchlen()` (src/util.c): `*`
//! matches any run of bytes, `?` matches one byte, `[abc]` / `[^abc]` match one
//! byte in (or not in) a set that may hold ranges such as `[a-z]` (reversed
//! ranges like `[z-a]` are swapped), and `\x` matches `x` literally, outside
//! brackets and inside them. Matching is on bytes; with `nocase` only ASCII
//! letters fold, as C's `tolower` does in the "C" locale Redis runs in.
//!
//! Every quirk a client can observe is kept, because a pattern that selects a
//! different set of keys than Redis would is a silent data bug for the caller:
//! an unterminated `[abc` acts as `[abc]`, a lone `[` matches nothing, `[^`
//! matches any byte, `[]` is an empty set, `-` right before `]` is a range up to
//! `]` (`[a-]` is the range `]`..=`a`), a trailing `\` matches a backslash, an
//! escaped byte inside brackets ignores `nocase`, and a `nocase` range folds its
//! ends after swapping them (so `[Z-a]` folds to the empty range `z`..=`a`).
//!
//! Three deliberate differences from Redis 7:
//! - `*` matches the empty string. Redis 7's loop never runs for an empty
//!   subject, so `stringmatchlen("*", "")` is 0 there; that is
//!   redis/redis#15643, and the fix under review makes it 1, as here. `KEYS *`
//!   and `SCAN` special-case the lone `*` in Redis, so only longer all-star
//!   patterns such as `**` against an empty key or member could tell.
//! - Range ends compare as unsigned bytes. Redis compares C `char`s, which are
//!   signed on x86-64 and unsigned on arm64, so a range straddling 0x7F/0x80
//!   such as `[a-\xff]` already differs between Redis builds. Ranges within
//!   ASCII, or within 0x80..=0xFF, agree with every build.
//! - Cost. Redis recurses once per `*` and, since 6.x, stops retrying an outer
//!   `*` once an inner one has failed everywhere ("skipLongerMatches"). The
//!   same insight gives the classic iterative matcher used here: remember only
//!   the most recent `*` and, on a mismatch, let it swallow one more byte.
//!   Every non-star token consumes exactly one byte, so retrying an earlier
//!   star can never succeed where the later one failed. That is
//!   O(pattern × subject) time in the worst case, no recursion and no
//!   allocation. Redis also gives up (no match) when a pattern nests more than
//!   1000 stars; that limit is kept, counted up front, so results agree.

/// Redis's `stringmatchlen_impl` returns "no match" once it is this many stars
/// deep, to bound its recursion. We do not recurse, but keep the limit so that
/// a pattern with more star groups than this gives the same answer as Redis.
const MAX_STAR_NESTING: usize = 1000;

/// Does `string` match the glob `pattern`, with Redis's `stringmatchlen`
/// semantics? `nocase` folds ASCII letters.
///
/// Runs in O(`pattern.len()` × `string.len()`) time at worst and never
/// allocates, so a hostile pattern such as `a*a*a*a*a*b` cannot stall the
/// server.
///
/// ```
/// use ferrum_store::glob::glob_match;
/// assert!(glob_match(b"user:*", b"user:42", false));
/// assert!(glob_match(b"h?llo", b"hallo", false));
/// assert!(glob_match(b"h[^e]llo", b"hallo", false));
/// assert!(!glob_match(b"h[a-b]llo", b"hello", false));
/// assert!(glob_match(b"MAXMEMORY*", b"maxmemory-policy", true));
/// ```
pub fn glob_match(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    if too_many_stars(pattern) {
        return false;
    }
    let (mut p, mut s) = (0, 0);
    // The most recent star: where the pattern resumes after it, and the
    // subject position it was last tried at.
    let mut retry: Option<(usize, usize)> = None;
    while s < string.len() {
        if pattern.get(p) == Some(&b'*') {
            p = skip_stars(pattern, p);
            if p == pattern.len() {
                return true;
            }
            retry = Some((p, s));
            continue;
        }
        if p < pattern.len() {
            let (matched, next) = match_token(pattern, p, string[s], nocase);
            if matched {
                p = next;
                s += 1;
                continue;
            }
        }
        match retry {
            Some((after_star, tried_at)) => {
                // Let the star swallow one more byte and try the rest again.
                p = after_star;
                s = tried_at + 1;
                retry = Some((after_star, s));
            }
            None => return false,
        }
    }
    skip_stars(pattern, p) == pattern.len()
}

/// Index of the first byte at or after `p` that is not `*`.
fn skip_stars(pattern: &[u8], mut p: usize) -> usize {
    while pattern.get(p) == Some(&b'*') {
        p += 1;
    }
    p
}

/// Whether Redis would hit its nesting limit on this pattern: more than
/// [`MAX_STAR_NESTING`] groups of `*`, not counting a trailing group (Redis
/// answers "match" for that one before recursing). Every match has to pass
/// through every star group, so Redis can never report a match for such a
/// pattern.
fn too_many_stars(pattern: &[u8]) -> bool {
    // Cheap exit for every realistic pattern.
    if bytecount(pattern, b'*') <= MAX_STAR_NESTING {
        return false;
    }
    let (mut p, mut groups) = (0, 0);
    while p < pattern.len() {
        if pattern[p] == b'*' {
            p = skip_stars(pattern, p);
            if p < pattern.len() {
                groups += 1;
            }
        } else {
            // Token boundaries do not depend on the subject byte.
            p = match_token(pattern, p, 0, false).1;
        }
    }
    groups > MAX_STAR_NESTING
}

fn bytecount(haystack: &[u8], needle: u8) -> usize {
    haystack.iter().filter(|&&b| b == needle).count()
}

/// Matches the single-byte token (anything but `*`) at `pattern[p]` against
/// `c`. Returns whether it matched and where the next token starts; the latter
/// depends only on the pattern.
fn match_token(pattern: &[u8], p: usize, c: u8, nocase: bool) -> (bool, usize) {
    match pattern[p] {
        b'?' => (true, p + 1),
        b'[' => match_class(pattern, p + 1, c, nocase),
        // A trailing backslash has nothing to escape and is a literal.
        b'\\' if p + 1 < pattern.len() => (same(pattern[p + 1], c, nocase), p + 2),
        literal => (same(literal, c, nocase), p + 1),
    }
}

/// Matches the bracket class whose body starts at `pattern[p]` (just after
/// `[`). Returns whether `c` is in the class and where the next token starts.
///
/// This mirrors Redis's scanning order step by step, because its unterminated
/// and degenerate cases (`[`, `[^`, `[a-]`, `[\`) are defined only by that
/// order. `at` reads one past the end as NUL, as the C code reads the sds
/// terminator; that byte is never `^`, `\` or `]`.
fn match_class(pattern: &[u8], mut p: usize, c: u8, nocase: bool) -> (bool, usize) {
    let at = |i: usize| pattern.get(i).copied().unwrap_or(0);
    let negated = at(p) == b'^';
    if negated {
        p += 1;
    }
    let mut matched = false;
    loop {
        let left = pattern.len() - p;
        if at(p) == b'\\' && left >= 2 {
            // Redis compares escaped bytes exactly, even with `nocase`.
            p += 1;
            matched |= pattern[p] == c;
        } else if at(p) == b']' {
            break;
        } else if left == 0 {
            // Unterminated: step back onto the last byte, so that the caller's
            // "one past the closing bracket" lands on the end of the pattern.
            p -= 1;
            break;
        } else if left >= 3 && pattern[p + 1] == b'-' {
            let (mut lo, mut hi) = (pattern[p], pattern[p + 2]);
            if lo > hi {
                std::mem::swap(&mut lo, &mut hi);
            }
            let mut c = c;
            if nocase {
                // Folded after the swap, exactly as Redis does it.
                (lo, hi, c) = (
                    lo.to_ascii_lowercase(),
                    hi.to_ascii_lowercase(),
                    c.to_ascii_lowercase(),
                );
            }
            matched |= (lo..=hi).contains(&c);
            p += 2;
        } else {
            matched |= same(pattern[p], c, nocase);
        }
        p += 1;
    }
    (matched != negated, p + 1)
}

fn same(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn m(pattern: &str, string: &str) -> bool {
        glob_match(pattern.as_bytes(), string.as_bytes(), false)
    }

    fn mi(pattern: &str, string: &str) -> bool {
        glob_match(pattern.as_bytes(), string.as_bytes(), true)
    }

    #[test]
    fn literals() {
        assert!(m("hello", "hello"));
        assert!(!m("hello", "hell"));
        assert!(!m("hell", "hello"));
        assert!(!m("hello", "Hello"));
        assert!(mi("hello", "HeLLo"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(!m("a", ""));
    }

    #[test]
    fn star() {
        assert!(m("*", "anything"));
        assert!(m("*", ""));
        assert!(m("**", ""));
        assert!(m("h*o", "ho"));
        assert!(m("h*o", "hello"));
        assert!(!m("h*o", "hell"));
        assert!(m("*llo", "hello"));
        assert!(m("he*", "he"));
        assert!(m("a*b*c", "aXbYc"));
        assert!(m("a*b*c", "abc"));
        assert!(!m("a*b*c", "acb"));
        assert!(m("a**b", "ab"));
        assert!(!m("*x", ""));
        assert!(!m("a*", ""));
        // The star has to give back bytes it first swallowed.
        assert!(m("*ab", "aab"));
        assert!(m("*aab", "aaab"));
        assert!(m("a*ab*b", "aabab"));
    }

    #[test]
    fn question_mark() {
        assert!(m("h?llo", "hello"));
        assert!(m("h?llo", "hallo"));
        assert!(!m("h?llo", "hllo"));
        assert!(!m("?", ""));
        assert!(m("??", "ab"));
        assert!(!m("??", "abc"));
        assert!(m("*?", "a"));
        assert!(!m("*??", "a"));
    }

    #[test]
    fn classes() {
        assert!(m("h[ae]llo", "hello"));
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo"));
        assert!(!m("h[a-b]llo", "hello"));
        assert!(m("[0-9][0-9]", "42"));
        assert!(m("[^0-9]", "x"));
        assert!(!m("[^0-9]", "5"));
        assert!(m("[-a]", "-"), "a leading '-' is a member");
        // A '-' before ']' is not a member: it ranges up to ']' (see below).
        assert!(!m("[abc-]", "-"));
        assert!(m("[abc-]", "_"));
    }

    #[test]
    fn reversed_ranges_are_swapped() {
        assert!(m("[z-a]", "m"));
        assert!(m("[9-0]", "5"));
        assert!(!m("[z-a]", "M"));
    }

    #[test]
    fn nocase_classes() {
        assert!(mi("[A-C]", "b"));
        assert!(mi("[a-c]", "B"));
        assert!(mi("[X]", "x"));
        assert!(!mi("[^X]", "x"));
        // Redis folds the ends after swapping them: `Z`..=`a` becomes the
        // empty range `z`..=`a` with nocase, but holds `[`, `_` etc. without.
        assert!(m("[Z-a]", "_"));
        assert!(!mi("[Z-a]", "_"));
        assert!(!mi("[Z-a]", "z"));
        assert!(!mi("[Z-a]", "a"));
    }

    #[test]
    fn escapes() {
        assert!(m("\\*", "*"));
        assert!(!m("\\*", "a"));
        assert!(m("\\?", "?"));
        assert!(!m("\\?", "a"));
        assert!(m("\\[a]", "[a]"));
        assert!(m("a\\\\b", "a\\b"));
        assert!(m("\\a", "a"));
        assert!(mi("\\A", "a"), "an escape outside brackets still folds");
        // A trailing backslash is a literal backslash.
        assert!(m("a\\", "a\\"));
        assert!(!m("a\\", "a"));
    }

    #[test]
    fn escapes_inside_brackets() {
        assert!(m("[\\]]", "]"));
        assert!(m("[\\^a]", "^"));
        assert!(m("[a\\-z]", "-"));
        assert!(!m("[a\\-z]", "m"), "an escaped '-' does not make a range");
        assert!(m("[\\\\]", "\\"));
        // Redis compares escaped bytes exactly even when nocase is set.
        assert!(!mi("[\\A]", "a"));
        assert!(mi("[\\A]", "A"));
        // `[\` at the end: the backslash has nothing to escape and is a member.
        assert!(m("[\\", "\\"));
        assert!(!m("[\\", "a"));
    }

    #[test]
    fn unterminated_and_degenerate_brackets() {
        // An unterminated class runs to the end of the pattern.
        assert!(m("[abc", "b"));
        assert!(!m("[abc", "d"));
        assert!(!m("[abc", "bc"));
        assert!(m("hell[a-o", "hello"));
        assert!(m("[^abc", "d"));
        // A lone `[` is an empty class: it matches nothing.
        assert!(!m("[", "["));
        assert!(!m("[", ""));
        assert!(!m("a[", "a["));
        // `[^` at the end is an empty negated class: any byte.
        assert!(m("[^", "x"));
        assert!(!m("[^", ""));
        assert!(!m("[^", "xy"));
        // `[]` is an empty class, so `[]a]` can never match.
        assert!(!m("[]", "]"));
        assert!(!m("[]a]", "]a]"));
        assert!(!m("[]a]", "a]"));
        assert!(m("[^]", "x"));
        // `-` before `]` starts a range that swallows the bracket: `[a-]` is
        // the (reversed, swapped) range `]`..=`a`, unterminated.
        assert!(m("[a-]", "_"));
        assert!(m("[a-]", "]"));
        assert!(!m("[a-]", "-"));
        // ...and whatever follows joins the now unterminated class.
        assert!(m("[a-]x", "x"));
        assert!(m("[a-]x", "`"));
        assert!(!m("[a-]x", "]x"));
    }

    #[test]
    fn star_meets_classes_and_escapes() {
        assert!(m("*[0-9]", "abc7"));
        assert!(!m("*[0-9]", "abc"));
        assert!(m("*\\*", "a*"));
        assert!(!m("*\\*", "ab"));
        assert!(m("[*]", "*"));
        assert!(
            !m("[*]", "a"),
            "a star inside brackets is a member, not a wildcard"
        );
        assert!(m("user:*:name", "user:42:name"));
        assert!(!m("user:*:name", "user:42:email"));
    }

    #[test]
    fn high_bytes() {
        assert!(glob_match(b"[\x80-\xff]", b"\xc3", false));
        assert!(!glob_match(b"[\x80-\xff]", b"a", false));
        assert!(glob_match(b"\xc3*", "é!".as_bytes(), false));
        // nocase folds ASCII only, never high bytes.
        assert!(!glob_match(b"\xc3", b"\xe3", true));
        assert!(
            glob_match(b"a\0b", b"a\0b", false),
            "NUL is an ordinary byte"
        );
        assert!(!glob_match(b"a\0b", b"a", false));
    }

    #[test]
    fn pathological_patterns_are_fast() {
        // Exponential for a naive backtracking matcher: 30 stars, 200 bytes.
        let pattern = "a*".repeat(30) + "b";
        let subject = "a".repeat(200);
        assert!(!m(&pattern, &subject));
        assert!(m(&pattern, &(subject.clone() + "b")));
        let pattern = "*a".repeat(40) + "*";
        assert!(!m(&pattern, &"a".repeat(39)));
        assert!(m(&pattern, &"a".repeat(40)));
        let pattern = "?*".repeat(50) + "x";
        assert!(!m(&pattern, &"y".repeat(5000)));
    }

    #[test]
    fn redis_nesting_limit() {
        // Exactly 1000 inner star groups still match, 1001 never do (Redis
        // returns "no match" at nesting depth 1001).
        let at_limit = "a*".repeat(MAX_STAR_NESTING) + "a";
        let subject = "a".repeat(MAX_STAR_NESTING + 1);
        assert!(m(&at_limit, &subject));
        let over = "a*".repeat(MAX_STAR_NESTING + 1) + "a";
        assert!(!m(&over, &"a".repeat(MAX_STAR_NESTING + 2)));
        // A trailing group does not count: Redis matches before recursing.
        let trailing = "a*".repeat(MAX_STAR_NESTING) + "a*";
        assert!(m(&trailing, &subject));
        // Stars that are escaped or inside brackets are not groups.
        let escaped = "\\*".repeat(MAX_STAR_NESTING + 1);
        assert!(m(&escaped, &"*".repeat(MAX_STAR_NESTING + 1)));
    }

    /// A direct, exponential reference matcher: a star tries every split.
    /// It shares `match_token` with the real one, so it checks the star and
    /// end-of-input handling, which is where an iterative matcher goes wrong.
    fn reference(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
        match pattern.first() {
            None => string.is_empty(),
            Some(b'*') => {
                (0..=string.len()).any(|i| reference(&pattern[1..], &string[i..], nocase))
            }
            Some(_) => match string.split_first() {
                None => false,
                Some((&c, rest)) => {
                    let (ok, next) = match_token(pattern, 0, c, nocase);
                    ok && reference(&pattern[next..], rest, nocase)
                }
            },
        }
    }

    proptest! {
        #[test]
        fn star_matches_everything(s in proptest::collection::vec(any::<u8>(), 0..64), nocase: bool) {
            prop_assert!(glob_match(b"*", &s, nocase));
            prop_assert!(glob_match(b"***", &s, nocase));
        }

        #[test]
        fn plain_pattern_matches_only_itself(
            p in "[a-zA-Z0-9:_.-]{0,12}",
            s in "[a-zA-Z0-9:_.-]{0,12}",
        ) {
            prop_assert!(glob_match(p.as_bytes(), p.as_bytes(), false));
            prop_assert_eq!(glob_match(p.as_bytes(), s.as_bytes(), false), p == s);
            prop_assert_eq!(
                glob_match(p.as_bytes(), s.as_bytes(), true),
                p.eq_ignore_ascii_case(&s)
            );
        }

        #[test]
        fn agrees_with_exhaustive_backtracking(
            p in "[ab*?\\[\\]^\\\\-]{0,10}",
            s in "[ab\\[\\]^\\\\*?-]{0,8}",
            nocase: bool,
        ) {
            prop_assert_eq!(
                glob_match(p.as_bytes(), s.as_bytes(), nocase),
                reference(p.as_bytes(), s.as_bytes(), nocase)
            );
        }
    }
}
