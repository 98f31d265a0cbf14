// SPDX-License-Identifier: GPL-2.0

//! The UPID's descriptor: the 16 bytes the SDM defines, which the CPU (or
//! the emulator) reads and writes with supervisor rights.  What a UPID
//! means to its receiver and senders is [`crate::upid`]'s; where the
//! descriptor lives on UINTR hardware is [`crate::upid_pool`]'s.

use core::sync::atomic::{AtomicU64, Ordering};

/// UPID.ON: a notification is outstanding.
pub(crate) const UPID_ON: u64 = 1 << 0;
/// UPID.SN: notifications are suppressed (the receiver is not running).
pub(crate) const UPID_SN: u64 = 1 << 1;
/// UPID.NV: the notification vector, bits 23:16.
pub(crate) const UPID_NV_SHIFT: u32 = 16;
/// UPID.NDST: the receiver's CPU (APIC ID), bits 63:32.
pub(crate) const UPID_NDST_SHIFT: u32 = 32;
/// The bits of NDST.
pub(crate) const UPID_NDST_MASK: u64 = 0xffff_ffff << UPID_NDST_SHIFT;
/// The bits of NV.
pub(crate) const UPID_NV_MASK: u64 = 0xff << UPID_NV_SHIFT;

/// The 16 bytes the hardware defines, 64-byte aligned as it requires.
#[repr(C, align(64))]
pub(crate) struct Descriptor {
    /// ON (bit 0), SN (bit 1), NV (bits 23:16), NDST (bits 63:32).
    pub(crate) control: AtomicU64,
    /// Posted-interrupt requests, one bit per user vector.
    pub(crate) pir: AtomicU64,
}

impl Descriptor {
    /// Notification vector `nv`, notifications suppressed, nothing
    /// posted.
    pub(crate) const fn initial(nv: u8) -> u64 {
        UPID_SN | ((nv as u64) << UPID_NV_SHIFT)
    }

    /// Starts a reused descriptor afresh: nothing posted, `control`.
    pub(crate) fn reset(&self, control: u64) {
        self.pir.store(0, Ordering::Relaxed);
        self.control.store(control, Ordering::Relaxed);
    }
}
