// SPDX-License-Identifier: GPL-2.0

//! A thread's User Interrupt state (`thread.uintr` in C).
//!
//! Two pointers, each either NULL or one reference to a [`Receiver`] or to
//! the use of a sender table (a [`SenderUse`]) (see [`slot`]), and the
//! emulated CPU's
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

use crate::receiver::Receiver;
use crate::shared::{CurrentThread, SenderUse};
use crate::slot;

/// Access to one thread's state.
pub(crate) struct ThreadState<'a> {
    raw: *mut bindings::uintr_thread,
    _state: PhantomData<&'a bindings::uintr_thread>,
}

// SAFETY: code borrows a `ThreadState` only within the call from the C
// glue that made it, and none of those calls gives up the calling
// thread's mm while it holds the borrow (exit_mm() runs outside them).
unsafe impl CurrentThread for ThreadState<'_> {}

impl<'a> ThreadState<'a> {
    /// Wraps the state of a thread.
    ///
    /// # Safety
    ///
    /// `raw` is the `thread.uintr` of the calling thread (in process or
    /// interrupt context), of a task being switched to or from, of a task
    /// being torn down that no other thread can reach, or of one that runs
    /// no code for `'a` (stopped for ptrace, or waiting for its process's
    /// core dump); it stays valid for `'a`.  Only the thread itself (or its teardown) installs or
    /// removes the receiver and the sender.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::uintr_thread) -> Self {
        Self {
            raw,
            _state: PhantomData,
        }
    }

    /// Hardware mode: UIF and UIRR as the thread's saved XSAVE state holds
    /// them.  With `save_current`, this is the calling thread's state,
    /// whose registers are saved first (XSAVES: UINV is cleared, the
    /// caller has it re-armed); otherwise it is a task's being switched
    /// out, whose registers the switch has saved.
    pub(crate) fn saved_user_state(&self, save_current: bool) -> (bool, u64) {
        let mut uirr = 0u64;
        // `from_raw`'s promise: the calling thread's state or one being
        // switched from, as the flag says (the helper checks it).
        // SAFETY: `raw` is a live `thread.uintr` for `'a`; `uirr` is
        // writable.
        let uif = unsafe { bindings::uintr_hw_saved_state(self.raw, save_current, &mut uirr) };
        (uif, uirr)
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
        unsafe { slot::borrow(self.receiver_slot()) }
    }

    /// Makes `receiver` the thread's receiver; the slot must be empty.
    /// The thread's context switches call the hook from before the
    /// receiver is there, so that none of them is missed.
    pub(crate) fn set_receiver(&self, receiver: Arc<Receiver>) {
        self.set_switch_hook(true);
        slot::fill(self.receiver_slot(), receiver);
    }

    /// Removes and returns the thread's receiver; its context switches
    /// stop calling the hook unless it is a sender.
    pub(crate) fn take_receiver(&self) -> Option<Arc<Receiver>> {
        // SAFETY: as in `receiver`.
        let receiver = unsafe { slot::take(self.receiver_slot()) };
        self.set_switch_hook(self.sender().is_some());
        receiver
    }

    /// Sets or clears the thread's TIF_UINTR_SWITCH: whether context
    /// switches to and from it call the hook (`__uintr_switch()`).
    fn set_switch_hook(&self, on: bool) {
        // SAFETY: `raw` is the live `thread.uintr` of a task (see
        // `from_raw`); the helper changes that task's flag atomically.
        unsafe { bindings::uintr_set_switch_hook(self.raw, on) };
    }

    /// The sender table the thread uses, if it is a sender: its own, or
    /// its process's shared one.
    pub(crate) fn sender(&self) -> Option<ArcBorrow<'_, SenderUse>> {
        // SAFETY: only this module writes the sender slot, with a foreign
        // `Arc<SenderUse>` or NULL.
        unsafe { slot::borrow(self.sender_slot()) }
    }

    /// Makes the thread use `table`; the slot must be empty.  As for a
    /// receiver, the hook is on first.
    pub(crate) fn set_sender(&self, table: Arc<SenderUse>) {
        self.set_switch_hook(true);
        slot::fill(self.sender_slot(), table);
    }

    /// Removes and returns the thread's use of its sender table; its
    /// context switches stop calling the hook unless it is a receiver.
    pub(crate) fn take_sender(&self) -> Option<Arc<SenderUse>> {
        // SAFETY: as in `sender`.
        let table = unsafe { slot::take(self.sender_slot()) };
        self.set_switch_hook(self.receiver().is_some());
        table
    }
}
