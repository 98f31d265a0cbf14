// SPDX-License-Identifier: GPL-2.0

//! A lock on `raw_spinlock_t`, for the locks taken with preemption off
//! (the emulated SENDUIPI), in hard interrupt context (the kernel vector's
//! handler) and under the runqueue lock (the context switch hook).  The
//! kernel crate's `SpinLock` is a `spinlock_t`, which PREEMPT_RT turns
//! into a sleeping lock, and which lockdep with `PROVE_RAW_LOCK_NESTING`
//! rejects there.

use kernel::bindings;
use kernel::sync::lock::{Backend, Lock};

/// A spinning lock in every configuration.
pub(crate) type RawSpinLock<T> = Lock<T, RawSpinLockBackend>;

/// Creates a [`RawSpinLock`] initialiser with a lock class of its own.
macro_rules! new_raw_spinlock {
    ($inner:expr, $name:literal) => {
        $crate::raw_lock::RawSpinLock::new(
            $inner,
            kernel::c_str!($name),
            kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_raw_spinlock;

/// The [`Backend`] of [`RawSpinLock`].
pub(crate) struct RawSpinLockBackend;

// SAFETY: `raw_spinlock_t` ensures mutual exclusion; `relock` keeps the
// default, which takes the lock the same way again.
unsafe impl Backend for RawSpinLockBackend {
    type State = bindings::raw_spinlock_t;
    type GuardState = ();

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut bindings::lock_class_key,
    ) {
        // SAFETY: `Backend::init`'s contract: `ptr` is valid for writes,
        // `name` and `key` for reads for ever.
        unsafe { bindings::raw_spin_lock_init_named(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: `Backend::lock`'s contract: `ptr` is valid and was
        // initialised by `init`.
        unsafe { bindings::raw_spin_lock(ptr) }
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &Self::GuardState) {
        // SAFETY: `Backend::unlock`'s contract: `ptr` is valid and the
        // caller holds the lock.
        unsafe { bindings::raw_spin_unlock(ptr) }
    }
}
