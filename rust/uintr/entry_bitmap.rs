// SPDX-License-Identifier: GPL-2.0

//! Which entries of a sender table are taken, as two levels of bits, so
//! that a connection finds the lowest free entry in a few word reads
//! instead of a scan of the table under its lock.
//!
//! The lower level has a bit per entry (set: taken); the upper level a bit
//! per lower word (set: that word is full).  The lowest free entry is then
//! the lowest clear bit of the first lower word whose upper bit is clear:
//! one upper word read per 4096 entries of capacity (one for the default
//! `max_sender_entries`, 256 at the largest, 2^20), then one lower word.

use core::ops::DerefMut;

/// Entries, or lower words, per word.
const BITS: usize = u64::BITS as usize;

/// Words of the lower level for `capacity` entries.
pub(crate) const fn taken_words(capacity: usize) -> usize {
    capacity.div_ceil(BITS)
}

/// Words of the upper level for `capacity` entries.
pub(crate) const fn full_words(capacity: usize) -> usize {
    taken_words(capacity).div_ceil(BITS)
}

/// The two levels, over any storage of words (a `KVec` in the kernel).
pub(crate) struct EntryBitmap<S> {
    /// Bit `i % 64` of word `i / 64`: entry `i` is taken.
    taken: S,
    /// Bit `w % 64` of word `w / 64`: lower word `w` is all ones.
    full: S,
}

impl<S: DerefMut<Target = [u64]>> EntryBitmap<S> {
    /// A bitmap with every entry free, over zeroed storage of
    /// [`taken_words`] and [`full_words`] words for the capacity.
    pub(crate) fn new(taken: S, full: S) -> Self {
        debug_assert!(full.len() >= taken.len().div_ceil(BITS));
        debug_assert!(taken.iter().chain(full.iter()).all(|&w| w == 0));
        Self { taken, full }
    }

    /// The lowest free entry below `usable`, if any.
    pub(crate) fn lowest_free(&self, usable: usize) -> Option<usize> {
        let (upper, bits) = self
            .full
            .iter()
            .enumerate()
            .find(|(_, &bits)| bits != u64::MAX)?;
        let word = upper * BITS + bits.trailing_ones() as usize;
        let index = word * BITS + self.taken.get(word)?.trailing_ones() as usize;
        (index < usable).then_some(index)
    }

    /// Marks entry `index` taken.
    pub(crate) fn take(&mut self, index: usize) {
        let word = index / BITS;
        self.taken[word] |= 1 << (index % BITS);
        if self.taken[word] == u64::MAX {
            self.full[word / BITS] |= 1 << (word % BITS);
        }
    }

    /// Marks entry `index` free.
    pub(crate) fn release(&mut self, index: usize) {
        let word = index / BITS;
        self.taken[word] &= !(1 << (index % BITS));
        self.full[word / BITS] &= !(1 << (word % BITS));
    }

    /// Whether entry `index` is taken.
    pub(crate) fn is_taken(&self, index: usize) -> bool {
        self.taken
            .get(index / BITS)
            .is_some_and(|w| w & (1 << (index % BITS)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bitmap(capacity: usize) -> EntryBitmap<Vec<u64>> {
        EntryBitmap::new(
            vec![0; taken_words(capacity)],
            vec![0; full_words(capacity)],
        )
    }

    #[test]
    fn sizes_round_up() {
        assert_eq!((taken_words(4096), full_words(4096)), (64, 1));
        assert_eq!((taken_words(4097), full_words(4097)), (65, 2));
        assert_eq!((taken_words(1), full_words(1)), (1, 1));
        assert_eq!(full_words(1 << 20), 256);
    }

    #[test]
    fn entries_are_handed_out_lowest_first() {
        let mut b = bitmap(300);
        for i in 0..300 {
            assert_eq!(b.lowest_free(300), Some(i));
            b.take(i);
        }
        assert_eq!(b.lowest_free(300), None, "full");
        b.release(130);
        b.release(7);
        assert_eq!(b.lowest_free(300), Some(7));
        b.take(7);
        assert_eq!(b.lowest_free(300), Some(130));
    }

    #[test]
    fn only_usable_entries_are_handed_out() {
        let mut b = bitmap(4096);
        for i in 0..256 {
            b.take(i);
        }
        assert_eq!(b.lowest_free(256), None, "the table has 256 entries now");
        assert_eq!(b.lowest_free(512), Some(256), "after it grew");
    }

    #[test]
    fn a_word_that_fills_and_empties_moves_the_search() {
        let mut b = bitmap(4096);
        for i in 0..64 {
            b.take(i);
        }
        assert_eq!(b.full[0], 1, "word 0 is full");
        assert_eq!(b.lowest_free(4096), Some(64));
        b.release(63);
        assert_eq!(b.full[0], 0);
        assert_eq!(b.lowest_free(4096), Some(63));
        assert!(!b.is_taken(63) && b.is_taken(62));
    }

    #[test]
    fn matches_a_scan_under_a_random_workload() {
        let capacity = 5000;
        let mut b = bitmap(capacity);
        let mut model = vec![false; capacity];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..50_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let usable = capacity - (seed >> 40) as usize % 64;
            let expected = model[..usable].iter().position(|&t| !t);
            assert_eq!(b.lowest_free(usable), expected);
            if seed % 3 != 0 {
                if let Some(i) = expected {
                    b.take(i);
                    model[i] = true;
                }
            } else {
                let i = (seed >> 20) as usize % capacity;
                if model[i] {
                    b.release(i);
                    model[i] = false;
                }
            }
        }
    }
}
