//! Property tests: random operations on each collection type, run on a value
//! that stays packed, on one forced into its large form first, and on a
//! simple model (`BTreeMap`, `BTreeSet`, `VecDeque`); all three must agree
//! after every step.
//!
//! The encoding thresholds are process-wide and these tests keep Redis
//! 7.0's, but for sets, which have a packed form only under Redis 7.2's
//! `set-max-listpack-entries` (no other test here makes a set): the large
//! form is forced by adding an element longer than the default
//! `*-max-listpack-value` (64 bytes) and removing it again, which leaves
//! the value converted for good, as in Redis.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use ferrum_store::types::{EncodingLimits, End, Hash, LexBound, List, ScoreBound, Set, ZSet};
use proptest::prelude::*;

const LONG: &[u8] = &[b'L'; 65];

fn short_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0u8..12).prop_map(|i| format!("m{i}").into_bytes()),
        (-5i64..40).prop_map(|i| i.to_string().into_bytes()),
        Just(b"".to_vec()),
        Just(b"00".to_vec()),
    ]
}

#[derive(Debug, Clone)]
enum HashOp {
    Set(Vec<u8>, Vec<u8>),
    Remove(Vec<u8>),
}

fn hash_op() -> impl Strategy<Value = HashOp> {
    prop_oneof![
        3 => (short_bytes(), short_bytes()).prop_map(|(f, v)| HashOp::Set(f, v)),
        1 => short_bytes().prop_map(HashOp::Remove),
    ]
}

fn check_hash(h: &Hash, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    assert_eq!(h.len(), model.len());
    let got: BTreeMap<Vec<u8>, Vec<u8>> = h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
    assert_eq!(&got, model);
    for (f, v) in model {
        assert_eq!(h.get(f), Some(&v[..]));
    }
    let mut scanned = BTreeMap::new();
    let mut cursor = 0;
    loop {
        cursor = h.scan(cursor, 3, |f, v| {
            scanned.insert(f.to_vec(), v.to_vec());
        });
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(&scanned, model);
    for i in 0..h.len() {
        let (f, v) = h.at(i).expect("in range");
        assert_eq!(model.get(f).map(Vec::as_slice), Some(v));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn hash_forms_agree_with_a_map(ops in prop::collection::vec(hash_op(), 1..120)) {
        let mut packed = Hash::new();
        let mut table = Hash::new();
        table.set(b"x", LONG);
        table.remove(b"x");
        prop_assert_eq!(table.encoding(), "hashtable");
        let mut model = BTreeMap::new();
        for op in ops {
            match op {
                HashOp::Set(f, v) => {
                    let new = !model.contains_key(&f);
                    model.insert(f.clone(), v.clone());
                    prop_assert_eq!(packed.set(&f, &v), new);
                    prop_assert_eq!(table.set(&f, &v), new);
                }
                HashOp::Remove(f) => {
                    let had = model.remove(&f).is_some();
                    prop_assert_eq!(packed.remove(&f), had);
                    prop_assert_eq!(table.remove(&f), had);
                }
            }
            check_hash(&packed, &model);
            check_hash(&table, &model);
            prop_assert!(packed == table);
        }
        prop_assert_eq!(packed.encoding(), "listpack");
    }
}

#[derive(Debug, Clone)]
enum SetOp {
    Insert(Vec<u8>),
    Remove(Vec<u8>),
    RemoveAt(usize),
}

fn set_op() -> impl Strategy<Value = SetOp> {
    prop_oneof![
        4 => short_bytes().prop_map(SetOp::Insert),
        1 => short_bytes().prop_map(SetOp::Remove),
        1 => (0usize..50).prop_map(SetOp::RemoveAt),
    ]
}

fn check_set(s: &Set, model: &BTreeSet<Vec<u8>>) {
    assert_eq!(s.len(), model.len());
    let got: BTreeSet<Vec<u8>> = s.iter().map(|m| m.to_vec()).collect();
    assert_eq!(&got, model);
    for m in model {
        assert!(s.contains(m));
    }
    let mut scanned = BTreeSet::new();
    let mut cursor = 0;
    loop {
        cursor = s.scan(cursor, 2, |m| {
            scanned.insert(m.to_vec());
        });
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(&scanned, model);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn set_forms_agree_with_a_set(ops in prop::collection::vec(set_op(), 1..120)) {
        EncodingLimits { set_max_listpack_entries: 128, ..EncodingLimits::current() }.install();
        let mut packed = Set::new();
        let mut table = Set::new();
        table.insert(LONG);
        table.remove(LONG);
        prop_assert_eq!(table.encoding(), "hashtable");
        let mut model = BTreeSet::new();
        for op in ops {
            match op {
                SetOp::Insert(m) => {
                    let new = model.insert(m.clone());
                    prop_assert_eq!(packed.insert(&m), new);
                    prop_assert_eq!(table.insert(&m), new);
                }
                SetOp::Remove(m) => {
                    let had = model.remove(&m);
                    prop_assert_eq!(packed.remove(&m), had);
                    prop_assert_eq!(table.remove(&m), had);
                }
                SetOp::RemoveAt(i) => {
                    for s in [&mut packed, &mut table] {
                        let expect = s.at(i);
                        let got = s.remove_at(i);
                        prop_assert_eq!(&got, &expect);
                        if let Some(m) = got {
                            prop_assert!(model.contains(&m[..]));
                            s.insert(&m);
                        }
                    }
                }
            }
            check_set(&packed, &model);
            check_set(&table, &model);
            prop_assert!(packed == table);
        }
        let ints = model.iter().all(|m| {
            std::str::from_utf8(m).ok().and_then(|t| t.parse::<i64>().ok())
                .is_some_and(|n| n.to_string().as_bytes() == &m[..])
        });
        if packed.encoding() == "intset" {
            prop_assert!(ints, "an intset holds only integers");
        }
        prop_assert_ne!(packed.encoding(), "hashtable");
    }
}

#[derive(Debug, Clone)]
enum ZOp {
    Insert(Vec<u8>, f64),
    Remove(Vec<u8>),
    Pop(usize, bool),
    RemoveRanks(usize, usize),
}

fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-3i32..4).prop_map(f64::from),
        Just(0.5),
        Just(-2.25),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1e15),
    ]
}

fn zop() -> impl Strategy<Value = ZOp> {
    prop_oneof![
        5 => (short_bytes(), score()).prop_map(|(m, s)| ZOp::Insert(m, s)),
        1 => short_bytes().prop_map(ZOp::Remove),
        1 => (0usize..4, any::<bool>()).prop_map(|(n, max)| ZOp::Pop(n, max)),
        1 => (0usize..8, 0usize..8).prop_map(|(a, b)| ZOp::RemoveRanks(a, b)),
    ]
}

fn sorted(model: &BTreeMap<Vec<u8>, f64>) -> Vec<(Vec<u8>, f64)> {
    let mut v: Vec<(Vec<u8>, f64)> = model.iter().map(|(m, s)| (m.clone(), *s)).collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    v
}

fn check_zset(z: &ZSet, model: &BTreeMap<Vec<u8>, f64>) {
    let want = sorted(model);
    let got: Vec<(Vec<u8>, f64)> = z
        .range_by_rank(0, z.len())
        .into_iter()
        .map(|(m, s)| (m.to_vec(), s))
        .collect();
    assert_eq!(got, want);
    for (rank, (m, s)) in want.iter().enumerate() {
        assert_eq!(z.score(m), Some(*s));
        assert_eq!(z.rank(m), Some(rank));
        assert_eq!(
            z.at_rank(rank).map(|(x, y)| (x.to_vec(), y)),
            Some((m.clone(), *s))
        );
    }
    for (lo, hi) in [(-1.0, 1.0), (0.5, 0.5), (f64::NEG_INFINITY, 0.0)] {
        for exclusive in [false, true] {
            let min = ScoreBound {
                value: lo,
                exclusive,
            };
            let max = ScoreBound {
                value: hi,
                exclusive,
            };
            let inside = |s: f64| {
                (if exclusive { s > lo } else { s >= lo })
                    && (if exclusive { s < hi } else { s <= hi })
            };
            let (a, b) = z.score_ranks(min, max);
            let expect: Vec<_> = want.iter().filter(|(_, s)| inside(*s)).cloned().collect();
            assert_eq!(b - a, expect.len(), "{lo} {hi} {exclusive}");
        }
    }
    let (a, b) = z.lex_ranks(&LexBound::Incl("m3".into()), &LexBound::Excl("m7".into()));
    if want.iter().all(|(_, s)| *s == 0.0) {
        let n = want
            .iter()
            .filter(|(m, _)| m[..] >= b"m3"[..] && m[..] < b"m7"[..])
            .count();
        assert_eq!(b - a, n);
    }
    let mut scanned = BTreeMap::new();
    let mut cursor = 0;
    loop {
        cursor = z.scan(cursor, 2, |m, s| {
            scanned.insert(m.to_vec(), s);
        });
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(&scanned, model);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn zset_forms_agree_with_a_map(ops in prop::collection::vec(zop(), 1..100)) {
        let mut packed = ZSet::new();
        let mut skip = ZSet::new();
        skip.insert(LONG, 0.0);
        skip.remove(LONG);
        prop_assert_eq!(skip.encoding(), "skiplist");
        let mut model: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
        for op in ops {
            match op {
                ZOp::Insert(m, s) => {
                    let old = model.insert(m.clone(), s);
                    prop_assert_eq!(packed.insert(&m, s), old);
                    prop_assert_eq!(skip.insert(&m, s), old);
                }
                ZOp::Remove(m) => {
                    let had = model.remove(&m).is_some();
                    prop_assert_eq!(packed.remove(&m), had);
                    prop_assert_eq!(skip.remove(&m), had);
                }
                ZOp::Pop(n, max) => {
                    let mut want = sorted(&model);
                    if max {
                        want.reverse();
                    }
                    want.truncate(n);
                    for (m, _) in &want {
                        model.remove(m);
                    }
                    for z in [&mut packed, &mut skip] {
                        let got: Vec<(Vec<u8>, f64)> =
                            z.pop(n, max).into_iter().map(|(m, s)| (m.to_vec(), s)).collect();
                        prop_assert_eq!(&got, &want);
                    }
                }
                ZOp::RemoveRanks(a, b) => {
                    let want = sorted(&model);
                    let (from, to) = (a.min(want.len()), b.min(want.len()).max(a.min(want.len())));
                    for (m, _) in &want[from..to] {
                        model.remove(m);
                    }
                    prop_assert_eq!(packed.remove_ranks(from, to), to - from);
                    prop_assert_eq!(skip.remove_ranks(from, to), to - from);
                }
            }
            check_zset(&packed, &model);
            check_zset(&skip, &model);
            prop_assert!(packed == skip);
        }
        prop_assert_eq!(packed.encoding(), "listpack");
    }
}

#[derive(Debug, Clone)]
enum ListOp {
    Push(bool, Vec<u8>),
    Pop(bool, usize),
    Set(i64, Vec<u8>),
    Trim(i64, i64),
    Insert(Vec<u8>, Vec<u8>, bool),
    Rem(Vec<u8>, i64),
}

fn list_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => (0u8..6).prop_map(|i| format!("v{i}").into_bytes()),
        // Long values fill 8 KB nodes quickly, so chains of nodes get tested.
        1 => (0u8..3).prop_map(|i| vec![b'a' + i; 1500]),
    ]
}

fn list_op() -> impl Strategy<Value = ListOp> {
    prop_oneof![
        8 => (any::<bool>(), list_value()).prop_map(|(l, v)| ListOp::Push(l, v)),
        2 => (any::<bool>(), 1usize..4).prop_map(|(l, n)| ListOp::Pop(l, n)),
        1 => (-10i64..10, list_value()).prop_map(|(i, v)| ListOp::Set(i, v)),
        1 => (-12i64..12, -12i64..12).prop_map(|(a, b)| ListOp::Trim(a, b)),
        1 => (list_value(), list_value(), any::<bool>()).prop_map(|(p, v, a)| ListOp::Insert(p, v, a)),
        1 => (list_value(), -2i64..3).prop_map(|(v, c)| ListOp::Rem(v, c)),
    ]
}

fn resolve(len: usize, i: i64) -> Option<usize> {
    let i = if i < 0 { len as i64 + i } else { i };
    (0..len as i64).contains(&i).then_some(i as usize)
}

fn check_list(l: &List, model: &VecDeque<Vec<u8>>) {
    assert_eq!(l.len(), model.len());
    let got: Vec<&[u8]> = l.iter().collect();
    let want: Vec<&[u8]> = model.iter().map(Vec::as_slice).collect();
    assert_eq!(got, want);
    for i in 0..model.len() as i64 {
        assert_eq!(l.get(i), Some(&model[i as usize][..]));
        assert_eq!(
            l.get(-i - 1),
            Some(&model[model.len() - 1 - i as usize][..])
        );
    }
    let mid: Vec<&[u8]> = l.range(1, -2).collect();
    let want_mid: Vec<&[u8]> = if model.len() > 2 {
        want[1..model.len() - 1].to_vec()
    } else {
        vec![]
    };
    assert_eq!(mid, want_mid);
    let positions: Vec<usize> = (0..model.len()).filter(|&i| model[i] == b"v1").collect();
    assert_eq!(l.positions(b"v1", 1, 0, 0), positions);
    let mut back = positions.clone();
    back.reverse();
    assert_eq!(l.positions(b"v1", -1, 0, 0), back);
    let within: Vec<usize> = back
        .iter()
        .copied()
        .filter(|&i| i + 3 >= model.len())
        .collect();
    assert_eq!(l.positions(b"v1", -1, 0, 3), within);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn lists_agree_with_a_deque(ops in prop::collection::vec(list_op(), 1..150)) {
        let mut l = List::new();
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        for op in ops {
            match op {
                ListOp::Push(left, v) => {
                    if left {
                        l.push(End::Left, &v);
                        model.push_front(v);
                    } else {
                        l.push(End::Right, &v);
                        model.push_back(v);
                    }
                }
                ListOp::Pop(left, n) => {
                    let end = if left { End::Left } else { End::Right };
                    let got: Vec<Vec<u8>> = if n == 1 {
                        l.pop(end).into_iter().map(|b| b.to_vec()).collect()
                    } else {
                        l.pop_many(end, n).into_iter().map(|b| b.to_vec()).collect()
                    };
                    let want: Vec<Vec<u8>> = (0..n)
                        .filter_map(|_| if left { model.pop_front() } else { model.pop_back() })
                        .collect();
                    prop_assert_eq!(got, want);
                }
                ListOp::Set(i, v) => {
                    let ok = match resolve(model.len(), i) {
                        Some(p) => {
                            model[p] = v.clone();
                            true
                        }
                        None => false,
                    };
                    prop_assert_eq!(l.set(i, &v), ok);
                }
                ListOp::Trim(a, b) => {
                    let kept: VecDeque<Vec<u8>> = match l.range_bounds(a, b) {
                        Some((a, b)) => model.range(a..=b).cloned().collect(),
                        None => VecDeque::new(),
                    };
                    l.trim(a, b);
                    model = kept;
                }
                ListOp::Insert(pivot, v, after) => {
                    let want = model.iter().position(|x| *x == pivot).map(|p| {
                        model.insert(if after { p + 1 } else { p }, v.clone());
                        model.len()
                    });
                    prop_assert_eq!(l.insert_at_pivot(&pivot, &v, after), want);
                }
                ListOp::Rem(v, count) => {
                    let limit = if count == 0 { usize::MAX } else { count.unsigned_abs() as usize };
                    let mut removed = 0;
                    let mut kept = VecDeque::new();
                    let items: Vec<Vec<u8>> = if count < 0 {
                        model.iter().rev().cloned().collect()
                    } else {
                        model.iter().cloned().collect()
                    };
                    for x in items {
                        if removed < limit && x == v {
                            removed += 1;
                        } else if count < 0 {
                            kept.push_front(x);
                        } else {
                            kept.push_back(x);
                        }
                    }
                    model = kept;
                    prop_assert_eq!(l.remove_value(&v, count), removed);
                }
            }
            check_list(&l, &model);
        }
        let elems: usize = model.iter().map(|v| v.len() + 2).sum();
        prop_assert!(l.heap_bytes() >= elems, "counts at least the packed entries");
    }
}
