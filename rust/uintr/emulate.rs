// SPDX-License-Identifier: GPL-2.0

//! The #UD emulator: executes UIRET, TESTUI, CLUI, STUI and SENDUIPI as
//! the CPU would, when the boot runs User Interrupts in emulation.
//!
//! As on a CPU with CR4.UINTR set, UIRET, TESTUI, CLUI and STUI work in
//! every thread (UIF starts at 0); SENDUIPI needs a UITT (a thread that
//! connected as a sender), else it stays a #UD (SIGILL) -- unless the
//! process shares a table, which the thread then joins.  On UINTR
//! hardware only that join is done here (the CPU raises the #UD while
//! the thread's UITT is not enabled): SENDUIPI is then executed again.  SENDUIPI with
//! an index beyond the table or an invalid entry faults as the hardware's
//! #GP does (SIGSEGV), and so do UIRET with a bad stack or a return
//! address outside user space.  Anything that is not one of the five
//! stays a #UD.

use core::sync::atomic::Ordering;
use kernel::bindings;

use crate::cpu;
use crate::decode::{self, DecodeError, Insn, MAX_INSN_LEN};
use crate::frame;
use crate::glue::{self, CpuPin};
use crate::mode::{self, Mode};
use crate::regs::UserRegs;
use crate::thread::ThreadState;
use crate::trace;
use crate::user;

/// The emulator's verdict (C's `enum uintr_emulation`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub(crate) enum Outcome {
    /// Not executed: the #UD stands (SIGILL).
    NotHandled = bindings::uintr_emulation_UINTR_EMU_NONE,
    /// Executed.
    Done = bindings::uintr_emulation_UINTR_EMU_DONE,
    /// Executed; a user interrupt may be delivered now.
    Deliver = bindings::uintr_emulation_UINTR_EMU_DELIVER,
    /// Faulted as the hardware would (SIGSEGV).
    Fault = bindings::uintr_emulation_UINTR_EMU_FAULT,
    /// Not executed; the CPU executes it when the thread returns to it.
    Retry = bindings::uintr_emulation_UINTR_EMU_RETRY,
}

/// Emulates the instruction at the user RIP of the current thread.
pub(crate) fn emulate(thread: &ThreadState<'_>, regs: &mut UserRegs<'_>) -> Outcome {
    let hardware = match mode::current() {
        Mode::Off => return Outcome::NotHandled,
        Mode::Emulated => false,
        Mode::Hardware => true,
    };
    let mut bytes = [0u8; MAX_INSN_LEN];
    let fetched = glue::fetch_instruction(regs, &mut bytes);
    let decoded = match decode::decode(&bytes[..fetched]) {
        Ok(decoded) if hardware => return join_for_senduipi(thread, decoded.insn),
        Ok(decoded) => decoded,
        // The CPU fetched it whole before the #UD; now part of it is gone.
        Err(DecodeError::Truncated) if !hardware => return Outcome::Fault,
        Err(_) => return Outcome::NotHandled,
    };
    // At most 15: the conversion is exact.
    let next_ip = regs.ip().wrapping_add(decoded.len as u64);
    let outcome = match decoded.insn {
        Insn::Clui => {
            thread.set_uif(false);
            Outcome::Done
        }
        Insn::Stui => {
            thread.set_uif(true);
            delivery_due(thread)
        }
        Insn::Testui => {
            regs.set_flags(frame::testui_flags(regs.flags(), thread.uif()));
            Outcome::Done
        }
        Insn::Senduipi { reg } => return senduipi(thread, regs, reg, next_ip),
        Insn::Uiret => return uiret(thread, regs),
    };
    regs.set_ip(next_ip);
    outcome
}

/// UIF is set: deliver if anything is pending.
fn delivery_due(thread: &ThreadState<'_>) -> Outcome {
    if thread.uirr().load(Ordering::Acquire) != 0 {
        Outcome::Deliver
    } else {
        Outcome::Done
    }
}

/// On UINTR hardware: a SENDUIPI of a thread without a table that can
/// join its process's shared table is executed again once it did.
fn join_for_senduipi(thread: &ThreadState<'_>, insn: Insn) -> Outcome {
    match insn {
        Insn::Senduipi { .. } if thread.sender().is_none() && cpu::join_process_table(thread) => {
            Outcome::Retry
        }
        _ => Outcome::NotHandled,
    }
}

/// SENDUIPI reg: post through the UITT entry the register selects.
fn senduipi(thread: &ThreadState<'_>, regs: &mut UserRegs<'_>, reg: u8, next_ip: u64) -> Outcome {
    if thread.sender().is_none() && !cpu::join_process_table(thread) {
        return Outcome::NotHandled;
    }
    let Some(table) = thread.sender() else {
        return Outcome::NotHandled;
    };
    // One step, as the instruction is: a sender preempted between the
    // post and its notification would hold the notification back for as
    // long as it waits for a CPU, and every post meanwhile finds ON set
    // and sends none (a receiver asleep in uintr_wait() sleeps on).  The
    // table's lock is a raw spinlock, which PREEMPT_RT allows here.
    let _no_preemption = CpuPin::new();
    match table.table().send(regs.gpr(reg)) {
        Ok(notification) => {
            if let Some(n) = notification {
                glue::send_notification(n.ndst, n.nv);
            }
            regs.set_ip(next_ip);
            Outcome::Done
        }
        Err(_) => Outcome::Fault,
    }
}

/// UIRET: pop RIP, RFLAGS (the architectural subset) and RSP; set UIF.
fn uiret(thread: &ThreadState<'_>, regs: &mut UserRegs<'_>) -> Outcome {
    let mut popped = [0u64; frame::UIRET_FRAME_WORDS];
    if user::read_words(regs.sp(), &mut popped).is_err() {
        return Outcome::Fault;
    }
    let [rip, rflags, rsp] = popped;
    let limit = glue::user_address_limit();
    if !frame::is_canonical(rsp, frame::linear_address_bits(limit)) || rip >= limit {
        return Outcome::Fault;
    }
    let state = frame::uiret(rip, rflags, rsp, regs.flags());
    regs.set_ip(state.rip);
    regs.set_flags(state.rflags);
    regs.set_sp(state.rsp);
    thread.set_uif(true);
    let outcome = delivery_due(thread);
    trace::uiret(state.rip, state.rsp, outcome == Outcome::Deliver);
    outcome
}
