// SPDX-License-Identifier: GPL-2.0

//! uintr_wait(): a receiver sleeps until a user interrupt is pending.
//!
//! The thread puts a [`Waiter`] on its CPU's wait list (see [`waitlist`])
//! and points its UPID at the kernel vector there.  No wakeup is lost: the
//! thread enqueues, redirects its UPID (clearing ON), marks itself asleep,
//! and only then looks at the posted requests.  A post before the redirect
//! is seen by that look; a post after it finds ON clear and notifies the
//! kernel vector, whose handler finds the waiter and wakes it (a wakeup
//! after the mark makes the sleep return at once).  That handler may also
//! run between the enqueue and the redirect, for another waiter: it
//! leaves this one alone until its UPID names the kernel vector (see
//! [`waitlist`]), so the wakeup is kept for the post that needs it.

use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

use crate::cpu;
use crate::delivery;
use crate::errno;
use crate::glue::{self, CpuPin};
use crate::receiver::Receiver;
use crate::thread::ThreadState;
use crate::trace::{self, WaitEnd};
use crate::waitlist::{self, Waiter};

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
    trace::wait_begin(deadline_ns.unwrap_or(-1));
    let waiter = receiver.take_wait_entry()?;
    {
        let pin = CpuPin::new();
        if !waitlist::enqueue(pin.cpu(), &waiter, false) {
            return Err(errno::eopnotsupp());
        }
        receiver.block(pin.ndst());
    }

    let wakeup = sleep_until_pending(thread, &receiver, &waiter, deadline_ns);

    // Running again: back to the user vector, on this CPU, then take what
    // was posted into UIRR.
    let pending = {
        let pin = CpuPin::new();
        receiver.unblock(pin.ndst());
        delivery::pick_up(thread).is_pending()
    };
    waitlist::dequeue(&waiter);
    receiver.return_wait_entry(waiter);

    if pending {
        trace::wait_end(WaitEnd::Interrupt);
        glue::request_delivery();
        return Err(EINTR);
    }
    match wakeup {
        Wakeup::Interrupted => {
            trace::wait_end(WaitEnd::Signal);
            Err(EINTR)
        }
        Wakeup::TimedOut => {
            trace::wait_end(WaitEnd::Timeout);
            Err(errno::etimedout())
        }
    }
}

/// The sleep itself, once the waiter is enqueued and the UPID redirected.
/// The task is marked asleep before each look at the requests, so a
/// wakeup after the look makes the sleep return at once.  If the CPU it
/// is listed on went offline ([`waitlist::wake_all`]), it lists itself
/// again where it runs now before it looks.  Returns with the task
/// running.
fn sleep_until_pending(
    thread: &ThreadState<'_>,
    receiver: &Receiver,
    waiter: &Arc<Waiter>,
    deadline_ns: Option<i64>,
) -> Wakeup {
    loop {
        glue::set_interruptible();
        if waiter.was_swept() {
            glue::set_running();
            if !list_here(receiver, waiter) {
                return Wakeup::Interrupted;
            }
            continue;
        }
        if is_pending(thread, receiver) || current!().signal_pending() {
            glue::set_running();
            return Wakeup::Interrupted;
        }
        if !glue::sleep(deadline_ns) {
            return Wakeup::TimedOut;
        }
    }
}

/// Lists `waiter` on the CPU the thread runs on and points the UPID at
/// the kernel vector there; false if it cannot be listed (no wait lists).
fn list_here(receiver: &Receiver, waiter: &Arc<Waiter>) -> bool {
    waitlist::dequeue(waiter);
    let pin = CpuPin::new();
    if !waitlist::enqueue(pin.cpu(), waiter, false) {
        return false;
    }
    receiver.block(pin.ndst());
    true
}

/// Whether a request is posted to the receiver's UPID or recognized in
/// its UIRR.
fn is_pending(thread: &ThreadState<'_>, receiver: &Receiver) -> bool {
    receiver.upid().has_posted() || cpu::requests(thread) != 0
}
