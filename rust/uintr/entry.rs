// SPDX-License-Identifier: GPL-2.0

//! Entry points called from the C glue (`arch/x86/kernel/uintr.c`).
//!
//! Each function is a trampoline: it turns the C arguments into Rust types,
//! calls safe code and maps the result to what C expects (a value or a
//! negative errno).  The prototypes are in `arch/x86/include/asm/uintr.h`.

use kernel::bindings;
use kernel::ffi::{c_char, c_int, c_long, c_uint, c_void};
use kernel::prelude::*;
use kernel::str::CStr;

use crate::area;
use crate::delivery::{self, Recognition};
use crate::emulate;
use crate::mode::{self, Request};
use crate::regs::UserRegs;
use crate::regset;
use crate::shared::ProcessTable;
use crate::stats;
use crate::syscalls;
use crate::thread::ThreadState;
use crate::upid;
use crate::upid_pool;
use crate::waitlist;

/// A syscall result as the C entry returns it.
fn syscall_return(result: Result<usize>) -> c_long {
    match result {
        // Values are fds or UITT indexes: small, the conversion is exact.
        Ok(value) => value as c_long,
        // An errno is a small negative number: the conversion is exact.
        Err(err) => err.to_errno() as c_long,
    }
}

/// Records the `uintr=` boot parameter (also `nouintr`, as "off").
///
/// Returns 1 if the CPU's own UINTR may be used, 0 if not, `-EINVAL` for
/// an unknown value (the default, `auto`, stays in force).
///
/// # Safety
///
/// `param` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_parse_mode(param: *const c_char) -> c_int {
    // SAFETY: NUL-terminated, by the caller's promise.
    let value = unsafe { CStr::from_char_ptr(param) };
    match Request::parse(value.as_bytes()) {
        Some(request) => {
            mode::set_request(request);
            c_int::from(request.allows_hardware())
        }
        None => {
            pr_warn!("unknown uintr= value, using auto\n");
            EINVAL.to_errno()
        }
    }
}

/// Fixes the mode at boot (a `late_initcall`) and logs it.
///
/// `hardware_usable`: the C side enabled UINTR on every CPU (the CPU has
/// it, `uintr=` allows it and nothing else, such as page table isolation,
/// rules it out).
#[no_mangle]
pub extern "C" fn uintr_rust_init(hardware_usable: bool) -> c_int {
    let mode = mode::select(hardware_usable);
    if let Err(err) = waitlist::init() {
        pr_err!("no memory for the wait lists: no sleeping receivers\n");
        return err.to_errno();
    }
    if area::in_use() {
        if let Err(err) = upid_pool::init().and_then(|()| upid::init_sink()) {
            pr_err!("no memory for the UPID pool: no receivers\n");
            return err.to_errno();
        }
    }
    let cpu = if cpu_enumerates_uintr() {
        "has"
    } else {
        "lacks"
    };
    pr_info!(
        "Rust component initialized: mode {} (uintr={}, CPU {} UINTR)\n",
        mode.name(),
        mode::request().name(),
        cpu
    );
    0
}

/// Whether CPUID enumerates UINTR (leaf 7, EDX bit 5): what the CPU
/// offers, before `uintr=off` or `uintr=emulate` hide it from the kernel.
fn cpu_enumerates_uintr() -> bool {
    use core::arch::x86_64::__cpuid_count;

    const LEAF: u32 = 7;
    const EDX_UINTR: u32 = 1 << 5;
    __cpuid_count(0, 0).eax >= LEAF && __cpuid_count(LEAF, 0).edx & EDX_UINTR != 0
}

/// Fills `out` with the counts of live objects.
///
/// # Safety
///
/// `out` points to a writable `struct uintr_stats`.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_stats(out: *mut bindings::uintr_stats) {
    let s = stats::snapshot();
    // SAFETY: writable, by the caller's promise.
    unsafe {
        *out = bindings::uintr_stats {
            receivers: s.receivers,
            senders: s.senders,
            upids: s.upids,
            uitts: s.uitts,
            fds: s.fds,
            connections: s.connections,
            ipi_fds: s.ipi_fds,
            watches: s.watches,
        }
    };
}

/// Exit or exec of a thread with User Interrupt state.
///
/// # Safety
///
/// `ut` is the `thread.uintr` of the current task, or of a task being torn
/// down that no other thread can reach.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_release_thread(ut: *mut bindings::uintr_thread) {
    // SAFETY: by the caller's promise.
    let thread = unsafe { ThreadState::from_raw(ut) };
    syscalls::release_thread(&thread);
}

/// #UD in user mode: emulate the instruction if it is a UINTR one.
///
/// Returns a value of `enum uintr_emulation`.
///
/// # Safety
///
/// `ut` is the current task's `thread.uintr` and `regs` its saved user
/// registers; called from the #UD handler with interrupts enabled.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_emulate(
    ut: *mut bindings::uintr_thread,
    regs: *mut bindings::pt_regs,
) -> c_int {
    // SAFETY: the current task's state and registers, by the caller's
    // promise.
    let (thread, mut regs) = unsafe { (ThreadState::from_raw(ut), UserRegs::from_raw(regs)) };
    // The enum's values are small: the conversion is exact.
    emulate::emulate(&thread, &mut regs) as c_int
}

/// Exit to user mode with TIF_UINTR: deliver if due.
///
/// Returns 0, or `-EFAULT` if the frame could not be written (the caller
/// sends SIGSEGV).
///
/// # Safety
///
/// `ut` is the current task's `thread.uintr` and `regs` its saved 64-bit
/// user registers; called with interrupts enabled.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_deliver(
    ut: *mut bindings::uintr_thread,
    regs: *mut bindings::pt_regs,
) -> c_int {
    // SAFETY: the current task's state and registers, by the caller's
    // promise.
    let (thread, mut regs) = unsafe { (ThreadState::from_raw(ut), UserRegs::from_raw(regs)) };
    match delivery::deliver(&thread, &mut regs) {
        Ok(()) => 0,
        Err(err) => err.to_errno(),
    }
}

/// The notification vector arrived: recognize the current task's posts.
///
/// Returns -1 if the task is no receiver (spurious), 0 if nothing is
/// pending, 1 if a delivery is due, 2 if a delivery is due and the task's
/// interruptible sleeps are to be interrupted, as by a signal.
/// `interrupted_user`: the notification interrupted user mode.
///
/// # Safety
///
/// `ut` is the current task's `thread.uintr`; called in interrupt context.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_recognize(
    ut: *mut bindings::uintr_thread,
    interrupted_user: bool,
) -> c_int {
    // SAFETY: the current task's state, by the caller's promise.
    let thread = unsafe { ThreadState::from_raw(ut) };
    match delivery::recognize(&thread, interrupted_user) {
        Recognition::NotReceiver => -1,
        Recognition::Nothing => 0,
        Recognition::Pending => 1,
        Recognition::PendingInterruptSleep => 2,
    }
}

/// The kernel vector arrived on `cpu`: wake the receivers sleeping there
/// that have requests posted.
#[no_mangle]
pub extern "C" fn uintr_rust_kernel_wakeup(cpu: c_uint) {
    // A CPU number fits in usize.
    waitlist::wake_posted(cpu as usize);
}

/// The bottom half of `cpu`: go on with the pass the kernel vector began.
#[no_mangle]
pub extern "C" fn uintr_rust_continue_wake_pass(cpu: c_uint) {
    // A CPU number fits in usize.
    waitlist::continue_pass(cpu as usize);
}

/// The CPU `cpu` is dead: wake the receivers that slept there.
#[no_mangle]
pub extern "C" fn uintr_rust_cpu_dead(cpu: c_uint) {
    // A CPU number fits in usize.
    waitlist::wake_all(cpu as usize);
}

/// A receiver leaves the CPU `cpu` (`ndst`), for an interruptible sleep
/// if `interruptible`.
///
/// # Safety
///
/// `ut` is the `thread.uintr` of the task being switched out; called from
/// the context switch, interrupts disabled.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_switch_out(
    ut: *mut bindings::uintr_thread,
    cpu: c_uint,
    ndst: u32,
    interruptible: bool,
) {
    // SAFETY: by the caller's promise.
    let thread = unsafe { ThreadState::from_raw(ut) };
    // A CPU number fits in usize.
    delivery::switch_out(&thread, cpu as usize, ndst, interruptible);
}

/// A receiver arrives on the CPU `ndst`; returns whether a delivery is due.
///
/// # Safety
///
/// `ut` is the `thread.uintr` of the task being switched in; called from
/// the context switch, interrupts disabled.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_switch_in(
    ut: *mut bindings::uintr_thread,
    cpu: c_uint,
    ndst: u32,
) -> bool {
    // SAFETY: by the caller's promise.
    let thread = unsafe { ThreadState::from_raw(ut) };
    // A CPU number fits in usize.
    delivery::switch_in(&thread, cpu as usize, ndst)
}

/// NT_X86_UINTR (ptrace, core dumps): fills `out` with the state of the
/// thread of `ut`; 0 or a negative errno.
///
/// # Safety
///
/// `ut` is the `thread.uintr` of a task that runs no code until the call
/// returns (stopped for ptrace, or waiting for its process's core dump),
/// or of the calling thread, as `is_current` says; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_regset(
    ut: *mut bindings::uintr_thread,
    is_current: bool,
    out: *mut bindings::uintr_regset,
) -> c_int {
    // SAFETY: by the caller's promise.
    let thread = unsafe { ThreadState::from_raw(ut) };
    match regset::read(&thread, is_current) {
        Ok(state) => {
            // SAFETY: writable, by the caller's promise.
            unsafe { *out = state };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// A system call of a receiver returns after a signal-like wakeup and no
/// signal handler runs: settle it as the user interrupt handler about to
/// run says.  Returns whether it did (else the default restart applies).
///
/// # Safety
///
/// `ut` is the current task's `thread.uintr` and `regs` its saved user
/// registers, on the way out of a system call.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_restart_syscall(
    ut: *mut bindings::uintr_thread,
    regs: *mut bindings::pt_regs,
) -> bool {
    // SAFETY: the current task's state and registers, by the caller's
    // promise.
    let (thread, mut regs) = unsafe { (ThreadState::from_raw(ut), UserRegs::from_raw(regs)) };
    delivery::settle_interrupted_syscall(&thread, &mut regs)
}

/// Generates the trampoline of one system call: `ut` is the calling
/// thread's `thread.uintr`, the other arguments are passed on.
macro_rules! syscall_entry {
    ($(#[$doc:meta])* $name:ident => $imp:path, ($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// `ut` is the `thread.uintr` of the calling thread.
        #[no_mangle]
        pub unsafe extern "C" fn $name(ut: *mut bindings::uintr_thread, $($arg: $ty),*) -> c_long {
            // SAFETY: the caller's own state, by the caller's promise.
            let thread = unsafe { ThreadState::from_raw(ut) };
            syscall_return($imp(&thread, $($arg),*))
        }
    };
}

syscall_entry!(
    /// uintr_register_handler(2)
    uintr_rust_register_handler => syscalls::register_handler, (handler: u64, flags: c_uint)
);
syscall_entry!(
    /// uintr_unregister_handler(2)
    uintr_rust_unregister_handler => syscalls::unregister_handler, (flags: c_uint)
);
syscall_entry!(
    /// uintr_create_fd(2)
    uintr_rust_create_fd => syscalls::create_fd, (vector: u64, flags: c_uint)
);
syscall_entry!(
    /// uintr_register_sender(2)
    uintr_rust_register_sender => syscalls::register_sender, (fd: c_int, flags: c_uint)
);
syscall_entry!(
    /// uintr_unregister_sender(2)
    uintr_rust_unregister_sender => syscalls::unregister_sender, (fd: c_int, flags: c_uint)
);
syscall_entry!(
    /// uintr_wait(2): `timeout` and `word` are user addresses.
    uintr_rust_wait => syscalls::wait, (flags: c_uint, timeout: u64, word: u64, expected: u64)
);
syscall_entry!(
    /// uintr_register_self(2)
    uintr_rust_register_self => syscalls::register_self, (vector: u64, flags: c_uint)
);
syscall_entry!(
    /// uintr_alt_stack(2): `sp` is the user address of the stack.
    uintr_rust_alt_stack => syscalls::alt_stack, (sp: u64, size: u64, flags: c_uint)
);
syscall_entry!(
    /// uintr_ipi_fd(2)
    uintr_rust_ipi_fd => syscalls::ipi_fd, (flags: c_uint)
);
syscall_entry!(
    /// uintr_pending(2): `set` is the user address of the result.
    uintr_rust_pending => syscalls::pending, (set: u64, flags: c_uint)
);

/// An address space goes: so does its use of the shared sender table.
///
/// # Safety
///
/// `table` is the `context.uintr_table` of an mm being torn down.
#[no_mangle]
pub unsafe extern "C" fn uintr_rust_exit_mm(table: *mut *mut c_void) {
    // SAFETY: by the caller's promise; the teardown is the only user left.
    let process = unsafe { ProcessTable::from_raw(table) };
    process.release();
}

/// Generates the C entry point of one KUnit case: 0 if it passed, else 1
/// and the failed check (NUL-terminated, truncated) in `msg`.
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
macro_rules! kunit_entry {
    ($name:ident => $case:path) => {
        /// A KUnit case (see `kunit.rs`).
        ///
        /// # Safety
        ///
        /// `msg` points to `len` writable bytes, `len` > 0.
        #[no_mangle]
        pub unsafe extern "C" fn $name(msg: *mut c_char, len: usize) -> c_int {
            let Err(failure) = $case() else {
                return 0;
            };
            // SAFETY: writable for `len` bytes, by the caller's promise.
            let out = unsafe { core::slice::from_raw_parts_mut(msg.cast::<u8>(), len) };
            let n = failure.len().min(len - 1);
            out[..n].copy_from_slice(&failure.as_bytes()[..n]);
            out[n] = 0;
            1
        }
    };
}

#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
use crate::kunit;

#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(uintr_rust_test_uitt_index_allocation => kunit::uitt_index_allocation);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(uintr_rust_test_refcount_lifetimes => kunit::refcount_lifetimes);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(uintr_rust_test_fd_release_disconnects_all => kunit::fd_release_disconnects_all);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(
    uintr_rust_test_sender_shutdown_disconnects_all => kunit::sender_shutdown_disconnects_all
);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(uintr_rust_test_connection_rules => kunit::connection_rules);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(
    uintr_rust_test_shared_table_lasts_until_its_last_use =>
        kunit::shared_table_lasts_until_its_last_use
);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(
    uintr_rust_test_masked_and_revoked_connections =>
        kunit::masked_and_revoked_connections
);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(
    uintr_rust_test_early_kernel_vector_keeps_the_wakeup =>
        kunit::early_kernel_vector_keeps_the_wakeup
);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(
    uintr_rust_test_long_wait_list_is_looked_at_a_chunk_at_a_time =>
        kunit::long_wait_list_is_looked_at_a_chunk_at_a_time
);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(
    uintr_rust_test_stale_notification_keeps_the_wakeup =>
        kunit::stale_notification_keeps_the_wakeup
);
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
kunit_entry!(
    uintr_rust_test_watch_posts_masks_and_survives_pollfree =>
        kunit::watch_posts_masks_and_survives_pollfree
);
