// SPDX-License-Identifier: GPL-2.0

//! The User Interrupt Target Table (UITT) of a sender.
//!
//! SENDUIPI's operand is an index into this table; each valid entry names
//! a UPID and the user vector to post there.  The layout is the hardware's:
//! 16-byte entries, read by the CPU (or the emulator) with supervisor
//! rights.  Entries are written only under the owning sender's lock.
//!
//! The SDM promises nothing about how SENDUIPI reads an entry's two
//! quadwords: not that the read is atomic, nor in which order.  So an
//! entry never holds V=1 beside an address that is not a live UPID,
//! whichever halves a reader combines.  The address of a backed entry is
//! always either the UPID of a connection, kept alive until no SENDUIPI
//! can still have read it (`Sender::wait_for_senduipis`), or the sink, a
//! static UPID that never notifies (`upid::sink_address`); unbacked
//! entries are all zero, for good.  A new entry gets its address before
//! V; a cleared one loses V before its address goes back to the sink.
//! A torn read then posts to the old connection, the new one or the
//! sink, never to freed memory or to address 0.  The emulator reads its own copy of the
//! entries under the table lock, which sees no torn entry.
//!
//! The table grows in place.  It reserves, in vmalloc space, room for the
//! most entries it may ever have (its capacity, UITTSZ + 1), and backs
//! that room with pages of its own one page (256 entries) at a time; the
//! rest maps the zero page read-only, where the CPU reads invalid entries.
//! So the address and UITTSZ that a thread's MSRs hold stay right however
//! the table grows (see `uintr_uitt_reserve()` in the C glue).  On the
//! UINTR hardware the reservation is in the User Interrupts area, which
//! every process maps (see `area`).  This module is the thin unsafe layer
//! over that memory.

use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use kernel::bindings;
use kernel::new_mutex;
use kernel::page::{Page, PAGE_SIZE};
use kernel::prelude::*;
use kernel::sync::Mutex;

use crate::area;
use crate::upid;

/// Entries in one page of the table.
pub(crate) const ENTRIES_PER_PAGE: usize = PAGE_SIZE / core::mem::size_of::<UittEntry>();

/// Entry bit 0: the entry is valid.
const UITT_VALID: u64 = 1 << 0;
/// Entry bits 15:8: the user vector.
const UITT_VECTOR_SHIFT: u32 = 8;

/// One hardware entry.
#[repr(C, align(16))]
pub(crate) struct UittEntry {
    /// V (bit 0), UV (bits 15:8); other bits reserved (zero).
    flags: AtomicU64,
    /// Address of the target UPID.
    upid: AtomicU64,
}

/// Pages needed for `entries` entries.
pub(crate) fn pages_for(entries: usize) -> usize {
    entries.div_ceil(ENTRIES_PER_PAGE)
}

/// The reserved room and the pages that back it.
///
/// Invariants: `area` is a reservation of `count` pages made by
/// `uintr_uitt_reserve()`; page `i` of it maps `pages[i]`, writable, for
/// every `i` below `pages.len()`, and the zero page after that; `pages`
/// has room for `count` pages.
struct Reservation {
    area: NonNull<UittEntry>,
    count: usize,
    pages: KVec<Page>,
}

// SAFETY: the reservation and its pages are memory the table owns, which
// any thread may use and free.
unsafe impl Send for Reservation {}

impl Reservation {
    /// Room for `pages` pages (at least one), none of them backed; in the
    /// User Interrupts area if `in_area`.
    fn new(pages: usize, in_area: bool) -> Result<Self> {
        let count = u32::try_from(pages).map_err(|_| EINVAL)?;
        if count == 0 {
            return Err(EINVAL);
        }
        let list = KVec::with_capacity(pages, GFP_KERNEL_ACCOUNT)?;
        // SAFETY: `count` is not zero; the C glue returns a reservation of
        // that many pages, each mapping the zero page, or NULL.
        let area = unsafe { bindings::uintr_uitt_reserve(count, in_area) };
        let area = NonNull::new(area.cast::<UittEntry>()).ok_or(ENOMEM)?;
        Ok(Self {
            area,
            count: pages,
            pages: list,
        })
    }

    /// Backs the next page with `page` (zeroed).  `ENOSPC` when every
    /// page is backed.  Process context: it waits until no CPU can read
    /// the zero page there any more.
    fn back_next(&mut self, page: Page) -> Result {
        let index = self.pages.len();
        if index >= self.count {
            return Err(ENOSPC);
        }
        // `pages` has room for `count` pages (the invariants): the push
        // below cannot fail, so no mapped page is ever dropped.
        if index >= self.pages.capacity() {
            return Err(ENOMEM);
        }
        // Below the page count `new` converted to u32: exact.
        let page_index = index as u32;
        // `page` then belongs to the reservation, freed only after it is
        // unmapped (drop).
        // SAFETY: `page_index` is a reserved page still mapping the zero page.
        let ret = unsafe {
            bindings::uintr_uitt_map(self.area.as_ptr().cast(), page_index, page.as_ptr())
        };
        if ret != 0 {
            // Not mapped: the page goes, the reservation stays as it was.
            return Err(Error::from_errno(ret));
        }
        self.pages.push(page, GFP_NOWAIT)?;
        // The page's entries name the sink before any of them may become
        // valid (see the module's comment); they are invalid meanwhile.
        // Page `index` of the reservation maps the page just pushed,
        // writable, until drop (the invariants).
        // SAFETY: so the slice is mapped memory; entries are atomics.
        let entries = unsafe {
            core::slice::from_raw_parts(
                self.area.as_ptr().add(index * ENTRIES_PER_PAGE),
                ENTRIES_PER_PAGE,
            )
        };
        for entry in entries {
            entry.upid.store(upid::sink_address(), Ordering::Relaxed);
        }
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // No CPU uses the table any more: its owner unloaded it from every
        // thread and waited for SENDUIPIs in flight.  `pages` are freed
        // after this body, as the fields drop: never while mapped.
        // SAFETY: `area` is the reservation, unreserved only here.
        unsafe { bindings::uintr_uitt_unreserve(self.area.as_ptr().cast()) };
    }
}

/// The table, exactly as the hardware reads it.
///
/// Invariant: the first `usable` entries from `area` are backed by the
/// reservation's own pages until it drops.
#[pin_data]
pub(crate) struct Uitt {
    /// The start of the reservation (a copy, read without the lock).
    area: NonNull<UittEntry>,
    /// The most entries the table may have.
    capacity: usize,
    /// Entries backed so far; only grows.
    usable: AtomicUsize,
    /// Taken to grow the table, one page at a time.
    #[pin]
    reservation: Mutex<Reservation>,
}

// SAFETY: the table is memory owned by the `Uitt` (the reservation and
// its pages), usable from any thread; its entries are atomics.
unsafe impl Send for Uitt {}
// SAFETY: `&self` methods touch the entries (atomics) of pages that stay
// mapped until drop, or the reservation under its lock.
unsafe impl Sync for Uitt {}

impl Uitt {
    /// A table of up to `capacity` entries (at least one), with its first
    /// page backed and every entry invalid, naming the sink; in the User
    /// Interrupts area on the UINTR hardware (see `area`).
    pub(crate) fn new(capacity: usize) -> Result<impl PinInit<Self>> {
        let mut reservation = Reservation::new(pages_for(capacity), area::in_use())?;
        reservation.back_next(Page::alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO)?)?;
        let area = reservation.area;
        let usable = ENTRIES_PER_PAGE.min(capacity);
        Ok(pin_init!(Self {
            area,
            capacity,
            usable: AtomicUsize::new(usable),
            reservation <- new_mutex!(reservation, "uintr::Uitt::reservation"),
        }))
    }

    /// The address IA32_UINTR_TT holds on UINTR hardware; it never
    /// changes.
    pub(crate) fn address(&self) -> u64 {
        self.area.as_ptr() as u64
    }

    /// The most entries the table may have; UITTSZ is one less.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// The entries the table can use now.
    pub(crate) fn usable(&self) -> usize {
        self.usable.load(Ordering::Acquire)
    }

    /// Backs the next page with `page` (zeroed): its entries become
    /// usable, invalid, naming the sink.  `ENOSPC` at the capacity.  Process context.
    pub(crate) fn grow(&self, page: Page) -> Result {
        let mut reservation = self.reservation.lock();
        reservation.back_next(page)?;
        let backed = reservation.pages.len() * ENTRIES_PER_PAGE;
        self.usable
            .store(backed.min(self.capacity), Ordering::Release);
        Ok(())
    }

    /// The usable entries.
    fn entries(&self) -> &[UittEntry] {
        // Entries are atomics, so shared references to them are sound.
        // SAFETY: the first `usable()` entries are valid, aligned memory
        // until drop (the invariant).
        unsafe { core::slice::from_raw_parts(self.area.as_ptr(), self.usable()) }
    }

    /// Makes invalid entry `index` post `vector` to the UPID at `upid`:
    /// the address first, then V.
    pub(crate) fn set(&self, index: usize, upid: u64, vector: u8) {
        let entry = &self.entries()[index];
        entry.upid.store(upid, Ordering::Relaxed);
        entry.flags.store(
            UITT_VALID | (u64::from(vector) << UITT_VECTOR_SHIFT),
            Ordering::Release,
        );
    }

    /// Makes valid entry `index` post to the UPID at `upid` instead: a
    /// SENDUIPI that read the entry before posts to the old one.
    pub(crate) fn retarget(&self, index: usize, upid: u64) {
        self.entries()[index].upid.store(upid, Ordering::Release);
    }

    /// Invalidates entry `index`: a SENDUIPI on it faults from now on.  V
    /// first, then the address goes back to the sink.
    pub(crate) fn clear(&self, index: usize) {
        let entry = &self.entries()[index];
        entry.flags.store(0, Ordering::Release);
        entry.upid.store(upid::sink_address(), Ordering::Release);
    }
}
