// SPDX-License-Identifier: GPL-2.0

//! The calling thread's User Interrupt state (`thread.uintr` in C).
//!
//! Two pointers, each either NULL or one reference to a [`Receiver`] or a
//! [`Sender`] (an `Arc` turned into a raw pointer).  This module is the
//! only code that reads or writes them, so each pointer always holds the
//! type its name says.

use core::ffi::c_void;
use core::ptr;
use kernel::bindings;
use kernel::sync::{Arc, ArcBorrow};
use kernel::types::ForeignOwnable;

use crate::receiver::Receiver;
use crate::sender::Sender;

/// Exclusive access to one thread's state.
pub(crate) struct ThreadState<'a> {
    raw: &'a mut bindings::uintr_thread,
}

/// Borrows the object a non-NULL slot holds.
///
/// # Safety
///
/// `slot` is NULL or holds a foreign `Arc<T>` that stays put while the
/// borrow lives.
unsafe fn borrow_slot<'a, T: 'static>(slot: *mut c_void) -> Option<ArcBorrow<'a, T>> {
    if slot.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so a foreign `Arc<T>` by the caller's promise.
    Some(unsafe { Arc::<T>::borrow(slot) })
}

/// Takes the reference out of a slot, leaving it NULL.
///
/// # Safety
///
/// `slot` is NULL or holds a foreign `Arc<T>`.
unsafe fn take_slot<T: 'static>(slot: &mut *mut c_void) -> Option<Arc<T>> {
    let raw = core::mem::replace(slot, ptr::null_mut());
    if raw.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so a foreign `Arc<T>`, whose ownership moves out
    // of the slot (now NULL).
    Some(unsafe { Arc::<T>::from_foreign(raw) })
}

impl<'a> ThreadState<'a> {
    /// Wraps the state of a thread.
    ///
    /// # Safety
    ///
    /// `raw` is the `thread.uintr` of the calling thread, or of a task
    /// being torn down that no other thread can reach; it stays valid and
    /// untouched by anyone else for `'a`.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::uintr_thread) -> Self {
        // SAFETY: valid and exclusive for `'a`, by the caller's promise.
        Self {
            raw: unsafe { &mut *raw },
        }
    }

    /// The thread's receiver, if it registered a handler.
    pub(crate) fn receiver(&self) -> Option<ArcBorrow<'_, Receiver>> {
        // SAFETY: the receiver slot is only ever written by this module,
        // with a foreign `Arc<Receiver>` or NULL.
        unsafe { borrow_slot(self.raw.receiver) }
    }

    /// Makes `receiver` the thread's receiver; the slot must be empty.
    pub(crate) fn set_receiver(&mut self, receiver: Arc<Receiver>) {
        // SAFETY: as in `receiver`.
        let old = unsafe { take_slot::<Receiver>(&mut self.raw.receiver) };
        debug_assert!(old.is_none());
        self.raw.receiver = receiver.into_foreign() as *mut c_void;
    }

    /// Removes and returns the thread's receiver.
    pub(crate) fn take_receiver(&mut self) -> Option<Arc<Receiver>> {
        // SAFETY: as in `receiver`.
        unsafe { take_slot(&mut self.raw.receiver) }
    }

    /// Makes `sender` the thread's sender; the slot must be empty.
    pub(crate) fn set_sender(&mut self, sender: Arc<Sender>) {
        // SAFETY: as in `sender`.
        let old = unsafe { take_slot::<Sender>(&mut self.raw.sender) };
        debug_assert!(old.is_none());
        self.raw.sender = sender.into_foreign() as *mut c_void;
    }

    /// The thread's sender, if it registered with a uintr_fd.
    pub(crate) fn sender(&self) -> Option<ArcBorrow<'_, Sender>> {
        // SAFETY: the sender slot is only ever written by this module,
        // with a foreign `Arc<Sender>` or NULL.
        unsafe { borrow_slot(self.raw.sender) }
    }

    /// Removes and returns the thread's sender.
    pub(crate) fn take_sender(&mut self) -> Option<Arc<Sender>> {
        // SAFETY: as in `sender`.
        unsafe { take_slot(&mut self.raw.sender) }
    }
}
