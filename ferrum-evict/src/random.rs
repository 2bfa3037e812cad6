//! Uniform random eviction (`allkeys-random`, `volatile-random`).
//!
//! **Structure.** A dense `Vec` of the tracked ids plus a position table
//! indexed by [`EntryId`]. Removal swaps the last id into the hole
//! (`swap_remove`) and fixes its position, so the dense array never has
//! gaps and a victim is one uniform index into it.
//!
//! **Cost.** 8 bytes per slot (a `u32` position per slot and a `u32` per
//! tracked id), both arrays grown by an eighth (`table.rs`), so at most
//! about 9 bytes. Insert, hit, remove and evict are O(1); hits touch
//! nothing.
//!
//! **Source.** Redis's `allkeys-random` picks a random key of a random
//! non-empty database with `dictGetFairRandomKey` (`src/evict.c`); this is
//! the same distribution, uniform over tracked entries, drawn from a seeded
//! [`SmallRng`] so runs are reproducible.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::table::{grow_for, reserve_one};
use crate::{EntryId, EvictionPolicy, Millis};

/// Marks an untracked slot in the position table.
const NIL: u32 = u32::MAX;

/// Configuration for [`Random`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RandomConfig {
    /// Seed of the victim generator. Default: 0.
    pub seed: u64,
}

/// Evicts a tracked entry chosen uniformly at random.
#[derive(Clone, Debug)]
pub struct Random {
    /// The tracked ids, in no particular order.
    dense: Vec<u32>,
    /// `pos[id]` is the index of `id` in `dense`, or `NIL`.
    pos: Vec<u32>,
    rng: SmallRng,
}

impl Random {
    /// An empty policy.
    pub fn new(config: RandomConfig) -> Self {
        Random {
            dense: Vec::new(),
            pos: Vec::new(),
            rng: SmallRng::seed_from_u64(config.seed),
        }
    }

    fn position(&self, id: EntryId) -> Option<usize> {
        match self.pos.get(id.index()) {
            Some(&p) if p != NIL => Some(p as usize),
            _ => None,
        }
    }

    fn remove_at(&mut self, p: usize) -> EntryId {
        let id = self.dense.swap_remove(p);
        if let Some(&moved) = self.dense.get(p) {
            self.pos[moved as usize] = p as u32;
        }
        self.pos[id as usize] = NIL;
        EntryId(id)
    }
}

impl Default for Random {
    fn default() -> Self {
        Random::new(RandomConfig::default())
    }
}

impl EvictionPolicy for Random {
    fn name(&self) -> &'static str {
        "random"
    }

    fn on_insert(&mut self, id: EntryId, _key_hash: u64, _cost: u32, _now: Millis) {
        debug_assert!(self.position(id).is_none(), "{id:?} inserted twice");
        grow_for(&mut self.pos, id.index(), NIL);
        self.pos[id.index()] = self.dense.len() as u32;
        reserve_one(&mut self.dense);
        self.dense.push(id.0);
    }

    fn on_hit(&mut self, _id: EntryId, _key_hash: u64, _now: Millis) {}

    fn on_remove(&mut self, id: EntryId) {
        if let Some(p) = self.position(id) {
            self.remove_at(p);
        }
    }

    fn evict(&mut self, _now: Millis, _key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId> {
        if self.dense.is_empty() {
            return None;
        }
        let p = self.rng.random_range(0..self.dense.len());
        Some(self.remove_at(p))
    }

    fn len(&self) -> usize {
        self.dense.len()
    }

    fn heap_bytes(&self) -> usize {
        (self.dense.capacity() + self.pos.capacity()) * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dense array: the ids a victim is drawn from, in slot order.
    fn dump(random: &Random) -> Vec<u32> {
        for (p, &id) in random.dense.iter().enumerate() {
            assert_eq!(random.pos[id as usize], p as u32, "position of {id}");
        }
        random.dense.clone()
    }

    #[test]
    fn swap_remove_keeps_the_array_dense() {
        let mut random = Random::default();
        for i in 0..5 {
            random.on_insert(EntryId(i), 0, 1, Millis(0));
        }
        assert_eq!(dump(&random), [0, 1, 2, 3, 4]);
        random.on_remove(EntryId(1));
        assert_eq!(dump(&random), [0, 4, 2, 3]);
        random.on_hit(EntryId(0), 0, Millis(1));
        assert_eq!(dump(&random), [0, 4, 2, 3]);
        random.on_remove(EntryId(3));
        assert_eq!(dump(&random), [0, 4, 2]);
        random.on_remove(EntryId(1));
        assert_eq!(dump(&random), [0, 4, 2]);
        assert_eq!(random.len(), 3);
    }

    #[test]
    fn evicts_every_entry_once_then_none() {
        let mut random = Random::new(RandomConfig { seed: 3 });
        for i in 0..6 {
            random.on_insert(EntryId(i), 0, 1, Millis(0));
        }
        let mut victims: Vec<u32> = (0..6)
            .map(|_| random.evict(Millis(0), &|_| 0).map_or(NIL, |id| id.0))
            .collect();
        assert_eq!(random.evict(Millis(0), &|_| 0), None);
        assert_eq!(dump(&random), [] as [u32; 0]);
        victims.sort_unstable();
        assert_eq!(victims, [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn victims_are_roughly_uniform() {
        // Evict one of 4 entries and put it back, 4 000 times: each id should
        // be chosen about 1 000 times.
        let mut random = Random::new(RandomConfig { seed: 11 });
        for i in 0..4 {
            random.on_insert(EntryId(i), 0, 1, Millis(0));
        }
        let mut counts = [0u32; 4];
        for _ in 0..4_000 {
            let Some(id) = random.evict(Millis(0), &|_| 0) else {
                panic!("evict on a non-empty policy returned None");
            };
            counts[id.index()] += 1;
            random.on_insert(id, 0, 1, Millis(0));
        }
        for c in counts {
            assert!((850..=1_150).contains(&c), "counts {counts:?}");
        }
    }
}
