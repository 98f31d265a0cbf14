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
//! The table lock is per sender: nothing on the send path is global.  It
//! is a raw spinlock, because the emulated SENDUIPI takes it with
//! preemption off (see `emulate`), where PREEMPT_RT's `spinlock_t` would
//! sleep; nothing under it allocates or frees.
//!
//! On the hardware, SENDUIPI reads an entry and posts to its UPID within
//! one instruction, without any lock of the kernel's; so what an entry
//! named may be freed, and a masked vector is known to post nothing, only
//! once no SENDUIPI that read the entry before its change can still be
//! under way ([`Sender::wait_for_senduipis`]).  Only a CPU that runs one
//! of the table's threads in user mode can be executing such a SENDUIPI,
//! and the table knows which CPUs those are: the context switch adds a
//! CPU when a thread of the table arrives there and removes it when the
//! thread leaves ([`Sender::runs_on`], [`Sender::leaves`]), and so do a
//! thread that starts or stops using the table on the CPU it runs on.
//! The wait interrupts exactly those CPUs, so an unrelated CPU, idle or
//! running another process, is never disturbed by another process's
//! disconnects or masks, however many it makes.
//!
//! Why the set cannot miss a CPU: the invalidation stores the entry,
//! then, after a full barrier, reads the set; a CPU that joins sets its
//! bit (a locked instruction, a full barrier) before its thread returns to
//! user mode and reads an entry.  So either the wait sees the bit and
//! interrupts the CPU, or that CPU's SENDUIPI reads the entry as it is
//! after the change.  A bit is removed only when the CPU no longer runs
//! the table's thread: the thread is in the kernel, no SENDUIPI of it in
//! flight; the CPU's UITT register may still name the table until another
//! thread's state is loaded, but only a thread of the table executes
//! SENDUIPI with it, and one that arrives sets the bit again.

use kernel::new_mutex;
use kernel::page::Page;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};

use crate::cpuset::CpuSet;
use crate::entry_bitmap::{self, EntryBitmap};
use crate::limits;
use crate::mode::{self, Mode};
use crate::raw_lock::{new_raw_spinlock, RawSpinLock};
use crate::stats::{self, Live};
use crate::trace;
use crate::uintr_fd::{self, UintrFd};
use crate::uitt::{self, Uitt, ENTRIES_PER_PAGE};
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

/// The emulator's side of the entries: `Some` exactly where the UITT
/// entry is valid.  One chunk per page of the UITT, added as it grows.
struct Slots {
    /// Reserved for every page of the capacity: pushing never allocates.
    chunks: KVec<KVec<Option<Slot>>>,
    /// Which slots are `Some`, for every entry of the capacity: finds the
    /// lowest free one without a scan.
    taken: EntryBitmap<KVec<u64>>,
}

impl Slots {
    /// The slot of entry `index`, if the table has the entry.
    fn get(&self, index: usize) -> Option<&Option<Slot>> {
        self.chunks
            .get(index / ENTRIES_PER_PAGE)?
            .get(index % ENTRIES_PER_PAGE)
    }

    /// The slot of entry `index`, which the table has.
    fn get_mut(&mut self, index: usize) -> &mut Option<Slot> {
        &mut self.chunks[index / ENTRIES_PER_PAGE][index % ENTRIES_PER_PAGE]
    }

    /// Fills free entry `index`, which the table has.
    fn fill(&mut self, index: usize, slot: Slot) {
        debug_assert!(!self.taken.is_taken(index));
        *self.get_mut(index) = Some(slot);
        self.taken.take(index);
    }

    /// Empties entry `index`, which the table has.
    fn empty(&mut self, index: usize) -> Option<Slot> {
        self.taken.release(index);
        self.get_mut(index).take()
    }

    /// The entries the table has now.
    fn len(&self) -> usize {
        // Every chunk but the last is a full page.
        self.chunks.last().map_or(0, |last| {
            (self.chunks.len() - 1) * ENTRIES_PER_PAGE + last.len()
        })
    }

    /// The lowest free index, if any.
    fn free_index(&self) -> Option<usize> {
        self.taken.lowest_free(self.len())
    }
}

/// Zeroed words for a level of an [`EntryBitmap`].
fn zeroed_words(words: usize) -> Result<KVec<u64>> {
    let mut v = KVec::with_capacity(words, GFP_KERNEL_ACCOUNT)?;
    for _ in 0..words {
        v.push(0, GFP_KERNEL_ACCOUNT)?;
    }
    Ok(v)
}

/// An empty chunk of `entries` slots, allocated before the table lock is
/// taken.
fn new_chunk(entries: usize) -> Result<KVec<Option<Slot>>> {
    let mut chunk = KVec::with_capacity(entries, GFP_KERNEL_ACCOUNT)?;
    for _ in 0..entries {
        chunk.push(None, GFP_KERNEL_ACCOUNT)?;
    }
    Ok(chunk)
}

/// The sender's bookkeeping of its table.
struct SenderTable {
    /// Counts the table in [`stats::UITTS`].
    _uitt_live: Live,
    /// One chunk per page of the UITT backed so far.
    slots: Slots,
}

/// A registered sender.
#[pin_data]
pub(crate) struct Sender {
    /// The hardware table: entries are written under `table`'s lock, it
    /// grows under its own.
    #[pin]
    uitt: Uitt,
    /// The slots, locked per sender.
    #[pin]
    table: RawSpinLock<SenderTable>,
    /// Taken to grow the table: one grows it at a time, outside the table
    /// lock (growing allocates and waits for the other CPUs).
    #[pin]
    growth: Mutex<()>,
    /// On the hardware, the CPUs that may run a thread of this table in
    /// user mode (see the module's comment).
    cpus: CpuSet,
    /// Counts this sender in [`stats::SENDERS`].
    _live: Live,
}

impl Sender {
    /// A new sender with an empty table of one page, which may grow to
    /// `kernel.uintr.max_sender_entries` entries.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Self::with_capacity(limits::sender_entries())
    }

    /// A new sender with an empty table of one page, which may grow to
    /// `capacity` entries.
    pub(crate) fn with_capacity(capacity: usize) -> Result<Arc<Self>> {
        let uitt = Uitt::new(capacity)?;
        let mut chunks = KVec::with_capacity(uitt::pages_for(capacity), GFP_KERNEL_ACCOUNT)?;
        chunks.push(
            new_chunk(ENTRIES_PER_PAGE.min(capacity))?,
            GFP_KERNEL_ACCOUNT,
        )?;
        let taken = EntryBitmap::new(
            zeroed_words(entry_bitmap::taken_words(capacity))?,
            zeroed_words(entry_bitmap::full_words(capacity))?,
        );
        let table = SenderTable {
            _uitt_live: Live::new(&stats::UITTS),
            slots: Slots { chunks, taken },
        };
        let cpus = CpuSet::new()?;
        Arc::pin_init(
            pin_init!(Self {
                uitt <- uitt,
                table <- new_raw_spinlock!(table, "uintr::Sender::table"),
                growth <- new_mutex!((), "uintr::Sender::growth"),
                cpus,
                _live: Live::new(&stats::SENDERS),
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// The address of the sender's UITT, for the hardware backend; it
    /// never changes.
    pub(crate) fn uitt_address(&self) -> u64 {
        self.uitt.address()
    }

    /// The most entries the table may have (UITTSZ + 1 on the hardware).
    pub(crate) fn capacity(&self) -> usize {
        self.uitt.capacity()
    }

    /// Fills a free entry with a connection to `fd`'s receiver and returns
    /// its index, growing the table by a page if it is full; `ENOSPC`
    /// when it has all the entries it may have.
    ///
    /// Called with `fd`'s connection lock held, which keeps its mask as it
    /// is; process context.
    pub(crate) fn install(&self, fd: &Arc<UintrFd>) -> Result<usize> {
        let slot = Slot {
            fd: fd.clone(),
            upid: fd.receiver().upid().clone(),
            vector: fd.vector(),
            masked: fd.is_masked(),
            _live: Live::new(&stats::CONNECTIONS),
        };
        loop {
            {
                let mut table = self.table.lock();
                if let Some(index) = table.slots.free_index() {
                    self.uitt.set(index, slot.target(), slot.vector);
                    table.slots.fill(index, slot);
                    return Ok(index);
                }
            }
            self.grow()?;
        }
    }

    /// Adds a page to a full table: 256 more entries, or as many as the
    /// capacity leaves.  `ENOSPC` at the capacity.
    ///
    /// The page is mapped before its slots are added under the table
    /// lock, so that no index is handed out before SENDUIPI (on any CPU,
    /// through the same TT and UITTSZ as before) can read its entry.
    fn grow(&self) -> Result {
        let _one_at_a_time = self.growth.lock();
        let usable = {
            let table = self.table.lock();
            if table.slots.free_index().is_some() {
                // Someone freed an entry or grew the table meanwhile.
                return Ok(());
            }
            table.slots.len()
        };
        let capacity = self.uitt.capacity();
        if usable >= capacity {
            return Err(ENOSPC);
        }
        let chunk = new_chunk((capacity - usable).min(ENTRIES_PER_PAGE))?;
        self.uitt
            .grow(Page::alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO)?)?;
        // Reserved in `with_capacity`: does not allocate.
        self.table.lock().slots.chunks.push(chunk, GFP_NOWAIT)?;
        Ok(())
    }

    /// Masks or unmasks entry `index` if it is a connection to `fd`: it
    /// names the sink, or the receiver's UPID again.  On the hardware a
    /// SENDUIPI that read the entry before may still post to the old
    /// target; the caller waits for those ([`Sender::wait_for_senduipis`]).
    ///
    /// Called with `fd`'s connection lock held.
    pub(crate) fn set_masked(&self, index: usize, fd: &UintrFd, masked: bool) {
        let mut table = self.table.lock();
        if let Some(slot) = table.slots.get_mut(index) {
            if core::ptr::eq(&*slot.fd, fd) {
                slot.masked = masked;
                self.uitt.retarget(index, slot.target());
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
        let notification = if slot.masked {
            // The hardware posts to the sink, which never notifies.
            None
        } else {
            slot.upid.post(slot.vector)
        };
        match &notification {
            Some(n) => trace::send(index, slot.vector, true, n.nv, n.ndst),
            None => trace::send(index, slot.vector, false, 0, 0),
        }
        Ok(notification)
    }

    /// Invalidates entry `index` if it still is a connection to `fd`.
    ///
    /// Called with `fd`'s connection lock held (a mutex), in process
    /// context: on the hardware it waits for the CPUs that run the
    /// table's threads ([`Sender::wait_for_senduipis`]).
    pub(crate) fn uninstall(&self, index: usize, fd: &UintrFd) {
        let slot = {
            let mut table = self.table.lock();
            match table.slots.get(index) {
                Some(Some(slot)) if core::ptr::eq(&*slot.fd, fd) => {
                    self.uitt.clear(index);
                    table.slots.empty(index)
                }
                _ => None,
            }
        };
        if slot.is_some() {
            trace::disconnect(index, fd.vector(), fd.receiver());
            // On the hardware, a SENDUIPI on another CPU may have read the
            // entry before it was cleared and still be posting to the UPID.
            self.wait_for_senduipis();
        }
        // Dropped outside the spinlock: it may free the fd object, and
        // with it the UPID.
        drop(slot);
    }

    /// An entry of the table was just changed: returns once no CPU can
    /// still be inside a SENDUIPI that read it before, so that what it
    /// named (the UPID) may be freed, or a mask is known to hold.  On the
    /// hardware, interrupts the CPUs that run the table's threads (see the
    /// module's comment): a CPU takes interrupts only between
    /// instructions, so each has finished that SENDUIPI or will read the
    /// entry as it is now.  RCU would not do: a CPU in user mode may be in
    /// an extended quiescent state, without any interrupt, in the middle
    /// of that SENDUIPI.  The calling CPU is in the kernel, no SENDUIPI in
    /// flight.  The emulator posts under the table lock, which the change
    /// took: nothing to wait for.
    ///
    /// Process context, interrupts on, no spinlock held.
    pub(crate) fn wait_for_senduipis(&self) {
        if mode::current() == Mode::Hardware {
            self.cpus.interrupt();
        }
    }

    /// On the hardware, CPU `cpu` now runs a thread of the table (the
    /// context switch brought it in, or the thread it runs started using
    /// the table): a SENDUIPI there may read the table's entries.
    pub(crate) fn runs_on(&self, cpu: usize) {
        if mode::current() == Mode::Hardware {
            self.cpus.add(cpu);
        }
    }

    /// On the hardware, CPU `cpu` stops running a thread of the table (it
    /// was switched out, or stopped using the table), which is in the
    /// kernel: no SENDUIPI on the table is under way there.
    pub(crate) fn leaves(&self, cpu: usize) {
        if mode::current() == Mode::Hardware {
            self.cpus.remove(cpu);
        }
    }

    /// The lowest connection at index `start` or above, if any.
    fn next_connection(&self, start: usize) -> Option<(usize, Arc<UintrFd>)> {
        let table = self.table.lock();
        let found = (start..table.slots.len()).find_map(|index| {
            let slot = table.slots.get(index)?.as_ref()?;
            Some((index, slot.fd.clone()))
        });
        found
    }

    /// The thread exits or execs: tears down every connection.
    ///
    /// One fd at a time, so that the fd's lock is taken before the
    /// table's (the order every other path uses), and in one pass over
    /// the table: nobody connects to it any more, and disconnecting an fd
    /// clears exactly the one entry its connection names.  So the cost is
    /// one lock round trip per connection, whatever the table's size.
    pub(crate) fn shutdown(self: &Arc<Self>) {
        let mut next = 0;
        while let Some((index, fd)) = self.next_connection(next) {
            // An error means the fd was released or revoked meanwhile,
            // which cleared the entry already.
            let _ = fd.disconnect(self);
            next = index + 1;
        }
    }
}

/// The fds connected to a sender reach its table through this.
impl uintr_fd::Table for Sender {
    fn install(&self, fd: &Arc<UintrFd>) -> Result<usize> {
        Sender::install(self, fd)
    }

    fn uninstall(&self, index: usize, fd: &UintrFd) {
        Sender::uninstall(self, index, fd)
    }

    fn set_masked(&self, index: usize, fd: &UintrFd, masked: bool) {
        Sender::set_masked(self, index, fd, masked)
    }

    fn wait_for_senduipis(&self) {
        Sender::wait_for_senduipis(self)
    }
}
