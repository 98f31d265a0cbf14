// SPDX-License-Identifier: GPL-2.0

//! x86 User Interrupts (UINTR): the Rust component.
//!
//! C glue in the core kernel (CPU enumeration, MSRs, entry and trap hooks,
//! the syscall table) calls into this crate through the thin trampolines of
//! [`entry`]; everything with a lifetime is owned here.

/// Prefix of every `pr_*!` message of this crate.
const __LOG_PREFIX: &[u8] = b"uintr\0";

pub mod entry;

// The pure CPU model: instruction decoder, delivery frame and request
// register.  Host-tested (scripts/host-tests.sh); the #UD emulator that
// drives it comes with user IPI delivery.
#[expect(dead_code, reason = "used by the instruction emulator")]
mod decode;
#[expect(dead_code, reason = "used by the instruction emulator")]
mod frame;
#[expect(dead_code, reason = "used by the instruction emulator")]
mod uirr;
