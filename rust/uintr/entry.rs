// SPDX-License-Identifier: GPL-2.0

//! Entry points called from the C glue (`arch/x86/kernel/uintr.c`).
//!
//! Each function here is a trampoline: it converts C arguments into Rust
//! types, calls safe code and turns the result into an errno for C.  The
//! prototypes are in `arch/x86/include/asm/uintr.h`.

use kernel::ffi::c_int;
use kernel::prelude::*;

/// Initializes the component at boot (a `late_initcall`).
///
/// Returns 0; the component has no state to set up yet.
#[no_mangle]
pub extern "C" fn uintr_rust_init() -> c_int {
    pr_info!("Rust component initialized\n");
    0
}
