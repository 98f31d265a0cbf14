// SPDX-License-Identifier: GPL-2.0

//! A C pointer field that holds one reference to a Rust object.
//!
//! The field is NULL or one `Arc<T>` turned into a raw pointer (a foreign
//! `Arc`), and is only ever accessed atomically.  The wrappers that own
//! such fields ([`crate::thread`], [`crate::shared`]) say which `T` each
//! holds and who may take it out; these helpers do the conversions.

use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::sync::{Arc, ArcBorrow};
use kernel::types::ForeignOwnable;

/// Borrows the object a slot holds, if any.
///
/// # Safety
///
/// `slot` is NULL or holds a foreign `Arc<T>`, which nobody takes out
/// while the borrow is used.
pub(crate) unsafe fn borrow<'a, T: 'static>(
    slot: &'a AtomicPtr<c_void>,
) -> Option<ArcBorrow<'a, T>> {
    let raw = slot.load(Ordering::Acquire);
    if raw.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so a foreign `Arc<T>` that outlives the borrow,
    // by the caller's promise.
    Some(unsafe { Arc::<T>::borrow(raw) })
}

/// Stores one reference to `object` in an empty slot.
pub(crate) fn fill<T: 'static>(slot: &AtomicPtr<c_void>, object: Arc<T>) {
    let old = slot.swap(object.into_foreign() as *mut c_void, Ordering::AcqRel);
    debug_assert!(old.is_null());
}

/// Stores `object` in the slot if it is empty; gives it back if not.
pub(crate) fn fill_if_empty<T: 'static>(
    slot: &AtomicPtr<c_void>,
    object: Arc<T>,
) -> Result<(), Arc<T>> {
    let raw = object.into_foreign() as *mut c_void;
    match slot.compare_exchange(ptr::null_mut(), raw, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Ok(()),
        // SAFETY: the exchange failed, so `raw` was not stored: it is
        // still the only pointer to the reference made above.
        Err(_) => Err(unsafe { Arc::<T>::from_foreign(raw) }),
    }
}

/// Takes the reference out of a slot, leaving it NULL.
///
/// # Safety
///
/// `slot` is NULL or holds a foreign `Arc<T>`.
pub(crate) unsafe fn take<T: 'static>(slot: &AtomicPtr<c_void>) -> Option<Arc<T>> {
    let raw = slot.swap(ptr::null_mut(), Ordering::AcqRel);
    if raw.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so a foreign `Arc<T>`, whose ownership moves out
    // of the slot (now NULL).
    Some(unsafe { Arc::<T>::from_foreign(raw) })
}
