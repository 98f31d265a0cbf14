// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! User interrupt vectors and sets of them.

use std::fmt;

/// A user interrupt vector of a receiving thread: 0 (lowest priority) to 63
/// (highest).
///
/// ```
/// use uintr::Vector;
/// assert_eq!(Vector::new(7).map(Vector::get), Some(7));
/// assert!(Vector::new(64).is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vector(u8);

impl Vector {
    /// Vectors per receiving thread.
    pub const COUNT: usize = 64;
    /// The lowest priority vector.
    pub const MIN: Vector = Vector(0);
    /// The highest priority vector.
    pub const MAX: Vector = Vector(63);

    /// The vector `n`, if it is one (`n` < 64).
    pub const fn new(n: u8) -> Option<Vector> {
        if (n as usize) < Self::COUNT {
            Some(Vector(n))
        } else {
            None
        }
    }

    /// The vector's number.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// The vector the delivery frame names (the CPU puts 0..63 there).
    pub(crate) const fn from_delivery(raw: u64) -> Vector {
        Vector((raw & 63) as u8)
    }

    const fn bit(self) -> u64 {
        1 << self.0
    }
}

impl TryFrom<u8> for Vector {
    type Error = std::num::TryFromIntError;

    fn try_from(n: u8) -> Result<Vector, Self::Error> {
        // Out of range: borrow the standard conversion's error.
        Vector::new(n).ok_or_else(|| i8::try_from(u8::MAX).unwrap_err())
    }
}

impl fmt::Display for Vector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A set of vectors, as `uintr_pending()` reports them: bit n for vector n.
///
/// ```
/// use uintr::{Vector, VectorSet};
/// let set: VectorSet = [3, 5].into_iter().filter_map(Vector::new).collect();
/// assert_eq!(set.bits(), 0b101000);
/// assert_eq!(set.iter().map(Vector::get).collect::<Vec<_>>(), [5, 3]);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct VectorSet(u64);

impl VectorSet {
    /// The empty set.
    pub const EMPTY: VectorSet = VectorSet(0);

    /// The set whose bit n stands for vector n.
    pub const fn from_bits(bits: u64) -> VectorSet {
        VectorSet(bits)
    }

    /// Bit n set for each vector n in the set.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Whether `v` is in the set.
    pub const fn contains(self, v: Vector) -> bool {
        self.0 & v.bit() != 0
    }

    /// Adds `v`.
    pub fn insert(&mut self, v: Vector) {
        self.0 |= v.bit();
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// How many vectors the set holds.
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The vectors, highest (the one the CPU delivers first) first.
    pub fn iter(self) -> impl Iterator<Item = Vector> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let v = 63 - bits.leading_zeros() as u8;
            bits &= !(1 << v);
            Some(Vector(v))
        })
    }
}

impl FromIterator<Vector> for VectorSet {
    fn from_iter<I: IntoIterator<Item = Vector>>(iter: I) -> VectorSet {
        let mut set = VectorSet::EMPTY;
        for v in iter {
            set.insert(v);
        }
        set
    }
}

impl fmt::Debug for VectorSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(Vector::get)).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_stop_at_63() {
        assert_eq!(Vector::new(63), Some(Vector::MAX));
        assert_eq!(Vector::new(64), None);
        assert!(Vector::try_from(200u8).is_err());
        assert_eq!(Vector::try_from(0u8).ok(), Some(Vector::MIN));
    }

    #[test]
    fn a_delivery_frame_names_a_vector_below_64() {
        assert_eq!(Vector::from_delivery(63), Vector::MAX);
        assert_eq!(Vector::from_delivery(64 + 5).get(), 5);
    }

    #[test]
    fn sets_iterate_from_the_highest_priority() {
        let set = VectorSet::from_bits(1 | 1 << 17 | 1 << 63);
        let order: Vec<u8> = set.iter().map(Vector::get).collect();
        assert_eq!(order, [63, 17, 0]);
        assert_eq!(set.len(), 3);
        assert!(set.contains(Vector::MIN) && !set.contains(Vector(1)));
        assert_eq!(format!("{set:?}"), "{63, 17, 0}");
    }

    #[test]
    fn the_empty_set_yields_nothing() {
        assert!(VectorSet::EMPTY.is_empty());
        assert_eq!(VectorSet::EMPTY.iter().count(), 0);
    }
}
