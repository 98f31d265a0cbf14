// SPDX-License-Identifier: GPL-2.0

//! The user-mode registers of the current task (`struct pt_regs`).

use core::marker::PhantomData;
use kernel::bindings;

// `unsigned long` is `usize` in the bindings; on x86-64 it is 64 bits wide,
// so the conversions below are exact.

/// A register as the emulated CPU sees it.
fn word(value: usize) -> u64 {
    value as u64
}

/// A register value as `struct pt_regs` stores it.
fn unsigned_long(value: u64) -> usize {
    value as usize
}

/// The saved user registers of the current task, for the duration of a
/// trap or of the exit to user mode.
pub(crate) struct UserRegs<'a> {
    raw: *mut bindings::pt_regs,
    _regs: PhantomData<&'a mut bindings::pt_regs>,
}

impl<'a> UserRegs<'a> {
    /// Wraps the registers of the current task.
    ///
    /// # Safety
    ///
    /// `raw` points to the current task's saved user-mode registers, valid
    /// and used by nothing else for `'a`.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::pt_regs) -> Self {
        UserRegs {
            raw,
            _regs: PhantomData,
        }
    }

    /// The raw pointer, for C helpers.
    pub(crate) fn as_raw(&self) -> *mut bindings::pt_regs {
        self.raw
    }

    fn get(&self) -> &bindings::pt_regs {
        // SAFETY: valid and unshared for `'a` (see `from_raw`).
        unsafe { &*self.raw }
    }

    fn get_mut(&mut self) -> &mut bindings::pt_regs {
        // SAFETY: valid and unshared for `'a` (see `from_raw`).
        unsafe { &mut *self.raw }
    }

    /// RIP.
    pub(crate) fn ip(&self) -> u64 {
        word(self.get().ip)
    }

    /// Sets RIP.
    pub(crate) fn set_ip(&mut self, ip: u64) {
        self.get_mut().ip = unsigned_long(ip);
    }

    /// RSP.
    pub(crate) fn sp(&self) -> u64 {
        word(self.get().sp)
    }

    /// Sets RSP.
    pub(crate) fn set_sp(&mut self, sp: u64) {
        self.get_mut().sp = unsigned_long(sp);
    }

    /// RFLAGS.
    pub(crate) fn flags(&self) -> u64 {
        word(self.get().flags)
    }

    /// Sets RFLAGS.
    pub(crate) fn set_flags(&mut self, flags: u64) {
        self.get_mut().flags = unsigned_long(flags);
    }

    /// RAX: a system call's return value on the way out.
    pub(crate) fn ax(&self) -> u64 {
        word(self.get().ax)
    }

    /// Sets RAX.
    pub(crate) fn set_ax(&mut self, ax: u64) {
        self.get_mut().ax = unsigned_long(ax);
    }

    /// The system call number the task entered with (`orig_ax`).
    pub(crate) fn orig_ax(&self) -> u64 {
        word(self.get().orig_ax)
    }

    /// General-purpose register `n` in encoding order (RAX = 0 .. R15 = 15).
    pub(crate) fn gpr(&self, n: u8) -> u64 {
        let r = self.get();
        word(match n & 15 {
            0 => r.ax,
            1 => r.cx,
            2 => r.dx,
            3 => r.bx,
            4 => r.sp,
            5 => r.bp,
            6 => r.si,
            7 => r.di,
            8 => r.r8,
            9 => r.r9,
            10 => r.r10,
            11 => r.r11,
            12 => r.r12,
            13 => r.r13,
            14 => r.r14,
            _ => r.r15,
        })
    }
}
