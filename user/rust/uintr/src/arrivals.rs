// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! What the handler does: record each delivery in atomics that any thread
//! may read.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Vector, VectorSet};

/// The record a receiver's handler keeps: which vectors arrived since they
/// were last taken, how often each was delivered, and how many deliveries
/// there were in all.
///
/// The handler is the crate's, not the program's. A handler interrupts its
/// thread between any two instructions, as a signal handler does, so the
/// code it runs must not allocate, take a lock or touch a `RefCell` or a
/// thread-local that the interrupted code may be in the middle of; the
/// compiler cannot check that of a closure. This one only does three atomic
/// read-modify-writes, which is sound wherever the thread was; programs
/// react to them outside the handler: after [`Receiver::wait`] and its
/// variants return, or by polling [`Arrivals::take`].
///
/// Shared through the `Arc` that [`Receiver::arrivals`] returns, the record
/// may be read by other threads too.
///
/// [`Receiver::wait`]: crate::Receiver::wait
/// [`Receiver::arrivals`]: crate::Receiver::arrivals
#[derive(Debug)]
pub struct Arrivals {
    deliveries: AtomicU64,
    pending: AtomicU64,
    counts: [AtomicU64; Vector::COUNT],
}

impl Default for Arrivals {
    fn default() -> Arrivals {
        Arrivals {
            deliveries: AtomicU64::new(0),
            pending: AtomicU64::new(0),
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl Arrivals {
    /// Called by the handler for each delivery.
    pub(crate) fn record(&self, v: Vector) {
        self.counts[v.get() as usize].fetch_add(1, Ordering::Relaxed);
        self.pending.fetch_or(1 << v.get(), Ordering::Release);
        // Last: a reader that sees the new total sees the rest too.
        self.deliveries.fetch_add(1, Ordering::Release);
    }

    /// How many interrupts the handler took, over all vectors.
    ///
    /// This is the word [`Receiver::wait_for_delivery`] sleeps on: read it,
    /// look for work, and pass it back to sleep only if no delivery came
    /// in between.
    ///
    /// [`Receiver::wait_for_delivery`]: crate::Receiver::wait_for_delivery
    pub fn deliveries(&self) -> u64 {
        self.deliveries.load(Ordering::Acquire)
    }

    /// How many interrupts of vector `v` the handler took. Posts of a
    /// vector that come in before its delivery coalesce into one.
    pub fn count(&self, v: Vector) -> u64 {
        self.counts[v.get() as usize].load(Ordering::Relaxed)
    }

    /// The vectors delivered since the last `take`, taken.
    pub fn take(&self) -> VectorSet {
        VectorSet::from_bits(self.pending.swap(0, Ordering::Acquire))
    }

    /// The word the kernel reads in `uintr_wait(UINTR_WAIT_VALUE)`.
    pub(crate) fn deliveries_word(&self) -> &AtomicU64 {
        &self.deliveries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_counts_once_everywhere() {
        let a = Arrivals::default();
        let v = Vector::new(9).unwrap();
        a.record(v);
        a.record(v);
        a.record(Vector::MAX);
        assert_eq!(a.deliveries(), 3);
        assert_eq!(a.count(v), 2);
        assert_eq!(a.count(Vector::MIN), 0);
        let taken = a.take();
        assert_eq!(taken.bits(), 1 << 9 | 1 << 63);
        assert!(a.take().is_empty());
        assert_eq!(a.deliveries(), 3, "take leaves the totals");
    }
}
