//! Unit tests of [`Ahe`]: exact list order after each step, admission,
//! expiry, ghosts and the controller state.

use super::*;

/// The lists as `w[..] p[..] P[..]` (window, probation, protected), each
/// from most to least recent; `*` marks a spared probation entry.
fn dump(ahe: &Ahe) -> String {
    let list = |l: usize| {
        let mut out = Vec::new();
        let mut cur = ahe.lists[l].head;
        while cur != NIL {
            let spared = if ahe.nodes[cur as usize].region() == Region::Spared {
                "*"
            } else {
                ""
            };
            out.push(format!("{cur}{spared}"));
            cur = ahe.nodes[cur as usize].next();
        }
        assert_eq!(out.len(), ahe.lists[l].len, "length of list {l}");
        out.join(" ")
    };
    format!("w[{}] p[{}] P[{}]", list(0), list(1), list(2))
}

/// The hash the tests give entry `i`: distinct and well mixed.
fn h(i: u32) -> u64 {
    sketch::mix(u64::from(i) + 1)
}

/// The key hash of entry `id`, as the store answers it: entry `i` holds
/// the key hashed `h(i)`.
fn by_id(id: EntryId) -> u64 {
    h(id.0)
}

fn insert(ahe: &mut Ahe, i: u32) {
    ahe.on_insert(EntryId(i), h(i), 1, Millis(0));
}

/// A read-through miss, as the simulator does it: `on_miss`, then an
/// eviction, then the insert.
fn miss_evict_insert(ahe: &mut Ahe, i: u32) -> Option<EntryId> {
    ahe.on_miss(h(i), Millis(0));
    let victim = ahe.evict(Millis(0), &by_id);
    insert(ahe, i);
    victim
}

#[test]
fn warm_up_fills_the_window_then_spills_into_probation() {
    let mut ahe = Ahe::default();
    for i in 0..4 {
        insert(&mut ahe, i);
    }
    // Nothing moves before the first eviction.
    assert_eq!(dump(&ahe), "w[3 2 1 0] p[] P[]");
    ahe.on_hit(EntryId(1), h(1), Millis(1));
    assert_eq!(dump(&ahe), "w[1 3 2 0] p[] P[]");
    // Size 4, a window of one: 0 and 2 spill (oldest first) so that main
    // holds 2 of the 3 entries left after the eviction; then 3 (the
    // window's tail, count 0) duels 0 (count 0) and loses, and 0 goes
    // round probation again, spared.
    assert_eq!(ahe.evict(Millis(2), &by_id), Some(EntryId(3)));
    assert_eq!(dump(&ahe), "w[1] p[0* 2] P[]");
    assert_eq!(ahe.len(), 3);
}

#[test]
fn hits_promote_from_probation_to_protected_and_demote_its_tail() {
    let mut ahe = cache_of_eleven_after_one_eviction();
    // Protected may hold 80% × (1 - 0.01) of main (11 - 1 = 10 entries):
    // 8. A hit clears the spared mark; a demoted entry has none.
    for i in 0..=8 {
        ahe.on_hit(EntryId(i), h(i), Millis(1));
    }
    assert_eq!(dump(&ahe), "w[10] p[0] P[8 7 6 5 4 3 2 1]");
    ahe.on_hit(EntryId(1), h(1), Millis(2));
    assert_eq!(dump(&ahe), "w[10] p[0] P[1 8 7 6 5 4 3 2]");
    ahe.on_hit(EntryId(0), h(0), Millis(3));
    assert_eq!(dump(&ahe), "w[10] p[2] P[0 1 8 7 6 5 4 3]");
    ahe.on_hit(EntryId(10), h(10), Millis(4));
    assert_eq!(dump(&ahe), "w[10] p[2] P[0 1 8 7 6 5 4 3]");
    ahe.on_remove(EntryId(5));
    assert_eq!(dump(&ahe), "w[10] p[2] P[0 1 8 7 6 4 3]");
    assert_eq!(ahe.len(), 9);
}

#[test]
fn a_newcomer_in_a_removed_key_s_room_joins_probation_at_its_tail() {
    let mut ahe = cache_of_eleven_after_one_eviction();
    // 5 expires and the store removes it; two newcomers take its room
    // (and 9's) without an eviction. 11 had been requested before, so it
    // counts once.
    ahe.on_remove(EntryId(5));
    ahe.on_miss(h(11), Millis(0));
    ahe.on_miss(h(11), Millis(0));
    insert(&mut ahe, 11);
    ahe.on_miss(h(12), Millis(0));
    insert(&mut ahe, 12);
    assert_eq!(dump(&ahe), "w[12 11 10] p[0* 8 7 6 4 3 2 1] P[]");
    // At the next eviction main is one short: 10 spills into 5's room
    // without a duel, but at probation's tail, so it is main's victim at
    // once, and 11 (count 1) beats it. At the head, 10 would have pushed
    // 1 out instead.
    ahe.on_miss(h(13), Millis(0));
    assert_eq!(ahe.evict(Millis(0), &by_id), Some(EntryId(10)));
    assert_eq!(dump(&ahe), "w[12] p[11 0* 8 7 6 4 3 2 1] P[]");
}

/// A cache of eleven entries filled with 0..11, then one eviction.
fn cache_of_eleven_after_one_eviction() -> Ahe {
    let mut ahe = Ahe::default();
    for i in 0..11 {
        insert(&mut ahe, i);
    }
    // Size 11, window 1: 0..=8 spill so that main holds 9 of the 10 left,
    // then 9 loses its duel against 0 (neither ever repeated).
    assert_eq!(ahe.evict(Millis(0), &by_id), Some(EntryId(9)));
    assert_eq!(dump(&ahe), "w[10] p[0* 8 7 6 5 4 3 2 1] P[]");
    ahe
}

/// A cache of four entries warmed with 0..4, then `miss_evict_insert(4)`.
fn warm_cache_of_four() -> Ahe {
    warm_cache_of_four_with(AheConfig::default())
}

fn warm_cache_of_four_with(config: AheConfig) -> Ahe {
    let mut ahe = Ahe::new(config);
    for i in 0..4 {
        insert(&mut ahe, i);
    }
    // Window 1: 0 and 1 spill so that main holds 2 of the 3 left; 2 (the
    // window's tail) loses its duel against 0, neither having repeated,
    // and 0 is spared.
    assert_eq!(miss_evict_insert(&mut ahe, 4), Some(EntryId(2)));
    assert_eq!(dump(&ahe), "w[4 3] p[0* 1] P[]");
    ahe
}

#[test]
fn a_newcomer_must_out_count_main_s_victim() {
    let mut ahe = warm_cache_of_four();
    // In the simulator's order the duel is fought by the window's tail,
    // one insert behind. One-off newcomers never displace anyone.
    assert_eq!(miss_evict_insert(&mut ahe, 5), Some(EntryId(3)));
    assert_eq!(dump(&ahe), "w[5 4] p[1* 0*] P[]");
    // A spared victim loses to any newcomer that repeated, but 4 and 5
    // never did. 6 was requested before (its first access went to the
    // doorkeeper), so its second access counts ...
    ahe.on_miss(h(6), Millis(0));
    assert_eq!(miss_evict_insert(&mut ahe, 6), Some(EntryId(4)));
    assert_eq!(miss_evict_insert(&mut ahe, 7), Some(EntryId(5)));
    assert_eq!(dump(&ahe), "w[7 6] p[1* 0*] P[]");
    // ... and it beats 0 when its duel comes.
    assert_eq!(miss_evict_insert(&mut ahe, 8), Some(EntryId(0)));
    assert_eq!(dump(&ahe), "w[8 7] p[6 1*] P[]");
    let state = ahe.controller_state().unwrap_or_default();
    // 2, 3, 4 and 5 were turned away by frequency; 0 left main for 6.
    assert_eq!((state.decisions_frequency, state.decisions_recency), (4, 1));
}

#[test]
fn ghost_hits_are_charged_to_the_side_that_evicted() {
    // A ghost remembering every eviction (by default it keeps a sample by
    // key hash, which these few keys would mostly miss).
    let mut ahe = warm_cache_of_four_with(AheConfig {
        ghost_sample: 1,
        ..AheConfig::default()
    }); // 2 evicted on frequency's advice
    ahe.on_miss(h(6), Millis(0));
    assert_eq!(miss_evict_insert(&mut ahe, 6), Some(EntryId(3)));
    assert_eq!(miss_evict_insert(&mut ahe, 7), Some(EntryId(4)));
    assert_eq!(miss_evict_insert(&mut ahe, 8), Some(EntryId(0))); // recency's
    ahe.on_miss(h(2), Millis(0));
    ahe.on_miss(h(0), Millis(0));
    ahe.on_miss(h(0), Millis(0)); // a ghost is a regret once
    ahe.on_miss(h(9), Millis(0)); // never evicted: no regret
    let state = ahe.controller_state().unwrap_or_default();
    assert_eq!(
        (state.ghost_hits_frequency, state.ghost_hits_recency),
        (1, 1)
    );
    assert_eq!((state.decisions_frequency, state.decisions_recency), (3, 1));
    assert_eq!(state.recency_weight, 0.01);
    assert_eq!(state.learning_rate, 0.0625);
}

#[test]
fn expired_entries_go_first_earliest_deadline_first() {
    let mut ahe = Ahe::new(AheConfig {
        expired_first: true,
        ..AheConfig::default()
    });
    for i in 0..4 {
        insert(&mut ahe, i);
    }
    ahe.on_expiry_change(EntryId(1), Some(Millis(50)));
    ahe.on_expiry_change(EntryId(3), Some(Millis(10)));
    ahe.on_expiry_change(EntryId(0), Some(Millis(100)));
    ahe.on_expiry_change(EntryId(0), None);
    ahe.on_expiry_change(EntryId(9), Some(Millis(1))); // untracked: ignored
                                                       // At the deadline the entry is still live (Redis: `now > deadline`), so
                                                       // the duel decides: 2, the window's tail, loses against 0 (spared).
    assert_eq!(ahe.evict(Millis(10), &by_id), Some(EntryId(2)));
    assert_eq!(ahe.evict(Millis(60), &by_id), Some(EntryId(3)));
    assert_eq!(ahe.evict(Millis(60), &by_id), Some(EntryId(1)));
    assert_eq!(dump(&ahe), "w[] p[0*] P[]");
    assert_eq!(ahe.evict(Millis(60), &by_id), Some(EntryId(0)));
    assert_eq!(ahe.evict(Millis(60), &by_id), None);
    assert!(ahe.is_empty());
}

#[test]
fn a_loop_larger_than_the_cache_keeps_a_resident_set() {
    // LRU scores nothing on a loop of 2 × its size; AHE keeps part of the
    // loop resident because one-off newcomers never win a duel.
    let size = 100u32;
    let mut ahe = Ahe::default();
    let mut resident = std::collections::HashMap::new();
    // Which key each entry holds, for the policy's key-hash requests.
    let mut key_of = std::collections::HashMap::new();
    let mut free: Vec<u32> = (0..size).collect();
    let mut hits = 0;
    for step in 0..20 * size {
        let key = step % (2 * size);
        if let Some(&id) = resident.get(&key) {
            ahe.on_hit(EntryId(id), h(key), Millis(u64::from(step)));
            hits += 1;
            continue;
        }
        ahe.on_miss(h(key), Millis(u64::from(step)));
        if resident.len() == size as usize {
            let victim = ahe
                .evict(Millis(u64::from(step)), &|id| h(key_of[&id.0]))
                .map(|v| v.0);
            resident.retain(|_, id| Some(*id) != victim);
            if let Some(v) = victim {
                key_of.remove(&v);
            }
            free.extend(victim);
        }
        let id = free.pop().unwrap_or(u32::MAX);
        ahe.on_insert(EntryId(id), h(key), 1, Millis(u64::from(step)));
        resident.insert(key, id);
        key_of.insert(id, key);
    }
    // LRU never hits. At best half of each later lap hits (18 laps × 100,
    // 1 800 hits); demand a third of that.
    assert!(hits > 600, "{hits} hits");
}

/// Sketch and ghost bytes per entry sized for: the ghost keeps 4 bytes
/// per remembered eviction, half of them.
const HISTORY: usize = sketch::BYTES_PER_ENTRY + 4 / ghost::SAMPLE as usize;
/// The same from `AheConfig::ghost_large_from` entries on, where the
/// ghost remembers a quarter of the evictions.
const LARGE_HISTORY: usize = sketch::BYTES_PER_ENTRY + 4 / (2 * ghost::SAMPLE as usize);

#[test]
fn heap_bytes_count_every_structure() {
    assert_eq!(std::mem::size_of::<Node>(), 8);
    assert_eq!(HISTORY, 10);
    let mut ahe = Ahe::default();
    let empty = ahe.heap_bytes();
    for i in 0..1_000 {
        insert(&mut ahe, i);
    }
    ahe.on_expiry_change(EntryId(0), Some(Millis(5)));
    let grown = ahe.heap_bytes();
    // Nodes (8 bytes per slot, the table grown by an eighth), the sketch
    // (8 bytes per entry sized for) and the ghost (4 bytes per record, a
    // half of the entries), sized for 16/17 to 1 times the 1 000
    // entries. No deadline heap: deadlines are not kept by default.
    assert!(
        grown >= empty + 1_000 * 8 + 1_000 * 16 / 17 * HISTORY,
        "{grown}"
    );
    assert!(
        grown <= empty + 1_125 * 8 + 1_000 * HISTORY + 256,
        "{grown}"
    );
    ahe.evict(Millis(0), &by_id);
    assert_eq!(ahe.heap_bytes(), grown, "evicting one allocates nothing");
}

#[test]
fn a_full_cache_pays_for_exactly_its_entries() {
    // Under eviction the count stays put, and the last resize sized the
    // sketch and ghost for exactly the entries tracked then.
    let mut ahe = Ahe::default();
    for i in 0..5_000 {
        insert(&mut ahe, i);
    }
    let sized = ahe.sketch.entries();
    assert!((5_000 * 16 / 17..=5_000).contains(&sized), "{sized}");
    let history = |ahe: &Ahe| ahe.sketch.heap_bytes() + ahe.ghost.heap_bytes();
    let before = history(&ahe);
    for i in 5_000..20_000 {
        miss_evict_insert(&mut ahe, i);
    }
    assert_eq!(ahe.len(), 5_000);
    assert_eq!(
        history(&ahe),
        before,
        "churn at a full cache resizes nothing"
    );
    assert!(before <= sized * HISTORY + 128, "{before} for {sized}");
}

#[test]
fn history_follows_the_entries_down_and_up() {
    let mut ahe = Ahe::default();
    for i in 0..10_000 {
        insert(&mut ahe, i);
    }
    let full = ahe.heap_bytes();
    let history = |ahe: &Ahe| ahe.sketch.heap_bytes() + ahe.ghost.heap_bytes();
    let full_history = history(&ahe);
    assert!(
        full_history <= 10_000 * LARGE_HISTORY + 128,
        "{full_history}"
    );
    // DEL of 90% of the keys: the sketch and ghost shrink with them (the
    // per-slot nodes stay, as the store's slots do).
    for i in 1_000..10_000 {
        ahe.on_remove(EntryId(i));
    }
    assert_eq!(ahe.len(), 1_000);
    let small = history(&ahe);
    assert!(
        small <= 1_000 * 16 / 15 * HISTORY + 128,
        "{small} after shrinking"
    );
    assert!(ahe.heap_bytes() < full);
    // The cache fills again: the history grows back.
    for i in 1_000..10_000 {
        insert(&mut ahe, i);
    }
    assert!(
        history(&ahe) >= 10_000 * 16 / 17 * LARGE_HISTORY,
        "{}",
        history(&ahe)
    );
    assert!(
        history(&ahe) <= 10_000 * LARGE_HISTORY + 128,
        "{}",
        history(&ahe)
    );
}

#[test]
fn a_large_cache_remembers_a_sparser_sample() {
    let config = AheConfig::default();
    let mut ahe = Ahe::default();
    let below = config.ghost_large_from as u32 * 15 / 16;
    for i in 0..below {
        insert(&mut ahe, i);
    }
    assert_eq!(ahe.ghost.sample(), config.ghost_sample);
    for i in below..2 * below {
        insert(&mut ahe, i);
    }
    assert_eq!(ahe.ghost.sample(), config.ghost_sample_large);
    // Down again with the entries (DEL), and back to the dense sample.
    for i in below..2 * below {
        ahe.on_remove(EntryId(i));
    }
    assert_eq!(ahe.ghost.sample(), config.ghost_sample);
}

#[test]
fn ages_never_wrap_their_three_bits() {
    let mut ahe = Ahe::default();
    for i in 0..10 {
        insert(&mut ahe, i);
    }
    assert_eq!(ahe.evict(Millis(0), &by_id), Some(EntryId(8)));
    for i in 0..=6 {
        ahe.on_hit(EntryId(i), h(i), Millis(0));
    }
    assert_eq!(dump(&ahe), "w[9] p[7] P[6 5 4 3 2 1 0]");
    // Nine epochs pass without an eviction: a raw age modulo 8 would read
    // 0 as touched one epoch ago. Each new epoch clamped it to five.
    for _ in 0..9 * ahe.epoch_len {
        ahe.tick();
    }
    assert!(
        (0..=6).all(|i| ahe.age(i) == DEMOTE_AGE),
        "{:?}",
        (0..=6).map(|i| ahe.age(i)).collect::<Vec<_>>()
    );
    // So protected's tail is demoted at the next eviction.
    insert(&mut ahe, 8);
    ahe.evict(Millis(0), &by_id);
    assert!(dump(&ahe).ends_with("P[6 5 4 3 2 1]"), "{}", dump(&ahe));
}

#[test]
fn a_protected_entry_is_demoted_after_five_epochs_idle_not_before() {
    let mut ahe = Ahe::default();
    for i in 0..10 {
        insert(&mut ahe, i);
    }
    assert_eq!(ahe.evict(Millis(0), &by_id), Some(EntryId(8)));
    ahe.on_hit(EntryId(0), h(0), Millis(0));
    ahe.on_hit(EntryId(1), h(1), Millis(0));
    assert!(dump(&ahe).ends_with("P[1 0]"), "{}", dump(&ahe));
    // Four epochs: 0 is still protected after an eviction.
    for _ in 0..4 * ahe.epoch_len - ahe.epoch_ticks {
        ahe.tick();
    }
    ahe.on_hit(EntryId(1), h(1), Millis(0));
    insert(&mut ahe, 8);
    ahe.evict(Millis(0), &by_id);
    assert!(dump(&ahe).ends_with("P[1 0]"), "{}", dump(&ahe));
    // The fifth epoch makes it old enough.
    for _ in 0..ahe.epoch_len {
        ahe.tick();
    }
    insert(&mut ahe, 10);
    ahe.evict(Millis(0), &by_id);
    assert!(dump(&ahe).ends_with("P[1]"), "{}", dump(&ahe));
}

#[test]
fn the_sketch_follows_the_share_in_coarse_bands() {
    let whole = SketchSize::WHOLE;
    assert_eq!(whole.follow(0.44), whole);
    let half = whole.follow(0.45);
    assert_eq!(half.entries(1_000), 500);
    // Hovering near a threshold does not flip the size back and forth.
    assert_eq!(half.follow(0.36), half);
    assert_eq!(half.follow(0.34), whole);
    let quarter = half.follow(0.7);
    assert_eq!(quarter.entries(1_000), 250);
    assert_eq!(whole.follow(0.8), quarter);
    assert_eq!(quarter.follow(0.61), quarter);
    assert_eq!(quarter.follow(0.59), half);
    assert_eq!(quarter.follow(0.4), whole);
    assert_eq!(quarter.follow(0.1), whole);
    let eighth = quarter.follow(0.85);
    assert_eq!(eighth.entries(1_000), 125);
    assert_eq!(whole.follow(0.9), eighth);
    assert_eq!(eighth.follow(0.76), eighth);
    assert_eq!(eighth.follow(0.74), quarter);
    assert_eq!(eighth.follow(0.5), half);
    assert_eq!(eighth.follow(0.2), whole);
    assert_eq!(quarter.entries(40), 16, "never below 16 entries");
}

/// An AHE whose window starts at `share` and stays there.
fn pinned(share: f64, sketch_follows_share: bool) -> Ahe {
    Ahe::new(AheConfig {
        climber: ClimberConfig {
            initial_share: share,
            min_share: share,
            max_share: share,
            ..ClimberConfig::default()
        },
        sketch_follows_share,
        ..AheConfig::default()
    })
}

#[test]
fn a_large_window_sizes_the_sketch_for_main_only() {
    let fill = |ahe: &mut Ahe| {
        for i in 0..8_000 {
            insert(ahe, i);
        }
    };
    let (mut small, mut large, mut fixed) =
        (pinned(0.01, true), pinned(0.8, true), pinned(0.8, false));
    fill(&mut small);
    fill(&mut large);
    fill(&mut fixed);
    let sized = small.sketch.entries();
    assert!((8_000 * 16 / 17..=8_000).contains(&sized), "{sized}");
    assert_eq!(large.sketch.entries(), large.history_sized / 4);
    assert_eq!(fixed.sketch.entries(), sized);
    // A quarter of the sketch's 8 bytes per entry saved: 6 bytes a key.
    let saved = fixed.heap_bytes() - large.heap_bytes();
    assert!(
        (8_000 * 16 / 17 * 6..=8_000 * 6 + 128).contains(&saved),
        "{saved}"
    );
    // The ghost history stays sized for the whole cache either way.
    assert_eq!(large.ghost.heap_bytes(), fixed.ghost.heap_bytes());
}

#[test]
fn where_the_hot_set_rotates_slowly_the_sketch_stays_whole() {
    let sized = |pace: u32| {
        let mut ahe = pinned(0.9, true);
        let Feedback::Own(climber) = &mut ahe.feedback else {
            unreachable!("a pinned AHE steers itself")
        };
        climber.set_pace(pace);
        for i in 0..8_000 {
            insert(&mut ahe, i);
        }
        (
            ahe.sketch_size,
            ahe.sketch.entries() * 8 / ahe.history_sized,
        )
    };
    // Falls two periods apart (`shift` at 17,000 entries): the window
    // stays up, and the sketch is an eighth.
    assert_eq!(sized(2), (SketchSize::EIGHTH, 1));
    // Six apart (`shift` at 5,000): the window comes back down.
    assert_eq!(sized(6), (SketchSize::WHOLE, 8));
}

#[test]
fn at_the_top_a_large_cache_remembers_one_eviction_in_eight() {
    let config = AheConfig::default();
    let sample = |share: f64, follows: bool, entries: u32| {
        let mut ahe = pinned(share, follows);
        for i in 0..entries {
            insert(&mut ahe, i);
        }
        ahe.ghost.sample()
    };
    assert_eq!(sample(0.9, true, 8_000), config.ghost_sample_top);
    // Below the eighth band, without the sketch following the share, or
    // in a small cache, the usual samples.
    assert_eq!(sample(0.8, true, 8_000), config.ghost_sample_large);
    assert_eq!(sample(0.9, false, 8_000), config.ghost_sample_large);
    assert_eq!(sample(0.9, true, 1_000), config.ghost_sample);
}

#[test]
fn a_sketch_grown_back_to_the_whole_cache_keeps_its_ranking() {
    // The window holds most of the cache (the sketch is a quarter), then
    // shrinks (the sketch grows back to the whole cache): a key read many
    // times still out-counts one read twice.
    let mut ahe = pinned(0.8, true);
    for i in 0..4_000 {
        insert(&mut ahe, i);
    }
    for _ in 0..10 {
        ahe.sketch.increment(fingerprint(h(7)));
    }
    ahe.sketch.increment(fingerprint(h(8)));
    ahe.feedback = Feedback::Own(HillClimber::new(ClimberConfig {
        initial_share: 0.01,
        ..ClimberConfig::default()
    }));
    ahe.fit_history();
    assert_eq!(ahe.sketch_size, SketchSize::WHOLE);
    let sized = ahe.sketch.entries();
    assert!((4_000 * 16 / 17..=4_000).contains(&sized), "{sized}");
    assert!(ahe.sketch.frequency(fingerprint(h(7))) > ahe.sketch.frequency(fingerprint(h(8))));
}
