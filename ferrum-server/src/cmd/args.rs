//! The argument cursor: a command's arguments read front to back, so a
//! handler says what it expects (`expect`, `flag`, `int`...) instead of
//! counting indexes, and `finish` rejects what is left over with Redis's
//! syntax error.
//!
//! The cursor is a slice and a position: making one, reading an argument or
//! matching a keyword allocates nothing, so it costs SET's option loop no
//! more than the indexes it replaces. Errors follow Redis's option loops
//! (`for (j = 3; j < c->argc; j++)` with `next = argv[j+1]` or a syntax
//! error): a missing value after a keyword is `ERR syntax error`, and a
//! value of the wrong kind gets the text of the parser in [`super::parse`]
//! (typed readers here wrap those parsers; add one when an option loop
//! needs it).
//!
//! Where Redis tests that an option's values are all there before it reads
//! the first (`LIMIT offset count`: a missing count is a syntax error even
//! when the offset is not a number), the handler keeps that test
//! (`remaining() >= 2`) before reading, so the same error wins.

use bytes::Bytes;

use super::parse::{int_arg, is};
use super::CmdError;

/// A cursor over a command's arguments (or the part of them after the
/// fixed ones).
#[derive(Clone, Debug)]
pub(crate) struct Args<'a> {
    args: &'a [Bytes],
    pos: usize,
}

impl<'a> Args<'a> {
    /// A cursor at the first of `args`.
    pub(crate) fn new(args: &'a [Bytes]) -> Args<'a> {
        Args { args, pos: 0 }
    }

    /// A cursor at `args[pos]` (at the end when `pos` is past it), for
    /// options after a command's fixed arguments.
    pub(crate) fn at(args: &'a [Bytes], pos: usize) -> Args<'a> {
        Args {
            args,
            pos: pos.min(args.len()),
        }
    }

    /// The next argument, without taking it.
    pub(crate) fn peek(&self) -> Option<&'a Bytes> {
        self.args.get(self.pos)
    }

    /// The next argument, which the syntax requires.
    ///
    /// # Errors
    /// `ERR syntax error` when there is none.
    pub(crate) fn expect(&mut self) -> Result<&'a Bytes, CmdError> {
        self.next().ok_or_else(CmdError::syntax)
    }

    /// Takes the next argument when it is `word` (ASCII case ignored).
    pub(crate) fn flag(&mut self, word: &str) -> bool {
        let hit = self.peek().is_some_and(|a| is(a, word));
        self.pos += usize::from(hit);
        hit
    }

    /// The next `n` arguments, which the syntax requires.
    ///
    /// # Errors
    /// `ERR syntax error` when fewer are left; nothing is taken then.
    pub(crate) fn next_n(&mut self, n: usize) -> Result<&'a [Bytes], CmdError> {
        let end = self.pos.checked_add(n).ok_or_else(CmdError::syntax)?;
        let taken = self.args.get(self.pos..end).ok_or_else(CmdError::syntax)?;
        self.pos = end;
        Ok(taken)
    }

    /// The next `N` arguments, which the syntax requires, for
    /// destructuring: `let [w, h, unit] = args.take_array()?;`.
    ///
    /// # Errors
    /// `ERR syntax error` when fewer are left; nothing is taken then.
    pub(crate) fn take_array<const N: usize>(&mut self) -> Result<&'a [Bytes; N], CmdError> {
        self.next_n(N)?.try_into().map_err(|_| CmdError::syntax())
    }

    /// The next argument as an integer ([`int_arg`]).
    ///
    /// # Errors
    /// `ERR syntax error` when there is none, else `int_arg`'s error.
    pub(crate) fn int(&mut self) -> Result<i64, CmdError> {
        int_arg(self.expect()?)
    }

    /// The arguments not yet taken.
    pub(crate) fn rest(&self) -> &'a [Bytes] {
        &self.args[self.pos..]
    }

    /// Takes every argument left.
    pub(crate) fn take_rest(&mut self) -> &'a [Bytes] {
        let rest = self.rest();
        self.pos = self.args.len();
        rest
    }

    /// How many arguments are left.
    pub(crate) fn remaining(&self) -> usize {
        self.args.len() - self.pos
    }

    /// Whether every argument has been taken.
    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Ends the parse.
    ///
    /// # Errors
    /// `ERR syntax error` when an argument is left.
    pub(crate) fn finish(self) -> Result<(), CmdError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(CmdError::syntax())
        }
    }
}

impl<'a> Iterator for Args<'a> {
    type Item = &'a Bytes;

    fn next(&mut self) -> Option<&'a Bytes> {
        let a = self.args.get(self.pos)?;
        self.pos += 1;
        Some(a)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining(), Some(self.remaining()))
    }
}

impl ExactSizeIterator for Args<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{NOT_INTEGER, SYNTAX};
    use crate::parse::argv;

    fn text(e: CmdError) -> String {
        e.to_string()
    }

    #[test]
    fn reads_front_to_back() {
        let v = argv(&["a", "b", "c"]);
        let mut a = Args::new(&v);
        assert_eq!(a.remaining(), 3);
        assert_eq!(a.peek().map(|b| &b[..]), Some(&b"a"[..]));
        assert_eq!(a.next().map(|b| &b[..]), Some(&b"a"[..]));
        assert_eq!(&a.expect().unwrap()[..], b"b");
        assert_eq!(a.rest(), &v[2..]);
        assert_eq!(a.take_rest(), &v[2..]);
        assert!(a.is_empty());
        assert_eq!(a.next(), None);
        assert_eq!(text(a.expect().unwrap_err()), SYNTAX);
        assert!(a.finish().is_ok());
    }

    #[test]
    fn flags_match_without_case_and_take_only_on_a_match() {
        let v = argv(&["nX", "get"]);
        let mut a = Args::new(&v);
        assert!(!a.flag("xx"));
        assert!(a.flag("NX"));
        assert!(!a.flag("nx"));
        assert!(a.flag("GET"));
        assert!(!a.flag("GET"));
        assert!(a.finish().is_ok());
    }

    #[test]
    fn finish_rejects_leftovers() {
        let v = argv(&["x"]);
        assert_eq!(text(Args::new(&v).finish().unwrap_err()), SYNTAX);
    }

    #[test]
    fn integers_reuse_int_args_text() {
        let v = argv(&["12", "x"]);
        let mut a = Args::new(&v);
        assert_eq!(a.int().unwrap(), 12);
        assert_eq!(text(a.int().unwrap_err()), NOT_INTEGER);
        assert_eq!(text(a.int().unwrap_err()), SYNTAX);
    }

    #[test]
    fn take_is_all_or_nothing() {
        let v = argv(&["a", "b", "c"]);
        let mut a = Args::new(&v);
        assert_eq!(a.next_n(2).unwrap(), &v[..2]);
        assert_eq!(text(a.next_n(2).unwrap_err()), SYNTAX);
        assert_eq!(a.remaining(), 1);
        assert_eq!(text(a.next_n(usize::MAX).unwrap_err()), SYNTAX);
        assert_eq!(a.next_n(1).unwrap(), &v[2..]);
        let mut a = Args::at(&v, 1);
        let [b, c] = a.take_array().unwrap();
        assert_eq!((&b[..], &c[..]), (&b"b"[..], &b"c"[..]));
        assert_eq!(text(a.take_array::<1>().unwrap_err()), SYNTAX);
        assert!(Args::at(&v, 9).is_empty());
    }
}
