//! Holding a cache at its capacity for a whole run: the correction of
//! `maxmemory` that the live driver applies to a server and the store
//! engine to its in-process store.
//!
//! A limit calibrated once need not hold the capacity for a whole run: an
//! adaptive policy's own tables change size with what it learns. AHE's
//! sketch shrinks to an eighth when its window jumps on a rotating hot set,
//! and at a fixed limit the bytes it frees held 9% more keys than the
//! capacity at the end of `shift` (5,453 of 5,000). So every
//! [`Hold::EVERY`] requests the caller reads the key count and
//! `used_memory` and asks [`Hold::correct`] for a new limit.

/// The state of the correction: the target, the bytes per entry, the
/// current `maxmemory`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hold {
    capacity: u64,
    per_entry: u64,
    maxmemory: u64,
    /// Marginal bytes per entry, estimated as the run goes.
    slope: f64,
    /// `(maxmemory, keys)` at the last reading at the limit.
    last: Option<(u64, u64)>,
}

impl Hold {
    /// Requests between two readings.
    pub(crate) const EVERY: u64 = 2_000;

    /// Holding `capacity` keys, from `maxmemory`, with `per_entry` bytes an
    /// entry as the calibration's fill measured them.
    pub(crate) fn new(capacity: u64, per_entry: u64, maxmemory: u64) -> Hold {
        Hold {
            capacity: capacity.max(1),
            per_entry,
            maxmemory,
            slope: per_entry as f64,
            last: None,
        }
    }

    /// `maxmemory` now.
    pub(crate) fn maxmemory(&self) -> u64 {
        self.maxmemory
    }

    /// Given the keys held and `used_memory` now, the new `maxmemory` if
    /// it should change: when the cache is at its limit (within a few
    /// entries of it, so one still filling after a cold start or a raise
    /// does not count) and off the capacity by more than 0.2%.
    ///
    /// The bytes an entry adds at the margin are not the fill's average
    /// (an adaptive policy's ghost and sketch tables grow in steps), so the
    /// slope is re-estimated from the last two readings at the limit (a
    /// secant step, kept within a factor of 8 of the fill's figure); with
    /// the fill's figure alone the loop oscillated with growing swings.
    pub(crate) fn correct(&mut self, keys: u64, used_memory: u64) -> Option<u64> {
        let missing = self.capacity as i64 - keys as i64;
        let at_limit = used_memory + 16 * self.per_entry >= self.maxmemory;
        if let (true, Some((m, k))) = (at_limit, self.last) {
            let (dm, dk) = (self.maxmemory as f64 - m as f64, keys as f64 - k as f64);
            if dk.abs() >= 20.0 && dm != 0.0 {
                let fill = self.per_entry as f64;
                self.slope = (dm / dk).clamp(fill / 8.0, fill * 8.0);
            }
        }
        if at_limit {
            self.last = Some((self.maxmemory, keys));
        }
        if missing.abs() <= (self.capacity / 500).max(1) as i64 || (missing > 0 && !at_limit) {
            return None;
        }
        let step = (missing as f64 * self.slope).round() as i64;
        self.maxmemory = self.maxmemory.saturating_add_signed(step);
        Some(self.maxmemory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_a_fifth_of_a_percent_nothing_changes() {
        let mut hold = Hold::new(5_000, 100, 500_000);
        assert_eq!(hold.correct(4_990, 500_000), None);
        assert_eq!(hold.correct(5_010, 500_000), None);
        assert_eq!(hold.maxmemory(), 500_000);
    }

    #[test]
    fn too_many_keys_lower_the_limit_by_their_bytes() {
        let mut hold = Hold::new(5_000, 100, 500_000);
        assert_eq!(hold.correct(5_400, 500_000), Some(460_000));
    }

    #[test]
    fn too_few_keys_raise_it_only_at_the_limit() {
        let mut hold = Hold::new(5_000, 100, 500_000);
        // Still filling: far below the limit.
        assert_eq!(hold.correct(3_000, 300_000), None);
        // At it.
        assert_eq!(hold.correct(4_800, 499_000), Some(520_000));
    }

    #[test]
    fn the_slope_follows_what_a_key_cost_at_the_margin() {
        let mut hold = Hold::new(5_000, 100, 500_000);
        assert_eq!(hold.correct(5_400, 500_000), Some(460_000));
        // 40,000 bytes less took 200 keys, not 400: 200 bytes a key.
        assert_eq!(hold.correct(5_200, 460_000), Some(420_000));
    }
}
