// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! The uintr file descriptor: one vector of one receiver, the capability
//! to interrupt it.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use crate::connection::{Connection, SharedConnection};
use crate::events::Events;
use crate::sys;

/// A uintr file descriptor (`uintr_create_fd()`), owned.
///
/// The receiver's thread makes it with [`Receiver::create_fd`]; any thread
/// or process that holds it may connect as a sender ([`UintrFd::connect`]).
/// It moves between threads like any file descriptor, and between
/// processes over a Unix socket ([`UintrFd::send_over`] and
/// [`UintrFd::receive_over`]). The receiver's process controls its vector
/// through it: [`mask`](UintrFd::mask), [`revoke`](UintrFd::revoke) and
/// [`watch`](UintrFd::watch).
///
/// [`Receiver::create_fd`]: crate::Receiver::create_fd
#[derive(Debug)]
pub struct UintrFd {
    fd: OwnedFd,
}

impl From<OwnedFd> for UintrFd {
    /// Takes `fd` as a uintr file descriptor; calls on one that is not
    /// fail with `EOPNOTSUPP` (connecting) or `ENOTTY` (the ioctls).
    fn from(fd: OwnedFd) -> UintrFd {
        UintrFd { fd }
    }
}

impl From<UintrFd> for OwnedFd {
    fn from(fd: UintrFd) -> OwnedFd {
        fd.fd
    }
}

impl AsFd for UintrFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for UintrFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl UintrFd {
    /// Connects the calling thread as a sender in its own sender table
    /// (`uintr_register_sender()`). The connection borrows the file
    /// descriptor: its index lives as long as both.
    ///
    /// # Errors
    ///
    /// `ESHUTDOWN` once the receiver is gone, `EISCONN` if this thread is
    /// connected to it already, `ENOSPC`/`EMFILE` at the limits of
    /// uintr(7), `EBUSY` if the thread uses the process's shared table.
    pub fn connect(&self) -> io::Result<Connection<'_>> {
        let index = sys::register_sender(self.as_fd(), 0)?;
        Ok(Connection::new(self, index))
    }

    /// Connects in the sender table the process's threads share
    /// (`UINTR_SENDER_SHARED`): the connection may be used, and dropped,
    /// by any thread.
    ///
    /// # Errors
    ///
    /// As [`connect`](UintrFd::connect); `EBUSY` if the calling thread has
    /// a table of its own.
    pub fn connect_shared(&self) -> io::Result<SharedConnection<'_>> {
        let index = sys::register_sender(self.as_fd(), sys::UINTR_SENDER_SHARED)?;
        Ok(SharedConnection::new(self, index))
    }

    /// Stops every post of the vector at its source, for every sender and
    /// watch present and future, until [`unmask`](UintrFd::unmask). When it
    /// returns, no post through the vector is under way. The receiver's
    /// process only.
    pub fn mask(&self) -> io::Result<()> {
        sys::ioctl(self.as_fd(), sys::UINTR_FD_MASK, 0).map(drop)
    }

    /// Lets posts through again; what was posted meanwhile is gone.
    pub fn unmask(&self) -> io::Result<()> {
        sys::ioctl(self.as_fd(), sys::UINTR_FD_UNMASK, 0).map(drop)
    }

    /// Disconnects the senders of process `pid` (every process: `None`);
    /// their next send faults. Returns how many connections it cut. The
    /// receiver's process only.
    pub fn revoke(&self, pid: Option<u32>) -> io::Result<usize> {
        sys::ioctl(
            self.as_fd(),
            sys::UINTR_FD_REVOKE,
            pid.unwrap_or(0) as usize,
        )
    }

    /// Has every wakeup of `file` that carries one of `events` post the
    /// vector, as a sender's SENDUIPI would (`UINTR_FD_WATCH`): I/O
    /// readiness, completions and timer expiries arrive as user interrupts.
    /// A file that is ready already posts once at once. The watch holds
    /// the file; it ends with [`unwatch`](UintrFd::unwatch), the close of
    /// this file descriptor or the receiver's end.
    ///
    /// # Errors
    ///
    /// `EEXIST` if `file` is watched through this descriptor already,
    /// `EPERM` for a file that cannot be polled (or a uintr_fd), `EINVAL`
    /// for no or unknown events.
    pub fn watch(&self, file: &impl AsFd, events: Events) -> io::Result<()> {
        let watch = sys::UintrWatch {
            fd: file.as_fd().as_raw_fd(),
            events: events.bits(),
            flags: 0,
        };
        sys::ioctl_watch(self.as_fd(), &watch)
    }

    /// Ends the watch of `file` (`UINTR_FD_UNWATCH`); `ENOENT` if there is
    /// none.
    pub fn unwatch(&self, file: &impl AsFd) -> io::Result<()> {
        let fd = file.as_fd().as_raw_fd();
        sys::ioctl(self.as_fd(), sys::UINTR_FD_UNWATCH, fd as usize).map(drop)
    }

    /// Another descriptor for the same uintr file.
    pub fn try_clone(&self) -> io::Result<UintrFd> {
        self.fd.try_clone().map(UintrFd::from)
    }

    /// Passes the file descriptor to the process at the other end of
    /// `socket` (SCM_RIGHTS).
    pub fn send_over(&self, socket: &UnixStream) -> io::Result<()> {
        sys::send_fd(socket.as_fd(), self.as_fd())
    }

    /// Receives a uintr file descriptor that [`send_over`] passed.
    ///
    /// [`send_over`]: UintrFd::send_over
    pub fn receive_over(socket: &UnixStream) -> io::Result<UintrFd> {
        sys::recv_fd(socket.as_fd()).map(UintrFd::from)
    }
}
