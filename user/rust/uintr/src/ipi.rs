// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! The process's shared sender table as a file descriptor.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;

use crate::sys;

/// A file descriptor for the sender table the process's threads share
/// (`uintr_ipi_fd()`): passed to another process, it lets that process
/// share the table ([`IpiFd::adopt`]), so that a group of processes
/// interrupt each other through one table.
#[derive(Debug)]
pub struct IpiFd {
    fd: OwnedFd,
}

impl IpiFd {
    /// The calling process's shared table, made now if it has none.
    pub fn new() -> io::Result<IpiFd> {
        sys::ipi_fd().map(|fd| IpiFd { fd })
    }

    /// Makes this table the calling process's shared table
    /// (`UIPI_SET_TARGET_TABLE`); `EBUSY` if it shares another one.
    pub fn adopt(&self) -> io::Result<()> {
        sys::ioctl(self.as_fd(), sys::UIPI_SET_TARGET_TABLE, 0).map(drop)
    }

    /// Passes the descriptor over a Unix socket (SCM_RIGHTS).
    pub fn send_over(&self, socket: &UnixStream) -> io::Result<()> {
        sys::send_fd(socket.as_fd(), self.as_fd())
    }

    /// Receives a descriptor that [`send_over`](IpiFd::send_over) passed.
    pub fn receive_over(socket: &UnixStream) -> io::Result<IpiFd> {
        sys::recv_fd(socket.as_fd()).map(|fd| IpiFd { fd })
    }
}

impl AsFd for IpiFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
