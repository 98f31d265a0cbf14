// SPDX-License-Identifier: GPL-2.0

//! KUnit cases of the component (registered by `uintr_kunit.c`).
//!
//! They drive the objects directly, without files or user programs: UITT
//! index allocation, the references that keep a UPID alive, teardown
//! from the fd's side and from the sender's, a shared table's uses,
//! masking and revocation, the kernel vector's wakeups, and watches (with
//! a wait queue freed before its file).  Each case compares the
//! live-object counters with their value before it started, so a leak or
//! an early free fails the case.  They run at boot, before user space, so
//! nothing else changes the counters meanwhile.

use core::ffi::c_void;
use core::ptr::{self, NonNull};
use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::errno;
use crate::events::{EPOLLIN, EPOLLOUT};
use crate::glue::{CpuPin, IrqsOff};
use crate::poll::FileRef;
use crate::receiver::{HandlerFlags, Receiver};
use crate::sender::Sender;
use crate::shared::{ProcessTable, SenderUse};
use crate::stats::{self, Snapshot};
use crate::uintr_fd::UintrFd;
use crate::waitlist::{self, Waiter, Wake, KERNEL_VECTOR};

/// A case's result: which check failed.
pub(crate) type Check = core::result::Result<(), &'static str>;

/// Fails the case with the location and text of `cond` unless it holds.
macro_rules! ensure {
    ($cond:expr) => {
        if !$cond {
            return Err(concat!(file!(), ":", line!(), ": ", stringify!($cond)));
        }
    };
}

/// Unwraps an allocation, failing the case if it failed.
fn alloc<T>(result: Result<T>) -> core::result::Result<T, &'static str> {
    result.map_err(|_| "allocation failed")
}

/// A receiver for tests (any user address will do as handler).
fn receiver() -> core::result::Result<Arc<Receiver>, &'static str> {
    alloc(Receiver::new(0x1000, HandlerFlags::default()))
}

/// The counters as they should read: `base` plus the given deltas.
fn plus(
    base: &Snapshot,
    receivers: u64,
    senders: u64,
    upids: u64,
    fds: u64,
    connections: u64,
) -> Snapshot {
    Snapshot {
        receivers: base.receivers + receivers,
        senders: base.senders + senders,
        upids: base.upids + upids,
        // One UITT per sender.
        uitts: base.uitts + senders,
        fds: base.fds + fds,
        connections: base.connections + connections,
        ipi_fds: base.ipi_fds,
        watches: base.watches,
    }
}

/// Indexes are handed out lowest first; a full table grows by a page up
/// to its capacity; a freed index is reused.
pub(crate) fn uitt_index_allocation() -> Check {
    let base = stats::snapshot();
    {
        let mut fds = KVec::new();
        for _ in 0..5 {
            let receiver = receiver()?;
            for vector in 0..64 {
                let fd = alloc(UintrFd::new(&receiver, vector))?;
                alloc(fds.push(fd, GFP_KERNEL).map_err(Error::from))?;
            }
        }
        // Capacity 300: one full page, then part of a second.
        let sender = alloc(Sender::with_capacity(300))?;
        ensure!(sender.capacity() == 300);
        for (i, fd) in fds.iter().take(300).enumerate() {
            ensure!(fd.connect(&sender) == Ok(i));
        }
        ensure!(fds[300].connect(&sender) == Err(ENOSPC));
        ensure!(stats::snapshot() == plus(&base, 5, 1, 5, 320, 300));
        ensure!(fds[100].disconnect(&sender).is_ok());
        ensure!(fds[100].disconnect(&sender) == Err(EINVAL));
        ensure!(fds[300].connect(&sender) == Ok(100));
        ensure!(fds[260].disconnect(&sender).is_ok());
        ensure!(fds[301].connect(&sender) == Ok(260));
        for fd in fds.iter() {
            fd.release();
        }
        ensure!(stats::snapshot() == plus(&base, 5, 1, 5, 320, 0));
        // A table with room for less than a page.
        let small = alloc(Sender::with_capacity(2))?;
        ensure!(fds[0].connect(&small) == Err(EBADF));
        let receiver = receiver()?;
        let (a, b, c) = (
            alloc(UintrFd::new(&receiver, 0))?,
            alloc(UintrFd::new(&receiver, 1))?,
            alloc(UintrFd::new(&receiver, 2))?,
        );
        ensure!(a.connect(&small) == Ok(0));
        ensure!(b.connect(&small) == Ok(1));
        ensure!(c.connect(&small) == Err(ENOSPC));
        for fd in [a, b, c] {
            fd.release();
        }
    }
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// A UPID lives while a UITT entry can reach it, then goes.
pub(crate) fn refcount_lifetimes() -> Check {
    let base = stats::snapshot();
    let receiver = receiver()?;
    let fd = alloc(UintrFd::new(&receiver, 7))?;
    let sender = alloc(Sender::new())?;
    ensure!(fd.connect(&sender) == Ok(0));
    ensure!(stats::snapshot() == plus(&base, 1, 1, 1, 1, 1));

    // The receiving thread goes: new senders are refused...
    receiver.shutdown();
    drop(receiver);
    let other = alloc(Sender::new())?;
    ensure!(fd.connect(&other) == Err(errno::eshutdown()));
    drop(other);
    // ...and when the last holder of the fd drops it, the connection
    // still keeps the fd object, its receiver and the UPID alive.
    drop(fd);
    ensure!(stats::snapshot() == plus(&base, 1, 1, 1, 1, 1));

    // The sender goes: everything goes.
    sender.shutdown();
    ensure!(stats::snapshot() == plus(&base, 0, 1, 0, 0, 0));
    drop(sender);
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// Closing a uintr_fd disconnects every sender; they stay usable.
pub(crate) fn fd_release_disconnects_all() -> Check {
    let base = stats::snapshot();
    let receiver = receiver()?;
    let fd = alloc(UintrFd::new(&receiver, 1))?;
    let next = alloc(UintrFd::new(&receiver, 2))?;
    let senders = [
        alloc(Sender::new())?,
        alloc(Sender::new())?,
        alloc(Sender::new())?,
    ];
    for sender in senders.iter() {
        ensure!(fd.connect(sender) == Ok(0));
    }
    ensure!(fd.sender_count() == 3);
    fd.release();
    ensure!(fd.sender_count() == 0);
    ensure!(stats::snapshot() == plus(&base, 1, 3, 1, 2, 0));
    ensure!(fd.connect(&senders[0]) == Err(EBADF));
    for sender in senders.iter() {
        ensure!(next.connect(sender) == Ok(0));
    }
    next.release();
    drop((fd, next, senders, receiver));
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// A sender that goes disconnects from every fd; the fds stay usable.
pub(crate) fn sender_shutdown_disconnects_all() -> Check {
    let base = stats::snapshot();
    let receivers = [receiver()?, receiver()?];
    let fds = [
        alloc(UintrFd::new(&receivers[0], 0))?,
        alloc(UintrFd::new(&receivers[0], 63))?,
        alloc(UintrFd::new(&receivers[1], 0))?,
    ];
    let sender = alloc(Sender::new())?;
    for (i, fd) in fds.iter().enumerate() {
        ensure!(fd.connect(&sender) == Ok(i));
    }
    sender.shutdown();
    ensure!(stats::snapshot() == plus(&base, 2, 1, 2, 3, 0));
    drop(sender);
    let again = alloc(Sender::new())?;
    for fd in fds.iter() {
        ensure!(fd.sender_count() == 0);
        ensure!(fd.connect(&again).is_ok());
    }
    for fd in fds.iter() {
        fd.release();
    }
    drop((fds, again, receivers));
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// A shared sender table keeps its connections while any use of it is
/// left (a thread, an address space); the last use tears them down.  An
/// address space's table is installed once: another one is `EBUSY`, the
/// same one again is no change.
pub(crate) fn shared_table_lasts_until_its_last_use() -> Check {
    let base = stats::snapshot();
    let receiver = receiver()?;
    let fd = alloc(UintrFd::new(&receiver, 4))?;
    let mut field: *mut c_void = ptr::null_mut();
    {
        // SAFETY: a local field that outlives `process` and is used only
        // through it; it starts NULL, as an address space's does.
        let process = unsafe { ProcessTable::from_raw(&mut field) };
        ensure!(process.get().is_none());
        let thread = alloc(process.get_or_create())?;
        let again = alloc(process.get_or_create())?;
        ensure!(Arc::ptr_eq(again.table(), thread.table()));
        drop(again);
        ensure!(fd.connect(thread.table()) == Ok(0));
        let other = alloc(SenderUse::new_table())?;
        ensure!(process.install(other).err() == Some(EBUSY));
        ensure!(process.install(thread.clone()).is_ok());
        ensure!(stats::snapshot() == plus(&base, 1, 1, 1, 1, 1));
        // The thread goes; the address space still uses the table.
        drop(thread);
        ensure!(fd.sender_count() == 1);
        // The address space goes: its connections go, then the table.
        process.release();
        ensure!(process.get().is_none());
        ensure!(fd.sender_count() == 0);
        ensure!(stats::snapshot() == plus(&base, 1, 0, 1, 1, 0));
    }
    fd.release();
    drop((fd, receiver));
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// One connection per sender and fd; one fd per vector.
pub(crate) fn connection_rules() -> Check {
    let base = stats::snapshot();
    let receiver = receiver()?;
    let fd = alloc(UintrFd::new(&receiver, 9))?;
    ensure!(UintrFd::new(&receiver, 9).err() == Some(EBUSY));
    let sender = alloc(Sender::new())?;
    ensure!(fd.disconnect(&sender) == Err(EINVAL));
    ensure!(fd.connect(&sender) == Ok(0));
    ensure!(fd.connect(&sender) == Err(errno::eisconn()));
    ensure!(fd.disconnect(&sender).is_ok());
    fd.release();
    drop(fd);
    // The vector is free once the fd object is gone.
    let fd = alloc(UintrFd::new(&receiver, 9))?;
    fd.release();
    drop((fd, sender, receiver));
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// A masked fd's connections, made before the mask and after it, post
/// nothing and keep their index; unmasked they post again; revoking
/// invalidates them, and only those of the process asked for.
pub(crate) fn masked_and_revoked_connections() -> Check {
    let base = stats::snapshot();
    let receiver = receiver()?;
    let upid = receiver.upid().clone();
    let fd = alloc(UintrFd::new(&receiver, 11))?;
    let (early, late) = (alloc(Sender::new())?, alloc(Sender::new())?);
    ensure!(fd.connect(&early) == Ok(0));
    fd.set_masked(true);
    ensure!(fd.is_masked());
    ensure!(fd.connect(&late) == Ok(0));
    ensure!(early.send(0).is_ok() && late.send(0).is_ok());
    ensure!(upid.posted() == 0);
    fd.set_masked(false);
    ensure!(late.send(0).is_ok());
    ensure!(upid.posted() == 1 << 11);
    // No process with that PID connected anything.
    ensure!(fd.revoke(Some(i32::MAX)) == 0);
    ensure!(fd.revoke(None) == 2);
    ensure!(early.send(0).err() == Some(EINVAL));
    ensure!(late.send(0).err() == Some(EINVAL));
    ensure!(stats::snapshot() == plus(&base, 1, 2, 1, 1, 0));
    fd.release();
    drop((fd, early, late, upid, receiver));
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// The kernel vector's handler on `cpu`, as the interrupt runs it.
fn kernel_vector(cpu: usize) -> usize {
    let _irqs = IrqsOff::new();
    waitlist::wake_posted(cpu).woken
}

/// The kernel vector's handler looks at one chunk of its CPU's waiters;
/// the rest of the pass, the bottom half's work, reaches a due waiter
/// behind three chunks of idle ones and takes it off the list.
pub(crate) fn long_wait_list_is_looked_at_a_chunk_at_a_time() -> Check {
    let base = stats::snapshot();
    let idle = receiver()?;
    idle.activate();
    let busy = receiver()?;
    busy.activate();
    let mut idle_waiters = KVec::new();
    for _ in 0..3 * waitlist::CHUNK {
        let waiter = alloc(Waiter::new(idle.upid(), Wake::Wait))?;
        idle_waiters
            .push(waiter, GFP_KERNEL)
            .map_err(|_| "allocation failed")?;
    }
    let due = alloc(Waiter::new(busy.upid(), Wake::Wait))?;
    let pin = CpuPin::new();
    for waiter in idle_waiters.iter() {
        ensure!(waitlist::enqueue(pin.cpu(), waiter, false));
    }
    ensure!(waitlist::enqueue(pin.cpu(), &due, false));
    busy.block(pin.ndst());
    let notified = busy.upid().post(5);
    let handled = {
        let _irqs = IrqsOff::new();
        waitlist::wake_posted(pin.cpu())
    };
    // The bottom half may run at any interrupt's exit meanwhile; finish
    // the pass here in any case.
    while !waitlist::continue_pass(pin.cpu()) {}
    let due_listed = waitlist::is_listed(&due);
    let idle_listed = idle_waiters.iter().all(waitlist::is_listed);
    busy.unblock(pin.ndst());
    drop(pin);
    for waiter in idle_waiters.iter() {
        waitlist::dequeue(waiter);
    }
    waitlist::dequeue(&due);
    ensure!(notified.is_some_and(|n| n.nv == KERNEL_VECTOR));
    ensure!(handled.looked_at == waitlist::CHUNK);
    ensure!(handled.woken == 0);
    ensure!(!due_listed);
    ensure!(idle_listed);
    drop((idle_waiters, due, idle, busy));
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// A post that claims its notification only after the sleeping thread
/// took its request (the emulator sets PIR and ON in two steps) leaves ON
/// set with nothing posted.  The kernel vector clears that ON without
/// using up the waiter's wakeup, so the next post notifies again and wakes
/// it, once.
pub(crate) fn stale_notification_keeps_the_wakeup() -> Check {
    let base = stats::snapshot();
    let receiver = receiver()?;
    receiver.activate();
    let upid = receiver.upid();
    let waiter = alloc(Waiter::new(upid, Wake::Wait))?;
    let pin = CpuPin::new();
    ensure!(waitlist::enqueue(pin.cpu(), &waiter, false));
    receiver.block(pin.ndst());
    // The late second half of a post whose request was taken already.
    ensure!(upid
        .claim_notification()
        .is_some_and(|n| n.nv == KERNEL_VECTOR));
    let stale = kernel_vector(pin.cpu());
    let next = upid.post(5);
    let woken = kernel_vector(pin.cpu());
    receiver.unblock(pin.ndst());
    drop(pin);
    waitlist::dequeue(&waiter);
    ensure!(stale == 0);
    ensure!(next.is_some_and(|n| n.nv == KERNEL_VECTOR));
    ensure!(woken == 1);
    drop((waiter, receiver));
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// A kernel-vector interrupt on the waiter's CPU between its enqueue and
/// the redirect of its UPID (uintr_wait() has interrupts on there), with
/// ON still set by a notification of the user vector, does not use up the
/// waiter's wakeup: the post after the redirect wakes it, once.
pub(crate) fn early_kernel_vector_keeps_the_wakeup() -> Check {
    let base = stats::snapshot();
    let receiver = receiver()?;
    receiver.activate();
    let upid = receiver.upid();
    let waiter = alloc(Waiter::new(upid, Wake::Wait))?;
    let pin = CpuPin::new();
    ensure!(waitlist::enqueue(pin.cpu(), &waiter, false));
    // Posted and picked up while the thread ran: ON set, nothing posted.
    ensure!(upid.post(5).is_some_and(|n| n.nv != KERNEL_VECTOR));
    let early = kernel_vector(pin.cpu());
    upid.take_posted();
    receiver.block(pin.ndst());
    ensure!(upid.post(5).is_some_and(|n| n.nv == KERNEL_VECTOR));
    let woken = kernel_vector(pin.cpu());
    let again = kernel_vector(pin.cpu());
    receiver.unblock(pin.ndst());
    let after = kernel_vector(pin.cpu());
    drop(pin);
    waitlist::dequeue(&waiter);
    ensure!(early == 0);
    ensure!(woken == 1);
    ensure!(again == 0);
    ensure!(after == 0);
    drop((waiter, receiver));
    ensure!(stats::snapshot() == base);
    Ok(())
}

/// A file of `uintr_kunit.c` whose one wait queue the case wakes and frees.
struct QueueFile(FileRef);

impl QueueFile {
    fn new() -> core::result::Result<Self, &'static str> {
        // SAFETY: returns NULL or a new counted reference, which `FileRef`
        // then owns.
        let file = NonNull::new(unsafe { bindings::uintr_kunit_queue_file() }).ok_or("no file")?;
        // SAFETY: as just said.
        Ok(Self(unsafe { FileRef::from_raw(file) }))
    }

    /// Another counted reference to the file.
    fn reference(&self) -> FileRef {
        // SAFETY: we hold a reference, so the file is open; get_file()
        // returns it with one more, which the new `FileRef` owns.
        unsafe {
            let file = bindings::uintr_kunit_file_get(self.0.as_ptr());
            FileRef::from_raw(NonNull::new_unchecked(file))
        }
    }

    /// Wakes the queue with `events`.
    fn wake(&self, events: u32) {
        // SAFETY: the file is open and its queue not yet freed (`free`
        // takes `self`).
        unsafe { bindings::uintr_kunit_queue_wake(self.0.as_ptr(), events) };
    }

    /// Frees the queue, with POLLFREE; the file stays.
    fn free(self) -> FileRef {
        // SAFETY: the file is open and its queue is freed once, here.
        unsafe { bindings::uintr_kunit_queue_free(self.0.as_ptr()) };
        self.0
    }
}

/// A watched file's wakeups post the fd's vector, those without a
/// watched event do not, nor any while the vector is masked; a queue
/// freed before its file (POLLFREE) takes the watch's entry with it, and
/// the watch then ends without touching the freed queue (KASAN checks the
/// debug kernel).  Everything goes back.
pub(crate) fn watch_posts_masks_and_survives_pollfree() -> Check {
    const VECTOR: u8 = 3;
    let base = stats::snapshot();
    let receiver = receiver()?;
    let fd = alloc(UintrFd::new(&receiver, VECTOR))?;
    let queue = QueueFile::new()?;
    ensure!(fd.watch(queue.reference(), EPOLLIN).is_ok());
    ensure!(fd.watch(queue.reference(), EPOLLIN) == Err(EEXIST));
    ensure!(stats::snapshot().watches == base.watches + 1);
    let upid = receiver.upid();
    ensure!(upid.posted() == 0);
    queue.wake(EPOLLOUT);
    ensure!(upid.posted() == 0);
    queue.wake(EPOLLIN);
    ensure!(upid.take_posted() == 1 << VECTOR);
    fd.set_masked(true);
    queue.wake(EPOLLIN);
    ensure!(upid.posted() == 0);
    fd.set_masked(false);
    queue.wake(0);
    ensure!(upid.take_posted() == 1 << VECTOR);
    // POLLFREE comes with EPOLLHUP, which the watch does not name.
    let file = queue.free();
    ensure!(upid.posted() == 0);
    fd.release();
    ensure!(stats::snapshot().watches == base.watches);
    drop(file);
    receiver.shutdown();
    drop((fd, receiver));
    ensure!(stats::snapshot() == base);
    Ok(())
}
