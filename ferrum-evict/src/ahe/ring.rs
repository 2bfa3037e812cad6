//! AHE's FIFO queues: rings of packed cells (a slot id and its generation).
//!
//! A queue holds 4 bytes per position, and removing an entry from the
//! middle (DEL, expiry) leaves its cell behind, *stale*: the policy
//! recognises it by its generation when it reaches the head and skips it.
//! Stale cells are dropped in one pass once they outnumber the live ones,
//! and the ring's spare room is given back once it exceeds a quarter of its
//! cells, so a queue costs at most about 1.25 × 4 bytes per live entry in
//! steady state. Growth is by an eighth, as the slot tables grow.

use std::collections::VecDeque;

/// A FIFO of `u32` cells.
#[derive(Clone, Debug, Default)]
pub(super) struct Ring {
    cells: VecDeque<u32>,
}

impl Ring {
    /// Appends at the tail.
    pub(super) fn push(&mut self, cell: u32) {
        if self.cells.len() == self.cells.capacity() {
            let more = (self.cells.capacity() / 8).max(16);
            self.cells.reserve_exact(more);
        }
        self.cells.push_back(cell);
    }

    /// Takes `cell` back off the tail if it is the last one pushed, so an
    /// entry moved to the other queue at once leaves no stale cell behind;
    /// whether it was there.
    pub(super) fn unpush(&mut self, cell: u32) -> bool {
        if self.cells.back() == Some(&cell) {
            self.cells.pop_back();
            return true;
        }
        false
    }

    /// Takes the head (the oldest cell).
    pub(super) fn pop(&mut self) -> Option<u32> {
        let cell = self.cells.pop_front();
        let (len, cap) = (self.cells.len(), self.cells.capacity());
        if cap > 64 && cap > len + len / 4 {
            self.cells.shrink_to(len + len / 8);
        }
        cell
    }

    /// Drops the stale cells once they outnumber the `live` ones; `keep`
    /// tells a live cell.
    pub(super) fn compact(&mut self, live: usize, keep: impl Fn(u32) -> bool) {
        if self.cells.len() > 2 * live + 64 {
            self.cells.retain(|&cell| keep(cell));
            let len = self.cells.len();
            self.cells.shrink_to(len + len / 8);
        }
    }

    /// The cells, head first.
    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.cells.iter().copied()
    }

    /// Replaces the cells with `cells`, head first.
    pub(super) fn replace(&mut self, cells: Vec<u32>) {
        self.cells = cells.into();
    }

    /// Heap bytes of the ring.
    pub(super) fn heap_bytes(&self) -> usize {
        self.cells.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_in_first_out_and_compaction_keeps_the_live_order() {
        let mut ring = Ring::default();
        for i in 0..1_000 {
            ring.push(i);
        }
        // Only the multiples of ten are live: 100 of 1,000.
        ring.compact(100, |c| c % 10 == 0);
        assert!(ring.heap_bytes() <= 4 * (100 + 100 / 8 + 16));
        let order: Vec<u32> = std::iter::from_fn(|| ring.pop()).collect();
        assert_eq!(order, (0..100).map(|i| i * 10).collect::<Vec<_>>());
    }

    #[test]
    fn gives_room_back_as_it_drains() {
        let mut ring = Ring::default();
        for i in 0..10_000 {
            ring.push(i);
        }
        for _ in 0..9_000 {
            ring.pop();
        }
        assert!(
            ring.heap_bytes() <= 4 * 1_250 + 4 * 64,
            "{}",
            ring.heap_bytes()
        );
    }
}
