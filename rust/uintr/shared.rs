// SPDX-License-Identifier: GPL-2.0

//! Sender tables in use, and the table a process's threads share.
//!
//! A [`Sender`] (a UITT and its connections) is used by a thread whose
//! SENDUIPI reads it, by a process whose threads share it, or by an ipi
//! fd (uintr_ipi_fd()) that passes it to other processes.  Each of those
//! holds a reference to the table's [`SenderUse`]; the table's
//! connections are torn down when the last one goes.  (The table and the
//! uintr_fds it connects to refer to each other, so the table's own
//! reference count never reaches zero by itself.)
//!
//! A thread's own table (the default) has one use, the thread's.  A
//! process's shared table has one use in the process, `mm->context.
//! uintr_table` in C, one in each thread that joined it and one in each
//! ipi fd: any number of threads in any number of processes (ipi fds
//! install it in other processes).  The process's field is set once,
//! from NULL (the first of concurrent callers wins), and emptied when the
//! address space goes.  A child of fork() starts with it NULL
//! (init_new_context()): the table's connections are capabilities, and
//! sharing them with a child would let each process send through what
//! only the other connected; an ipi fd shares them explicitly.

use core::ffi::c_void;
use core::sync::atomic::AtomicPtr;
use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

use crate::sender::Sender;
use crate::slot;
use crate::stats::{self, Live};

/// The handle of a sender table that its users (threads, processes, ipi
/// fds) hold, one reference each.
pub(crate) struct SenderUse {
    table: Arc<Sender>,
}

impl SenderUse {
    /// A new, empty table, with its first reference.
    pub(crate) fn new_table() -> Result<Arc<Self>> {
        let table = Sender::new()?;
        Ok(Arc::new(SenderUse { table }, GFP_KERNEL_ACCOUNT)?)
    }

    /// The table.
    pub(crate) fn table(&self) -> &Arc<Sender> {
        &self.table
    }
}

impl Drop for SenderUse {
    fn drop(&mut self) {
        // The last user is gone: nobody can reach the table to connect
        // again, so its connections go now (they keep it alive).
        self.table.shutdown();
    }
}

/// What an ipi fd (uintr_ipi_fd()) holds: one use of a shared table.
pub(crate) struct IpiFd {
    table: Arc<SenderUse>,
    /// Counts this fd in [`stats::IPI_FDS`].
    _live: Live,
}

impl IpiFd {
    /// An ipi fd's object, holding one use of `table`.
    pub(crate) fn new(table: Arc<SenderUse>) -> Result<Arc<Self>> {
        let live = Live::new(&stats::IPI_FDS);
        Ok(Arc::new(IpiFd { table, _live: live }, GFP_KERNEL_ACCOUNT)?)
    }

    /// One more use of the table.
    pub(crate) fn table(&self) -> Arc<SenderUse> {
        self.table.clone()
    }
}

/// The calling thread's own state, the witness that
/// [`ProcessTable::of_current`] borrows for as long as it uses the
/// process's table.  (`thread::ThreadState` is the state; it lives above
/// the tables it uses.)
///
/// # Safety
///
/// While a borrow of the implementor lasts, the calling thread keeps its
/// address space: a borrow never outlives the call into this component
/// that made it, and no such call gives up its thread's mm.
pub(crate) unsafe trait CurrentThread {}

/// A process's shared table field (`mm->context.uintr_table`).
pub(crate) struct ProcessTable<'a> {
    field: &'a AtomicPtr<c_void>,
}

impl<'a> ProcessTable<'a> {
    /// Wraps the field of an address space.
    ///
    /// # Safety
    ///
    /// `field` is the `context.uintr_table` of an mm that stays alive for
    /// `'a`, which only this module writes; while `'a` lasts nobody empties
    /// it but the caller (the mm's teardown).
    pub(crate) unsafe fn from_raw(field: *mut *mut c_void) -> Self {
        Self {
            // SAFETY: valid for `'a`, by the caller's promise; a pointer
            // field, aligned, only accessed atomically.
            field: unsafe { AtomicPtr::from_ptr(field) },
        }
    }

    /// The field of the process of `thread`, the calling thread; `None`
    /// in a kernel thread.
    pub(crate) fn of_current(_thread: &'a impl CurrentThread) -> Option<Self> {
        // SAFETY: a plain C function without preconditions.
        let field = unsafe { bindings::uintr_current_mm_table() };
        if field.is_null() {
            return None;
        }
        // SAFETY: the mm outlives the borrow of its running thread's state
        // (`CurrentThread`); its field is emptied only at the mm's teardown.
        Some(unsafe { ProcessTable::from_raw(field) })
    }

    /// The shared table, if the process has one.
    pub(crate) fn get(&self) -> Option<ArcBorrow<'_, SenderUse>> {
        // SAFETY: the field holds NULL or a foreign `Arc<SenderUse>`, which
        // is not taken out while `'a` lasts (see `from_raw`).
        unsafe { slot::borrow(self.field) }
    }

    /// The shared table, made now if the process has none.
    pub(crate) fn get_or_create(&self) -> Result<Arc<SenderUse>> {
        if let Some(table) = self.get() {
            return Ok(table.into());
        }
        self.install(SenderUse::new_table()?)
            .or_else(|_| self.get().map(Into::into).ok_or(EAGAIN))
    }

    /// Makes `table` the shared table unless the process has another
    /// one (`EBUSY`); returns the process's table.
    pub(crate) fn install(&self, table: Arc<SenderUse>) -> Result<Arc<SenderUse>> {
        match slot::fill_if_empty(self.field, table.clone()) {
            Ok(()) => Ok(table),
            Err(_) => match self.get() {
                Some(current) if Arc::ptr_eq(current.table(), table.table()) => Ok(table),
                _ => Err(EBUSY),
            },
        }
    }

    /// The address space goes: drops its use of the table.
    pub(crate) fn release(&self) {
        // SAFETY: the field holds NULL or a foreign `Arc<SenderUse>`.
        drop(unsafe { slot::take::<SenderUse>(self.field) });
    }
}

/// Whether `table` is the shared table of the process of `thread`, the
/// calling thread.
pub(crate) fn is_process_table(thread: &impl CurrentThread, table: &SenderUse) -> bool {
    ProcessTable::of_current(thread)
        .and_then(|process| {
            process
                .get()
                .map(|shared| Arc::ptr_eq(shared.table(), table.table()))
        })
        .unwrap_or(false)
}
