// SPDX-License-Identifier: GPL-2.0

//! The receiving side of the emulated CPU: recognition, context switches
//! and delivery.
//!
//! Recognition moves a UPID's posted requests into the thread's UIRR; it
//! happens when the notification vector reaches the receiver's CPU, and
//! when the receiver is switched in (posts that came while it was away).
//! Delivery pushes the hardware's frame on the user stack and enters the
//! handler; it happens on the way back to user mode when UIRR is not empty
//! and UIF is set.

use core::sync::atomic::Ordering;
use kernel::prelude::*;

use crate::frame;
use crate::regs::UserRegs;
use crate::thread::ThreadState;
use crate::uirr;
use crate::user;

/// What the notification handler found.
pub(crate) enum Recognition {
    /// The current thread is no receiver: a spurious notification.
    NotReceiver,
    /// Nothing is pending.
    Nothing,
    /// Requests are pending: deliver on the way to user mode.
    Pending,
}

/// Moves what was posted to the thread's UPID into its UIRR; tells
/// whether anything is pending now.
pub(crate) fn pick_up(thread: &ThreadState<'_>) -> Recognition {
    let Some(receiver) = thread.receiver() else {
        return Recognition::NotReceiver;
    };
    let posted = receiver.upid().take_posted();
    let uirr = thread.uirr().fetch_or(posted, Ordering::AcqRel) | posted;
    if uirr != 0 {
        Recognition::Pending
    } else {
        Recognition::Nothing
    }
}

/// The notification vector arrived while `thread` is current.  A thread
/// in uintr_wait() picks up its requests itself, after its sleep: taking
/// them here would clear ON under a wakeup on its way to the kernel
/// vector (this one can only be an older notification, still in flight).
pub(crate) fn recognize(thread: &ThreadState<'_>) -> Recognition {
    match thread.receiver() {
        Some(receiver) if receiver.is_waiting() => Recognition::Nothing,
        _ => pick_up(thread),
    }
}

/// The receiver leaves its CPU: posts must not notify it there, unless it
/// sleeps in uintr_wait(), where posts must notify the kernel vector.
pub(crate) fn switch_out(thread: &ThreadState<'_>) {
    if let Some(receiver) = thread.receiver() {
        if !receiver.is_waiting() {
            receiver.upid().suppress();
        }
    }
}

/// The receiver arrives on the CPU `ndst`; returns whether a delivery is
/// due.  A thread in uintr_wait() keeps its UPID as it is (see
/// `recognize`); it picks up its requests when the wait ends.
pub(crate) fn switch_in(thread: &ThreadState<'_>, ndst: u32) -> bool {
    let Some(receiver) = thread.receiver() else {
        return false;
    };
    if receiver.is_waiting() {
        return false;
    }
    receiver.upid().run_on(ndst);
    matches!(pick_up(thread), Recognition::Pending)
}

/// Delivers the highest pending vector if UIF allows: pushes the frame
/// (old RSP, RFLAGS, RIP, vector) below the stack adjustment, clears the
/// vector's UIRR bit and UIF, and enters the handler.  `EFAULT` if the
/// frame cannot be written: the task gets SIGSEGV, the request stays.
pub(crate) fn deliver(thread: &ThreadState<'_>, regs: &mut UserRegs<'_>) -> Result {
    let Some(receiver) = thread.receiver() else {
        return Ok(());
    };
    if !thread.uif() {
        return Ok(());
    }
    let Some(vector) = uirr::highest_pending(thread.uirr().load(Ordering::Acquire)) else {
        return Ok(());
    };
    let frame = frame::delivery_frame(
        regs.sp(),
        receiver.stack_adjust(),
        regs.flags(),
        regs.ip(),
        vector,
    );
    user::write_words(frame.new_rsp, &frame.words)?;
    thread
        .uirr()
        .fetch_and(uirr::clear_pending(u64::MAX, vector), Ordering::AcqRel);
    thread.set_uif(false);
    regs.set_sp(frame.new_rsp);
    regs.set_flags(frame.handler_rflags);
    regs.set_ip(receiver.handler());
    Ok(())
}
