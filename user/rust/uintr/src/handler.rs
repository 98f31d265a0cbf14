// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! The raw layer of delivery: the handler the kernel calls, and the
//! per-thread pointer that leads it to the receiver's [`Arrivals`].
//!
//! A delivery interrupts its thread anywhere in user space, with UIF
//! cleared, at a 16-byte aligned stack pointer below the red zone (or on
//! the alternate stack), after pushing, lowest address first, the vector
//! and the interrupted RIP, RFLAGS and RSP. The trampoline below:
//!
//! 1. saves the registers a call may clobber (rax, rcx, rdx, rsi, rdi,
//!    r8-r11), then rbp, which it uses to find the frame again;
//! 2. saves the extended state (XSAVE of the components of [`xsave`], on a
//!    64-byte aligned area below, its header zeroed first as XRSTOR
//!    requires);
//! 3. clears DF, as the calling convention requires (UIRET restores
//!    RFLAGS), and calls [`dispatch`] with the vector;
//! 4. restores all of it, pops the vector and returns with UIRET, which
//!    pops RIP, RFLAGS and RSP and sets UIF again.
//!
//! Callee-saved registers are the callee's to keep, so the interrupted code
//! sees every register as it left it: the delivery is invisible to it but
//! for what the handler stores in memory.
//!
//! [`xsave`]: crate::xsave

use std::arch::global_asm;
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::arrivals::Arrivals;
use crate::sys;
use crate::xsave;
use crate::Vector;

/// The XSAVE area's size and requested-feature bitmap, read by the
/// trampoline; set once, before the first handler is registered.
static XSAVE_SIZE: AtomicU64 = AtomicU64::new(0);
static XSAVE_MASK: AtomicU64 = AtomicU64::new(0);

/// Registers the trampoline pushes before it sets rbp: the nine a call may
/// clobber, and rbp.
const PUSHED_REGISTERS: u64 = 10;
/// Where the vector is, from rbp: the delivery pushed it last, right above
/// the trampoline's pushes.
const VECTOR_OFFSET: u64 = 8 * PUSHED_REGISTERS;
/// The XSAVE header, which XRSTOR checks, in the standard-format area.
const XSAVE_HEADER: u64 = 512;

global_asm!(
    ".pushsection .text.uintr_rs_trampoline, \"ax\", @progbits",
    ".p2align 4",
    "uintr_rs_trampoline:",
    "push rax",
    "push rcx",
    "push rdx",
    "push rsi",
    "push rdi",
    "push r8",
    "push r9",
    "push r10",
    "push r11",
    "push rbp",
    "mov rbp, rsp",
    "sub rsp, qword ptr [rip + {size}]",
    "and rsp, -64",
    "xor eax, eax",
    "mov qword ptr [rsp + {header} + 0], rax",
    "mov qword ptr [rsp + {header} + 8], rax",
    "mov qword ptr [rsp + {header} + 16], rax",
    "mov qword ptr [rsp + {header} + 24], rax",
    "mov qword ptr [rsp + {header} + 32], rax",
    "mov qword ptr [rsp + {header} + 40], rax",
    "mov qword ptr [rsp + {header} + 48], rax",
    "mov qword ptr [rsp + {header} + 56], rax",
    "mov eax, dword ptr [rip + {mask}]",
    "mov edx, dword ptr [rip + {mask} + 4]",
    // xsave64 [rsp]
    ".byte 0x48, 0x0f, 0xae, 0x24, 0x24",
    "cld",
    // The vector: above rbp's slot, the nine saved registers.
    "mov rdi, qword ptr [rbp + {vector}]",
    "call {dispatch}",
    "mov eax, dword ptr [rip + {mask}]",
    "mov edx, dword ptr [rip + {mask} + 4]",
    // xrstor64 [rsp]
    ".byte 0x48, 0x0f, 0xae, 0x2c, 0x24",
    "mov rsp, rbp",
    "pop rbp",
    "pop r11",
    "pop r10",
    "pop r9",
    "pop r8",
    "pop rdi",
    "pop rsi",
    "pop rdx",
    "pop rcx",
    "pop rax",
    "add rsp, 8",
    // uiret
    ".byte 0xf3, 0x0f, 0x01, 0xec",
    ".popsection",
    header = const XSAVE_HEADER,
    vector = const VECTOR_OFFSET,
    size = sym XSAVE_SIZE,
    mask = sym XSAVE_MASK,
    dispatch = sym dispatch,
);

extern "C" {
    /// The handler entry point above; not callable from Rust.
    fn uintr_rs_trampoline();
}

thread_local! {
    /// The arrivals of this thread's receiver, or null. Constant-initialised
    /// and without a destructor, so that reading it from the handler is a
    /// load relative to FS: no lazy initialisation, no allocation.
    static CURRENT: Cell<*const Arrivals> = const { Cell::new(ptr::null()) };
}

/// Called by the trampoline, on the interrupted thread, with UIF clear.
extern "C" fn dispatch(vector: u64) {
    let arrivals = CURRENT.with(Cell::get);
    // SAFETY: CURRENT is non-null only between `install()` and
    // `uninstall()`, which the thread's `Receiver` calls around its
    // registration while it holds the `Arc<Arrivals>` pointed to; deliveries
    // happen on this thread only, between those two points.
    if let Some(arrivals) = unsafe { arrivals.as_ref() } {
        arrivals.record(Vector::from_delivery(vector));
    }
    #[cfg(feature = "scramble-registers")]
    scramble();
}

/// Overwrites every register the trampoline saves for the interrupted code
/// (the caller-saved integer registers and xmm0-15), so that a register it
/// failed to save or restore shows as a wrong result there: the guest
/// tests build the crate with this feature.
#[cfg(feature = "scramble-registers")]
#[inline(never)]
fn scramble() {
    // SAFETY: writes only the registers declared clobbered; no memory.
    unsafe {
        std::arch::asm!(
            "mov rax, -1", "mov rcx, -1", "mov rdx, -1", "mov rsi, -1", "mov rdi, -1",
            "mov r8, -1", "mov r9, -1", "mov r10, -1", "mov r11, -1",
            "pcmpeqd xmm0, xmm0", "pcmpeqd xmm1, xmm1", "pcmpeqd xmm2, xmm2",
            "pcmpeqd xmm3, xmm3", "pcmpeqd xmm4, xmm4", "pcmpeqd xmm5, xmm5",
            "pcmpeqd xmm6, xmm6", "pcmpeqd xmm7, xmm7", "pcmpeqd xmm8, xmm8",
            "pcmpeqd xmm9, xmm9", "pcmpeqd xmm10, xmm10", "pcmpeqd xmm11, xmm11",
            "pcmpeqd xmm12, xmm12", "pcmpeqd xmm13, xmm13", "pcmpeqd xmm14, xmm14",
            "pcmpeqd xmm15, xmm15",
            out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(nostack, nomem),
        );
    }
}

/// Why a handler cannot be registered on this CPU.
pub(crate) fn no_xsave() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "the CPU or kernel does not enable XSAVE, which the handler trampoline needs",
    )
}

/// Sets the trampoline's XSAVE layout (once per process); `Err` when the
/// CPU or the kernel has no XSAVE.
fn init_layout() -> std::io::Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        const OSXSAVE: u32 = 1 << 27;
        if sys::cpuid(1, 0)[2] & OSXSAVE == 0 {
            return false;
        }
        let l = xsave::layout(sys::xcr0(), |i| {
            let r = sys::cpuid(0xd, i);
            (r[0], r[1])
        });
        XSAVE_MASK.store(l.mask, Ordering::Relaxed);
        XSAVE_SIZE.store(u64::from(l.size), Ordering::Relaxed);
        true
    });
    if ok {
        Ok(())
    } else {
        Err(no_xsave())
    }
}

/// Points this thread's deliveries at `arrivals` and registers the
/// trampoline with `flags`. On success the caller must keep `arrivals`
/// alive until it calls [`uninstall`] on this thread.
pub(crate) fn install(arrivals: &Arrivals, flags: u32) -> std::io::Result<()> {
    init_layout()?;
    if !CURRENT.with(Cell::get).is_null() {
        return Err(std::io::Error::from_raw_os_error(16)); // EBUSY
    }
    CURRENT.with(|c| c.set(arrivals));
    // SAFETY: the trampoline is a user-interrupt handler for good: it
    // preserves every register and returns with UIRET; its layout is set.
    let registered =
        unsafe { sys::register_handler(uintr_rs_trampoline as *const () as usize, flags) };
    if registered.is_err() {
        CURRENT.with(|c| c.set(ptr::null()));
    }
    registered
}

/// Unregisters this thread's handler and forgets its arrivals; after it,
/// no delivery reads them.
pub(crate) fn uninstall() {
    // An error here means the registration is gone already (an exec cannot
    // come back here): either way no delivery follows.
    let _ = sys::unregister_handler();
    CURRENT.with(|c| c.set(ptr::null()));
}

/// An alternate delivery stack handed to the kernel (`uintr_alt_stack()`).
///
/// Owned by the [`Receiver`](crate::Receiver), which drops it only after
/// [`uninstall`]: the kernel (or the CPU) writes delivery frames to it and
/// the handler runs on it until then, and nothing else refers to it.
#[derive(Debug)]
pub(crate) struct AltStack {
    _memory: Box<[u8]>,
}

impl AltStack {
    /// Allocates `size` bytes and makes them this thread's delivery stack.
    pub(crate) fn install(size: usize) -> std::io::Result<AltStack> {
        let mut memory = vec![0u8; size].into_boxed_slice();
        // SAFETY: the area is ours alone (no reference to it escapes) and
        // lives until the registration ends: the caller keeps the AltStack
        // until after `uninstall()` (see the type's comment).
        unsafe { sys::alt_stack(memory.as_mut_ptr(), size)? };
        Ok(AltStack { _memory: memory })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's statement of the delivery (its frame.rs), which the
    /// trampoline is written against.
    const KERNEL_FRAME: &str = include_str!("../../../../rust/uintr/frame.rs");

    #[test]
    fn the_kernel_pushes_the_vector_last_on_a_16_byte_boundary() {
        assert!(KERNEL_FRAME.contains("push tmp; push RFLAGS; push RIP; push v"));
        assert!(KERNEL_FRAME.contains("`[vector][rip][rflags][rsp]` at its RSP"));
        assert!(KERNEL_FRAME.contains("DELIVERY_STACK_ALIGN: u64 = 16;"));
    }

    #[test]
    fn the_call_is_made_on_an_aligned_stack_and_finds_the_vector() {
        // Entry: 16-byte aligned minus the four words pushed, so aligned.
        let entry = 4 * 8 % 16;
        assert_eq!(entry, 0);
        // The pushes keep it aligned before the area is carved (which
        // aligns to 64 anyway), so `call` sees the ABI's alignment.
        assert_eq!((entry + VECTOR_OFFSET) % 16, 0);
        assert_eq!(VECTOR_OFFSET, 80);
    }

    #[test]
    fn the_header_follows_the_legacy_area() {
        assert_eq!(XSAVE_HEADER + 64, u64::from(xsave::MIN_AREA));
    }
}
