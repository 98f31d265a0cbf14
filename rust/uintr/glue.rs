// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers of the C this crate calls: the helpers the C glue provides
//! (`arch/x86/kernel/uintr.c`: CPU identity in UPID format, notification
//! IPIs, the user address limit, the UINTR MSRs of the hardware backend),
//! the x86 instruction fetch, and the few scheduler and interrupt
//! primitives the sleep of uintr_wait() needs (Rust helpers in
//! `rust/helpers/`).

use kernel::bindings;
use kernel::task::Task;

use crate::decode::MAX_INSN_LEN;
use crate::hwregs::MsrWrite;
use crate::regs::UserRegs;

/// The end of the user address space (exclusive).
pub(crate) fn user_address_limit() -> u64 {
    // SAFETY: a plain C function without preconditions.
    unsafe { bindings::uintr_user_address_limit() as u64 }
}

/// Whether `task` is exiting: `do_exit()` sets `PF_EXITING` first, before
/// the task's mm goes (which wakes a thread that joins it).
pub(crate) fn task_is_exiting(task: &Task) -> bool {
    let raw: *const Task = task;
    let raw: *const bindings::task_struct = raw.cast();
    // The flags word is read once, as `READ_ONCE()` would: a concurrent
    // change by the task itself gives the old or the new value, either an
    // answer.
    // SAFETY: `Task` wraps a `task_struct` that the reference keeps alive.
    let flags = unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*raw).flags)) };
    flags & bindings::PF_EXITING != 0
}

/// Sends notification vector `nv` to the CPU named by `ndst`.
pub(crate) fn send_notification(ndst: u32, nv: u8) {
    // SAFETY: a plain C function; unknown APIC IDs are ignored.
    unsafe { bindings::uintr_send_notification(ndst, nv) };
}

/// Queues the bottom half that goes on with the kernel vector's pass over
/// the wait list of `cpu`, the calling CPU; any context.
pub(crate) fn defer_wake_pass(cpu: usize) {
    // SAFETY: a plain C function, any context, for the calling CPU; a CPU
    // number fits in c_uint.
    unsafe { bindings::uintr_defer_wake_pass(cpu as core::ffi::c_uint) };
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

    /// This CPU's number.
    pub(crate) fn cpu(&self) -> usize {
        // SAFETY: preemption is disabled while `self` lives, so the CPU
        // number stays true.
        unsafe { bindings::smp_processor_id() as usize }
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
    // insn_fetch_from_user() requires room for MAX_INSN_SIZE (15) bytes.
    // SAFETY: `regs` are the current task's user registers; `buf` has 15.
    let n = unsafe { bindings::insn_fetch_from_user(regs.as_raw(), buf.as_mut_ptr()) };
    usize::try_from(n).unwrap_or(0).min(MAX_INSN_LEN)
}

/// Interrupts disabled on this CPU while it lives: a lock that the kernel
/// vector's handler also takes is held only under one of these (or in that
/// handler), so the handler never spins on a lock its own CPU holds.
pub(crate) struct IrqsOff {
    flags: usize,
}

impl IrqsOff {
    /// Disables interrupts, remembering whether they were enabled.
    pub(crate) fn new() -> Self {
        // SAFETY: paired with `local_irq_restore` in `drop`.
        let flags = unsafe { bindings::local_irq_save() };
        IrqsOff { flags }
    }
}

impl Drop for IrqsOff {
    fn drop(&mut self) {
        // SAFETY: restores what `new` saved, on the same CPU: interrupts
        // off means no migration in between.
        unsafe { bindings::local_irq_restore(self.flags) };
    }
}

/// The number of possible CPUs (CPU numbers are below it).
pub(crate) fn possible_cpus() -> usize {
    // SAFETY: `nr_cpu_ids` is fixed before any initcall runs and never
    // written afterwards; reading a `u32` cannot tear.
    unsafe { bindings::nr_cpu_ids as usize }
}

/// The monotonic clock, in nanoseconds.
pub(crate) fn now_ns() -> i64 {
    // SAFETY: a plain C function without preconditions.
    unsafe { bindings::ktime_get() }
}

/// Makes the current task deliver on its way back to user mode (sets
/// TIF_UINTR).
pub(crate) fn request_delivery() {
    // SAFETY: a plain C function acting on the current task.
    unsafe { bindings::uintr_request_delivery() };
}

/// Marks the current task as about to sleep interruptibly (with a full
/// barrier): a wakeup from here on makes the next `sleep` return at once.
pub(crate) fn set_interruptible() {
    // SAFETY: sets the state of the current task only.
    unsafe { bindings::set_current_state(bindings::TASK_INTERRUPTIBLE) };
}

/// Marks the current task as running again.
pub(crate) fn set_running() {
    // SAFETY: sets the state of the current task only.
    unsafe { bindings::__set_current_state(bindings::TASK_RUNNING) };
}

/// Sleeps (after `set_interruptible`) until woken, or until the monotonic
/// clock reaches `deadline_ns` if given; returns false if the deadline
/// passed.  The task is running again afterwards.
pub(crate) fn sleep(deadline_ns: Option<i64>) -> bool {
    let Some(deadline) = deadline_ns else {
        // SAFETY: called in process context, where sleeping is allowed
        // (the syscall path; no locks are held).
        unsafe { bindings::schedule() };
        set_running();
        return true;
    };
    let mut expires: bindings::ktime_t = deadline;
    // SAFETY: as above; `expires` lives across the call.
    let ret = unsafe {
        bindings::schedule_hrtimeout(&mut expires, bindings::hrtimer_mode_HRTIMER_MODE_ABS)
    };
    ret != 0
}

/// Hardware mode: applies `write` to the current thread's UINTR MSR
/// (loading the thread's registers first); returns the new value.
pub(crate) fn update_msr(write: MsrWrite) -> u64 {
    // SAFETY: acts on the current thread in process context; the helper
    // accepts only the six UINTR MSRs and only with UINTR enabled.
    unsafe { bindings::uintr_hw_update_msr(write.msr, write.clear, write.set) }
}
