// SPDX-License-Identifier: GPL-2.0

//! The trace events (include/trace/events/uintr.h, system `uintr`).
//!
//! The kernel crate cannot declare tracepoints here, so each event has a C
//! function that emits it (arch/x86/kernel/uintr_trace.c).  An event's
//! function here calls it only while the event is enabled, which it reads
//! from the tracepoint's static key: a disabled event costs a load and a
//! not-taken branch, and no call.  Arguments that take work to compute
//! (a thread's TID) are passed as the object they come from and read only
//! while the event is on.

use kernel::bindings;
use kernel::sync::{Arc, ArcBorrow};
use kernel::task::Task;

/// A thread whose TID an event records, in the initial PID namespace as the
/// events' `common_pid` is.
pub(crate) trait Thread {
    /// The thread's TID in the initial PID namespace.
    fn global_tid(&self) -> i32;
}

/// Events take a receiver however its caller holds it.
impl<T: Thread> Thread for Arc<T> {
    fn global_tid(&self) -> i32 {
        T::global_tid(self)
    }
}

impl<T: Thread> Thread for ArcBorrow<'_, T> {
    fn global_tid(&self) -> i32 {
        T::global_tid(self)
    }
}

impl Thread for Task {
    fn global_tid(&self) -> i32 {
        // `task_struct.pid` is the TID in the initial namespace.
        self.pid()
    }
}

// The codes are the header's, small: `as i32` is exact.

/// How uintr_wait() ended.
#[derive(Clone, Copy)]
#[repr(i32)]
pub(crate) enum WaitEnd {
    /// A request is pending.
    Interrupt = bindings::UINTR_TRACE_WAIT_INTERRUPT as i32,
    /// A signal came, or the CPU it was listed on went offline.
    Signal = bindings::UINTR_TRACE_WAIT_SIGNAL as i32,
    /// The deadline passed.
    Timeout = bindings::UINTR_TRACE_WAIT_TIMEOUT as i32,
}

/// What became of a system call whose sleep a user interrupt ended.
#[derive(Clone, Copy)]
#[repr(i32)]
pub(crate) enum SleepFate {
    /// Fails with EINTR.
    Eintr = bindings::UINTR_TRACE_SLEEP_EINTR as i32,
    /// Is entered again after the handler.
    Restart = bindings::UINTR_TRACE_SLEEP_RESTART as i32,
    /// Its result stands.
    Keep = bindings::UINTR_TRACE_SLEEP_KEEP as i32,
}

/// What a context switch did to a receiver's UPID.
#[derive(Clone, Copy)]
#[repr(i32)]
pub(crate) enum Switch {
    /// Leaving: posts no longer notify.
    Suppress = bindings::UINTR_TRACE_SWITCH_SUPPRESS as i32,
    /// Leaving for a sleep that posts interrupt: they notify the kernel
    /// vector.
    Arm = bindings::UINTR_TRACE_SWITCH_ARM as i32,
    /// Arriving: posts notify this CPU.
    Retarget = bindings::UINTR_TRACE_SWITCH_RETARGET as i32,
    /// Arriving back from an armed sleep.
    Disarm = bindings::UINTR_TRACE_SWITCH_DISARM as i32,
}

/// Whether the event whose tracepoint is `$tp` is enabled.
#[cfg(CONFIG_TRACEPOINTS)]
macro_rules! enabled {
    ($tp:ident) => {{
        // The key's count, read as static_key_enabled() does: one racy
        // load, which the key's writers expect (they also patch C callers).
        // SAFETY: the tracepoint is a static of the kernel, always valid.
        let count = unsafe {
            core::ptr::read_volatile(core::ptr::addr_of!(bindings::$tp.key.enabled.counter))
        };
        count > 0
    }};
}

/// Defines, for each event, a function that emits it if it is enabled.
macro_rules! events {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) => $tp:ident, $emit:ident($($value:expr),*);
    )*) => {$(
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name($($arg: $ty),*) {
            #[cfg(CONFIG_TRACEPOINTS)]
            if enabled!($tp) {
                // SAFETY: the C function takes plain values and only
                // records them in the trace buffers.
                unsafe { bindings::$emit($($value),*) };
            }
            #[cfg(not(CONFIG_TRACEPOINTS))]
            let _ = ($($arg,)*);
        }
    )*};
}

events! {
    /// uintr_register_handler() succeeded.
    fn register_handler(handler: u64, flags: u32) =>
        __tracepoint_uintr_register_handler, uintr_trace_register_handler(handler, flags);
    /// uintr_unregister_handler() succeeded.
    fn unregister_handler(handler: u64, flags: u32) =>
        __tracepoint_uintr_unregister_handler, uintr_trace_unregister_handler(handler, flags);
    /// A uintr_fd was created for `vector` of thread `receiver`.
    fn fd_create(vector: u8, receiver: &impl Thread) =>
        __tracepoint_uintr_fd_create, uintr_trace_fd_create(vector, receiver.global_tid());
    /// The last reference to a uintr_fd's file went.
    fn fd_release(vector: u8, receiver: &impl Thread) =>
        __tracepoint_uintr_fd_release, uintr_trace_fd_release(vector, receiver.global_tid());
    /// A sender's UITT entry `index` now posts `vector` to `receiver`.
    fn connect(index: usize, vector: u8, receiver: &impl Thread) =>
        __tracepoint_uintr_connect,
        uintr_trace_connect(index as u64, vector, receiver.global_tid());
    /// UITT entry `index` no longer posts `vector` to `receiver`.
    fn disconnect(index: usize, vector: u8, receiver: &impl Thread) =>
        __tracepoint_uintr_disconnect,
        uintr_trace_disconnect(index as u64, vector, receiver.global_tid());
    /// An emulated SENDUIPI posted `vector` through `index`, and sent
    /// notification vector `nv` to `ndst` if `notified`.
    fn send(index: u64, vector: u8, notified: bool, nv: u8, ndst: u32) =>
        __tracepoint_uintr_send, uintr_trace_send(index, vector, notified, nv, ndst);
    /// Notification vector `nv` was recognized for thread `receiver`, with
    /// `posted` in its UPID.
    fn notify(nv: u8, receiver: &impl Thread, posted: u64) =>
        __tracepoint_uintr_notify, uintr_trace_notify(nv, receiver.global_tid(), posted);
    /// An emulated delivery of `vector` pushed its frame at `frame`.
    fn deliver(vector: u8, frame: u64, handler: u64) =>
        __tracepoint_uintr_deliver, uintr_trace_deliver(vector, frame, handler);
    /// An emulated UIRET returned to `rip` with stack `rsp`.
    fn uiret(rip: u64, rsp: u64, pending: bool) =>
        __tracepoint_uintr_uiret, uintr_trace_uiret(rip, rsp, pending);
    /// uintr_wait() starts; `deadline_ns` (CLOCK_MONOTONIC) is -1 without
    /// a timeout.
    fn wait_begin(deadline_ns: i64) =>
        __tracepoint_uintr_wait_begin, uintr_trace_wait_begin(deadline_ns);
    /// uintr_wait() ends.
    fn wait_end(how: WaitEnd) =>
        __tracepoint_uintr_wait_end, uintr_trace_wait_end(how as i32);
    /// A user interrupt ended the sleep of system call `nr` (result `ret`).
    fn sleep_interrupted(nr: u64, ret: i64, fate: SleepFate) =>
        __tracepoint_uintr_sleep_interrupted,
        uintr_trace_sleep_interrupted(nr as _, ret as _, fate as i32);
    /// A context switch changed the UPID of thread `receiver`.
    fn switch(what: Switch, receiver: &impl Thread, ndst: u32) =>
        __tracepoint_uintr_switch, uintr_trace_switch(what as i32, receiver.global_tid(), ndst);
    /// A wakeup of a watched file with `events` posted `vector` to the
    /// thread `receiver` (a TID in the initial PID namespace), and sent
    /// notification vector `nv` to `ndst` if `notified`.
    fn watch_post(vector: u8, receiver: i32, events: u32, notified: bool, nv: u8, ndst: u32) =>
        __tracepoint_uintr_watch_post,
        uintr_trace_watch_post(vector, receiver, events, notified, nv, ndst);
}
