// SPDX-License-Identifier: GPL-2.0

//! The limits on connections (Documentation/arch/x86/user-interrupts.rst, "Limits").
//!
//! Every connection counts against three limits, checked when it is made
//! and given back when it goes, by the [`Charge`] it holds:
//! - the senders of one uintr_fd, `kernel.uintr.max_fd_connections`
//!   (the fd counts its connections itself, see `UintrFd::connect`);
//! - the senders of all the uintr_fds of one receiver,
//!   `kernel.uintr.max_receiver_connections`;
//! - the connections of the connecting user, in its user namespace and in
//!   every one above it: `user.max_uintr_connections`, a ucount as
//!   inotify's watches are.
//!
//! A full fd or receiver gives `ENOSPC`, as a full sender table does: the
//! receiver's side has no room.  A user over its limit gets `EMFILE`, as
//! for too many inotify instances: the caller holds too many.

use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The most senders one uintr_fd may have.
pub(crate) fn fd_connections() -> usize {
    // SAFETY: reads a sysctl value; no precondition.
    let limit = unsafe { bindings::uintr_fd_connection_limit() };
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// The most entries a new sender table may grow to.
pub(crate) fn sender_entries() -> usize {
    // SAFETY: reads a sysctl value; no precondition.
    let limit = unsafe { bindings::uintr_sender_entry_limit() };
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// The most senders all the uintr_fds of one receiver may have.
fn receiver_connections() -> usize {
    // SAFETY: reads a sysctl value; no precondition.
    let limit = unsafe { bindings::uintr_receiver_connection_limit() };
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// A count of connections, bounded when it grows.
pub(crate) struct ConnectionCount(AtomicUsize);

impl ConnectionCount {
    /// No connection yet.
    pub(crate) const fn new() -> Self {
        Self(AtomicUsize::new(0))
    }

    /// Counts one more, unless there are `limit` already.
    fn add_below(&self, limit: usize) -> bool {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < limit).then_some(n + 1)
            })
            .is_ok()
    }

    /// Counts one less.
    fn remove(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }

    /// How many there are now.
    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// What a connection's receiver is to its [`Charge`]: the count that the
/// receiver's limit bounds.  The charge keeps the receiver alive until it
/// has given its count back.
pub(crate) trait Counted: Send + Sync {
    /// The count of the connections made to the receiver.
    fn connections(&self) -> &ConnectionCount;
}

/// One connection counted against its receiver's limit.
struct ReceiverCharge(Arc<dyn Counted>);

impl ReceiverCharge {
    fn new(receiver: Arc<dyn Counted>) -> Result<Self> {
        if !receiver.connections().add_below(receiver_connections()) {
            return Err(ENOSPC);
        }
        Ok(Self(receiver))
    }
}

impl Drop for ReceiverCharge {
    fn drop(&mut self) {
        self.0.connections().remove();
    }
}

/// One connection charged to the user who made it.
struct UserCharge(NonNull<bindings::ucounts>);

// SAFETY: the charge is a counted reference to a `struct ucounts`, which
// the kernel lets any thread release (dec_ucount() is atomic).
unsafe impl Send for UserCharge {}
// SAFETY: a shared reference allows nothing: every method takes `self`
// by value or mutably.
unsafe impl Sync for UserCharge {}

impl UserCharge {
    /// Charges the current user; `EMFILE` over its limit (or the limit of
    /// a user namespace above it).
    fn new() -> Result<Self> {
        // SAFETY: process context; returns a counted reference, or NULL
        // when a limit is reached or no memory is left.
        let ucounts = unsafe { bindings::uintr_charge_user_connection() };
        NonNull::new(ucounts).map(Self).ok_or(EMFILE)
    }
}

impl Drop for UserCharge {
    fn drop(&mut self) {
        // SAFETY: gives back the charge and the reference taken in `new`,
        // once, as `self` goes.
        unsafe { bindings::uintr_uncharge_user_connection(self.0.as_ptr()) };
    }
}

/// What one connection counts against: its receiver's limit and its
/// user's.  Held by the connection, given back when it goes.
pub(crate) struct Charge {
    _receiver: ReceiverCharge,
    _user: UserCharge,
}

impl Charge {
    /// Charges a new connection to `receiver`; `ENOSPC` if the receiver
    /// has all it may have, `EMFILE` if the current user has.
    pub(crate) fn new<R: Counted + 'static>(receiver: &Arc<R>) -> Result<Self> {
        Ok(Self {
            _receiver: ReceiverCharge::new(receiver.clone())?,
            _user: UserCharge::new()?,
        })
    }
}
