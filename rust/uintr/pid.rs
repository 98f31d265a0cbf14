// SPDX-License-Identifier: GPL-2.0

//! A counted reference to a thread's `struct pid`, so that its TID can be
//! reported in the PID namespace of whoever asks (fdinfo), as pidfds do,
//! and not as the number it has in the namespace of its registration.

use core::ptr::NonNull;
use kernel::bindings;
use kernel::prelude::*;

/// A reference to the `struct pid` of a thread.
pub(crate) struct ThreadPid(NonNull<bindings::pid>);

// SAFETY: a `struct pid` reference may be used and dropped on any thread;
// the kernel counts it atomically.
unsafe impl Send for ThreadPid {}
// SAFETY: the methods taking `&self` only read the `struct pid`, which
// the kernel allows concurrently.
unsafe impl Sync for ThreadPid {}

impl ThreadPid {
    /// The current thread's.  `ESRCH` if it has none any more (exiting).
    pub(crate) fn current() -> Result<Self> {
        // SAFETY: `get_current()` is the running task, valid for the call;
        // get_task_pid() returns a new reference or NULL.
        let pid = unsafe {
            bindings::get_task_pid(bindings::get_current(), bindings::pid_type_PIDTYPE_PID)
        };
        NonNull::new(pid).map(ThreadPid).ok_or(ESRCH)
    }

    /// The TID in the current task's PID namespace; 0 if the thread is not
    /// visible from there.
    pub(crate) fn in_current_namespace(&self) -> i32 {
        // SAFETY: `self.0` is a counted reference, valid until `drop`.
        unsafe { bindings::pid_vnr(self.0.as_ptr()) }
    }
}

impl Drop for ThreadPid {
    fn drop(&mut self) {
        // SAFETY: drops the reference taken in `current`.
        unsafe { bindings::put_pid(self.0.as_ptr()) };
    }
}
