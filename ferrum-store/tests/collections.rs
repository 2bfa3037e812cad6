//! Property tests: random operations on each collection type, checked step
//! by step against a plain model (VecDeque, HashMap, BTreeSet, sorted Vec,
//! BTreeMap), including the O(1) byte counts against a recount.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use bytes::Bytes;
use ferrum_store::types::{End, Hash, List, ScoreBound, Set, Stream, StreamId, Trim, ZSet};
use ferrum_store::{Access, Millis, Store, StoreConfig, StoreError, Typed, Value};
use proptest::prelude::*;

fn small_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(b'a'..b'e', 0..3)
}

#[derive(Debug, Clone)]
enum ListOp {
    Push(bool, Vec<u8>),
    Pop(bool, usize),
    Set(i64, Vec<u8>),
    Trim(i64, i64),
    Rem(i64, Vec<u8>),
    Insert(Vec<u8>, Vec<u8>, bool),
}

fn list_op() -> impl Strategy<Value = ListOp> {
    prop_oneof![
        3 => (any::<bool>(), small_bytes()).prop_map(|(l, v)| ListOp::Push(l, v)),
        1 => (any::<bool>(), 0usize..4).prop_map(|(l, n)| ListOp::Pop(l, n)),
        1 => (-6i64..6, small_bytes()).prop_map(|(i, v)| ListOp::Set(i, v)),
        1 => (-6i64..6, -6i64..6).prop_map(|(a, b)| ListOp::Trim(a, b)),
        1 => (-2i64..3, small_bytes()).prop_map(|(c, v)| ListOp::Rem(c, v)),
        1 => (small_bytes(), small_bytes(), any::<bool>()).prop_map(|(p, v, a)| ListOp::Insert(p, v, a)),
    ]
}

fn redis_range(len: usize, start: i64, stop: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let s = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let e = if stop < 0 {
        len + stop
    } else {
        stop.min(len - 1)
    };
    (s <= e && s < len).then_some((s as usize, e as usize))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn list_matches_a_deque(ops in prop::collection::vec(list_op(), 0..80)) {
        let (mut l, mut m) = (List::new(), VecDeque::<Vec<u8>>::new());
        for op in ops {
            match op {
                ListOp::Push(left, v) => {
                    l.push(if left { End::Left } else { End::Right }, &v);
                    if left { m.push_front(v) } else { m.push_back(v) }
                }
                ListOp::Pop(left, n) => {
                    let got = l.pop_many(if left { End::Left } else { End::Right }, n);
                    let want: Vec<Vec<u8>> = (0..n.min(m.len()))
                        .filter_map(|_| if left { m.pop_front() } else { m.pop_back() })
                        .collect();
                    prop_assert_eq!(got.iter().map(|b| b.to_vec()).collect::<Vec<_>>(), want);
                }
                ListOp::Set(i, v) => {
                    let idx = if i < 0 { m.len() as i64 + i } else { i };
                    let ok = (0..m.len() as i64).contains(&idx);
                    prop_assert_eq!(l.set(i, &v), ok);
                    if ok { m[idx as usize] = v; }
                }
                ListOp::Trim(a, b) => {
                    l.trim(a, b);
                    m = match redis_range(m.len(), a, b) {
                        Some((s, e)) => m.range(s..=e).cloned().collect(),
                        None => VecDeque::new(),
                    };
                }
                ListOp::Rem(count, v) => {
                    let n = l.remove_value(&v, count);
                    let limit = if count == 0 { usize::MAX } else { count.unsigned_abs() as usize };
                    let mut removed = 0;
                    let mut keep: Vec<Vec<u8>> = Vec::new();
                    let items: Vec<Vec<u8>> = if count < 0 { m.iter().rev().cloned().collect() } else { m.iter().cloned().collect() };
                    for x in items {
                        if removed < limit && x == v { removed += 1 } else { keep.push(x) }
                    }
                    if count < 0 { keep.reverse() }
                    m = keep.into();
                    prop_assert_eq!(n, removed);
                }
                ListOp::Insert(p, v, after) => {
                    let got = l.insert_at_pivot(&p, &v, after);
                    let pos = m.iter().position(|x| *x == p);
                    if let Some(i) = pos { m.insert(if after { i + 1 } else { i }, v) }
                    prop_assert_eq!(got, pos.map(|_| m.len()));
                }
            }
            prop_assert_eq!(l.iter().map(|b| b.to_vec()).collect::<Vec<_>>(), m.iter().cloned().collect::<Vec<_>>());
            // Packed: each element costs its bytes plus at least two.
            let packed: usize = m.iter().map(|v| v.len() + 2).sum();
            prop_assert!(l.heap_bytes() >= packed);
        }
    }

    #[test]
    fn hash_matches_a_hashmap(ops in prop::collection::vec((0u8..3, small_bytes(), small_bytes()), 0..100)) {
        let (mut h, mut m) = (Hash::new(), HashMap::<Vec<u8>, Vec<u8>>::new());
        for (op, f, v) in ops {
            match op {
                0 | 1 => prop_assert_eq!(h.set(&f, &v), m.insert(f.clone(), v).is_none()),
                _ => prop_assert_eq!(h.remove(&f), m.remove(&f).is_some()),
            }
            prop_assert_eq!(h.len(), m.len());
            for (k, v) in &m {
                prop_assert_eq!(h.get(k).map(|b| b.to_vec()), Some(v.clone()));
            }
            let mut fresh = Hash::new();
            for (k, v) in &m { fresh.set(k, v); }
            prop_assert_eq!(&h, &fresh);
        }
    }

    #[test]
    fn set_matches_a_btreeset(ops in prop::collection::vec((0u8..4, small_bytes()), 0..120)) {
        let (mut s, mut m) = (Set::new(), BTreeSet::<Vec<u8>>::new());
        for (op, v) in ops {
            match op {
                0 | 1 => prop_assert_eq!(s.insert(&v), m.insert(v)),
                2 => prop_assert_eq!(s.remove(&v), m.remove(&v)),
                _ => {
                    if let Some(gone) = s.remove_at(v.len().min(s.len().saturating_sub(1))) {
                        prop_assert!(m.remove(&gone[..]));
                    }
                }
            }
            let got: BTreeSet<Vec<u8>> = s.iter().map(|b| b.to_vec()).collect();
            prop_assert_eq!(&got, &m);
            let mut scanned = BTreeSet::new();
            let mut cursor = s.scan(0, 3, |b| { scanned.insert(b.to_vec()); });
            while cursor != 0 {
                cursor = s.scan(cursor, 3, |b| { scanned.insert(b.to_vec()); });
            }
            prop_assert_eq!(&scanned, &m);
        }
    }

    #[test]
    fn zset_matches_a_sorted_vec(ops in prop::collection::vec((0u8..5, small_bytes(), -3i8..4, -3i8..4), 0..120)) {
        let (mut z, mut m) = (ZSet::new(), BTreeMap::<Vec<u8>, f64>::new());
        for (op, member, a, b) in ops {
            match op {
                0 | 1 => prop_assert_eq!(z.insert(&member, f64::from(a)), m.insert(member, f64::from(a))),
                2 => prop_assert_eq!(z.remove(&member), m.remove(&member).is_some()),
                3 => {
                    let popped = z.pop(a.unsigned_abs() as usize, b > 0);
                    for (p, _) in popped { prop_assert!(m.remove(&p[..]).is_some()); }
                }
                _ => {
                    let gone = z.remove_ranks(a.unsigned_abs() as usize, b.unsigned_abs() as usize);
                    let mut sorted: Vec<_> = m.iter().map(|(k, v)| (*v, k.clone())).collect();
                    sorted.sort_by(|x, y| x.0.total_cmp(&y.0).then_with(|| x.1.cmp(&y.1)));
                    let (from, to) = (a.unsigned_abs() as usize, (b.unsigned_abs() as usize).min(sorted.len()));
                    let want = to.saturating_sub(from);
                    prop_assert_eq!(gone, want);
                    for (_, k) in sorted.iter().skip(from).take(want) { m.remove(k); }
                }
            }
            let mut sorted: Vec<(f64, Vec<u8>)> = m.iter().map(|(k, v)| (*v, k.clone())).collect();
            sorted.sort_by(|x, y| x.0.total_cmp(&y.0).then_with(|| x.1.cmp(&y.1)));
            let got: Vec<(f64, Vec<u8>)> = z.range_by_rank(0, z.len()).into_iter().map(|(k, s)| (s, k.to_vec())).collect();
            prop_assert_eq!(&got, &sorted);
            for (rank, (_, k)) in sorted.iter().enumerate() {
                prop_assert_eq!(z.rank(k), Some(rank));
            }
            let (lo, hi) = (f64::from(a.min(b)), f64::from(a.max(b)));
            let (first, end) = z.score_ranks(ScoreBound { value: lo, exclusive: true }, ScoreBound { value: hi, exclusive: false });
            prop_assert_eq!(end - first, sorted.iter().filter(|(s, _)| *s > lo && *s <= hi).count());
            prop_assert_eq!(first, sorted.iter().filter(|(s, _)| *s <= lo).count());
        }
    }

    #[test]
    fn stream_matches_a_btreemap(ops in prop::collection::vec((0u8..4, 0u64..30, 0usize..10), 0..80)) {
        let (mut s, mut m) = (Stream::new(), BTreeMap::<StreamId, usize>::new());
        for (op, ms, n) in ops {
            let id = StreamId { ms, seq: n as u64 };
            match op {
                0 | 1 => {
                    let ok = s.next_id(ferrum_store::types::IdSpec::Explicit(id), 0).is_ok();
                    prop_assert_eq!(ok, id > s.last_id() && id != StreamId::MIN);
                    if ok { s.add(id, &[(Bytes::from("f"), Bytes::from(vec![b'v'; n]))]); m.insert(id, n); }
                }
                2 => prop_assert_eq!(s.delete(id), m.remove(&id).is_some()),
                _ => {
                    let removed = s.trim(Trim::MaxLen(n), false, 0);
                    prop_assert_eq!(removed, m.len().saturating_sub(n));
                    while m.len() > n { m.pop_first(); }
                }
            }
            let got: Vec<StreamId> = s.range(StreamId::MIN, StreamId::MAX, usize::MAX, false).into_iter().map(|(id, _)| id).collect();
            prop_assert_eq!(got, m.keys().copied().collect::<Vec<_>>());
        }
        while let Some((id, _)) = m.pop_first() { s.delete(id); }
        prop_assert_eq!(s.heap_bytes(), Stream::new().heap_bytes());
    }
}

#[test]
fn store_memory_tracks_collection_growth_and_deletion() {
    let store = Store::new(StoreConfig::default());
    let key = Bytes::from_static(b"list");
    let now = Millis(0);
    let before = store.used_memory_bytes();
    {
        let mut ks = store.lock_key(&key);
        let shard = ks.shard(&key);
        shard.insert(0, key.clone(), List::new().into(), None, now);
        for _ in 0..100 {
            let mut e = shard.lookup_mut(0, &key, now).expect("just stored");
            e.coll_mut::<List>()
                .map(|l| l.push(End::Right, &[b'x'; 200]))
                .expect("a list");
        }
    }
    let grown = store.used_memory_bytes();
    assert!(grown >= before + 100 * 200, "{grown} vs {before}");
    {
        let mut ks = store.lock_key(&key);
        let shard = ks.shard(&key);
        assert!(matches!(
            shard
                .lookup(0, &key, now, Access::Peek)
                .map(|e| e.value().kind()),
            Some(ferrum_store::ValueKind::List)
        ));
        assert!(shard
            .remove(0, &key, now)
            .is_some_and(|v| matches!(v, Value::Coll(_))));
    }
    // The emptied slot-table row goes back on the next cron pass.
    store.expire_cycle(now, 10);
    assert_eq!(store.used_memory_bytes(), before);
}

#[test]
fn update_never_leaves_an_empty_collection() {
    let store = Store::new(StoreConfig::default());
    let key = Bytes::from_static(b"q");
    let now = Millis(0);
    let mut ks = store.lock_key(&key);
    let shard = ks.shard(&key);
    // Creating without adding anything stores nothing.
    let r = shard.update(0, &key, now, true, |l: &mut List| l.len(), |_| true);
    assert_eq!(r, Ok(Some(0)));
    assert!(shard.lookup(0, &key, now, Access::Peek).is_none());
    // Absent and not creating: nothing runs.
    let r = shard.update(0, &key, now, false, |l: &mut List| l.len(), |_| true);
    assert_eq!(r, Ok(None));
    shard
        .update(
            0,
            &key,
            now,
            true,
            |l: &mut List| l.push(End::Right, b"x"),
            |_| true,
        )
        .expect("a list");
    assert!(shard.lookup(0, &key, now, Access::Peek).is_some());
    // Another type is refused and left alone.
    let wrong = shard.update(0, &key, now, true, |h: &mut Hash| h.len(), |_| true);
    assert_eq!(wrong, Err(StoreError::WrongType));
    // Draining it deletes the key.
    let popped = shard.update(
        0,
        &key,
        now,
        false,
        |l: &mut List| l.pop(End::Left),
        |_| true,
    );
    assert!(matches!(popped, Ok(Some(Some(_)))));
    assert!(shard.lookup(0, &key, now, Access::Peek).is_none());
    assert_eq!(shard.len(0), 0);
}

/// One value of every type, each with a few elements.
fn one_of_each() -> Vec<Value> {
    let mut list = List::new();
    list.push(End::Right, b"a");
    list.push(End::Right, b"b");
    let mut hash = Hash::new();
    hash.set(b"f", b"v");
    let mut set = Set::new();
    set.insert(b"m");
    set.insert(b"7");
    let mut zset = ZSet::new();
    zset.insert(b"z", 1.5);
    let mut stream = Stream::new();
    stream.add(
        StreamId { ms: 1, seq: 0 },
        &[(Bytes::from_static(b"k"), Bytes::from_static(b"v"))],
    );
    vec![
        Value::str(b""),
        Value::str(&[b'x'; 100]),
        list.into(),
        hash.into(),
        set.into(),
        zset.into(),
        stream.into(),
    ]
}

#[test]
fn every_type_round_trips_through_the_keyspace() {
    let store = Store::new(StoreConfig::default());
    let baseline = store.used_memory_bytes();
    let key = Bytes::from_static(b"k");
    let now = Millis(10);
    let mut ks = store.lock_key(&key);
    let shard = ks.shard(&key);
    let values = one_of_each();
    for (i, v) in values.iter().enumerate() {
        // With and without a deadline, and over a value of another type.
        let ttl = (i % 2 == 0).then_some(Millis(1_000));
        shard.insert(0, key.clone(), v.clone(), ttl, now);
        let e = shard.lookup(0, &key, now, Access::Peek).expect("stored");
        assert_eq!(e.value().to_value(), *v);
        assert_eq!(e.value().kind(), v.kind());
        assert_eq!(e.expires_at(), ttl);
    }
    for v in values {
        shard.insert(0, key.clone(), v.clone(), None, now);
        assert_eq!(shard.remove(0, &key, now), Some(v));
    }
    // The emptied slot row goes at the next sparse-table shrink, as the
    // server's expiry cycle runs it.
    shard.shrink_if_sparse();
    drop(ks);
    assert_eq!(store.used_memory_bytes(), baseline);
}

proptest::proptest! {
    /// Small collections live packed inside their key's block and are
    /// written back after every change; large ones move to their own
    /// allocation. Through any run of writes that crosses both limits (the
    /// 512-byte inline buffer and the listpack thresholds), the stored hash
    /// agrees with a model, and deleting its fields one by one returns
    /// `used_memory` exactly to where it started.
    #[test]
    fn a_hash_through_the_store_agrees_with_a_model(
        fields in proptest::collection::vec((0..300u32, 0..80usize), 1..200),
    ) {
        let store = Store::new(StoreConfig::default());
        let key = Bytes::from_static(b"h");
        let now = Millis(0);
        let base = store.used_memory_bytes();
        let mut model = std::collections::BTreeMap::new();
        let mut ks = store.lock_key(&key);
        let shard = ks.shard(&key);
        for (f, len) in fields {
            let (field, value) = (format!("f{f}").into_bytes(), vec![b'v'; len]);
            shard
                .update::<Hash, _>(0, &key, now, true, |h| h.set(&field, &value), |_| true)
                .expect("a hash");
            model.insert(field, value);
            let e = shard.lookup(0, &key, now, Access::Peek).expect("stored");
            let v = e.value();
            let h = Hash::of(&v).expect("a hash");
            proptest::prop_assert_eq!(h.len(), model.len());
            for (f, v) in &model {
                proptest::prop_assert_eq!(h.get(f), Some(&v[..]));
            }
        }
        for f in model.keys() {
            shard
                .update::<Hash, _>(0, &key, now, false, |h| h.remove(f), |_| true)
                .expect("a hash");
        }
        proptest::prop_assert!(shard.lookup(0, &key, now, Access::Peek).is_none());
        drop(ks);
        store.expire_cycle(now, 10);
        proptest::prop_assert_eq!(store.used_memory_bytes(), base);
    }
}
