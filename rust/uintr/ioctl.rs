// SPDX-License-Identifier: GPL-2.0

//! What the ioctls of uintr_fds and ipi fds do, once [`crate::file`] has
//! found the object behind the file.

use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::events::WatchRequest;
use crate::poll::FileRef;
use crate::shared::{ProcessTable, SenderUse};
use crate::thread::ThreadState;
use crate::uintr_fd::UintrFd;
use crate::user;

/// ioctl(ipi_fd, UIPI_SET_TARGET_TABLE): the calling process shares the
/// table of the ipi fd from now on; `EBUSY` if it shares another one.
/// (User Interrupts run on this boot: a system call made the ipi fd.)
pub(crate) fn set_target_table(thread: &ThreadState<'_>, table: Arc<SenderUse>) -> Result<usize> {
    let process = ProcessTable::of_current(thread).ok_or(EINVAL)?;
    process.install(table)?;
    Ok(0)
}

/// The ioctls of a uintr_fd (`<linux/uintr.h>`).
const UINTR_FD_MASK: u32 = kernel::ioctl::_IO(b'u' as u32, 1);
const UINTR_FD_UNMASK: u32 = kernel::ioctl::_IO(b'u' as u32, 2);
const UINTR_FD_REVOKE: u32 = kernel::ioctl::_IO(b'u' as u32, 3);
const UINTR_FD_WATCH: u32 = kernel::ioctl::_IOW::<bindings::uintr_watch>(b'u' as u32, 4);
const UINTR_FD_UNWATCH: u32 = kernel::ioctl::_IO(b'u' as u32, 5);

const _: () = assert!(
    core::mem::size_of::<bindings::uintr_watch>() == WatchRequest::WORDS * 8,
    "struct uintr_watch is what events::WatchRequest parses"
);

/// ioctl(uintr_fd, cmd, arg): the receiver's process controls the fd's
/// senders; `ENOTTY` for an unknown command, `EPERM` for anyone else
/// holding the fd (its senders, say), `EINVAL` for a bad argument.
pub(crate) fn fd_ioctl(object: &UintrFd, cmd: u32, arg: u64) -> Result<usize> {
    const COMMANDS: [u32; 5] = [
        UINTR_FD_MASK,
        UINTR_FD_UNMASK,
        UINTR_FD_REVOKE,
        UINTR_FD_WATCH,
        UINTR_FD_UNWATCH,
    ];
    if !COMMANDS.contains(&cmd) {
        return Err(ENOTTY);
    }
    if !object.receiver().is_own_process() {
        return Err(EPERM);
    }
    match cmd {
        UINTR_FD_REVOKE => {
            // A PID (positive, as pid_t is), or 0 for every process.
            let pid = i32::try_from(arg).map_err(|_| EINVAL)?;
            Ok(object.revoke((pid != 0).then_some(pid)))
        }
        UINTR_FD_WATCH => watch(object, arg),
        UINTR_FD_UNWATCH => {
            // A descriptor, as an int: its 32 bits (a C caller's -1 may
            // arrive zero-extended).
            let fd = u32::try_from(arg).map_err(|_| EBADF)?;
            object.unwatch(&FileRef::get(fd as i32)?)?;
            Ok(0)
        }
        _ if arg != 0 => Err(EINVAL),
        _ => {
            object.set_masked(cmd == UINTR_FD_MASK);
            Ok(0)
        }
    }
}

/// ioctl(uintr_fd, UINTR_FD_WATCH, &watch): `EFAULT` for an unreadable
/// argument, `EINVAL` for bad events or flags, `EBADF` if its fd is not
/// open, `EPERM` if that file cannot be polled; then as
/// `UintrFd::watch`.
fn watch(object: &UintrFd, arg: u64) -> Result<usize> {
    let mut words = [0u64; WatchRequest::WORDS];
    user::read_words(arg, &mut words)?;
    let request = WatchRequest::parse(words).map_err(|_| EINVAL)?;
    let file = FileRef::get(request.fd)?;
    if !file.can_poll() {
        return Err(EPERM);
    }
    object.watch(file, request.events)?;
    Ok(0)
}
