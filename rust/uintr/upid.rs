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
//! On the UINTR hardware that memory is a slot of the User Interrupts area
//! (see `area` and `upid_pool`), which every process maps for the CPU.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::area;
use crate::stats::{self, Live};
use crate::upid_desc::{
    Descriptor, UPID_NDST_MASK, UPID_NDST_SHIFT, UPID_NV_MASK, UPID_NV_SHIFT, UPID_ON, UPID_SN,
};
use crate::upid_pool::Slot;

/// A notification a post made due: send vector `nv` to the CPU `ndst`.
pub(crate) struct Notification {
    /// The target CPU, in the UPID's NDST format.
    pub(crate) ndst: u32,
    /// The notification vector.
    pub(crate) nv: u8,
}

/// Where a UPID's descriptor lives.
enum Storage {
    /// In the UPID itself, in kernel memory: the emulation reads it only
    /// from the kernel.
    Inline(Descriptor),
    /// In the User Interrupts area, which the CPU's UINTR reaches while
    /// user code runs (see `area`).
    Area(Slot),
}

/// A UPID: its descriptor, then bookkeeping.
pub(crate) struct Upid {
    storage: Storage,
    /// Counts this UPID in [`stats::UPIDS`].
    _live: Live,
}

impl Upid {
    /// A new UPID with notification vector `nv`, notifications
    /// suppressed and nothing posted; in the area on the UINTR hardware.
    pub(crate) fn new(nv: u8) -> Result<Arc<Self>> {
        let storage = if area::in_use() {
            let slot = Slot::new()?;
            slot.descriptor().reset(Descriptor::initial(nv));
            Storage::Area(slot)
        } else {
            Storage::Inline(Descriptor {
                control: AtomicU64::new(Descriptor::initial(nv)),
                pir: AtomicU64::new(0),
            })
        };
        // Other CPUs see the descriptor only once a UITT entry or an MSR
        // names it, written later with release ordering.
        Ok(Arc::new(
            Upid {
                storage,
                _live: Live::new(&stats::UPIDS),
            },
            GFP_KERNEL_ACCOUNT,
        )?)
    }

    /// The descriptor.
    fn descriptor(&self) -> &Descriptor {
        match &self.storage {
            Storage::Inline(descriptor) => descriptor,
            Storage::Area(slot) => slot.descriptor(),
        }
    }

    /// The address the UITT entries store.
    pub(crate) fn address(&self) -> u64 {
        self.descriptor() as *const Descriptor as u64
    }

    /// Stops notifications: the receiver left its CPU (until `run_on`),
    /// or is gone for good.
    pub(crate) fn suppress(&self) {
        self.descriptor()
            .control
            .fetch_or(UPID_SN, Ordering::SeqCst);
    }

    /// Posts `vector`, as SENDUIPI does: sets its PIR bit and, unless a
    /// notification is outstanding or suppressed, marks one outstanding
    /// and returns it for the caller to send.
    pub(crate) fn post(&self, vector: u8) -> Option<Notification> {
        self.descriptor()
            .pir
            .fetch_or(1u64 << vector, Ordering::SeqCst);
        self.claim_notification()
    }

    /// The second half of a post: unless a notification is outstanding or
    /// suppressed, marks one outstanding (ON) and returns it.
    ///
    /// The hardware posts in one locked update of the UPID; the emulator
    /// sets the PIR bit and ON one after the other, and its CPU may stall
    /// in between (a vCPU the host does not run).  Meanwhile the receiver
    /// can take the request, so the late claim sets ON with nothing posted.
    /// Recognition copes with that, as with a post that lands between its
    /// own two steps: it clears ON before it looks at PIR ([`take_posted`],
    /// [`acknowledge`]), so a stale ON is cleared by the notification it
    /// sends, and the next post notifies again.
    ///
    /// [`take_posted`]: Upid::take_posted
    /// [`acknowledge`]: Upid::acknowledge
    pub(crate) fn claim_notification(&self) -> Option<Notification> {
        let mut control = self.descriptor().control.load(Ordering::SeqCst);
        loop {
            if control & (UPID_ON | UPID_SN) != 0 {
                return None;
            }
            match self.descriptor().control.compare_exchange_weak(
                control,
                control | UPID_ON,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => {
                    return Some(Notification {
                        // Bits 63:32 and 23:16: the casts keep exactly them.
                        ndst: (control >> UPID_NDST_SHIFT) as u32,
                        nv: (control >> UPID_NV_SHIFT) as u8,
                    });
                }
                Err(now) => control = now,
            }
        }
    }

    /// Recognition of a notification of vector `nv` by a handler that
    /// leaves PIR in place: clears ON if the UPID still notifies `nv`, and
    /// returns whether it does.  The caller then looks at PIR: a post
    /// after the clear notifies again.
    pub(crate) fn acknowledge(&self, nv: u8) -> bool {
        let mut control = self.descriptor().control.load(Ordering::SeqCst);
        loop {
            if control & UPID_NV_MASK != u64::from(nv) << UPID_NV_SHIFT {
                return false;
            }
            if control & UPID_ON == 0 {
                return true;
            }
            match self.descriptor().control.compare_exchange_weak(
                control,
                control & !UPID_ON,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return true,
                Err(now) => control = now,
            }
        }
    }

    /// Recognition: clears ON, then takes every posted request.  (In this
    /// order, a post in between either sees ON clear and notifies again,
    /// or is taken here.)
    pub(crate) fn take_posted(&self) -> u64 {
        self.descriptor()
            .control
            .fetch_and(!UPID_ON, Ordering::SeqCst);
        self.descriptor().pir.swap(0, Ordering::SeqCst)
    }

    /// The receiver runs on the CPU `ndst`: notify it there from now on.
    pub(crate) fn run_on(&self, ndst: u32) {
        self.update(|control| {
            (control & !(UPID_NDST_MASK | UPID_SN)) | (u64::from(ndst) << UPID_NDST_SHIFT)
        });
    }

    /// Notify vector `nv` at the CPU `ndst` from now on, with no
    /// notification outstanding: a blocked receiver switches to the kernel
    /// vector, and back when it runs again.  The caller then looks at the
    /// posted requests itself: a post before this is seen there, a post
    /// after it notifies `nv` at `ndst` (ON is clear, so an older
    /// notification still in flight to the old vector cannot swallow it).
    pub(crate) fn redirect(&self, ndst: u32, nv: u8) {
        self.update(|control| {
            (control & !(UPID_NDST_MASK | UPID_NV_MASK | UPID_SN | UPID_ON))
                | (u64::from(ndst) << UPID_NDST_SHIFT)
                | (u64::from(nv) << UPID_NV_SHIFT)
        });
    }

    /// The control word and the posted requests as they are now, for
    /// fdinfo (they may change at any moment).
    pub(crate) fn snapshot(&self) -> (u64, u64) {
        (
            self.descriptor().control.load(Ordering::SeqCst),
            self.descriptor().pir.load(Ordering::SeqCst),
        )
    }

    /// Whether requests are posted and not yet taken.
    pub(crate) fn has_posted(&self) -> bool {
        self.posted() != 0
    }

    /// The requests posted and not yet taken (PIR), left in place.
    pub(crate) fn posted(&self) -> u64 {
        self.descriptor().pir.load(Ordering::SeqCst)
    }

    /// Replaces the control word by `change(old)`, atomically: ON may be
    /// set by a sender at any moment.
    fn update(&self, change: impl Fn(u64) -> u64) {
        // The closure never refuses, so neither does the update.
        let _ = self
            .descriptor()
            .control
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| Some(change(old)));
    }
}

/// What a UITT entry names when it names no receiver's UPID: invalid
/// entries (see `uitt`) and those of masked vectors (see
/// `UintrFd::set_masked`).  A descriptor whose notifications are
/// suppressed for good, so that a SENDUIPI that posts there only sets a
/// bit nobody reads.  Only the CPU reads it.  Static, so that no entry
/// outlives it; on the UINTR hardware, a slot of the area taken at boot
/// and never given back ([`init_sink`]).
static SINK: Descriptor = Descriptor {
    control: AtomicU64::new(UPID_SN),
    pir: AtomicU64::new(0),
};

/// The address of the sink in the area, once [`init_sink`] ran.
static AREA_SINK: AtomicU64 = AtomicU64::new(0);

/// Takes the sink's slot in the area; called once at boot, on the UINTR
/// hardware, before any UITT entry exists.
pub(crate) fn init_sink() -> Result {
    let slot = Slot::new()?;
    let descriptor = slot.descriptor();
    descriptor.reset(UPID_SN);
    AREA_SINK.store(descriptor as *const Descriptor as u64, Ordering::Release);
    // Kept for as long as the kernel runs: any entry may name it.
    core::mem::forget(slot);
    Ok(())
}

/// The address of the sink.
pub(crate) fn sink_address() -> u64 {
    match AREA_SINK.load(Ordering::Acquire) {
        0 => &SINK as *const Descriptor as u64,
        area => area,
    }
}
