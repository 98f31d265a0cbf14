// SPDX-License-Identifier: GPL-2.0

//! Helpers for the 64-bit User-Interrupt Request Register (UIRR).
//!
//! Bit `v` of UIRR is set while user-interrupt vector `v` (0..=63) is
//! pending. Delivery always picks the highest pending vector first (63 before
//! 0). The emulator keeps UIRR as a plain `u64` per task; these functions are
//! the only places that turn vector numbers into bit positions, so an
//! out-of-range vector can never cause a shift overflow.

/// Number of user-interrupt vectors (and UIRR bits).
#[cfg(test)]
pub(crate) const UIRR_VECTORS: u8 = 64;

/// Returns the UIRR bit of `vector`, or 0 if `vector` is not below
/// [`UIRR_VECTORS`].
fn vector_bit(vector: u8) -> u64 {
    1u64.checked_shl(u32::from(vector)).unwrap_or(0)
}

/// Returns the highest pending vector, i.e. the one delivered next, or
/// `None` if no vector is pending.
pub(crate) fn highest_pending(uirr: u64) -> Option<u8> {
    uirr.checked_ilog2().and_then(|bit| u8::try_from(bit).ok())
}

/// Returns whether `vector` is pending in `uirr` (false if out of range).
#[cfg(test)]
pub(crate) fn is_pending(uirr: u64, vector: u8) -> bool {
    uirr & vector_bit(vector) != 0
}

/// Returns `uirr` with `vector` marked pending (unchanged if out of range).
/// (Posting happens in the UPID; this models it for the tests.)
#[cfg(test)]
pub(crate) fn set_pending(uirr: u64, vector: u8) -> u64 {
    uirr | vector_bit(vector)
}

/// Returns `uirr` with `vector` no longer pending (unchanged if out of range).
pub(crate) fn clear_pending(uirr: u64, vector: u8) -> u64 {
    uirr & !vector_bit(vector)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_has_nothing_pending() {
        assert_eq!(highest_pending(0), None);
        for vector in 0..UIRR_VECTORS {
            assert!(!is_pending(0, vector));
        }
    }

    #[test]
    fn highest_pending_single_bits() {
        for vector in 0..UIRR_VECTORS {
            assert_eq!(highest_pending(1u64 << vector), Some(vector));
        }
        assert_eq!(highest_pending(u64::MAX), Some(63));
        assert_eq!(highest_pending(1), Some(0));
    }

    #[test]
    fn delivery_order_is_highest_first() {
        let mut uirr = 0;
        for vector in [5, 17, 63] {
            uirr = set_pending(uirr, vector);
        }
        let mut order = [0u8; 3];
        let mut count = 0;
        while let Some(vector) = highest_pending(uirr) {
            order[count] = vector;
            count += 1;
            uirr = clear_pending(uirr, vector);
        }
        assert_eq!(count, 3);
        assert_eq!(order, [63, 17, 5]);
        assert_eq!(uirr, 0);
    }

    #[test]
    fn set_and_clear_touch_one_bit() {
        for vector in 0..UIRR_VECTORS {
            let bit = 1u64 << vector;
            assert_eq!(set_pending(0, vector), bit);
            assert_eq!(set_pending(bit, vector), bit);
            assert_eq!(clear_pending(u64::MAX, vector), !bit);
            assert_eq!(clear_pending(0, vector), 0);
            assert!(is_pending(bit, vector));
            assert!(!is_pending(!bit, vector));
        }
    }

    #[test]
    fn out_of_range_vectors_are_ignored() {
        for vector in [64u8, 65, 127, 128, 255] {
            assert_eq!(vector_bit(vector), 0);
            assert_eq!(set_pending(0x10, vector), 0x10);
            assert_eq!(clear_pending(u64::MAX, vector), u64::MAX);
            assert!(!is_pending(u64::MAX, vector));
        }
    }
}
