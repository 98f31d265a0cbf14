// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers of the helpers the C glue provides to this crate
//! (`arch/x86/kernel/uintr.c`): CPU identity in UPID format, notification
//! IPIs, instruction fetch, the user address limit.

use kernel::bindings;

use crate::decode::MAX_INSN_LEN;
use crate::regs::UserRegs;

/// The end of the user address space (exclusive).
pub(crate) fn user_address_limit() -> u64 {
    // SAFETY: a plain C function without preconditions.
    unsafe { bindings::uintr_user_address_limit() as u64 }
}

/// Sends notification vector `nv` to the CPU named by `ndst`.
pub(crate) fn send_notification(ndst: u32, nv: u8) {
    // SAFETY: a plain C function; unknown APIC IDs are ignored.
    unsafe { bindings::uintr_send_notification(ndst, nv) };
}

/// Keeps the caller on its CPU while it lives.
pub(crate) struct CpuPin {
    ndst: u32,
}

impl CpuPin {
    /// Disables preemption.
    pub(crate) fn new() -> Self {
        // SAFETY: paired with `uintr_cpu_unpin` in `drop`.
        let ndst = unsafe { bindings::uintr_cpu_pin() };
        CpuPin { ndst }
    }

    /// This CPU, in the format of UPID.NDST.
    pub(crate) fn ndst(&self) -> u32 {
        self.ndst
    }
}

impl Drop for CpuPin {
    fn drop(&mut self) {
        // SAFETY: `new` disabled preemption once; this enables it once.
        unsafe { bindings::uintr_cpu_unpin() };
    }
}

/// Reads the instruction bytes at the user RIP; returns how many were
/// readable (0 if none).
pub(crate) fn fetch_instruction(regs: &UserRegs<'_>, buf: &mut [u8; MAX_INSN_LEN]) -> usize {
    // SAFETY: `regs` are the user registers of the current task and `buf`
    // has room for MAX_INSN_SIZE (15) bytes, as the helper requires.
    let n = unsafe { bindings::uintr_fetch_insn(regs.as_raw(), buf.as_mut_ptr()) };
    usize::try_from(n).unwrap_or(0).min(MAX_INSN_LEN)
}
