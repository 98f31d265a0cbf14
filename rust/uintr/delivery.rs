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

use crate::cpu;
use crate::frame;
use crate::receiver::{Receiver, NOTIFICATION_VECTOR};
use crate::regs::UserRegs;
use crate::restart::{self, Fate};
use crate::thread::ThreadState;
use crate::trace::{self, SleepFate, Switch};
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
    /// Requests are pending and the handler can run (UIF set) for a
    /// receiver whose sleeps they interrupt: deliver, and interrupt the
    /// sleep the thread may be about to enter, as a signal would.
    PendingInterruptSleep,
}

impl Recognition {
    /// Whether a request is pending.
    pub(crate) fn is_pending(&self) -> bool {
        matches!(
            self,
            Recognition::Pending | Recognition::PendingInterruptSleep
        )
    }
}

/// Moves what was posted to the thread's UPID into its UIRR; tells
/// whether anything is pending now.
pub(crate) fn pick_up(thread: &ThreadState<'_>) -> Recognition {
    let Some(receiver) = thread.receiver() else {
        return Recognition::NotReceiver;
    };
    let posted = receiver.upid().take_posted();
    add_posted(thread, &receiver, posted)
}

/// The notification vector arrived for the running receiver: picks up
/// what was posted, as [`pick_up`], and traces it.
fn notified(thread: &ThreadState<'_>) -> Recognition {
    let Some(receiver) = thread.receiver() else {
        return Recognition::NotReceiver;
    };
    let posted = receiver.upid().take_posted();
    trace::notify(NOTIFICATION_VECTOR, &*receiver, posted);
    add_posted(thread, &receiver, posted)
}

/// Adds `posted` to the thread's UIRR; tells whether anything is pending
/// now.
fn add_posted(thread: &ThreadState<'_>, receiver: &Receiver, posted: u64) -> Recognition {
    let uirr = cpu::add_requests(thread, posted);
    if uirr == 0 {
        Recognition::Nothing
    } else if receiver.flags().interrupt_sleep && thread.uif() {
        Recognition::PendingInterruptSleep
    } else {
        Recognition::Pending
    }
}

/// The notification vector arrived while `thread` is current.  A thread
/// in uintr_wait() picks up its requests itself, after its sleep: taking
/// them here would clear ON under a wakeup on its way to the kernel
/// vector (this one can only be an older notification, still in flight).
/// On the hardware the CPU recognizes the vector itself while the
/// thread's registers are loaded; it reaches the kernel only in between
/// (the thread was just switched in): the requests are picked up on the
/// way to user mode, where the registers are loaded.
///
/// A notification that `interrupted_user` mode never ends a sleep: the
/// thread goes back to user mode, and to its handler, before it can sleep
/// again; a notify signal would only cost it a pass through
/// `get_signal()` per interrupt.
pub(crate) fn recognize(thread: &ThreadState<'_>, interrupted_user: bool) -> Recognition {
    let recognition = match thread.receiver() {
        Some(receiver) if receiver.is_waiting() => Recognition::Nothing,
        Some(receiver) if cpu::is_hardware() => posted_recognition(&receiver),
        _ => notified(thread),
    };
    match recognition {
        Recognition::PendingInterruptSleep if interrupted_user => Recognition::Pending,
        other => other,
    }
}

/// On the hardware: whether requests wait in the UPID, to be picked up on
/// the way to user mode.
fn posted_recognition(receiver: &Receiver) -> Recognition {
    if receiver.upid().has_posted() {
        Recognition::Pending
    } else {
        Recognition::Nothing
    }
}

/// The receiver leaves the CPU `cpu` (`ndst`), for an interruptible sleep
/// if `interruptible`.  Posts must not notify it there, except:
/// - in uintr_wait(), where they notify the kernel vector already;
/// - in an interruptible sleep with UIF set, if it asked for its sleeps
///   to be interrupted: then they notify the kernel vector (see
///   [`Receiver::arm`]).
///
/// [`Receiver::arm`]: crate::receiver::Receiver::arm
pub(crate) fn switch_out(thread: &ThreadState<'_>, cpu: usize, ndst: u32, interruptible: bool) {
    if let Some(table) = thread.sender() {
        table.table().leaves(cpu);
    }
    let Some(receiver) = thread.receiver() else {
        return;
    };
    if receiver.is_waiting() {
        return;
    }
    let armed = interruptible && receiver.flags().interrupt_sleep && {
        let state = cpu::leaving_state(thread);
        state.uif && receiver.arm(cpu, ndst, state.requests != 0)
    };
    if armed {
        trace::switch(Switch::Arm, &receiver, ndst);
    } else {
        receiver.upid().suppress();
        trace::switch(Switch::Suppress, &receiver, ndst);
    }
}

/// The receiver arrives on the CPU `ndst`; returns whether the
/// exit-to-user work must run for it ([`deliver`]).  A thread in
/// uintr_wait() keeps its UPID as it is (see `recognize`); it picks up
/// its requests when the wait ends.
///
/// On the hardware the answer is always yes: the thread's registers are
/// loaded on the way to user mode only, and if they stayed loaded on this
/// CPU (no XRSTORS), UINV is still the zero that XSAVES left when the
/// thread was switched out; `deliver` re-arms it and picks up what was
/// posted meanwhile.
pub(crate) fn switch_in(thread: &ThreadState<'_>, cpu: usize, ndst: u32) -> bool {
    if let Some(table) = thread.sender() {
        table.table().runs_on(cpu);
    }
    let Some(receiver) = thread.receiver() else {
        return false;
    };
    let hardware = cpu::is_hardware();
    if receiver.is_waiting() {
        return hardware;
    }
    if receiver.disarm(ndst) {
        trace::switch(Switch::Disarm, &receiver, ndst);
    } else {
        receiver.upid().run_on(ndst);
        trace::switch(Switch::Retarget, &receiver, ndst);
    }
    hardware || pick_up(thread).is_pending()
}

/// Delivers the highest pending vector if UIF allows: pushes the frame
/// (old RSP, RFLAGS, RIP, vector) below the stack adjustment, clears the
/// vector's UIRR bit and UIF, and enters the handler.  `EFAULT` if the
/// frame cannot be written: the task gets SIGSEGV, the request stays.
///
/// On the hardware, re-arms UINV (first: a notification from then on is
/// recognized by the CPU) and recognizes what was posted before; the CPU
/// delivers once in user mode.
pub(crate) fn deliver(thread: &ThreadState<'_>, regs: &mut UserRegs<'_>) -> Result {
    let Some(receiver) = thread.receiver() else {
        return Ok(());
    };
    if cpu::is_hardware() {
        cpu::rearm_notifications();
        pick_up(thread);
        return Ok(());
    }
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
    trace::deliver(vector, frame.new_rsp, receiver.handler());
    Ok(())
}

/// The thread returns from a system call that a signal-like wakeup ended
/// (before any delivery).  If the handler is about to run for a receiver
/// whose sleeps it interrupts, settles the call as a signal handler
/// would: fails it with EINTR or restarts it; returns whether it did (if
/// not, the kernel's default restart applies).
pub(crate) fn settle_interrupted_syscall(
    thread: &ThreadState<'_>,
    regs: &mut UserRegs<'_>,
) -> bool {
    let Some(receiver) = thread.receiver() else {
        return false;
    };
    let flags = receiver.flags();
    if !flags.interrupt_sleep {
        return false;
    }
    let state = cpu::own_state(thread, &receiver);
    if !state.uif || state.requests == 0 {
        return false;
    }
    // The return value is a negative errno or a result: the cast
    // reinterprets the register.
    let ret = regs.ax() as i64;
    let traced = match restart::fate(ret, flags.restart) {
        Fate::Eintr => {
            regs.set_ax(EINTR.to_errno() as i64 as u64);
            SleepFate::Eintr
        }
        Fate::Restart => {
            // Enter the call again: its number, and back over SYSCALL.
            regs.set_ax(regs.orig_ax());
            regs.set_ip(regs.ip().wrapping_sub(SYSCALL_INSN_LEN));
            SleepFate::Restart
        }
        Fate::Keep => SleepFate::Keep,
    };
    trace::sleep_interrupted(regs.orig_ax(), ret, traced);
    true
}

/// The length of the SYSCALL instruction (0f 05).
const SYSCALL_INSN_LEN: u64 = 2;
