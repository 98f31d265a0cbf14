// SPDX-License-Identifier: GPL-2.0

//! The User Interrupt system calls, as the man pages describe them.
//!
//! Each function acts on the calling thread's state and returns the
//! syscall's value or the error the man page lists.

use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::cpu;
use crate::errno;
use crate::file;
use crate::frame;
use crate::glue;
use crate::mode::{self, Mode};
use crate::receiver::{HandlerFlags, Receiver, STACK_ADJUST, VECTORS};
use crate::shared::{self, IpiFd, ProcessTable, SenderUse};
use crate::thread::ThreadState;
use crate::timeout;
use crate::trace;
use crate::uintr_fd::UintrFd;
use crate::user;
use crate::wait;
use crate::waitlist;

/// `EOPNOTSUPP` unless User Interrupts run on this boot.
fn require_enabled() -> Result {
    match mode::current() {
        Mode::Off => Err(errno::eopnotsupp()),
        Mode::Emulated | Mode::Hardware => Ok(()),
    }
}

/// `EINVAL` unless `flags` is 0 (no flag is defined yet).
fn require_no_flags(flags: u32) -> Result {
    if flags != 0 {
        return Err(EINVAL);
    }
    Ok(())
}

/// Whether `address` may be a user-space handler: not NULL, below the end
/// of the user address space (which also makes it canonical).
fn is_user_code_address(address: u64) -> bool {
    address != 0 && address < glue::user_address_limit()
}

/// The flags uintr_register_handler() knows.
const HANDLER_FLAGS: u32 =
    bindings::UINTR_HANDLER_FLAG_INTERRUPT_SLEEP | bindings::UINTR_HANDLER_FLAG_RESTART;

/// uintr_register_handler()'s `flags`; `EINVAL` for an unknown flag, or
/// for RESTART without INTERRUPT_SLEEP.
fn handler_flags(flags: u32) -> Result<HandlerFlags> {
    let parsed = HandlerFlags {
        interrupt_sleep: flags & bindings::UINTR_HANDLER_FLAG_INTERRUPT_SLEEP != 0,
        restart: flags & bindings::UINTR_HANDLER_FLAG_RESTART != 0,
    };
    if flags & !HANDLER_FLAGS != 0 || (parsed.restart && !parsed.interrupt_sleep) {
        return Err(EINVAL);
    }
    Ok(parsed)
}

/// uintr_register_handler(handler, flags)
pub(crate) fn register_handler(
    thread: &ThreadState<'_>,
    handler: u64,
    flags: u32,
) -> Result<usize> {
    require_enabled()?;
    let requested = flags;
    let flags = handler_flags(flags)?;
    if !is_user_code_address(handler) {
        return Err(EFAULT);
    }
    if thread.receiver().is_some() {
        return Err(EBUSY);
    }
    if flags.interrupt_sleep && !waitlist::available() {
        return Err(errno::eopnotsupp());
    }
    let receiver = Receiver::new(handler, flags)?;
    // The registers first (nothing can be posted yet: there is no fd);
    // then installed (with the switch hook on: see `set_receiver`), so
    // that from here on context switches keep the UPID in step; then
    // pointed at the CPU this thread runs on now.
    cpu::load_receiver(&receiver)?;
    thread.set_receiver(receiver.clone());
    receiver.activate();
    trace::register_handler(handler, requested);
    Ok(0)
}

/// uintr_unregister_handler(flags)
pub(crate) fn unregister_handler(thread: &ThreadState<'_>, flags: u32) -> Result<usize> {
    require_enabled()?;
    require_no_flags(flags)?;
    let receiver = thread.take_receiver().ok_or(EINVAL)?;
    // Requests recognized and not delivered go with the handler; the CPU
    // forgets the UPID before the receiver can go.
    cpu::unload_receiver(thread);
    receiver.shutdown();
    trace::unregister_handler(receiver.handler(), receiver.flags().bits());
    Ok(0)
}

/// uintr_create_fd(vector, flags)
pub(crate) fn create_fd(thread: &ThreadState<'_>, vector: u64, flags: u32) -> Result<usize> {
    require_enabled()?;
    require_no_flags(flags)?;
    if vector >= VECTORS {
        return Err(EINVAL);
    }
    let receiver = thread.receiver().ok_or(EINVAL)?;
    // `vector` < 64: the conversion is exact.
    let object = UintrFd::new(&receiver.into(), vector as u8)?;
    let fd = file::create(object)?;
    trace::fd_create(vector as u8, &receiver);
    Ok(fd)
}

/// The flags uintr_register_sender() and uintr_register_self() know.
const SENDER_FLAGS: u32 = bindings::UINTR_SENDER_SHARED;

/// Whether `flags` asks for the process's shared table; `EINVAL` for an
/// unknown flag.
fn wants_shared_table(flags: u32) -> Result<bool> {
    if flags & !SENDER_FLAGS != 0 {
        return Err(EINVAL);
    }
    Ok(flags & bindings::UINTR_SENDER_SHARED != 0)
}

/// Connects `object` in the calling thread's sender table and returns
/// the UITT index.  A thread without a table gets one with its first
/// connection: its own, or with `shared` its process's shared table
/// (`EBUSY` if it has its own already).
fn connect(thread: &ThreadState<'_>, object: &Arc<UintrFd>, shared: bool) -> Result<usize> {
    let (table, is_new) = match thread.sender() {
        Some(table) if shared && !shared::is_process_table(thread, &table) => return Err(EBUSY),
        Some(table) => (table.into(), false),
        None if shared => {
            let process = ProcessTable::of_current(thread).ok_or(EINVAL)?;
            (process.get_or_create()?, true)
        }
        None => (SenderUse::new_table()?, true),
    };
    let index = object.connect(table.table())?;
    if is_new {
        if let Err(err) = cpu::join_table(thread, table.clone()) {
            // Undone in the table, which stays if the process shares it.
            let _ = object.disconnect(table.table());
            return Err(err);
        }
    }
    Ok(index)
}

/// uintr_register_sender(uintr_fd, flags): returns the UITT index.
pub(crate) fn register_sender(thread: &ThreadState<'_>, fd: i32, flags: u32) -> Result<usize> {
    require_enabled()?;
    let shared = wants_shared_table(flags)?;
    connect(thread, &file::lookup(fd)?, shared)
}

/// uintr_register_self(vector, flags): returns a UITT index on which
/// SENDUIPI interrupts the calling thread with `vector`.
pub(crate) fn register_self(thread: &ThreadState<'_>, vector: u64, flags: u32) -> Result<usize> {
    require_enabled()?;
    let shared = wants_shared_table(flags)?;
    if vector >= VECTORS {
        return Err(EINVAL);
    }
    let receiver: Arc<Receiver> = thread.receiver().ok_or_else(errno::eopnotsupp)?.into();
    // `vector` < 64: the conversion is exact.  No file holds the object:
    // the receiver does, until it goes.
    let object = UintrFd::new(&receiver, vector as u8)?;
    let index = connect(thread, &object, shared)?;
    if let Err(err) = receiver.keep_self_entry(object.clone()) {
        object.release();
        return Err(err);
    }
    Ok(index)
}

/// uintr_alt_stack(sp, size, flags): the handler's frame goes on the stack
/// `[sp, sp + size)` from now on, or below the interrupted stack's red
/// zone again for `(0, 0)`.
pub(crate) fn alt_stack(thread: &ThreadState<'_>, sp: u64, size: u64, flags: u32) -> Result<usize> {
    require_enabled()?;
    require_no_flags(flags)?;
    let receiver = thread.receiver().ok_or_else(errno::eopnotsupp)?;
    let stack_adjust = if sp == 0 && size == 0 {
        STACK_ADJUST
    } else {
        frame::alt_stack_adjust(sp, size, glue::user_address_limit()).ok_or(EINVAL)?
    };
    cpu::set_stack_adjust(stack_adjust)?;
    receiver.set_stack_adjust(stack_adjust);
    Ok(0)
}

/// uintr_unregister_sender(uintr_fd, flags)
pub(crate) fn unregister_sender(thread: &ThreadState<'_>, fd: i32, flags: u32) -> Result<usize> {
    require_enabled()?;
    require_no_flags(flags)?;
    let object = file::lookup(fd)?;
    if thread.sender().is_none() && !cpu::join_process_table(thread) {
        return Err(EINVAL);
    }
    let table = thread.sender().ok_or(EINVAL)?;
    object.disconnect(table.table())?;
    Ok(0)
}

/// The flags uintr_wait() knows.
const WAIT_FLAGS: u32 = bindings::UINTR_WAIT_TIMEOUT | bindings::UINTR_WAIT_VALUE;

/// The deadline of uintr_wait()'s relative timeout at user address
/// `timeout` (a `struct __kernel_timespec`): `EFAULT` if it cannot be
/// read, `EINVAL` if it is no valid timespec.
fn wait_deadline(timeout: u64) -> Result<i64> {
    let mut timespec = [0u64; 2];
    user::read_words(timeout, &mut timespec)?;
    // tv_sec and tv_nsec are 64-bit signed: the casts reinterpret exactly.
    let relative = timeout::relative_ns(timespec[0] as i64, timespec[1] as i64).ok_or(EINVAL)?;
    Ok(timeout::deadline(glue::now_ns(), relative))
}

/// `UINTR_WAIT_VALUE`: `EAGAIN` unless the aligned word at user address
/// `word` holds `expected`; `EINVAL` if it is not aligned, `EFAULT` if it
/// cannot be read.
///
/// One read, as the call begins, is enough for the word's purpose: the
/// thread's own handler, which writes it, runs only in user mode, so its
/// writes before the call are seen here; an interrupt posted after this
/// read is pending, and the wait returns for it.
fn check_word(word: u64, expected: u64) -> Result {
    if word % core::mem::size_of::<u64>() as u64 != 0 {
        return Err(EINVAL);
    }
    let mut value = [0u64; 1];
    user::read_words(word, &mut value)?;
    if value[0] != expected {
        return Err(EAGAIN);
    }
    Ok(())
}

/// uintr_wait(flags, timeout, word, expected): sleeps until a user
/// interrupt is pending; `EINTR` once its handler is due (or for a
/// signal), `ETIMEDOUT`, or `EAGAIN` if the word no longer holds
/// `expected`.
pub(crate) fn wait(
    thread: &ThreadState<'_>,
    flags: u32,
    timeout: u64,
    word: u64,
    expected: u64,
) -> Result<usize> {
    require_enabled()?;
    if flags & !WAIT_FLAGS != 0 {
        return Err(EINVAL);
    }
    let receiver = thread.receiver().ok_or_else(errno::eopnotsupp)?;
    let deadline = if flags & bindings::UINTR_WAIT_TIMEOUT != 0 {
        Some(wait_deadline(timeout)?)
    } else {
        None
    };
    if flags & bindings::UINTR_WAIT_VALUE != 0 {
        check_word(word, expected)?;
    }
    wait::wait(thread, receiver, deadline)
}

/// The flags uintr_pending() knows.
const PENDING_FLAGS: u32 = bindings::UINTR_PENDING_TAKE;

/// uintr_pending(set, flags): stores the calling receiver's pending
/// vectors (recognized, in UIRR, or still posted in its UPID) at `set`,
/// without delivering them; with UINTR_PENDING_TAKE they are also taken.
pub(crate) fn pending(thread: &ThreadState<'_>, set: u64, flags: u32) -> Result<usize> {
    require_enabled()?;
    if flags & !PENDING_FLAGS != 0 {
        return Err(EINVAL);
    }
    let receiver = thread.receiver().ok_or_else(errno::eopnotsupp)?;
    if flags & bindings::UINTR_PENDING_TAKE == 0 {
        let pending = cpu::own_state(thread, &receiver).requests | receiver.upid().posted();
        user::write_words(set, &[pending])?;
        return Ok(0);
    }
    let taken = cpu::take_requests(thread, &receiver);
    if let Err(err) = user::write_words(set, &[taken]) {
        // Not lost: pending again, as if never taken.
        cpu::add_requests(thread, taken);
        return Err(err);
    }
    Ok(0)
}

/// Exit or exec: the thread gives up its receiver and its sender (its
/// registers first, so the CPU stops using the UPID and the UITT).
pub(crate) fn release_thread(thread: &ThreadState<'_>) {
    if let Some(receiver) = thread.take_receiver() {
        cpu::unload_receiver(thread);
        receiver.shutdown();
    }
    if let Some(table) = thread.take_sender() {
        cpu::unload_sender();
        // Not the table's thread any more: this CPU leaves its set (a
        // migration in between leaves a stale CPU there, which only costs
        // that CPU an interrupt per later change, until a thread of the
        // table leaves it).
        let here = glue::CpuPin::new();
        table.table().leaves(here.cpu());
        drop(here);
        // The table's connections go with its last use.
        drop(table);
    }
}

/// uintr_ipi_fd(flags): a file that holds the calling process's shared
/// sender table (made now if it has none), for other processes.
pub(crate) fn ipi_fd(thread: &ThreadState<'_>, flags: u32) -> Result<usize> {
    require_enabled()?;
    require_no_flags(flags)?;
    let process = ProcessTable::of_current(thread).ok_or(EINVAL)?;
    file::create_ipi_fd(IpiFd::new(process.get_or_create()?)?)
}
