// SPDX-License-Identifier: GPL-2.0

//! Error codes the man pages give that the `kernel` crate does not name.

use kernel::bindings;
use kernel::error::Error;

/// Builds an [`Error`] from a positive errno constant of the bindings.
fn from_positive(errno: u32) -> Error {
    // The constants are small positive numbers: the cast is exact.
    Error::from_errno(-(errno as i32))
}

/// `EOPNOTSUPP`: User Interrupts are off, or the fd is not a uintr_fd.
pub(crate) fn eopnotsupp() -> Error {
    from_positive(bindings::EOPNOTSUPP)
}

/// `EISCONN`: the sender is connected to this fd already.
pub(crate) fn eisconn() -> Error {
    from_positive(bindings::EISCONN)
}

/// `ESHUTDOWN`: the receiver unregistered or exited.
pub(crate) fn eshutdown() -> Error {
    from_positive(bindings::ESHUTDOWN)
}

/// `ETIMEDOUT`: uintr_wait()'s timeout expired.
pub(crate) fn etimedout() -> Error {
    from_positive(bindings::ETIMEDOUT)
}
