// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! Sender connections: a UITT index and SENDUIPI on it, valid for as long
//! as the connection is.
//!
//! An index stays valid until the connection is unregistered, the last
//! descriptor of its uintr file closes, or (for an index in the thread's
//! own table) the thread exits. A connection borrows its [`UintrFd`], is
//! unregistered only by its own drop and, in a thread's own table, cannot
//! leave the thread: so while it exists its index is valid, and a send
//! through it reaches the vector or, if the receiver is gone, nothing.
//! The one way left to invalidate it is the receiver's: a
//! [revoke](UintrFd::revoke) makes the next send fault (SIGSEGV), a crash
//! of the sender, never a write to its memory.

use std::cell::Cell;
use std::marker::PhantomData;
use std::os::fd::AsFd;

use crate::fd::UintrFd;
use crate::receiver::Receiver;
use crate::sys;

/// A connection in the calling thread's own sender table, from
/// [`UintrFd::connect`]; neither `Send` nor `Sync`, as its index means
/// something in this thread only.
#[derive(Debug)]
pub struct Connection<'fd> {
    fd: &'fd UintrFd,
    index: usize,
    _per_thread: PhantomData<*const ()>,
}

impl<'fd> Connection<'fd> {
    pub(crate) fn new(fd: &'fd UintrFd, index: usize) -> Self {
        uses_table(Table::Own);
        Connection {
            fd,
            index,
            _per_thread: PhantomData,
        }
    }

    /// Posts the vector (SENDUIPI): the receiver's handler runs as soon as
    /// it runs with delivery enabled, or its `wait` returns. Posts before
    /// the delivery coalesce.
    pub fn send(&self) {
        sys::senduipi(self.index);
    }

    /// The UITT index, as `uintr_register_sender()` returned it.
    pub fn index(&self) -> usize {
        self.index
    }
}

impl Drop for Connection<'_> {
    fn drop(&mut self) {
        // Fails only if the receiver revoked the connection already.
        let _ = sys::unregister_sender(self.fd.as_fd());
    }
}

/// A connection in the process's shared sender table, from
/// [`UintrFd::connect_shared`]: any thread of the process may send
/// through it, and drop it (a child made by `fork` starts without the
/// table; another process shares it only through an ipi fd).
#[derive(Debug)]
pub struct SharedConnection<'fd> {
    fd: &'fd UintrFd,
    index: usize,
}

impl<'fd> SharedConnection<'fd> {
    pub(crate) fn new(fd: &'fd UintrFd, index: usize) -> Self {
        uses_table(Table::Shared);
        SharedConnection { fd, index }
    }

    /// Posts the vector (SENDUIPI), from any thread that uses the shared
    /// table; a thread that never connected is put on it by its first send.
    ///
    /// # Panics
    ///
    /// In a thread that has a sender table of its own (it made a
    /// [`Connection`] or [`SelfConnection`] before it used the shared
    /// table): SENDUIPI there would read that table's entry of the index.
    pub fn send(&self) {
        assert!(
            uses_table(Table::Shared),
            "uintr: a thread with a sender table of its own cannot send through the shared one"
        );
        sys::senduipi(self.index);
    }

    /// The index in the shared table.
    pub fn index(&self) -> usize {
        self.index
    }
}

impl Drop for SharedConnection<'_> {
    fn drop(&mut self) {
        let _ = sys::unregister_sender(self.fd.as_fd());
    }
}

/// The receiving thread's connection to one of its own vectors, from
/// [`Receiver::connect_self`]: valid as long as the receiver, whose
/// registration it belongs to (the kernel frees it, and its vector, when
/// the handler is unregistered).
#[derive(Debug)]
pub struct SelfConnection<'r> {
    index: usize,
    _receiver: PhantomData<&'r Receiver>,
}

impl SelfConnection<'_> {
    pub(crate) fn new(index: usize) -> Self {
        uses_table(Table::Own);
        SelfConnection {
            index,
            _receiver: PhantomData,
        }
    }

    /// Posts the vector to the calling thread itself (SENDUIPI): with
    /// delivery enabled the handler runs right after it.
    pub fn send(&self) {
        sys::senduipi(self.index);
    }

    /// The index in the thread's sender table.
    pub fn index(&self) -> usize {
        self.index
    }
}

/// Which sender table the calling thread's SENDUIPIs read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    None,
    Own,
    Shared,
}

thread_local! {
    static TABLE: Cell<Table> = const { Cell::new(Table::None) };
}

/// Records that the thread connected (or sends) through a table of kind
/// `kind`, and returns whether that is the table its SENDUIPIs read. A
/// thread takes the first table it uses for good: connecting without
/// `UINTR_SENDER_SHARED` in a thread on the shared table lands there too.
fn uses_table(kind: Table) -> bool {
    TABLE.with(|t| {
        if t.get() == Table::None {
            t.set(kind);
        }
        t.get() == kind || kind == Table::Own
    })
}
