// SPDX-License-Identifier: GPL-2.0

//! UPIDs in the User Interrupts area, 64 to a page.
//!
//! On the UINTR hardware a UPID must be in the area (see `area`), and a
//! page there for each 64-byte UPID would waste most of it.  The pool
//! keeps its area pages on two lists, those with a free slot and the full
//! ones, each page with a bitmap of its taken slots: a slot is taken from
//! the first page of the first list, in O(1) however many UPIDs exist.  A
//! [`Slot`] holds a reference to its page, and gives its slot back when
//! dropped, in any context but NMI (a UPID's last reference may go with a
//! task freed after an RCU grace period).  A page whose last slot goes
//! leaves its list and is freed.  The lists' lock is a raw spinlock taken
//! with interrupts off, held only to move a page and flip bits: pages are
//! allocated before it is taken.

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use kernel::list::{List, ListArc, ListLinks};
use kernel::page::PAGE_SIZE;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::area::AreaPage;
use crate::glue::IrqsOff;
use crate::raw_lock::{new_raw_spinlock, RawSpinLock};
use crate::upid_desc::Descriptor;

/// Descriptors in one page.
const PER_PAGE: usize = PAGE_SIZE / core::mem::size_of::<Descriptor>();
// One bit of a `u64` per descriptor.
const _: () = assert!(PER_PAGE == 64);

/// The bitmap of a page whose every slot is taken.
const FULL: u64 = u64::MAX;

/// The lowest free slot of a page whose taken slots are `used`.
fn first_free(used: u64) -> Option<usize> {
    (used != FULL).then(|| (!used).trailing_zeros() as usize)
}

/// One page of the pool.
#[pin_data]
struct PoolPage {
    #[pin]
    links: ListLinks,
    /// The descriptors.
    page: AreaPage,
    /// Bit `i` set: slot `i` is taken.  Changed under the pool's lock.
    used: AtomicU64,
}

kernel::list::impl_has_list_links! {
    impl HasListLinks<0> for PoolPage { self.links }
}
kernel::list::impl_list_arc_safe! {
    impl ListArcSafe<0> for PoolPage { untracked; }
}
kernel::list::impl_list_item! {
    impl ListItem<0> for PoolPage { using ListLinks; }
}

impl PoolPage {
    /// Takes the lowest free slot, if any.  Under the pool's lock.
    fn take(&self) -> Option<usize> {
        let used = self.used.load(Ordering::Relaxed);
        let index = first_free(used)?;
        self.used.store(used | 1 << index, Ordering::Relaxed);
        Some(index)
    }

    /// Whether every slot is taken.  Under the pool's lock.
    fn is_full(&self) -> bool {
        self.used.load(Ordering::Relaxed) == FULL
    }

    /// Gives slot `index` back; returns whether the page is now empty.
    /// Under the pool's lock.
    fn give_back(&self, index: usize) -> bool {
        let used = self.used.load(Ordering::Relaxed) & !(1 << index);
        self.used.store(used, Ordering::Relaxed);
        used == 0
    }
}

/// The pages that have a taken slot.  Invariant: a page is on `full`
/// while all its slots are taken, on `partial` while some but not all
/// are, and on no list before its first slot and after its last.
struct Pages {
    partial: List<PoolPage>,
    full: List<PoolPage>,
}

impl Pages {
    /// Puts `page`, which has a taken slot, on the list its bitmap says.
    fn file(&mut self, page: ListArc<PoolPage>) {
        if page.is_full() {
            self.full.push_back(page);
        } else {
            self.partial.push_front(page);
        }
    }
}

/// The pool's pages, under its lock.
type Pool = RawSpinLock<Pages>;

/// The pool, once `init` ran (NULL before, and without the hardware).
static POOL: AtomicPtr<Pool> = AtomicPtr::new(ptr::null_mut());

/// Creates the pool; called once at boot, on the UINTR hardware.
pub(crate) fn init() -> Result {
    let pool = KBox::pin_init(
        new_raw_spinlock!(
            Pages {
                partial: List::new(),
                full: List::new(),
            },
            "uintr_upid_pool"
        ),
        GFP_KERNEL,
    )?;
    // SAFETY: leaked below, so never moved: the pin stays honoured.
    let pool = unsafe { Pin::into_inner_unchecked(pool) };
    // Leaked on purpose: the pool serves for as long as the kernel runs.
    POOL.store(KBox::into_raw(pool), Ordering::Release);
    Ok(())
}

/// The pool, if `init` ran.
fn pool() -> Option<&'static Pool> {
    let pool = POOL.load(Ordering::Acquire);
    // SAFETY: non-NULL, so stored by `init` from a leaked box: valid and
    // never moved or written again for the rest of the kernel's life.
    (!pool.is_null()).then(|| unsafe { &*pool })
}

/// A descriptor's room in the area, taken until drop.
pub(crate) struct Slot {
    page: Arc<PoolPage>,
    index: usize,
}

impl Slot {
    /// A free slot, from a page of the pool or from a new one.  Its
    /// contents are what the previous owner left: the caller initializes
    /// them.  Process context.
    pub(crate) fn new() -> Result<Self> {
        let pool = pool().ok_or(ENOMEM)?;
        if let Some(slot) = Self::take_listed(pool) {
            return Ok(slot);
        }
        let page = AreaPage::new()?;
        let fresh = ListArc::pin_init(
            try_pin_init!(PoolPage {
                links <- ListLinks::new(),
                page,
                used: AtomicU64::new(0),
            }),
            GFP_KERNEL_ACCOUNT,
        )?;
        let _irqs = IrqsOff::new();
        let mut pages = pool.lock();
        // Another thread may have freed a slot meanwhile: use it, and
        // free the new page (unlisted, it goes with `fresh`).
        if let Some(slot) = Self::take_from(&mut pages) {
            return Ok(slot);
        }
        let page = fresh.clone_arc();
        let index = page.take().ok_or(ENOMEM)?;
        pages.file(fresh);
        Ok(Self { page, index })
    }

    /// A free slot of a listed page, if any.
    fn take_listed(pool: &Pool) -> Option<Self> {
        let _irqs = IrqsOff::new();
        let mut pages = pool.lock();
        Self::take_from(&mut pages)
    }

    /// A free slot of the first page with one, if any.
    fn take_from(pages: &mut Pages) -> Option<Self> {
        let page = pages.partial.pop_front()?;
        let index = page.take();
        let slot = index.map(|index| Self {
            page: page.clone_arc(),
            index,
        });
        pages.file(page);
        slot
    }

    /// The descriptor, valid while the slot is taken.
    pub(crate) fn descriptor(&self) -> &Descriptor {
        let start = self.page.page.start().cast::<Descriptor>();
        // Slot `index` (below `PER_PAGE`) is a 64-byte aligned descriptor
        // of the page, taken by `self` alone; its fields are atomics.
        // SAFETY: the page stays mapped while `self.page` lives (above).
        unsafe { &*start.as_ptr().add(self.index) }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(pool) = pool() else {
            return;
        };
        let emptied = {
            let _irqs = IrqsOff::new();
            let mut pages = pool.lock();
            let was_full = self.page.is_full();
            let empty = self.page.give_back(self.index);
            // A page that was full leaves `full`; one that empties leaves
            // its list for good; any other stays where it is.
            let page = if was_full {
                // SAFETY: a full page is on `full` (`Pages`' invariant),
                // on no other list ever.
                unsafe { pages.full.remove(&self.page) }
            } else if empty {
                // SAFETY: a page with a free and a taken slot is on
                // `partial` (`Pages`' invariant), on no other list ever.
                unsafe { pages.partial.remove(&self.page) }
            } else {
                None
            };
            match page {
                Some(page) if !empty => {
                    pages.file(page);
                    None
                }
                page => page,
            }
        };
        // The page, if it emptied, is freed after the lock and with
        // interrupts on again (with its last reference, `self.page`).
        drop(emptied);
    }
}
