// SPDX-License-Identifier: GPL-2.0

//! The User Posted Interrupt Descriptor (UPID) of a receiver.
//!
//! A UPID is where senders post interrupts: SENDUIPI sets the vector's bit
//! in the posted-interrupt requests (PIR) and, unless a notification is
//! already outstanding (ON) or suppressed (SN), sends the notification
//! vector (NV) to the CPU in NDST.  The CPU (or the emulator) reads it with
//! supervisor rights at the address stored in the sender's UITT, so a UPID
//! lives in kernel memory at a stable address, 64-byte aligned, and is
//! reference counted: every UITT entry that can reach it holds a reference.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::stats::{self, Live};

/// UPID.ON: a notification is outstanding.
#[expect(dead_code, reason = "posting comes with user IPI delivery")]
pub(crate) const UPID_ON: u64 = 1 << 0;
/// UPID.SN: notifications are suppressed (the receiver is not running).
pub(crate) const UPID_SN: u64 = 1 << 1;

/// A UPID: the 16 bytes the hardware defines, then bookkeeping.
#[repr(C, align(64))]
pub(crate) struct Upid {
    /// ON (bit 0), SN (bit 1), NV (bits 23:16), NDST (bits 63:32).
    control: AtomicU64,
    /// Posted-interrupt requests, one bit per user vector.
    pir: AtomicU64,
    /// Counts this UPID in [`stats::UPIDS`].
    _live: Live,
}

impl Upid {
    /// A new UPID with notifications suppressed and nothing posted.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Ok(Arc::new(
            Upid {
                control: AtomicU64::new(UPID_SN),
                pir: AtomicU64::new(0),
                _live: Live::new(&stats::UPIDS),
            },
            GFP_KERNEL,
        )?)
    }

    /// The address the UITT entries store.
    pub(crate) fn address(&self) -> u64 {
        self as *const Self as u64
    }

    /// Stops notifications for good: the receiver is gone, posts land in
    /// PIR and are never delivered.
    pub(crate) fn suppress(&self) {
        self.control.fetch_or(UPID_SN, Ordering::SeqCst);
    }

    /// Requests posted and not yet picked up by the receiver.
    #[expect(dead_code, reason = "recognition comes with user IPI delivery")]
    pub(crate) fn pending(&self) -> u64 {
        self.pir.load(Ordering::Acquire)
    }
}
