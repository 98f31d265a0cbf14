// SPDX-License-Identifier: GPL-2.0

//! The User Interrupts area: kernel memory that every process maps.
//!
//! The CPU's UINTR reads a sender's UITT and the UPIDs it names while user
//! code runs, at their kernel addresses, and writes the receiver's UPID
//! when it recognizes a notification.  With page table isolation the user
//! page tables map almost none of the kernel, but they share the page
//! tables of one P4D entry, the area (see `pti_clone_uintr_area()` in the
//! C glue), so the hardware backend keeps its UPIDs and UITTs there, and
//! nothing else is there.  It does so with or without PTI, so that the
//! hardware runs on one layout; the emulation reads them only from the
//! kernel, so it keeps them in ordinary kernel memory, out of the user
//! page tables.  This module is the thin unsafe layer over the area's
//! pages.

use core::ptr::NonNull;
use kernel::bindings;
use kernel::prelude::*;

use crate::mode::{self, Mode};

/// Whether UPIDs and UITTs go to the area: on the UINTR hardware.
pub(crate) fn in_use() -> bool {
    mode::current() == Mode::Hardware
}

/// One zeroed page of the area, writable, owned: unmapped and freed on
/// drop.
///
/// Invariant: `start` is a page that `uintr_area_alloc_page()` returned
/// and that nothing has freed.
pub(crate) struct AreaPage {
    start: NonNull<u8>,
}

// SAFETY: the page is memory the `AreaPage` owns; any thread may use it
// and free it (the C glue defers the unmapping to process context).
unsafe impl Send for AreaPage {}
// SAFETY: `&self` gives only the page's address.
unsafe impl Sync for AreaPage {}

impl AreaPage {
    /// A new zeroed page, charged to the caller's memory cgroup.  Process
    /// context.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: no precondition; a page or NULL comes back.
        let start = unsafe { bindings::uintr_area_alloc_page() };
        let start = NonNull::new(start.cast::<u8>()).ok_or(ENOMEM)?;
        Ok(Self { start })
    }

    /// The page's address; it stays mapped until drop.
    pub(crate) fn start(&self) -> NonNull<u8> {
        self.start
    }
}

impl Drop for AreaPage {
    fn drop(&mut self) {
        // The owner made sure no CPU uses the page any more (UPIDs: every
        // UITT entry naming one is gone and SENDUIPIs in flight were
        // waited for).  Any context but NMI.
        // SAFETY: a page of `uintr_area_alloc_page()`, freed only here.
        unsafe { bindings::uintr_area_free_page(self.start.as_ptr().cast()) };
    }
}
