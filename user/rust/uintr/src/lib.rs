// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! x86 User Interrupts from safe Rust.
//!
//! A thread becomes a [`Receiver`]; it makes a [`UintrFd`] per vector and
//! hands it to senders, threads or processes, which [connect] and
//! [send](Connection::send) (SENDUIPI). The interrupt is delivered to the
//! receiver in user space, without a system call: the crate's handler
//! records it in the receiver's [`Arrivals`], and the receiver reacts after
//! [`Receiver::wait`] returns or by looking at its arrivals. The kernel can
//! send too: a [watch](UintrFd::watch) turns the wakeups of a file (an
//! [`EventFd`], a [`TimerFd`], a pipe, a socket) into user interrupts.
//!
//! The lifetimes the man pages describe are in the types: a receiver
//! belongs to its thread (`!Send`) and unregisters on drop; a connection
//! borrows its file descriptor, so its index cannot outlive it; delivery
//! is disabled by a guard.
//!
//! ```no_run
//! use std::thread;
//! use uintr::{Receiver, Vector};
//!
//! fn main() -> std::io::Result<()> {
//!     let receiver = Receiver::new()?; // this thread's handler
//!     let fd = receiver.create_fd(Vector::new(3).unwrap())?;
//!     receiver.enable(); // STUI
//!     let sender = thread::spawn(move || fd.connect().map(|c| c.send()));
//!     while receiver.arrivals().deliveries() == 0 {
//!         receiver.wait_for_delivery(0)?; // returns at once if it moved
//!     }
//!     sender.join().unwrap()?;
//!     println!("handler ran {} time(s)", receiver.arrivals().deliveries());
//!     Ok(())
//! }
//! ```
//!
//! Errors are [`std::io::Error`]s carrying the errno of the man pages
//! (`uintr_register_handler(2)` and the rest, `uintr(7)`).
//!
//! [connect]: UintrFd::connect

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

mod arrivals;
mod connection;
mod doorbell;
mod events;
mod fd;
mod handler;
mod ipi;
mod receiver;
mod sys;
mod vector;
mod xsave;

pub use arrivals::Arrivals;
pub use connection::{Connection, SelfConnection, SharedConnection};
pub use doorbell::{EventFd, TimerFd};
pub use events::Events;
pub use fd::UintrFd;
pub use ipi::IpiFd;
pub use receiver::{Builder, Disabled, Receiver};
pub use vector::{Vector, VectorSet};

use std::io;

/// Whether this kernel and boot offer user interrupts: `Ok` if so, else
/// the reason, `ENOSYS` (a kernel without them) or `EOPNOTSUPP` (turned
/// off at boot, `uintr=off`). Changes nothing.
pub fn supported() -> io::Result<()> {
    const EFAULT: i32 = 14;
    match sys::probe_handler() {
        Err(e) if e.raw_os_error() == Some(EFAULT) => Ok(()),
        Err(e) => Err(e),
        Ok(_) => Err(io::Error::other("uintr_register_handler(NULL) succeeded")),
    }
}
