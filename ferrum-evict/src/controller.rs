//! What an adaptive policy's controller has decided, readable from outside
//! the policy so the server can publish it (`INFO ahe`, Prometheus).

/// A snapshot of AHE's queues and of what its adaptive rule saw, in AHE's
/// own terms (see [`Ahe`](crate::Ahe)): the small FIFO that every newcomer
/// enters, the main CLOCK, their two ghost histories, and small's target
/// share, which the rule learns.
///
/// Static policies have none ([`EvictionPolicy::controller_state`] returns
/// `None`). Counters are totals since the policy was built; the store sums
/// every field across shards, so the shares of a combined snapshot are the
/// shares of the whole cache.
///
/// [`EvictionPolicy::controller_state`]: crate::EvictionPolicy::controller_state
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ControllerState {
    /// Entries in the small queue.
    pub small_entries: u64,
    /// Entries in the main queue.
    pub main_entries: u64,
    /// Small's target share of the entries, `0.0..=1.0`: what the adaptive
    /// rule learns. Each eviction takes from small while small is above
    /// it, else from main. An empty cache shows the share it starts with.
    pub small_target_share: f64,
    /// Misses whose key small's ghost remembered: the key goes straight to
    /// main, and, if small evicted it recently, small's target grows.
    pub small_ghost_hits: u64,
    /// Misses whose key main's ghost remembered: small's target shrinks.
    pub main_ghost_hits: u64,
    /// Entries moved from small to main, read enough while in small.
    pub promotions: u64,
    /// Entries evicted from small (into small's ghost).
    pub small_evictions: u64,
    /// Entries evicted from main (into main's ghost).
    pub main_evictions: u64,
}

impl ControllerState {
    /// Small's share of the entries, `0.0..=1.0` (0 when empty).
    pub fn small_share(&self) -> f64 {
        let total = self.small_entries + self.main_entries;
        if total == 0 {
            0.0
        } else {
            self.small_entries as f64 / total as f64
        }
    }

    fn entries(&self) -> u64 {
        self.small_entries + self.main_entries
    }

    /// Combines per-shard snapshots: counts add up; the target share is
    /// weighted by each shard's entries (equally while all are empty), so
    /// it is the share of the whole cache.
    pub fn combine(states: impl IntoIterator<Item = ControllerState>) -> Option<ControllerState> {
        let states: Vec<ControllerState> = states.into_iter().collect();
        let (first, rest) = states.split_first()?;
        let entries: u64 = states.iter().map(ControllerState::entries).sum();
        let weight = |s: &ControllerState| {
            if entries == 0 {
                1.0 / states.len() as f64
            } else {
                s.entries() as f64 / entries as f64
            }
        };
        let mut out = *first;
        out.small_target_share = states
            .iter()
            .map(|s| weight(s) * s.small_target_share)
            .sum();
        for s in rest {
            out.small_entries += s.small_entries;
            out.main_entries += s.main_entries;
            out.small_ghost_hits += s.small_ghost_hits;
            out.main_ghost_hits += s.main_ghost_hits;
            out.promotions += s.promotions;
            out.small_evictions += s.small_evictions;
            out.main_evictions += s.main_evictions;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_adds_every_field_so_shares_are_the_whole_caches() {
        let a = ControllerState {
            small_entries: 10,
            main_entries: 90,
            small_target_share: 0.12,
            small_ghost_hits: 2,
            promotions: 1,
            ..ControllerState::default()
        };
        let b = ControllerState {
            small_entries: 30,
            main_entries: 170,
            small_target_share: 0.24,
            small_ghost_hits: 5,
            main_evictions: 4,
            ..ControllerState::default()
        };
        let c = ControllerState::combine([a, b]).expect("two states");
        assert_eq!(c.small_ghost_hits, 7);
        assert_eq!(c.promotions + c.main_evictions, 5);
        assert!((c.small_share() - 40.0 / 300.0).abs() < 1e-12);
        // 0.12 over 100 entries and 0.24 over 200: 0.2 of the 300.
        assert!((c.small_target_share - 0.2).abs() < 1e-12);
        assert_eq!(ControllerState::combine([]), None);
        assert_eq!(ControllerState::default().small_share(), 0.0);
        let empty = ControllerState {
            small_target_share: 0.1,
            ..ControllerState::default()
        };
        let both = ControllerState::combine([empty, empty]).expect("two states");
        assert!((both.small_target_share - 0.1).abs() < 1e-12);
    }
}
