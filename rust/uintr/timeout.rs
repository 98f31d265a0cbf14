// SPDX-License-Identifier: GPL-2.0

//! The relative timeout of uintr_wait(): a `struct __kernel_timespec`
//! turned into a deadline on the monotonic clock.  Pure arithmetic,
//! host-tested.

/// Nanoseconds per second.
const NSEC_PER_SEC: i64 = 1_000_000_000;

/// The nanoseconds of a relative timeout of `sec` seconds and `nsec`
/// nanoseconds, saturated at `i64::MAX` (about 292 years); `None` unless
/// it is a valid timespec (`sec` >= 0, 0 <= `nsec` < 1 s).
pub(crate) fn relative_ns(sec: i64, nsec: i64) -> Option<i64> {
    if sec < 0 || !(0..NSEC_PER_SEC).contains(&nsec) {
        return None;
    }
    Some(
        sec.checked_mul(NSEC_PER_SEC)
            .and_then(|ns| ns.checked_add(nsec))
            .unwrap_or(i64::MAX),
    )
}

/// The deadline `relative` nanoseconds after `now`, saturated at
/// `i64::MAX` (the kernel's KTIME_MAX: never).
pub(crate) fn deadline(now: i64, relative: i64) -> i64 {
    now.saturating_add(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_timespecs_convert_exactly() {
        assert_eq!(relative_ns(0, 0), Some(0));
        assert_eq!(relative_ns(0, 999_999_999), Some(999_999_999));
        assert_eq!(relative_ns(2, 500), Some(2_000_000_500));
    }

    #[test]
    fn invalid_timespecs_are_refused() {
        assert_eq!(relative_ns(-1, 0), None);
        assert_eq!(relative_ns(0, -1), None);
        assert_eq!(relative_ns(0, NSEC_PER_SEC), None);
        assert_eq!(relative_ns(i64::MIN, 0), None);
    }

    #[test]
    fn huge_timeouts_saturate() {
        assert_eq!(relative_ns(i64::MAX, 0), Some(i64::MAX));
        assert_eq!(
            relative_ns(i64::MAX / NSEC_PER_SEC, 999_999_999),
            Some(i64::MAX)
        );
        assert_eq!(deadline(5, i64::MAX), i64::MAX);
        assert_eq!(deadline(5, 10), 15);
    }
}
