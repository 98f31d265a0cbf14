// SPDX-License-Identifier: GPL-2.0

//! Counts of live objects, shown in `/sys/kernel/debug/uintr_stats`.
//!
//! Every refcounted object of the component carries a [`Live`] token that
//! counts it while it exists, so tests can prove that every teardown order
//! frees everything: after the last user is gone, all counts are back to
//! what they were.

use core::sync::atomic::{AtomicU64, Ordering};

/// Live receivers (threads with a registered handler, or fds that keep one).
pub(crate) static RECEIVERS: AtomicU64 = AtomicU64::new(0);
/// Live senders (threads that registered with a uintr_fd).
pub(crate) static SENDERS: AtomicU64 = AtomicU64::new(0);
/// Live User Posted Interrupt Descriptors.
pub(crate) static UPIDS: AtomicU64 = AtomicU64::new(0);
/// Live User Interrupt Target Tables.
pub(crate) static UITTS: AtomicU64 = AtomicU64::new(0);
/// Live uintr_fd objects (those of uintr_register_self() included, which
/// no file holds).
pub(crate) static FDS: AtomicU64 = AtomicU64::new(0);
/// Live sender connections (valid UITT entries).
pub(crate) static CONNECTIONS: AtomicU64 = AtomicU64::new(0);
/// Live ipi fds (uintr_ipi_fd()), each holding a sender table.
pub(crate) static IPI_FDS: AtomicU64 = AtomicU64::new(0);
/// Live watches (UINTR_FD_WATCH), each holding a file.
pub(crate) static WATCHES: AtomicU64 = AtomicU64::new(0);

/// Counts its owner in one of the counters above for as long as it exists.
pub(crate) struct Live(&'static AtomicU64);

impl Live {
    /// Starts counting one more object in `counter`.
    pub(crate) fn new(counter: &'static AtomicU64) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Live(counter)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The current counts, in the order of the C `struct uintr_stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// See [`RECEIVERS`].
    pub(crate) receivers: u64,
    /// See [`SENDERS`].
    pub(crate) senders: u64,
    /// See [`UPIDS`].
    pub(crate) upids: u64,
    /// See [`UITTS`].
    pub(crate) uitts: u64,
    /// See [`FDS`].
    pub(crate) fds: u64,
    /// See [`CONNECTIONS`].
    pub(crate) connections: u64,
    /// See [`IPI_FDS`].
    pub(crate) ipi_fds: u64,
    /// See [`WATCHES`].
    pub(crate) watches: u64,
}

/// Reads all counters.
pub(crate) fn snapshot() -> Snapshot {
    let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
    Snapshot {
        receivers: get(&RECEIVERS),
        senders: get(&SENDERS),
        upids: get(&UPIDS),
        uitts: get(&UITTS),
        fds: get(&FDS),
        connections: get(&CONNECTIONS),
        ipi_fds: get(&IPI_FDS),
        watches: get(&WATCHES),
    }
}
