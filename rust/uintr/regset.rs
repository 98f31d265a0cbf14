// SPDX-License-Identifier: GPL-2.0

//! NT_X86_UINTR: a thread's User Interrupts state, as ptrace
//! (PTRACE_GETREGSET) and core dumps show it, read-only.
//!
//! The receiver gives the handler, the stack adjustment and what is posted
//! to its UPID; the registers (emulated, or the CPU's saved state) give
//! UIRR and UIF.  Nothing here changes the thread.

use kernel::bindings;
use kernel::prelude::*;

use crate::cpu;
use crate::mode::{self, Mode};
use crate::thread::ThreadState;

/// The state of `thread`, which does not run meanwhile (see
/// [`cpu::resting_state`]); `is_current` if it is the calling thread.
/// `ENODEV` when User Interrupts are off on this boot.
pub(crate) fn read(thread: &ThreadState<'_>, is_current: bool) -> Result<bindings::uintr_regset> {
    if mode::current() == Mode::Off {
        return Err(ENODEV);
    }
    let mut out = bindings::uintr_regset::default();
    if cpu::is_hardware() {
        out.flags |= bindings::UINTR_REGSET_HARDWARE;
    }
    if thread.sender().is_some() {
        out.flags |= bindings::UINTR_REGSET_SENDER;
    }
    if let Some(receiver) = thread.receiver() {
        out.flags |= bindings::UINTR_REGSET_RECEIVER;
        out.handler = receiver.handler();
        out.stack_adjust = receiver.stack_adjust();
        out.posted = receiver.upid().posted();
        let state = cpu::resting_state(thread, is_current);
        out.uif = u32::from(state.uif);
        out.uirr = state.requests;
    }
    Ok(out)
}
