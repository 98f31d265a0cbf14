// SPDX-License-Identifier: GPL-2.0

//! What the ioctls of uintr_fds and ipi fds do, once [`crate::file`] has
//! found the object behind the file.

use kernel::prelude::*;
use kernel::sync::Arc;

use crate::shared::{ProcessTable, SenderUse};
use crate::thread::ThreadState;
use crate::uintr_fd::UintrFd;

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

/// ioctl(uintr_fd, cmd, arg): the receiver's process controls the fd's
/// senders; `ENOTTY` for an unknown command, `EPERM` for anyone else
/// holding the fd (its senders, say), `EINVAL` for a bad argument.
pub(crate) fn fd_ioctl(object: &UintrFd, cmd: u32, arg: u64) -> Result<usize> {
    if ![UINTR_FD_MASK, UINTR_FD_UNMASK, UINTR_FD_REVOKE].contains(&cmd) {
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
        _ if arg != 0 => Err(EINVAL),
        _ => {
            object.set_masked(cmd == UINTR_FD_MASK);
            Ok(0)
        }
    }
}
