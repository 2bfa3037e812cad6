//! Time as a plain value: milliseconds since an origin the caller chooses.

use std::fmt;
use std::ops::{Add, Sub};

/// A point in time, or a duration, in milliseconds.
///
/// The server measures it from its own start (or the Unix epoch, for absolute
/// expiry deadlines); the simulator uses request `i` at `Millis(i)`. Nothing
/// below the server reads a clock, so this is the only notion of time the
/// store and the policies have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub u64);

impl Millis {
    /// The origin.
    pub const ZERO: Millis = Millis(0);

    /// `self - earlier`, or zero if `earlier` is later.
    #[inline]
    pub fn saturating_sub(self, earlier: Millis) -> Millis {
        Millis(self.0.saturating_sub(earlier.0))
    }
}

impl Add for Millis {
    type Output = Millis;
    #[inline]
    fn add(self, rhs: Millis) -> Millis {
        Millis(self.0.saturating_add(rhs.0))
    }
}

impl Sub for Millis {
    type Output = Millis;
    #[inline]
    fn sub(self, rhs: Millis) -> Millis {
        self.saturating_sub(rhs)
    }
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}
