// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! The receiving thread: its handler registration, its vectors and its
//! waits.

use std::io;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use crate::arrivals::Arrivals;
use crate::connection::SelfConnection;
use crate::fd::UintrFd;
use crate::{handler, sys, Vector, VectorSet};

/// `<linux/uintr.h>` handler flags.
const FLAG_INTERRUPT_SLEEP: u32 = 0x1;
const FLAG_RESTART: u32 = 0x2;

/// The calling thread as a receiver of user interrupts.
///
/// Registering installs the crate's handler, which records each delivery in
/// the receiver's [`Arrivals`]; dropping the receiver unregisters it:
/// senders still connected may go on sending, harmlessly (what they post
/// is never delivered), and new connections to its vectors fail with
/// `ESHUTDOWN`. The registration belongs to the thread, so a `Receiver` is
/// neither `Send` nor `Sync`. Interrupts are delivered only while they are
/// enabled ([`Receiver::enable`]); they start disabled.
///
/// ```no_run
/// use uintr::{Receiver, Vector};
///
/// let receiver = Receiver::new()?;
/// let fd = receiver.create_fd(Vector::new(3).unwrap())?;
/// // Hand `fd` to a sender thread, which calls `fd.connect()?.send()`.
/// receiver.enable();
/// receiver.wait()?;
/// assert!(receiver.arrivals().take().contains(Vector::new(3).unwrap()));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Receiver {
    arrivals: Arc<Arrivals>,
    /// The alternate delivery stack, if any: kept until the registration
    /// ends (`drop` unregisters before the fields go).
    alt_stack: Option<handler::AltStack>,
    _per_thread: PhantomData<*const ()>,
}

/// Options of a receiver's registration, from [`Receiver::builder`].
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until `register` is called"]
pub struct Builder {
    flags: u32,
    alt_stack: Option<usize>,
}

impl Builder {
    /// A user interrupt also ends an interruptible sleep of the thread in
    /// another system call, which then fails with `EINTR` as after a
    /// signal (`UINTR_HANDLER_FLAG_INTERRUPT_SLEEP`).
    pub fn interrupt_sleep(mut self) -> Builder {
        self.flags |= FLAG_INTERRUPT_SLEEP;
        self
    }

    /// As [`interrupt_sleep`](Builder::interrupt_sleep), but the system
    /// calls that `SA_RESTART` restarts after a signal are restarted
    /// instead of failing (`UINTR_HANDLER_FLAG_RESTART`).
    pub fn restart(mut self) -> Builder {
        self.flags |= FLAG_INTERRUPT_SLEEP | FLAG_RESTART;
        self
    }

    /// Deliveries push their frame on a stack of `size` bytes that the
    /// receiver owns, not on the interrupted one (`uintr_alt_stack()`).
    /// The handler takes a few KiB of it (the extended state it saves).
    pub fn alt_stack(mut self, size: usize) -> Builder {
        self.alt_stack = Some(size);
        self
    }

    /// Registers the calling thread as a receiver.
    ///
    /// # Errors
    ///
    /// `EBUSY` if the thread is a receiver already, `EOPNOTSUPP` if user
    /// interrupts are off on this boot, `ENOSYS` without kernel support,
    /// `EINVAL` for an alternate stack under 48 bytes; `Unsupported` if the
    /// CPU or kernel lacks XSAVE, which the handler needs.
    pub fn register(self) -> io::Result<Receiver> {
        let arrivals = Arc::new(Arrivals::default());
        handler::install(&arrivals, self.flags)?;
        let mut receiver = Receiver {
            arrivals,
            alt_stack: None,
            _per_thread: PhantomData,
        };
        if let Some(size) = self.alt_stack {
            receiver.alt_stack = Some(handler::AltStack::install(size)?);
        }
        Ok(receiver)
    }
}

impl Receiver {
    /// Registers the calling thread as a receiver with the default options.
    ///
    /// # Errors
    ///
    /// As [`Builder::register`].
    pub fn new() -> io::Result<Receiver> {
        Builder::default().register()
    }

    /// Options for the registration.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The record of deliveries the handler keeps.
    pub fn arrivals(&self) -> &Arc<Arrivals> {
        &self.arrivals
    }

    /// A uintr file descriptor for vector `v` of this thread, to hand to a
    /// sender (`uintr_create_fd()`).
    ///
    /// # Errors
    ///
    /// `EBUSY` if `v` has a file descriptor or a self connection already.
    pub fn create_fd(&self, v: Vector) -> io::Result<UintrFd> {
        sys::create_fd(v.get()).map(UintrFd::from)
    }

    /// A connection through which this thread interrupts itself with
    /// vector `v` (`uintr_register_self()`), in the thread's sender table.
    ///
    /// # Errors
    ///
    /// `EBUSY` if `v` has a file descriptor or a self connection already.
    pub fn connect_self(&self, v: Vector) -> io::Result<SelfConnection<'_>> {
        let index = sys::register_self(v.get(), 0)?;
        Ok(SelfConnection::new(index))
    }

    /// Enables delivery (STUI); what is pending is delivered at once.
    pub fn enable(&self) {
        sys::stui();
    }

    /// Disables delivery (CLUI) until the guard is dropped, which enables
    /// it again if it was enabled. Posts that come in meanwhile stay
    /// pending (posts of one vector coalesce).
    pub fn disable(&self) -> Disabled<'_> {
        let was_enabled = sys::testui();
        sys::clui();
        Disabled {
            was_enabled,
            _receiver: PhantomData,
        }
    }

    /// Whether delivery is enabled (TESTUI).
    pub fn is_enabled(&self) -> bool {
        sys::testui()
    }

    /// Sleeps until a user interrupt is pending (`uintr_wait()`); if
    /// delivery is enabled, the handler has run for it when this returns.
    /// A signal ends the wait too, as it would any sleep.
    ///
    /// With delivery enabled, an interrupt that comes in before the call is
    /// delivered before it and does not end it: use
    /// [`wait_for_delivery`](Receiver::wait_for_delivery) to sleep only if
    /// nothing arrived since a given point.
    pub fn wait(&self) -> io::Result<()> {
        woken(sys::wait(None, None))
    }

    /// As [`wait`](Receiver::wait), for at most `timeout`: `Ok(false)` if
    /// it expired with nothing pending. A zero timeout only looks.
    pub fn wait_timeout(&self, timeout: Duration) -> io::Result<bool> {
        let t = sys::Timespec {
            sec: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
            nsec: i64::from(timeout.subsec_nanos()),
        };
        match woken(sys::wait(Some(&t), None)) {
            Ok(()) => Ok(true),
            Err(e) if e.raw_os_error() == Some(ETIMEDOUT) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Sleeps as [`wait`](Receiver::wait) does, unless the handler took an
    /// interrupt since [`Arrivals::deliveries`] returned `seen`; then it
    /// returns at once. The lost-wakeup-free way to sleep with delivery
    /// enabled (`UINTR_WAIT_VALUE`):
    ///
    /// ```no_run
    /// # let receiver = uintr::Receiver::new()?;
    /// # let work = || false;
    /// loop {
    ///     let seen = receiver.arrivals().deliveries();
    ///     if !work() {
    ///         receiver.wait_for_delivery(seen)?;
    ///     }
    /// }
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn wait_for_delivery(&self, seen: u64) -> io::Result<()> {
        match woken(sys::wait(
            None,
            Some((self.arrivals.deliveries_word(), seen)),
        )) {
            Err(e) if e.raw_os_error() == Some(EAGAIN) => Ok(()),
            other => other,
        }
    }

    /// The vectors pending for this thread and not yet delivered
    /// (`uintr_pending()`).
    pub fn pending(&self) -> io::Result<VectorSet> {
        sys::pending(0).map(VectorSet::from_bits)
    }

    /// The vectors pending, taken: no handler runs for them
    /// (`uintr_pending(UINTR_PENDING_TAKE)`). For receivers that run with
    /// delivery disabled and poll, an event loop say.
    pub fn take_pending(&self) -> io::Result<VectorSet> {
        sys::pending(sys::UINTR_PENDING_TAKE).map(VectorSet::from_bits)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        handler::uninstall();
        // Only now may the alternate stack and the arrivals go.
    }
}

/// Delivery disabled, from [`Receiver::disable`]; enabled again on drop if
/// it was enabled before.
#[derive(Debug)]
#[must_use = "delivery is enabled again when the guard is dropped"]
pub struct Disabled<'r> {
    was_enabled: bool,
    _receiver: PhantomData<&'r Receiver>,
}

impl Drop for Disabled<'_> {
    fn drop(&mut self) {
        if self.was_enabled {
            sys::stui();
        }
    }
}

const EAGAIN: i32 = 11;
const EINTR: i32 = 4;
const ETIMEDOUT: i32 = 110;

/// uintr_wait() never returns 0: EINTR is its way out when an interrupt is
/// pending (or a signal handler ran).
fn woken(ret: io::Result<usize>) -> io::Result<()> {
    match ret {
        Err(e) if e.raw_os_error() == Some(EINTR) => Ok(()),
        Err(e) => Err(e),
        Ok(_) => Ok(()),
    }
}
