//! Per-slot tables: `Vec`s indexed by [`EntryId`](crate::EntryId) that grow
//! by an eighth, as the store's own slot table does.
//!
//! Every slot of such a table is paid for whether or not its entry is
//! resident, so doubling (what `Vec::push` and `Vec::resize` do) would leave
//! up to half of it idle; growing by an eighth bounds the idle part to about
//! 11% while keeping growth O(1) amortised.

/// The smallest table worth allocating.
const MIN_SLOTS: usize = 16;

/// Makes `table[index]` valid, filling new slots with `fill`. The table
/// grows to at least `index + 1` slots and by at least an eighth, with no
/// spare capacity beyond that.
#[inline]
pub(crate) fn grow_for<T: Clone>(table: &mut Vec<T>, index: usize, fill: T) {
    if index < table.len() {
        return;
    }
    let len = (index + 1)
        .max(table.len() + table.len() / 8)
        .max(MIN_SLOTS);
    table.reserve_exact(len - table.len());
    table.resize(len, fill);
}

/// Reserves room for one more `push` onto a dense array, growing by an
/// eighth rather than doubling.
#[inline]
pub(crate) fn reserve_one<T>(dense: &mut Vec<T>) {
    if dense.len() == dense.capacity() {
        dense.reserve_exact((dense.capacity() / 8).max(MIN_SLOTS));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_by_an_eighth_without_spare_capacity() {
        let mut t: Vec<u32> = Vec::new();
        grow_for(&mut t, 3, 7);
        assert_eq!((t.len(), t.capacity()), (16, 16));
        grow_for(&mut t, 15, 7);
        assert_eq!(t.len(), 16);
        grow_for(&mut t, 16, 7);
        assert_eq!((t.len(), t.capacity()), (18, 18));
        grow_for(&mut t, 1_000, 0);
        assert_eq!((t.len(), t.capacity()), (1_001, 1_001));
        assert!(t[..18].iter().all(|&v| v == 7) && t[18..].iter().all(|&v| v == 0));
        let mut total = 0;
        for i in 0..100_000 {
            let before = t.capacity();
            grow_for(&mut t, i, 0);
            total += usize::from(t.capacity() != before);
        }
        // From 1 001 to 100 000 slots by eighths: about 40 reallocations.
        assert!(total < 45, "{total}");
        assert!(t.capacity() <= 100_000 + 100_000 / 8, "{}", t.capacity());
    }

    #[test]
    fn dense_arrays_grow_by_an_eighth() {
        let mut d: Vec<u32> = Vec::new();
        for i in 0..10_000 {
            reserve_one(&mut d);
            d.push(i);
        }
        assert!(d.capacity() <= 10_000 + 10_000 / 8 + 16, "{}", d.capacity());
    }
}
