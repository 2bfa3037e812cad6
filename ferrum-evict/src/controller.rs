//! What an adaptive policy's controller has decided, readable from outside
//! the policy so the server can publish it (`INFO ahe`, Prometheus).

/// A snapshot of an adaptive policy's controller.
///
/// Static policies have none ([`EvictionPolicy::controller_state`] returns
/// `None`). Counters are totals since the policy was built; the store sums
/// them across shards and averages the ratios.
///
/// [`EvictionPolicy::controller_state`]: crate::EvictionPolicy::controller_state
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ControllerState {
    /// How much the controller trusts recency, in `0.0..=1.0`; frequency gets
    /// the rest.
    pub recency_weight: f64,
    /// The current learning rate (step size of weight updates).
    pub learning_rate: f64,
    /// Misses whose key was in the ghost history of entries evicted on
    /// recency's advice: evidence against recency.
    pub ghost_hits_recency: u64,
    /// Misses whose key was in the ghost history of entries evicted on
    /// frequency's advice: evidence against frequency.
    pub ghost_hits_frequency: u64,
    /// Evictions decided by the recency side.
    pub decisions_recency: u64,
    /// Evictions decided by the frequency side.
    pub decisions_frequency: u64,
    /// Hit ratio of the last window the controller acted on, in `0.0..=1.0`.
    pub window_hit_ratio: f64,
}

impl ControllerState {
    /// Combines per-shard snapshots: counters add up, ratios are averaged
    /// weighted by each shard's decisions (equally when none decided yet).
    pub fn combine(states: impl IntoIterator<Item = ControllerState>) -> Option<ControllerState> {
        let states: Vec<ControllerState> = states.into_iter().collect();
        if states.is_empty() {
            return None;
        }
        let weight = |s: &ControllerState| (s.decisions_recency + s.decisions_frequency) as f64;
        let total: f64 = states.iter().map(weight).sum();
        let w = |s: &ControllerState| {
            if total > 0.0 {
                weight(s) / total
            } else {
                1.0 / states.len() as f64
            }
        };
        let mut out = ControllerState::default();
        for s in &states {
            out.recency_weight += w(s) * s.recency_weight;
            out.learning_rate += w(s) * s.learning_rate;
            out.window_hit_ratio += w(s) * s.window_hit_ratio;
            out.ghost_hits_recency += s.ghost_hits_recency;
            out.ghost_hits_frequency += s.ghost_hits_frequency;
            out.decisions_recency += s.decisions_recency;
            out.decisions_frequency += s.decisions_frequency;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_sums_counters_and_weights_ratios_by_decisions() {
        let a = ControllerState {
            recency_weight: 1.0,
            decisions_recency: 3,
            ghost_hits_frequency: 2,
            ..ControllerState::default()
        };
        let b = ControllerState {
            recency_weight: 0.0,
            decisions_frequency: 1,
            ghost_hits_frequency: 5,
            ..ControllerState::default()
        };
        let c = ControllerState::combine([a, b]).expect("two states");
        assert_eq!(c.recency_weight, 0.75);
        assert_eq!(c.ghost_hits_frequency, 7);
        assert_eq!(c.decisions_recency + c.decisions_frequency, 4);
        assert_eq!(ControllerState::combine([]), None);
    }
}
