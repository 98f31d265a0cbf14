// SPDX-License-Identifier: GPL-2.0

//! A set of CPUs that can be interrupted at once: a `struct cpumask` of
//! its own, allocated, changed and used by the C glue
//! (`arch/x86/kernel/uintr.c`).
//!
//! The bits change with atomic bit operations, from any CPU and in any
//! context; [`CpuSet::interrupt`] reads them after a full barrier.

use core::ptr::NonNull;
use kernel::bindings;
use kernel::prelude::*;

/// A set of CPUs.
pub(crate) struct CpuSet {
    /// Owned: allocated by `new`, freed by `drop`.
    mask: NonNull<bindings::cpumask>,
}

// SAFETY: the mask is plain memory that the C helpers change only with
// atomic bit operations and read only as a whole, so any CPU may use it
// through a shared reference; nothing in it belongs to a thread.
unsafe impl Send for CpuSet {}
// SAFETY: as for `Send`.
unsafe impl Sync for CpuSet {}

impl CpuSet {
    /// An empty set.  Process context.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: a plain allocation; process context as required.
        let mask = unsafe { bindings::uintr_cpumask_alloc() };
        Ok(Self {
            mask: NonNull::new(mask).ok_or(ENOMEM)?,
        })
    }

    /// Adds `cpu`, with a full barrier after it.
    pub(crate) fn add(&self, cpu: usize) {
        // SAFETY: the mask is live (owned); the helper ignores a CPU
        // number beyond the mask's bits.
        unsafe { bindings::uintr_cpumask_set(self.mask.as_ptr(), cpu_number(cpu)) };
    }

    /// Removes `cpu`.
    pub(crate) fn remove(&self, cpu: usize) {
        // SAFETY: as in `add`.
        unsafe { bindings::uintr_cpumask_clear(self.mask.as_ptr(), cpu_number(cpu)) };
    }

    /// After a full barrier, interrupts every CPU of the set (the calling
    /// one runs the no-op in place) and returns once each has taken the
    /// interrupt, so that every instruction each was executing when the
    /// barrier was passed has completed.  Process context, interrupts on,
    /// no spinlock held.
    pub(crate) fn interrupt(&self) {
        // SAFETY: the mask is live; the callers are in process context
        // with interrupts enabled and hold no spinlock, as it requires.
        unsafe { bindings::uintr_sync_cpus(self.mask.as_ptr()) };
    }
}

/// A CPU number as C takes it; one beyond `c_uint` is no CPU, and the
/// helpers ignore one beyond the mask.
fn cpu_number(cpu: usize) -> core::ffi::c_uint {
    core::ffi::c_uint::try_from(cpu).unwrap_or(core::ffi::c_uint::MAX)
}

impl Drop for CpuSet {
    fn drop(&mut self) {
        // SAFETY: allocated by `uintr_cpumask_alloc()` in `new`, freed
        // once, here; no reference to the set outlives it.
        unsafe { bindings::uintr_cpumask_free(self.mask.as_ptr()) };
    }
}
