// SPDX-License-Identifier: GPL-2.0

//! Counted references to a thread's or a process's `struct pid`, so that
//! its TID (or PID) can be reported in the PID namespace of whoever asks
//! (fdinfo), as pidfds do, and not as the number it has in the namespace
//! of its registration; and so that a process can be recognized later
//! (the receiver's, for the ioctls of its uintr_fds).

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
        Self::of_current(bindings::pid_type_PIDTYPE_PID)
    }

    /// The current thread's `struct pid` of type `kind`.
    fn of_current(kind: bindings::pid_type) -> Result<Self> {
        // SAFETY: `get_current()` is the running task, valid for the call;
        // get_task_pid() returns a new reference or NULL.
        let pid = unsafe { bindings::get_task_pid(bindings::get_current(), kind) };
        NonNull::new(pid).map(ThreadPid).ok_or(ESRCH)
    }

    /// The TID in the current task's PID namespace; 0 if the thread is not
    /// visible from there.
    pub(crate) fn in_current_namespace(&self) -> i32 {
        // SAFETY: `self.0` is a counted reference, valid until `drop`.
        unsafe { bindings::pid_vnr(self.0.as_ptr()) }
    }

    /// The TID in the initial PID namespace, as trace events give it.
    pub(crate) fn global(&self) -> i32 {
        let init_ns = core::ptr::addr_of_mut!(bindings::init_pid_ns);
        // SAFETY: `self.0` is a counted reference, valid until `drop`;
        // `init_pid_ns` is a static of the kernel, never freed.
        unsafe { bindings::pid_nr_ns(self.0.as_ptr(), init_ns) }
    }
}

impl Drop for ThreadPid {
    fn drop(&mut self) {
        // SAFETY: drops the reference taken in `current`.
        unsafe { bindings::put_pid(self.0.as_ptr()) };
    }
}

/// A reference to the `struct pid` of a process (its thread group), the
/// same for all of its threads.
pub(crate) struct ProcessPid(ThreadPid);

impl ProcessPid {
    /// The current thread's process's.  `ESRCH` if it has none (exiting).
    pub(crate) fn current() -> Result<Self> {
        ThreadPid::of_current(bindings::pid_type_PIDTYPE_TGID).map(ProcessPid)
    }

    /// Whether the current thread belongs to this process.
    pub(crate) fn is_current(&self) -> bool {
        ProcessPid::current().is_ok_and(|current| current.0 .0 == self.0 .0)
    }

    /// The PID in the current task's PID namespace; 0 if the process is
    /// not visible from there.
    pub(crate) fn in_current_namespace(&self) -> i32 {
        self.0.in_current_namespace()
    }
}
