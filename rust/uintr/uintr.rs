// SPDX-License-Identifier: GPL-2.0

//! x86 User Interrupts (UINTR): the Rust component.
//!
//! C glue in the core kernel (CPU enumeration, MSRs, entry and trap hooks,
//! the syscall table) calls into this crate through the thin trampolines of
//! [`entry`]; everything with a lifetime is owned here:
//!
//! - [`receiver`]: a thread with a handler; owns its [`upid`] and vectors;
//! - [`sender`]: a sender table, connected to uintr_fds; owns its
//!   [`uitt`] and the [`cpuset`] of the CPUs its threads run on;
//!   [`shared`]: its uses, by a thread, by the process whose threads
//!   share it, by an ipi fd;
//! - [`uintr_fd`]: one vector of one receiver, listing its connections;
//!   [`watch`]: files whose wakeups post a vector (through [`poll`], the
//!   raw wait queue hooks, as [`events`] selects);
//! - [`file`], [`thread`] and [`slot`]: the raw VFS (uintr_fds, ipi
//!   fds), per-thread and C-pointer plumbing;
//! - [`syscalls`]: the system calls, on top of those; [`regset`]: the
//!   state that ptrace and core dumps show;
//! - [`emulate`] and [`delivery`]: the emulated CPU (the #UD emulator;
//!   recognition, context switch, delivery), on the pure [`decode`],
//!   [`frame`] and [`uirr`]; [`waitlist`]: sleeping receivers per CPU,
//!   woken through the kernel vector, in uintr_wait() ([`wait`], deadline
//!   arithmetic in [`timeout`]) or in other calls (their fate in
//!   [`restart`]); [`regs`], [`user`] and [`glue`] are the raw access to
//!   registers, user memory and the C helpers;
//! - [`cpu`]: the thread's user interrupt registers, emulated or the
//!   hardware's MSRs (programmed as [`hwregs`] says);
//! - [`mode`]: hardware or emulation, chosen at boot; [`stats`]: live
//!   object counts.
//!
//! Layers, lowest first: a module uses the layers below its own and,
//! without a cycle, its own (`scripts/crate-layers.py` checks it).
//!
//! 1. model: decode, entry_bitmap, events, frame, hwregs, mode, restart,
//!    timeout, uirr, upid_desc, errno.  Pure logic of the CPU and the ABI; the host tests
//!    run it.
//! 2. raw: glue, regs, user, raw_lock, stats, pid, slot, trace, area,
//!    poll, cpuset.  Thin wrappers of C: no domain type.
//! 3. objects: upid_pool, upid, uitt, waitlist, limits, watch.  What the
//!    CPU reads, the kernel bounds and the kernel posts.
//! 4. owners: receiver, uintr_fd, sender, shared, thread.  What user space
//!    holds, each above what it holds.
//! 5. cpu: cpu, delivery, emulate.  The backends: the hardware's registers
//!    or the emulated CPU.
//! 6. calls: wait, ioctl, file, syscalls, regset.  The system calls,
//!    file operations and the ptrace/core dump view.
//! 7. entry: entry, kunit.  The `extern "C"` trampolines, and the tests.
//!
//! Lock order: (the mmap lock, read-held when an address space drops its
//! shared sender table, then) a uintr_fd's connection lock, then a
//! sender's table lock or a receiver's thread lock (a receiver's
//! self-entry lock is never held with another; a process's shared table
//! is installed with an atomic exchange, without a lock); (the runqueue
//! lock, then) a receiver's sleeper lock, then a CPU's wait list lock,
//! both raw spinlocks taken with interrupts off.  Nothing is woken under
//! them.  A uintr_fd's connection lock, then its receiver's watch list
//! lock, then (ending a watch) the watched file's wait queue locks; (a
//! wait queue lock, then) a watch's mask lock, a raw spinlock.

/// Prefix of every `pr_*!` message of this crate.
const __LOG_PREFIX: &[u8] = b"uintr\0";

pub mod entry;

mod area;
mod cpu;
mod cpuset;
mod delivery;
mod emulate;
mod entry_bitmap;
mod errno;
mod file;
mod glue;
mod ioctl;
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
mod kunit;
mod limits;
mod mode;
mod pid;
mod poll;
mod raw_lock;
mod receiver;
mod regs;
mod regset;
mod sender;
mod shared;
mod slot;
mod stats;
mod syscalls;
mod thread;
mod trace;
mod uintr_fd;
mod uitt;
mod upid;
mod upid_pool;
mod user;
mod wait;
mod waitlist;
mod watch;

// The pure CPU model: instruction decoder, delivery frame and request
// register; host-tested (scripts/host-tests.sh).
mod decode;
mod events;
mod frame;
mod hwregs;
mod restart;
mod timeout;
mod uirr;
mod upid_desc;
