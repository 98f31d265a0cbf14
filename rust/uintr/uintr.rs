// SPDX-License-Identifier: GPL-2.0

//! x86 User Interrupts (UINTR): the Rust component.
//!
//! C glue in the core kernel (CPU enumeration, MSRs, entry and trap hooks,
//! the syscall table) calls into this crate through the thin trampolines of
//! [`entry`]; everything with a lifetime is owned here.

/// Prefix of every `pr_*!` message of this crate.
const __LOG_PREFIX: &[u8] = b"uintr\0";

pub mod entry;

