// SPDX-License-Identifier: GPL-2.0

//! A receiver: a thread that registered a user interrupt handler.
//!
//! The receiver owns its UPID and its vector space (64 vectors, each
//! claimed by at most one uintr_fd).  It is reference counted: the thread
//! holds one reference while it is registered, and every uintr_fd created
//! for it holds one, so the fds outlive an unregistered or exited receiver
//! (they then refuse new senders with `ESHUTDOWN`).

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::glue::CpuPin;

use crate::stats::{self, Live};
use crate::upid::Upid;

/// Vectors per receiver: 0 (lowest priority) to 63 (highest).
pub(crate) const VECTORS: u64 = 64;

/// STACKADJUST of every receiver: the delivery frame goes below the
/// x86-64 ABI's red zone (128 bytes), which the interrupted code may use.
const STACK_ADJUST: u64 = 128;

/// The notification vector of every receiver's UPID (UINV).
const NOTIFICATION_VECTOR: u8 = bindings::UINTR_NOTIFICATION_VECTOR as u8;

/// The vector a blocked receiver's UPID notifies instead: the kernel's.
const KERNEL_VECTOR: u8 = bindings::UINTR_KERNEL_VECTOR as u8;

/// A registered receiver.
pub(crate) struct Receiver {
    /// Where senders post.
    upid: Arc<Upid>,
    /// The handler's user address.
    handler: u64,
    /// The receiving thread's id, for fdinfo.
    tid: i32,
    /// Vectors claimed by a uintr_fd (bit n: vector n).
    vectors: AtomicU64,
    /// False once the thread unregistered or exited.
    active: AtomicBool,
    /// The thread sleeps in uintr_wait(): its UPID notifies the kernel
    /// vector at the CPU of its wait list, whatever CPU it runs on.  Only
    /// the thread itself changes this (and reads it, in its own context
    /// switches and interrupts).
    waiting: AtomicBool,
    /// Counts this receiver in [`stats::RECEIVERS`].
    _live: Live,
}

impl Receiver {
    /// A new, active receiver with its own UPID.
    pub(crate) fn new(handler: u64, tid: i32) -> Result<Arc<Self>> {
        Ok(Arc::new(
            Receiver {
                upid: Upid::new(NOTIFICATION_VECTOR)?,
                handler,
                tid,
                vectors: AtomicU64::new(0),
                active: AtomicBool::new(true),
                waiting: AtomicBool::new(false),
                _live: Live::new(&stats::RECEIVERS),
            },
            GFP_KERNEL,
        )?)
    }

    /// The receiver's UPID.
    pub(crate) fn upid(&self) -> &Arc<Upid> {
        &self.upid
    }

    /// The handler's user address.
    pub(crate) fn handler(&self) -> u64 {
        self.handler
    }

    /// The stack adjustment of the delivery frame (STACKADJUST).
    pub(crate) fn stack_adjust(&self) -> u64 {
        STACK_ADJUST
    }

    /// The receiving thread, which calls this, runs here from now on:
    /// point the UPID at this CPU (later context switches keep it so).
    pub(crate) fn activate(&self) {
        let cpu = CpuPin::new();
        self.upid.run_on(cpu.ndst());
    }

    /// The thread, pinned to the CPU `ndst`, is about to sleep: notify
    /// the kernel vector there until `unblock`.
    pub(crate) fn block(&self, ndst: u32) {
        self.waiting.store(true, Ordering::Relaxed);
        self.upid.redirect(ndst, KERNEL_VECTOR);
    }

    /// The thread, pinned to the CPU `ndst`, runs again: notify the user
    /// vector here (the caller then picks up what was posted).
    pub(crate) fn unblock(&self, ndst: u32) {
        self.upid.redirect(ndst, NOTIFICATION_VECTOR);
        self.waiting.store(false, Ordering::Relaxed);
    }

    /// Whether the thread is between `block` and `unblock`.
    pub(crate) fn is_waiting(&self) -> bool {
        self.waiting.load(Ordering::Relaxed)
    }

    /// The receiving thread's id.
    pub(crate) fn tid(&self) -> i32 {
        self.tid
    }

    /// Whether the thread is still registered.
    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Claims `vector` for a new uintr_fd; `EBUSY` if one has it already.
    pub(crate) fn claim_vector(&self, vector: u8) -> Result {
        let bit = 1u64 << vector;
        if self.vectors.fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            return Err(EBUSY);
        }
        Ok(())
    }

    /// Returns `vector` once its uintr_fd is gone.
    pub(crate) fn release_vector(&self, vector: u8) {
        self.vectors.fetch_and(!(1u64 << vector), Ordering::AcqRel);
    }

    /// The thread unregistered or exited: no more deliveries, no new
    /// senders; the fds stay open.
    pub(crate) fn shutdown(&self) {
        self.active.store(false, Ordering::Release);
        self.upid.suppress();
    }
}
