// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! The two files a watch most often rings on: an eventfd (a counter other
//! threads or the kernel bump) and a timerfd.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

use crate::sys;

const CLOEXEC: usize = 0o2000000;
const NONBLOCK: usize = 0o4000;
const CLOCK_MONOTONIC: usize = 1;

/// An eventfd, non-blocking: [`read`](EventFd::read) returns the counter
/// and resets it, or `WouldBlock` when it is zero.
///
/// ```no_run
/// let doorbell = uintr::EventFd::new()?;
/// doorbell.write(1)?;
/// assert_eq!(doorbell.read()?, 1);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct EventFd {
    file: File,
}

impl EventFd {
    /// A new eventfd at zero (`eventfd2(0, EFD_NONBLOCK | EFD_CLOEXEC)`).
    pub fn new() -> io::Result<EventFd> {
        let fd = sys::eventfd(0, CLOEXEC | NONBLOCK)?;
        Ok(EventFd {
            file: File::from(fd),
        })
    }

    /// Adds `n` to the counter, waking its readers (and watches).
    pub fn write(&self, n: u64) -> io::Result<()> {
        (&self.file).write_all(&n.to_ne_bytes())
    }

    /// The counter, reset to zero; `WouldBlock` if it is zero.
    pub fn read(&self) -> io::Result<u64> {
        read_u64(&self.file)
    }

    /// Another descriptor for the same eventfd, for another thread.
    pub fn try_clone(&self) -> io::Result<EventFd> {
        Ok(EventFd {
            file: self.file.try_clone()?,
        })
    }
}

impl AsFd for EventFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

/// A timerfd on `CLOCK_MONOTONIC`, non-blocking: [`read`](TimerFd::read)
/// returns the expirations since the last read, or `WouldBlock`.
#[derive(Debug)]
pub struct TimerFd {
    file: File,
}

impl TimerFd {
    /// A new, disarmed timer.
    pub fn new() -> io::Result<TimerFd> {
        let fd = sys::timerfd_create(CLOCK_MONOTONIC, CLOEXEC | NONBLOCK)?;
        Ok(TimerFd {
            file: File::from(fd),
        })
    }

    /// Arms the timer to expire after `first`, then every `interval` (zero:
    /// once); a zero `first` disarms it.
    pub fn set(&self, first: Duration, interval: Duration) -> io::Result<()> {
        let spec = sys::Itimerspec {
            interval: timespec(interval),
            value: timespec(first),
        };
        sys::timerfd_settime(self.as_fd(), &spec)
    }

    /// The expirations since the last read; `WouldBlock` if none.
    pub fn read(&self) -> io::Result<u64> {
        read_u64(&self.file)
    }
}

impl AsFd for TimerFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

fn timespec(d: Duration) -> sys::Timespec {
    sys::Timespec {
        sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nsec: i64::from(d.subsec_nanos()),
    }
}

fn read_u64(mut file: &File) -> io::Result<u64> {
    let mut buf = [0u8; 8];
    let n = file.read(&mut buf)?;
    if n != buf.len() {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(u64::from_ne_bytes(buf))
}
