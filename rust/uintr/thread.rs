// SPDX-License-Identifier: GPL-2.0

//! A thread's User Interrupt state (`thread.uintr` in C).
//!
//! Two pointers, each either NULL or one reference to a [`Receiver`] or a
//! [`Sender`] (an `Arc` turned into a raw pointer), and the emulated CPU's
//! UIRR and UIF.  This module is the only code that reads or writes them,
//! so each pointer always holds the type its name says.
//!
//! The thread changes its own state in process context, and the
//! notification interrupt may recognize requests into UIRR on top of that
//! on the same CPU; so the state is only ever accessed through atomics,
//! never through a `&mut`.

use core::ffi::c_void;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use kernel::bindings;
use kernel::sync::{Arc, ArcBorrow};
use kernel::types::ForeignOwnable;

use crate::receiver::Receiver;
use crate::sender::Sender;

/// Access to one thread's state.
pub(crate) struct ThreadState<'a> {
    raw: *mut bindings::uintr_thread,
    _state: PhantomData<&'a bindings::uintr_thread>,
}

impl<'a> ThreadState<'a> {
    /// Wraps the state of a thread.
    ///
    /// # Safety
    ///
    /// `raw` is the `thread.uintr` of the calling thread (in process or
    /// interrupt context), of a task being switched to or from, or of a
    /// task being torn down that no other thread can reach; it stays valid
    /// for `'a`.  Only the thread itself (or its teardown) installs or
    /// removes the receiver and the sender.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::uintr_thread) -> Self {
        Self {
            raw,
            _state: PhantomData,
        }
    }

    /// The C state, for the helpers that read the thread's saved
    /// registers (the same promise as `from_raw`'s holds for it).
    pub(crate) fn as_raw(&self) -> *mut bindings::uintr_thread {
        self.raw
    }

    fn receiver_slot(&self) -> &AtomicPtr<c_void> {
        // SAFETY: `raw` is valid for `'a` (see `from_raw`); the field is a
        // properly aligned pointer that is only accessed atomically.
        unsafe { AtomicPtr::from_ptr(ptr::addr_of_mut!((*self.raw).receiver)) }
    }

    fn sender_slot(&self) -> &AtomicPtr<c_void> {
        // SAFETY: as in `receiver_slot`.
        unsafe { AtomicPtr::from_ptr(ptr::addr_of_mut!((*self.raw).sender)) }
    }

    /// The emulated UIRR: requests recognized and not yet delivered.
    pub(crate) fn uirr(&self) -> &AtomicU64 {
        // SAFETY: as in `receiver_slot`; a u64 field of a C struct is
        // 8-byte aligned on x86-64.
        unsafe { AtomicU64::from_ptr(ptr::addr_of_mut!((*self.raw).uirr)) }
    }

    fn uif_cell(&self) -> &AtomicU32 {
        // SAFETY: as in `receiver_slot`.
        unsafe { AtomicU32::from_ptr(ptr::addr_of_mut!((*self.raw).uif)) }
    }

    /// The emulated UIF: user interrupts enabled.
    pub(crate) fn uif(&self) -> bool {
        self.uif_cell().load(Ordering::Relaxed) != 0
    }

    /// Sets or clears the emulated UIF.
    pub(crate) fn set_uif(&self, enabled: bool) {
        self.uif_cell().store(u32::from(enabled), Ordering::Relaxed);
    }

    /// The thread's receiver, if it registered a handler.
    pub(crate) fn receiver(&self) -> Option<ArcBorrow<'_, Receiver>> {
        // SAFETY: only this module writes the receiver slot, with a
        // foreign `Arc<Receiver>` or NULL.
        unsafe { borrow_slot(self.receiver_slot()) }
    }

    /// Makes `receiver` the thread's receiver; the slot must be empty.
    pub(crate) fn set_receiver(&self, receiver: Arc<Receiver>) {
        fill_slot(self.receiver_slot(), receiver);
    }

    /// Removes and returns the thread's receiver.
    pub(crate) fn take_receiver(&self) -> Option<Arc<Receiver>> {
        // SAFETY: as in `receiver`.
        unsafe { take_slot(self.receiver_slot()) }
    }

    /// The thread's sender, if it registered with a uintr_fd.
    pub(crate) fn sender(&self) -> Option<ArcBorrow<'_, Sender>> {
        // SAFETY: only this module writes the sender slot, with a foreign
        // `Arc<Sender>` or NULL.
        unsafe { borrow_slot(self.sender_slot()) }
    }

    /// Makes `sender` the thread's sender; the slot must be empty.
    pub(crate) fn set_sender(&self, sender: Arc<Sender>) {
        fill_slot(self.sender_slot(), sender);
    }

    /// Removes and returns the thread's sender.
    pub(crate) fn take_sender(&self) -> Option<Arc<Sender>> {
        // SAFETY: as in `sender`.
        unsafe { take_slot(self.sender_slot()) }
    }
}

/// Borrows the object a slot holds, if any.
///
/// # Safety
///
/// `slot` is NULL or holds a foreign `Arc<T>`, which only the owning
/// thread can take out, and not while it uses the borrow.
unsafe fn borrow_slot<'a, T: 'static>(slot: &'a AtomicPtr<c_void>) -> Option<ArcBorrow<'a, T>> {
    let raw = slot.load(Ordering::Acquire);
    if raw.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so a foreign `Arc<T>` that outlives the borrow,
    // by the caller's promise.
    Some(unsafe { Arc::<T>::borrow(raw) })
}

/// Stores one reference to `object` in an empty slot.
fn fill_slot<T: 'static>(slot: &AtomicPtr<c_void>, object: Arc<T>) {
    let old = slot.swap(object.into_foreign() as *mut c_void, Ordering::AcqRel);
    debug_assert!(old.is_null());
}

/// Takes the reference out of a slot, leaving it NULL.
///
/// # Safety
///
/// `slot` is NULL or holds a foreign `Arc<T>`.
unsafe fn take_slot<T: 'static>(slot: &AtomicPtr<c_void>) -> Option<Arc<T>> {
    let raw = slot.swap(ptr::null_mut(), Ordering::AcqRel);
    if raw.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so a foreign `Arc<T>`, whose ownership moves out
    // of the slot (now NULL).
    Some(unsafe { Arc::<T>::from_foreign(raw) })
}
