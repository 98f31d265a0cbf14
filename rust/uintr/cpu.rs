// SPDX-License-Identifier: GPL-2.0

//! The calling thread's user interrupt registers, wherever this boot keeps
//! them: the emulated CPU's register file (`thread.uintr`, next to the
//! receiver and sender) or, on UINTR hardware, the CPU's MSRs, which the
//! XSAVE state saves and restores with the thread.
//!
//! Registration programs them, teardown clears them, and recognition done
//! in software (after uintr_wait(), after a context switch) adds to UIRR,
//! the same way in both modes.  The emulator and the delivery of the
//! emulated CPU use the register file directly; on the hardware the CPU
//! itself executes the instructions, recognizes notifications and
//! delivers.
//!
//! Every function acts on the current thread, in process context.

use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::glue;
use crate::hwregs::{self, MsrWrite};
use crate::mode::{self, Mode};
use crate::receiver::{Receiver, NOTIFICATION_VECTOR};
use crate::sender::Sender;
use crate::shared::{ProcessTable, SenderUse};
use crate::thread::ThreadState;

/// Whether the CPU runs User Interrupts on this boot (else the emulator).
pub(crate) fn is_hardware() -> bool {
    mode::current() == Mode::Hardware
}

/// Applies `writes` to the MSRs, in order.
fn program(writes: &[MsrWrite]) {
    for write in writes {
        glue::update_msr(*write);
    }
}

/// The calling thread is to be `receiver`'s thread: on the hardware, its
/// MSRs name the handler, the stack adjustment, the UPID and UINV.
pub(crate) fn load_receiver(receiver: &Receiver) -> Result {
    if !is_hardware() {
        return Ok(());
    }
    let writes = hwregs::load_receiver(
        receiver.handler(),
        receiver.stack_adjust(),
        receiver.upid().address(),
        NOTIFICATION_VECTOR,
    )
    .map_err(refuse)?;
    program(&writes);
    Ok(())
}

/// The calling receiver's stack adjustment changes (uintr_alt_stack()):
/// on the hardware, in the MSR; the emulated CPU reads the receiver's at
/// each delivery.
pub(crate) fn set_stack_adjust(stack_adjust: u64) -> Result {
    if is_hardware() {
        program(&[hwregs::set_stack_adjust(stack_adjust).map_err(refuse)?]);
    }
    Ok(())
}

/// The calling thread stops being a receiver: the CPU no longer
/// recognizes or delivers anything for it, and UIRR is empty.  Done
/// before the receiver (and maybe its UPID) goes.
pub(crate) fn unload_receiver(thread: &ThreadState<'_>) {
    if is_hardware() {
        program(&hwregs::unload_receiver());
    }
    thread.uirr().store(0, Ordering::Relaxed);
}

/// The calling thread is to be `sender`'s thread: on the hardware,
/// SENDUIPI reads its UITT from now on.
pub(crate) fn load_sender(sender: &Sender) -> Result {
    if !is_hardware() {
        return Ok(());
    }
    // The whole capacity: the table grows in place, so UITTSZ never has
    // to change while the thread uses it.  The capacity fits UITTSZ's 32
    // bits (the sysctl's maximum is 2^20).
    let entries = u32::try_from(sender.capacity()).map_err(|_| EINVAL)?;
    let writes = hwregs::load_sender(sender.uitt_address(), entries).map_err(refuse)?;
    program(&writes);
    Ok(())
}

/// Makes the calling thread, which uses no table, use `table`: on the
/// hardware, SENDUIPI reads it from now on.
pub(crate) fn join_table(thread: &ThreadState<'_>, table: Arc<SenderUse>) -> Result {
    load_sender(table.table())?;
    let sender = table.table().clone();
    thread.set_sender(table);
    // From here on the context switch keeps the table's CPUs; this one
    // is added now, before the thread returns to user mode and sends.
    let here = glue::CpuPin::new();
    sender.runs_on(here.cpu());
    Ok(())
}

/// A thread that uses no table joins its process's shared table, if
/// there is one, when it needs a table first (its first SENDUIPI, or an
/// unregistration); returns whether it did.
pub(crate) fn join_process_table(thread: &ThreadState<'_>) -> bool {
    let Some(process) = ProcessTable::of_current(thread) else {
        return false;
    };
    let Some(table) = process.get() else {
        return false;
    };
    join_table(thread, table.into()).is_ok()
}

/// The calling thread stops being a sender: SENDUIPI is a #UD again.
/// Done before its UITT goes.
pub(crate) fn unload_sender() {
    if is_hardware() {
        program(&hwregs::unload_sender());
    }
}

/// On the hardware, makes sure the CPU recognizes the calling receiver's
/// notifications again: XSAVES cleared UINV when the thread was switched
/// out or forked, and no XRSTORS may have set it since (see
/// [`hwregs::arm_notifications`]).  Costs one RDMSR when UINV is intact.
pub(crate) fn rearm_notifications() {
    if is_hardware() {
        program(&[hwregs::arm_notifications(NOTIFICATION_VECTOR)]);
    }
}

/// What the kernel needs to know of a receiver's registers to decide for
/// it: whether its handler may run (UIF) and what is pending for it.
pub(crate) struct UserState {
    /// User interrupts are enabled.
    pub(crate) uif: bool,
    /// Requests to deliver: UIRR, and on the hardware also those still
    /// posted in the UPID (the exit-to-user work moves them to UIRR).
    pub(crate) requests: u64,
}

/// The state of a receiver that the context switch takes off its CPU:
/// on the hardware, as its saved XSAVE state holds it (the switch has
/// just saved the registers, or they were saved already).
pub(crate) fn leaving_state(thread: &ThreadState<'_>) -> UserState {
    resting_state(thread, false)
}

/// The state of the calling thread, `receiver`'s, in process context.
/// On the hardware its registers are saved first to read them, which
/// clears UINV: the exit-to-user work is asked to re-arm it.
pub(crate) fn own_state(thread: &ThreadState<'_>, receiver: &Receiver) -> UserState {
    let mut state = resting_state(thread, true);
    if is_hardware() {
        state.requests |= receiver.upid().posted();
    }
    state
}

/// UIF and UIRR (as `requests`) of a thread that does not run while the
/// caller looks: being switched out, stopped for ptrace, waiting for its
/// process's core dump, or (with `is_current`) the calling thread.  On
/// the hardware its saved XSAVE state holds them; the calling thread's
/// registers are saved first, which clears UINV, so its exit-to-user work
/// re-arms it.
pub(crate) fn resting_state(thread: &ThreadState<'_>, is_current: bool) -> UserState {
    if is_hardware() {
        let (uif, uirr) = thread.saved_user_state(is_current);
        if is_current {
            glue::request_delivery();
        }
        return UserState {
            uif,
            requests: uirr,
        };
    }
    UserState {
        uif: thread.uif(),
        requests: thread.uirr().load(Ordering::Acquire),
    }
}

/// Adds `requests` to the calling thread's UIRR; returns the new UIRR.
pub(crate) fn add_requests(thread: &ThreadState<'_>, requests: u64) -> u64 {
    if is_hardware() {
        return glue::update_msr(hwregs::add_requests(requests));
    }
    thread.uirr().fetch_or(requests, Ordering::AcqRel) | requests
}

/// Takes the calling thread's pending requests, `receiver`'s: clears
/// them in UIRR and in the UPID (as recognition would) and returns them.
/// A request that arrives meanwhile is either taken or stays pending.
pub(crate) fn take_requests(thread: &ThreadState<'_>, receiver: &Receiver) -> u64 {
    let posted = receiver.upid().take_posted();
    if is_hardware() {
        let uirr = glue::update_msr(hwregs::read_requests());
        glue::update_msr(hwregs::clear_requests(uirr));
        return uirr | posted;
    }
    thread.uirr().swap(0, Ordering::AcqRel) | posted
}

/// The calling thread's UIRR.
pub(crate) fn requests(thread: &ThreadState<'_>) -> u64 {
    if is_hardware() {
        return glue::update_msr(hwregs::read_requests());
    }
    thread.uirr().load(Ordering::Acquire)
}

/// Registers that cannot be programmed: `EINVAL`, with a warning, as the
/// types guarantee the alignment and the adjustment (a kernel bug).
fn refuse(invalid: hwregs::Invalid) -> Error {
    pr_warn!("cannot program the UINTR MSRs: {:?}\n", invalid);
    EINVAL
}
