//! The conformance suite every [`EvictionPolicy`] must pass.
//!
//! It drives a policy with proptest-generated operation sequences and checks
//! each step against a model (the set of ids the caller believes tracked):
//!
//! - `evict` never returns an id that is untracked or was removed, and
//!   returns `None` only when nothing is tracked; it asks the caller for
//!   key hashes of tracked entries only;
//! - `len()` and `is_empty()` agree with the model after every step;
//! - `lfu_counter` answers `None` for untracked ids, and after
//!   `set_lfu_counter` either `None` (no counter kept) or the value set;
//! - draining with `evict` at the end returns every tracked id exactly once;
//! - the same seed and operations give the same victims (determinism).
//!
//! Operations respect the trait's caller guarantees: an id is inserted only
//! when untracked, and hit, removed or re-deadlined only when tracked. Time
//! only moves forward, in steps of up to several minutes so that time-based
//! state (LFU decay) is exercised.
//!
//! Available to other crates behind the `testing` feature:
//!
//! ```
//! use ferrum_evict::{testing, Random, RandomConfig};
//!
//! testing::check_policy(|seed| Random::new(RandomConfig { seed }));
//! ```

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::{EntryId, EvictionPolicy, Millis};

/// Ids are drawn from `0..ID_SPACE`, small enough that inserts, hits and
/// removals collide often.
pub const ID_SPACE: u32 = 48;

/// One call into a policy, with the arguments the caller would pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `on_insert(id)`, skipped if `id` is tracked.
    Insert(u32),
    /// `on_hit(id)` if tracked, otherwise `on_miss` with its hash.
    Hit(u32),
    /// `on_miss(key_hash)`.
    Miss(u64),
    /// `on_expiry_change(id, deadline)`, skipped if `id` is untracked.
    Expiry(u32, Option<u64>),
    /// `on_remove(id)`, skipped if `id` is untracked.
    Remove(u32),
    /// `evict()`.
    Evict,
    /// Advance the clock by this many milliseconds.
    Tick(u64),
    /// `set_lfu_counter(id, counter)`, on tracked and untracked ids alike.
    SetCounter(u32, u8),
}

/// A strategy for one operation, weighted towards inserts and hits.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..ID_SPACE).prop_map(Op::Insert),
        4 => (0..ID_SPACE).prop_map(Op::Hit),
        1 => any::<u64>().prop_map(Op::Miss),
        2 => (0..ID_SPACE, proptest::option::of(0..600_000u64))
            .prop_map(|(id, d)| Op::Expiry(id, d)),
        1 => (0..ID_SPACE).prop_map(Op::Remove),
        3 => Just(Op::Evict),
        1 => prop_oneof![0..1_000u64, 0..400_000u64].prop_map(Op::Tick),
        1 => (0..ID_SPACE, any::<u8>()).prop_map(|(id, c)| Op::SetCounter(id, c)),
    ]
}

/// A strategy for a sequence of up to `max_len` operations.
pub fn ops(max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(op(), 0..max_len)
}

/// Applies `ops` to `policy`, checking every step against the model.
///
/// Returns the victims in order (the observable behaviour compared for
/// determinism).
///
/// # Errors
///
/// A description of the first broken rule.
pub fn run_ops<P: EvictionPolicy>(policy: &mut P, ops: &[Op]) -> Result<Vec<EntryId>, String> {
    let mut model = BTreeSet::new();
    let mut victims = Vec::new();
    let mut now = Millis(0);
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert(i) if !model.contains(&i) => {
                policy.on_insert(EntryId(i), hash(i), 32, now);
                model.insert(i);
            }
            Op::Hit(i) if model.contains(&i) => policy.on_hit(EntryId(i), hash(i), now),
            Op::Hit(i) => policy.on_miss(hash(i), now),
            Op::Miss(h) => policy.on_miss(h, now),
            Op::Expiry(i, deadline) if model.contains(&i) => {
                policy.on_expiry_change(EntryId(i), deadline.map(|d| now + Millis(d)));
            }
            Op::Remove(i) if model.contains(&i) => {
                policy.on_remove(EntryId(i));
                model.remove(&i);
            }
            Op::Evict => match evict(policy, now, &model)? {
                Some(id) if model.remove(&id.0) => victims.push(id),
                Some(id) => return Err(format!("step {step}: evicted untracked {id:?}")),
                None if model.is_empty() => {}
                None => return Err(format!("step {step}: None with {} tracked", model.len())),
            },
            Op::Tick(ms) => now = now + Millis(ms),
            Op::SetCounter(i, counter) => {
                policy.set_lfu_counter(EntryId(i), counter, now);
                let read = policy.lfu_counter(EntryId(i), now);
                if read.is_some_and(|c| c != counter) || (read.is_some() && !model.contains(&i)) {
                    return Err(format!(
                        "step {step}: set counter {counter} of {i}, read {read:?}"
                    ));
                }
            }
            Op::Insert(_) | Op::Expiry(..) | Op::Remove(_) => {}
        }
        if policy.len() != model.len() || policy.is_empty() != model.is_empty() {
            return Err(format!(
                "step {step} ({op:?}): len {} but {} tracked",
                policy.len(),
                model.len()
            ));
        }
        if let Some(i) = (0..ID_SPACE).find(|i| !model.contains(i)) {
            if policy.lfu_counter(EntryId(i), now).is_some() {
                return Err(format!("step {step}: lfu_counter of untracked {i}"));
            }
        }
    }
    while let Some(id) = evict(policy, now, &model)? {
        if !model.remove(&id.0) {
            return Err(format!("drain: evicted untracked {id:?}"));
        }
        victims.push(id);
    }
    if !model.is_empty() || !policy.is_empty() {
        return Err(format!("drain: None with {} tracked", model.len()));
    }
    Ok(victims)
}

/// `policy.evict`, answering its key-hash requests as a store would, and
/// failing if it asks for an entry the caller does not believe tracked.
fn evict<P: EvictionPolicy>(
    policy: &mut P,
    now: Millis,
    model: &BTreeSet<u32>,
) -> Result<Option<EntryId>, String> {
    let untracked_ask = std::cell::Cell::new(None);
    let victim = policy.evict(now, &|id| {
        if !model.contains(&id.0) {
            untracked_ask.set(Some(id));
        }
        hash(id.0)
    });
    match untracked_ask.get() {
        Some(id) => Err(format!("evict asked the key hash of untracked {id:?}")),
        None => Ok(victim),
    }
}

/// Runs the suite against policies built by `make(seed)`.
///
/// # Panics
///
/// When a rule is broken, with the minimal failing sequence proptest found.
pub fn check_policy<P, F>(make: F)
where
    P: EvictionPolicy,
    F: Fn(u64) -> P,
{
    let mut runner = TestRunner::new(Config {
        cases: 128,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&(any::<u64>(), ops(200)), |(seed, ops)| {
        let first = run_ops(&mut make(seed), &ops).map_err(TestCaseError::fail)?;
        let second = run_ops(&mut make(seed), &ops).map_err(TestCaseError::fail)?;
        prop_assert_eq!(first, second, "same seed and operations, different victims");
        Ok(())
    });
    if let Err(err) = result {
        panic!("{} fails the conformance suite: {err}", make(0).name());
    }
}

/// A cheap, fixed key hash for ids, as a store would pass.
fn hash(i: u32) -> u64 {
    u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        Ahe, AheConfig, AnyPolicy, Lfu, LfuConfig, Lru, LruConfig, PolicyConfig, PolicyKind,
        Random, RandomConfig, Ttl, TtlConfig,
    };

    #[test]
    fn lru_conforms() {
        check_policy(|_| Lru::new(LruConfig::default()));
    }

    #[test]
    fn lfu_conforms() {
        check_policy(|seed| {
            Lfu::new(LfuConfig {
                seed,
                ..LfuConfig::default()
            })
        });
    }

    #[test]
    fn lfu_variants_conform() {
        check_policy(|seed| {
            Lfu::new(LfuConfig {
                log_factor: 0,
                decay_time: Millis(0),
                aging: 0,
                expired_first: false,
                seed,
            })
        });
        check_policy(|seed| {
            Lfu::new(LfuConfig {
                aging: u32::MAX,
                seed,
                ..LfuConfig::default()
            })
        });
    }

    #[test]
    fn random_conforms() {
        check_policy(|seed| Random::new(RandomConfig { seed }));
    }

    #[test]
    fn ttl_conforms() {
        check_policy(|_| Ttl::new(TtlConfig::default()));
    }

    #[test]
    fn ahe_conforms() {
        check_policy(|_| Ahe::new(AheConfig::default()));
    }

    #[test]
    fn ahe_variants_conform() {
        // Expired entries first, a share that swings in large steps over
        // its whole range, and promotion at the first read.
        check_policy(|seed| {
            Ahe::new(AheConfig {
                expired_first: true,
                initial_small_share: 0.5,
                min_small_share: 0.0,
                max_small_share: 1.0,
                step: 1.0 + (seed % 7) as f64,
                promote_at: 1,
                ..AheConfig::default()
            })
        });
    }

    #[test]
    fn every_policy_kind_conforms() {
        for kind in PolicyKind::ALL {
            check_policy(|seed| {
                let config = PolicyConfig {
                    seed,
                    ..PolicyConfig::default()
                };
                kind.build(&config)
                    .unwrap_or_else(|| AnyPolicy::Lru(Lru::default()))
            });
        }
    }

    /// The suite must be able to fail: a policy that forgets removals.
    #[test]
    fn catches_a_policy_that_ignores_removal() {
        struct Forgetful(Lru);
        impl EvictionPolicy for Forgetful {
            fn name(&self) -> &'static str {
                "forgetful"
            }
            fn on_insert(&mut self, id: EntryId, h: u64, c: u32, now: Millis) {
                self.0.on_insert(id, h, c, now);
            }
            fn on_hit(&mut self, id: EntryId, h: u64, now: Millis) {
                self.0.on_hit(id, h, now);
            }
            fn on_remove(&mut self, _id: EntryId) {}
            fn evict(&mut self, now: Millis, key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId> {
                self.0.evict(now, key_hash)
            }
            fn len(&self) -> usize {
                self.0.len()
            }
            fn heap_bytes(&self) -> usize {
                0
            }
        }
        let ops = [Op::Insert(1), Op::Remove(1), Op::Evict];
        let err = run_ops(&mut Forgetful(Lru::default()), &ops);
        assert_eq!(
            err,
            Err("step 1 (Remove(1)): len 1 but 0 tracked".to_owned())
        );
    }

    #[test]
    fn catches_a_policy_that_asks_for_the_hash_of_an_untracked_entry() {
        struct Nosy(Lru);
        impl EvictionPolicy for Nosy {
            fn name(&self) -> &'static str {
                "nosy"
            }
            fn on_insert(&mut self, id: EntryId, h: u64, c: u32, now: Millis) {
                self.0.on_insert(id, h, c, now);
            }
            fn on_hit(&mut self, id: EntryId, h: u64, now: Millis) {
                self.0.on_hit(id, h, now);
            }
            fn on_remove(&mut self, id: EntryId) {
                self.0.on_remove(id);
            }
            fn evict(&mut self, now: Millis, key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId> {
                key_hash(EntryId(ID_SPACE));
                self.0.evict(now, key_hash)
            }
            fn len(&self) -> usize {
                self.0.len()
            }
            fn heap_bytes(&self) -> usize {
                0
            }
        }
        let ops = [Op::Insert(1), Op::Evict];
        let err = run_ops(&mut Nosy(Lru::default()), &ops);
        assert_eq!(
            err,
            Err(format!(
                "evict asked the key hash of untracked EntryId({ID_SPACE})"
            ))
        );
    }
}
