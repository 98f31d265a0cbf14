// SPDX-License-Identifier: GPL-2.0

//! The User Interrupt Target Table (UITT) of a sender.
//!
//! SENDUIPI's operand is an index into this table; each valid entry names
//! a UPID and the user vector to post there.  The layout is the hardware's:
//! 256 entries of 16 bytes, one 4 KiB table, read by the CPU (or the
//! emulator) with supervisor rights.  Entries are written only under the
//! owning sender's lock, and always so that a reader that sees V set also
//! sees the UPID address that goes with it.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::prelude::*;

/// Entries per table: the sender's connection limit.
pub(crate) const UITT_ENTRIES: usize = 256;

/// Entry bit 0: the entry is valid.
const UITT_VALID: u64 = 1 << 0;
/// Entry bits 15:8: the user vector.
const UITT_VECTOR_SHIFT: u32 = 8;

/// One hardware entry.
#[repr(C, align(16))]
struct UittEntry {
    /// V (bit 0), UV (bits 15:8); other bits reserved (zero).
    flags: AtomicU64,
    /// Address of the target UPID.
    upid: AtomicU64,
}

/// The table, exactly as the hardware reads it.
#[repr(C, align(4096))]
pub(crate) struct Uitt {
    entries: [UittEntry; UITT_ENTRIES],
}

impl Uitt {
    /// A table with every entry invalid.
    pub(crate) fn new() -> Result<KBox<Self>> {
        let table = KBox::<Self>::new_uninit(GFP_KERNEL_ACCOUNT | __GFP_ZERO)?;
        // SAFETY: the allocation is zeroed, and all-zero is a valid `Uitt`:
        // atomics with value 0, that is, every entry invalid.
        Ok(unsafe { table.assume_init() })
    }

    /// The address IA32_UINTR_TT holds on UINTR hardware; stable, as the
    /// table never moves out of its box.
    pub(crate) fn address(&self) -> u64 {
        self as *const Self as u64
    }

    /// Makes entry `index` post `vector` to the UPID at `upid`.
    pub(crate) fn set(&self, index: usize, upid: u64, vector: u8) {
        let entry = &self.entries[index];
        entry.upid.store(upid, Ordering::Relaxed);
        entry.flags.store(
            UITT_VALID | (u64::from(vector) << UITT_VECTOR_SHIFT),
            Ordering::Release,
        );
    }

    /// Makes valid entry `index` post to the UPID at `upid` instead: a
    /// SENDUIPI that read the entry before posts to the old one.
    pub(crate) fn retarget(&self, index: usize, upid: u64) {
        self.entries[index].upid.store(upid, Ordering::Release);
    }

    /// Invalidates entry `index`: a SENDUIPI on it faults from now on.
    pub(crate) fn clear(&self, index: usize) {
        let entry = &self.entries[index];
        entry.flags.store(0, Ordering::Release);
        entry.upid.store(0, Ordering::Relaxed);
    }
}
