// SPDX-License-Identifier: GPL-2.0

//! Blocked receivers: uintr_wait().
//!
//! A receiver that sleeps is current nowhere, so the notification vector
//! cannot find it.  As on the hardware, its UPID is pointed at the kernel
//! vector instead, at the CPU where it went to sleep, and a [`Waiter`] on
//! that CPU's wait list names it.  The kernel vector's handler walks the
//! list of its own CPU only and wakes the waiters whose UPID has something
//! posted: no global list, no global lock, no scan of other CPUs' waiters.
//!
//! No wakeup is lost: the thread marks itself asleep, enqueues, redirects
//! its UPID (clearing ON), and only then looks at the posted requests.  A
//! post before the redirect is seen by that look; a post after it finds ON
//! clear and notifies the kernel vector, whose handler finds the waiter
//! and wakes it (a wakeup after the mark makes the sleep return at once).

use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::list::{List, ListArc, ListLinks};
use kernel::new_spinlock;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, SpinLock};
use kernel::task::Task;
use kernel::types::ARef;

use crate::delivery::{self, Recognition};
use crate::errno;
use crate::glue::{self, CpuPin, IrqsOff};
use crate::receiver::Receiver;
use crate::thread::ThreadState;
use crate::upid::Upid;

/// One sleeping receiver on a CPU's wait list.
#[pin_data]
struct Waiter {
    #[pin]
    links: ListLinks,
    /// The sleeping thread.
    task: ARef<Task>,
    /// Its UPID, which the kernel vector's handler looks at.
    upid: Arc<Upid>,
}

kernel::list::impl_has_list_links! {
    impl HasListLinks<0> for Waiter { self.links }
}
kernel::list::impl_list_arc_safe! {
    impl ListArcSafe<0> for Waiter { untracked; }
}
kernel::list::impl_list_item! {
    impl ListItem<0> for Waiter { using ListLinks; }
}

/// The waiters of one CPU.
type WaitList = SpinLock<List<Waiter>>;

/// One wait list per possible CPU, allocated at boot and never freed.
struct WaitLists {
    lists: KVec<Pin<KBox<WaitList>>>,
}

/// The wait lists, once `init` ran (NULL before, or if it failed).
static WAIT_LISTS: AtomicPtr<WaitLists> = AtomicPtr::new(ptr::null_mut());

/// Allocates the wait lists; called once at boot.
pub(crate) fn init() -> Result {
    let cpus = glue::possible_cpus();
    let mut lists = KVec::with_capacity(cpus, GFP_KERNEL)?;
    for _ in 0..cpus {
        lists.push(
            KBox::pin_init(new_spinlock!(List::new(), "uintr_wait_list"), GFP_KERNEL)?,
            GFP_KERNEL,
        )?;
    }
    let all = KBox::new(WaitLists { lists }, GFP_KERNEL)?;
    // Leaked on purpose: the lists serve every later boot-time CPU for as
    // long as the kernel runs.
    WAIT_LISTS.store(KBox::into_raw(all), Ordering::Release);
    Ok(())
}

/// The wait list of `cpu`, if the lists exist.
fn wait_list(cpu: usize) -> Option<&'static WaitList> {
    let all = WAIT_LISTS.load(Ordering::Acquire);
    if all.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so stored by `init` from a leaked box: valid and
    // never written again for the rest of the kernel's life.
    let all: &'static WaitLists = unsafe { &*all };
    all.lists.get(cpu).map(|list| &**list)
}

/// The kernel vector arrived on `cpu`: wake its waiters that have
/// something posted.  Interrupts are disabled.
pub(crate) fn wake_posted(cpu: usize) {
    let Some(list) = wait_list(cpu) else {
        return;
    };
    let waiters = list.lock();
    for waiter in waiters.iter() {
        if waiter.upid.is_notified() || waiter.upid.has_posted() {
            waiter.task.wake_up();
        }
    }
}

/// Why a wait ended.
enum Wakeup {
    /// A request is pending, or a signal came.
    Interrupted,
    /// The deadline passed first.
    TimedOut,
}

/// Sleeps until a request is posted for `receiver`, a signal is pending
/// or the monotonic clock reaches `deadline_ns`.  Returns `EINTR` when the
/// handler is due (delivered on the way out), for a signal too, and
/// `ETIMEDOUT` when the deadline passed with nothing pending.
pub(crate) fn wait(
    thread: &ThreadState<'_>,
    receiver: ArcBorrow<'_, Receiver>,
    deadline_ns: Option<i64>,
) -> Result<usize> {
    let waiter = ListArc::pin_init(
        try_pin_init!(Waiter {
            links <- ListLinks::new(),
            task: ARef::from(&*current!()),
            upid: receiver.upid().clone(),
        }),
        GFP_KERNEL,
    )?;
    let entry = waiter.clone_arc();

    let list = {
        let pin = CpuPin::new();
        let list = wait_list(pin.cpu()).ok_or_else(errno::eopnotsupp)?;
        {
            let _irqs = IrqsOff::new();
            list.lock().push_back(waiter);
        }
        receiver.block(pin.ndst());
        list
    };

    let wakeup = sleep_until_pending(thread, &receiver, deadline_ns);

    // Running again: back to the user vector, on this CPU, then take what
    // was posted into UIRR.
    let pending = {
        let pin = CpuPin::new();
        receiver.unblock(pin.ndst());
        matches!(delivery::pick_up(thread), Recognition::Pending)
    };
    {
        let _irqs = IrqsOff::new();
        // SAFETY: `entry` was pushed on this list above and on no other
        // list: a waiter is only ever on the list of the CPU it slept on.
        drop(unsafe { list.lock().remove(&entry) });
    }

    if pending {
        glue::request_delivery();
        return Err(EINTR);
    }
    match wakeup {
        Wakeup::Interrupted => Err(EINTR),
        Wakeup::TimedOut => Err(errno::etimedout()),
    }
}

/// The sleep itself, once the waiter is enqueued and the UPID redirected.
/// The task is marked asleep before each look at the requests, so a
/// wakeup after the look makes the sleep return at once.  Returns with
/// the task running.
fn sleep_until_pending(
    thread: &ThreadState<'_>,
    receiver: &Receiver,
    deadline_ns: Option<i64>,
) -> Wakeup {
    loop {
        glue::set_interruptible();
        if receiver.upid().has_posted()
            || thread.uirr().load(Ordering::Acquire) != 0
            || current!().signal_pending()
        {
            glue::set_running();
            return Wakeup::Interrupted;
        }
        if !glue::sleep(deadline_ns) {
            return Wakeup::TimedOut;
        }
    }
}
