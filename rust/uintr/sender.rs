// SPDX-License-Identifier: GPL-2.0

//! A sender: a thread that connected to one or more uintr_fds.
//!
//! The sender owns its UITT.  Each valid entry is a connection and holds a
//! reference to the target UPID (so the UPID outlives every entry that can
//! reach it) and to the uintr_fd it was made through (so closing the fd can
//! find and tear down the connection).  The fd in turn lists its
//! connections; both sides change only under the fd's lock, then the
//! sender's, in that order.
//!
//! The table lock is per sender: nothing on the send path is global.

use kernel::new_spinlock;
use kernel::prelude::*;
use kernel::sync::{Arc, SpinLock};

use crate::cpu;
use crate::stats::{self, Live};
use crate::uintr_fd::UintrFd;
use crate::uitt::{Uitt, UITT_ENTRIES};
use crate::upid::{self, Notification, Upid};

/// What a valid UITT entry holds on to (and the emulator reads: the same
/// UPID and vector as the hardware entry, and whether the entry names the
/// sink instead).
struct Slot {
    /// The fd the connection was made through.
    fd: Arc<UintrFd>,
    /// The target; kept alive while the entry can reach it.
    upid: Arc<Upid>,
    /// The user vector to post.
    vector: u8,
    /// The vector is masked: the entry names the sink, SENDUIPI posts
    /// nothing.
    masked: bool,
    /// Counts the connection in [`stats::CONNECTIONS`].
    _live: Live,
}

impl Slot {
    /// The UPID address the hardware entry holds.
    fn target(&self) -> u64 {
        if self.masked {
            upid::sink_address()
        } else {
            self.upid.address()
        }
    }
}

/// The sender's table and its bookkeeping.
struct SenderTable {
    /// The hardware table.
    uitt: KBox<Uitt>,
    /// Counts the table in [`stats::UITTS`].
    _uitt_live: Live,
    /// `slots[i]` is `Some` exactly when UITT entry `i` is valid.
    slots: KVec<Option<Slot>>,
}

/// A registered sender.
#[pin_data]
pub(crate) struct Sender {
    /// The table, locked per sender.
    #[pin]
    table: SpinLock<SenderTable>,
    /// Where the table lives (it never moves out of its box).
    uitt_address: u64,
    /// Counts this sender in [`stats::SENDERS`].
    _live: Live,
}

impl Sender {
    /// A new sender with an empty table.
    pub(crate) fn new() -> Result<Arc<Self>> {
        let uitt = Uitt::new()?;
        let uitt_address = uitt.address();
        let mut slots = KVec::with_capacity(UITT_ENTRIES, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..UITT_ENTRIES {
            slots.push(None, GFP_KERNEL_ACCOUNT)?;
        }
        let table = SenderTable {
            uitt,
            _uitt_live: Live::new(&stats::UITTS),
            slots,
        };
        Arc::pin_init(
            pin_init!(Self {
                table <- new_spinlock!(table, "uintr::Sender::table"),
                uitt_address,
                _live: Live::new(&stats::SENDERS),
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// The address of the sender's UITT, for the hardware backend.
    pub(crate) fn uitt_address(&self) -> u64 {
        self.uitt_address
    }

    /// Fills a free entry with a connection to `fd`'s receiver and returns
    /// its index; `ENOSPC` when all entries are in use.
    ///
    /// Called with `fd`'s connection lock held, which keeps its mask as it
    /// is.
    pub(crate) fn install(&self, fd: &Arc<UintrFd>) -> Result<usize> {
        let slot = Slot {
            fd: fd.clone(),
            upid: fd.receiver().upid().clone(),
            vector: fd.vector(),
            masked: fd.is_masked(),
            _live: Live::new(&stats::CONNECTIONS),
        };
        let mut table = self.table.lock();
        let index = table.slots.iter().position(Option::is_none).ok_or(ENOSPC)?;
        table.uitt.set(index, slot.target(), slot.vector);
        table.slots[index] = Some(slot);
        Ok(index)
    }

    /// Masks or unmasks entry `index` if it is a connection to `fd`: it
    /// names the sink, or the receiver's UPID again.  On the hardware a
    /// SENDUIPI that read the entry before may still post to the old
    /// target; the caller waits for those (`cpu::wait_for_senduipis`).
    ///
    /// Called with `fd`'s connection lock held.
    pub(crate) fn set_masked(&self, index: usize, fd: &UintrFd, masked: bool) {
        let mut table = self.table.lock();
        let table = &mut *table;
        if let Some(slot) = &mut table.slots[index] {
            if core::ptr::eq(&*slot.fd, fd) {
                slot.masked = masked;
                table.uitt.retarget(index, slot.target());
            }
        }
    }

    /// SENDUIPI `index`: posts to the entry's UPID; returns the
    /// notification to send, or `None` if none is due.  `EINVAL` for an
    /// index beyond the table or an invalid entry (the hardware's #GP).
    pub(crate) fn send(&self, index: u64) -> Result<Option<Notification>> {
        let table = self.table.lock();
        let slot = usize::try_from(index)
            .ok()
            .and_then(|i| table.slots.get(i))
            .and_then(Option::as_ref)
            .ok_or(EINVAL)?;
        if slot.masked {
            // The hardware posts to the sink, which never notifies.
            return Ok(None);
        }
        Ok(slot.upid.post(slot.vector))
    }

    /// Invalidates entry `index` if it still is a connection to `fd`.
    ///
    /// Called with `fd`'s connection lock held (a mutex), in process
    /// context: on the hardware it waits for every CPU (see
    /// `cpu::wait_for_senduipis`).
    pub(crate) fn uninstall(&self, index: usize, fd: &UintrFd) {
        let slot = {
            let mut table = self.table.lock();
            match &table.slots[index] {
                Some(slot) if core::ptr::eq(&*slot.fd, fd) => {
                    table.uitt.clear(index);
                    table.slots[index].take()
                }
                _ => None,
            }
        };
        if slot.is_some() {
            // On the hardware, a SENDUIPI on another CPU may have read the
            // entry before it was cleared and still be posting to the UPID
            // (see `cpu::wait_for_senduipis`).
            cpu::wait_for_senduipis();
        }
        // Dropped outside the spinlock: it may free the fd object, and
        // with it the UPID.
        drop(slot);
    }

    /// Invalidates every entry that is a connection to `fd`.
    ///
    /// Called with `fd`'s connection lock held.
    pub(crate) fn uninstall_all(&self, fd: &UintrFd) {
        for index in 0..UITT_ENTRIES {
            self.uninstall(index, fd);
        }
    }

    /// The fd of the lowest valid entry, if any.
    fn first_connection(&self) -> Option<Arc<UintrFd>> {
        let table = self.table.lock();
        table.slots.iter().flatten().map(|s| s.fd.clone()).next()
    }

    /// The thread exits or execs: tears down every connection.
    ///
    /// Takes one fd at a time, so that the fd's lock can be taken before
    /// the table's (the order every other path uses).  Each round leaves no
    /// entry pointing to the fd it found, so the loop ends.
    pub(crate) fn shutdown(self: &Arc<Self>) {
        while let Some(fd) = self.first_connection() {
            fd.forget_sender(self);
        }
    }
}
