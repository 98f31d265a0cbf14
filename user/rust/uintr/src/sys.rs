// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! The raw layer: system calls, the UINTR instructions and the CPU probes.
//!
//! Everything that executes `syscall`, a UINTR instruction or `cpuid` is
//! here, so that the rest of the crate is safe code. A system call whose
//! arguments are plain integers gets a safe wrapper; one that gives the
//! kernel a pointer takes a reference of the right type, so the pointer is
//! valid for the call. System calls that are not safe whatever their
//! arguments (registering a handler address) are `unsafe fn`s.
//!
//! Results come back as the kernel gives them, -errno and all, without
//! touching the C library's `errno`: [`result`] turns them into
//! [`std::io::Error`]s.

use std::arch::asm;
use std::io;
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU64;

/// System call numbers (x86-64).
mod nr {
    pub(super) const IOCTL: usize = 16;
    pub(super) const SENDMSG: usize = 46;
    pub(super) const RECVMSG: usize = 47;
    pub(super) const TIMERFD_CREATE: usize = 283;
    pub(super) const TIMERFD_SETTIME: usize = 286;
    pub(super) const EVENTFD2: usize = 290;
    pub(super) const UINTR_REGISTER_HANDLER: usize = 471;
    pub(super) const UINTR_UNREGISTER_HANDLER: usize = 472;
    pub(super) const UINTR_CREATE_FD: usize = 473;
    pub(super) const UINTR_REGISTER_SENDER: usize = 474;
    pub(super) const UINTR_UNREGISTER_SENDER: usize = 475;
    pub(super) const UINTR_WAIT: usize = 476;
    pub(super) const UINTR_REGISTER_SELF: usize = 477;
    pub(super) const UINTR_ALT_STACK: usize = 478;
    pub(super) const UINTR_IPI_FD: usize = 479;
    pub(super) const UINTR_PENDING: usize = 480;
}

/// `uintr_wait()` flags (`<linux/uintr.h>`).
pub(crate) const UINTR_WAIT_TIMEOUT: usize = 0x1;
pub(crate) const UINTR_WAIT_VALUE: usize = 0x2;
/// `uintr_pending()` flag.
pub(crate) const UINTR_PENDING_TAKE: usize = 0x1;
/// `uintr_register_sender()` and `uintr_register_self()` flag.
pub(crate) const UINTR_SENDER_SHARED: usize = 0x1;

/// The uintr_fd ioctls (`_IO('u', n)` and `_IOW('u', 4, struct uintr_watch)`).
pub(crate) const UIPI_SET_TARGET_TABLE: usize = 0x7500;
pub(crate) const UINTR_FD_MASK: usize = 0x7501;
pub(crate) const UINTR_FD_UNMASK: usize = 0x7502;
pub(crate) const UINTR_FD_REVOKE: usize = 0x7503;
pub(crate) const UINTR_FD_WATCH: usize = 0x4010_7504;
pub(crate) const UINTR_FD_UNWATCH: usize = 0x7505;

/// `struct uintr_watch` of `<linux/uintr.h>`.
#[repr(C)]
pub(crate) struct UintrWatch {
    pub(crate) fd: i32,
    pub(crate) events: u32,
    pub(crate) flags: u64,
}

/// `struct __kernel_timespec`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct Timespec {
    pub(crate) sec: i64,
    pub(crate) nsec: i64,
}

/// `struct itimerspec` (x86-64: two `__kernel_timespec`s).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct Itimerspec {
    pub(crate) interval: Timespec,
    pub(crate) value: Timespec,
}

/// Turns a system call's return value into its result: a value, or the
/// error whose number the kernel returned negated.
pub(crate) fn result(ret: isize) -> io::Result<usize> {
    if (-4095..0).contains(&ret) {
        Err(io::Error::from_raw_os_error(-ret as i32))
    } else {
        Ok(ret as usize)
    }
}

/// A system call with up to five arguments.
///
/// # Safety
///
/// The call must not make the kernel write to memory the caller does not
/// own mutably, read memory the caller does not own, or change state that
/// safe code relies on (a handler address, a stack). The wrappers below
/// each state why theirs does not.
unsafe fn syscall(nr: usize, a1: usize, a2: usize, a3: usize, a4: usize, a5: usize) -> isize {
    let ret: isize;
    // SAFETY: `syscall` clobbers rcx and r11 (declared) and whatever the
    // call does to memory, which the caller vouches for (above); it does
    // not touch the stack.
    unsafe {
        asm!("syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a1, in("rsi") a2, in("rdx") a3, in("r10") a4, in("r8") a5,
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    ret
}

/// Wraps a new file descriptor the kernel returned.
fn owned_fd(ret: isize) -> io::Result<OwnedFd> {
    let fd = result(ret)? as RawFd;
    // SAFETY: the kernel just installed `fd` for this call; no other owner
    // knows its number yet.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// uintr_register_handler(handler, flags).
///
/// # Safety
///
/// `handler` must stay a user-interrupt handler (entered with the delivery
/// frame, returning with UIRET, preserving every register) for as long as
/// the registration lasts.
pub(crate) unsafe fn register_handler(handler: usize, flags: u32) -> io::Result<()> {
    // SAFETY: the caller vouches for the handler; the call reads no memory.
    result(unsafe { syscall(nr::UINTR_REGISTER_HANDLER, handler, flags as usize, 0, 0, 0) })
        .map(drop)
}

/// uintr_register_handler(NULL, 0): EFAULT when user interrupts work,
/// EOPNOTSUPP or ENOSYS when they do not; registers nothing in any case.
pub(crate) fn probe_handler() -> io::Result<usize> {
    // SAFETY: a NULL handler is refused before anything is registered.
    result(unsafe { syscall(nr::UINTR_REGISTER_HANDLER, 0, 0, 0, 0, 0) })
}

/// uintr_unregister_handler(0).
pub(crate) fn unregister_handler() -> io::Result<()> {
    // SAFETY: unregistering ends deliveries; it reads and writes no user
    // memory. The caller (`Receiver::drop`) owns the registration.
    result(unsafe { syscall(nr::UINTR_UNREGISTER_HANDLER, 0, 0, 0, 0, 0) }).map(drop)
}

/// uintr_create_fd(vector, 0).
pub(crate) fn create_fd(vector: u8) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments; the call makes a new file descriptor.
    owned_fd(unsafe { syscall(nr::UINTR_CREATE_FD, vector as usize, 0, 0, 0, 0) })
}

/// uintr_register_sender(fd, flags): the UITT index.
pub(crate) fn register_sender(fd: BorrowedFd<'_>, flags: usize) -> io::Result<usize> {
    // SAFETY: integer arguments; the call adds a UITT entry.
    result(unsafe { syscall(nr::UINTR_REGISTER_SENDER, raw(fd), flags, 0, 0, 0) })
}

/// uintr_unregister_sender(fd, 0).
pub(crate) fn unregister_sender(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: integer arguments; the caller (`Connection::drop`) owns the
    // connection it ends.
    result(unsafe { syscall(nr::UINTR_UNREGISTER_SENDER, raw(fd), 0, 0, 0, 0) }).map(drop)
}

/// uintr_wait(flags, timeout, word, expected).
pub(crate) fn wait(
    timeout: Option<&Timespec>,
    value: Option<(&AtomicU64, u64)>,
) -> io::Result<usize> {
    let mut flags = 0;
    let timeout = timeout.map_or(0, |t| {
        flags |= UINTR_WAIT_TIMEOUT;
        t as *const Timespec as usize
    });
    let (word, expected) = value.map_or((0, 0), |(w, e)| {
        flags |= UINTR_WAIT_VALUE;
        (w.as_ptr() as usize, e as usize)
    });
    // SAFETY: the kernel only reads `timeout` (a live Timespec) and `word`
    // (a live, 8-byte aligned AtomicU64, which others may change meanwhile,
    // as its type allows).
    result(unsafe { syscall(nr::UINTR_WAIT, flags, timeout, word, expected, 0) })
}

/// uintr_register_self(vector, flags): the UITT index.
pub(crate) fn register_self(vector: u8, flags: usize) -> io::Result<usize> {
    // SAFETY: integer arguments; the call adds a UITT entry.
    result(unsafe { syscall(nr::UINTR_REGISTER_SELF, vector as usize, flags, 0, 0, 0) })
}

/// uintr_alt_stack(stack, len, 0).
///
/// # Safety
///
/// `stack` must stay writable memory that nothing else uses for as long as
/// the thread's handler registration lasts: the kernel (or the CPU) pushes
/// delivery frames there, and the handler runs on it.
pub(crate) unsafe fn alt_stack(stack: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: the caller vouches for the area.
    result(unsafe { syscall(nr::UINTR_ALT_STACK, stack as usize, len, 0, 0, 0) }).map(drop)
}

/// uintr_ipi_fd(0).
pub(crate) fn ipi_fd() -> io::Result<OwnedFd> {
    // SAFETY: no argument; the call makes a new file descriptor.
    owned_fd(unsafe { syscall(nr::UINTR_IPI_FD, 0, 0, 0, 0, 0) })
}

/// uintr_pending(&set, flags).
pub(crate) fn pending(flags: usize) -> io::Result<u64> {
    let mut set = 0u64;
    // SAFETY: the kernel writes one u64 to `set`, a local.
    result(unsafe {
        syscall(
            nr::UINTR_PENDING,
            &mut set as *mut u64 as usize,
            flags,
            0,
            0,
            0,
        )
    })?;
    Ok(set)
}

/// ioctl(fd, request, arg) for the uintr requests whose argument is an
/// integer.
pub(crate) fn ioctl(fd: BorrowedFd<'_>, request: usize, arg: usize) -> io::Result<usize> {
    debug_assert_ne!(request, UINTR_FD_WATCH);
    // SAFETY: the uintr requests other than UINTR_FD_WATCH take an integer
    // and touch no user memory.
    result(unsafe { syscall(nr::IOCTL, raw(fd), request, arg, 0, 0) })
}

/// ioctl(fd, UINTR_FD_WATCH, &watch).
pub(crate) fn ioctl_watch(fd: BorrowedFd<'_>, watch: &UintrWatch) -> io::Result<()> {
    // SAFETY: UINTR_FD_WATCH reads one struct uintr_watch, a live one.
    result(unsafe {
        syscall(
            nr::IOCTL,
            raw(fd),
            UINTR_FD_WATCH,
            watch as *const UintrWatch as usize,
            0,
            0,
        )
    })
    .map(drop)
}

/// eventfd2(initval, flags).
pub(crate) fn eventfd(initval: u32, flags: usize) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments; the call makes a new file descriptor.
    owned_fd(unsafe { syscall(nr::EVENTFD2, initval as usize, flags, 0, 0, 0) })
}

/// timerfd_create(clock, flags).
pub(crate) fn timerfd_create(clock: usize, flags: usize) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments; the call makes a new file descriptor.
    owned_fd(unsafe { syscall(nr::TIMERFD_CREATE, clock, flags, 0, 0, 0) })
}

/// timerfd_settime(fd, 0, &new, NULL).
pub(crate) fn timerfd_settime(fd: BorrowedFd<'_>, new: &Itimerspec) -> io::Result<()> {
    // SAFETY: the kernel reads one itimerspec, a live one; the old value
    // is not asked for (NULL).
    result(unsafe {
        syscall(
            nr::TIMERFD_SETTIME,
            raw(fd),
            0,
            new as *const Itimerspec as usize,
            0,
            0,
        )
    })
    .map(drop)
}

/// `struct msghdr`.
#[repr(C)]
struct MsgHdr {
    name: usize,
    namelen: u32,
    iov: *mut IoVec,
    iovlen: usize,
    control: *mut u8,
    controllen: usize,
    flags: i32,
}

impl MsgHdr {
    /// A message of the one buffer `iov` and the control message `cmsg`.
    fn one_fd(iov: &mut IoVec, cmsg: &mut FdMessage) -> MsgHdr {
        MsgHdr {
            name: 0,
            namelen: 0,
            iov,
            iovlen: 1,
            control: (cmsg as *mut FdMessage).cast(),
            controllen: std::mem::size_of::<FdMessage>(),
            flags: 0,
        }
    }
}

/// `struct iovec`.
#[repr(C)]
struct IoVec {
    base: *mut u8,
    len: usize,
}

/// A control message carrying one file descriptor: `struct cmsghdr` and
/// its data, padded as CMSG_SPACE(sizeof(int)) is.
#[repr(C)]
#[derive(Default)]
struct FdMessage {
    len: usize,
    level: i32,
    kind: i32,
    fd: i32,
    pad: i32,
}

const SOL_SOCKET: i32 = 1;
const SCM_RIGHTS: i32 = 1;
const MSG_CMSG_CLOEXEC: usize = 0x4000_0000;
const MSG_NOSIGNAL: usize = 0x4000;
/// CMSG_LEN(sizeof(int)).
const FD_MESSAGE_LEN: usize = 20;

/// sendmsg(sock, one byte and `fd` as SCM_RIGHTS).
pub(crate) fn send_fd(sock: BorrowedFd<'_>, fd: BorrowedFd<'_>) -> io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = IoVec {
        base: byte.as_mut_ptr(),
        len: 1,
    };
    let mut cmsg = FdMessage {
        len: FD_MESSAGE_LEN,
        level: SOL_SOCKET,
        kind: SCM_RIGHTS,
        fd: raw(fd) as i32,
        pad: 0,
    };
    let msg = MsgHdr::one_fd(&mut iov, &mut cmsg);
    // SAFETY: sendmsg reads `msg`, `iov`, `byte` and `cmsg`, all live
    // locals; the descriptor it passes stays ours too.
    let sent = result(unsafe {
        syscall(
            nr::SENDMSG,
            raw(sock),
            &msg as *const MsgHdr as usize,
            MSG_NOSIGNAL,
            0,
            0,
        )
    })?;
    if sent != 1 {
        return Err(io::ErrorKind::WriteZero.into());
    }
    Ok(())
}

/// recvmsg(sock): the file descriptor of an SCM_RIGHTS message sent by
/// [`send_fd`], close-on-exec.
pub(crate) fn recv_fd(sock: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut iov = IoVec {
        base: byte.as_mut_ptr(),
        len: 1,
    };
    let mut cmsg = FdMessage::default();
    let mut msg = MsgHdr::one_fd(&mut iov, &mut cmsg);
    // SAFETY: recvmsg writes at most `iov.len` bytes to `byte`,
    // `controllen` bytes to `cmsg` and the lengths in `msg`, all live
    // locals that nothing else refers to.
    let got = result(unsafe {
        syscall(
            nr::RECVMSG,
            raw(sock),
            &mut msg as *mut MsgHdr as usize,
            MSG_CMSG_CLOEXEC,
            0,
            0,
        )
    })?;
    if got == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    if msg.controllen < FD_MESSAGE_LEN || cmsg.level != SOL_SOCKET || cmsg.kind != SCM_RIGHTS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "no file descriptor received",
        ));
    }
    // SAFETY: SCM_RIGHTS installed `cmsg.fd` in this process for this
    // call; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(cmsg.fd) })
}

fn raw(fd: BorrowedFd<'_>) -> usize {
    use std::os::fd::AsRawFd;
    fd.as_raw_fd() as usize
}

/// SENDUIPI `index`.
///
/// Posts a user interrupt through entry `index` of the thread's (or its
/// process's shared) sender table. A stale or foreign index makes the CPU
/// (or the kernel's emulation of it) raise a fault that ends in SIGSEGV,
/// and a thread that is no sender gets SIGILL: a crash, never a write to
/// this process's memory. The [`crate::Connection`] types keep the index
/// valid for as long as they can call this.
pub(crate) fn senduipi(index: usize) {
    // SAFETY: SENDUIPI reads the kernel's UITT and writes the receiver's
    // UPID, neither of which is memory of this program; it changes no
    // register.
    unsafe { asm!(".byte 0xf3, 0x0f, 0xc7, 0xf0", in("rax") index, options(nostack)) };
}

/// STUI: sets the user interrupt flag; a pending interrupt is delivered
/// right after it.
pub(crate) fn stui() {
    // SAFETY: STUI changes only UIF. The delivery it may allow runs the
    // crate's trampoline, which preserves every register and the red zone,
    // so to the code around it the instruction has no other effect. Not
    // `nomem`: the handler writes memory (the arrivals) that the code after
    // it reads.
    unsafe {
        asm!(
            ".byte 0xf3, 0x0f, 0x01, 0xef",
            options(nostack, preserves_flags)
        )
    };
}

/// CLUI: clears the user interrupt flag.
pub(crate) fn clui() {
    // SAFETY: CLUI changes only UIF. Not `nomem`, so that memory accesses
    // are not moved across it into the window where a handler may run.
    unsafe {
        asm!(
            ".byte 0xf3, 0x0f, 0x01, 0xee",
            options(nostack, preserves_flags)
        )
    };
}

/// TESTUI: the user interrupt flag.
pub(crate) fn testui() -> bool {
    let uif: u8;
    // SAFETY: TESTUI copies UIF into CF and clears the other arithmetic
    // flags (not `preserves_flags`); `setc` reads CF into a register.
    unsafe {
        asm!(".byte 0xf3, 0x0f, 0x01, 0xed", "setc {0}", out(reg_byte) uif,
            options(nostack, nomem))
    };
    uif != 0
}

/// CPUID leaf `leaf`, subleaf `sub`: eax, ebx, ecx, edx.
pub(crate) fn cpuid(leaf: u32, sub: u32) -> [u32; 4] {
    let r = std::arch::x86_64::__cpuid_count(leaf, sub);
    [r.eax, r.ebx, r.ecx, r.edx]
}

/// XGETBV(0): the XSAVE features the kernel enabled (XCR0). Call only when
/// CPUID reports OSXSAVE.
pub(crate) fn xcr0() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: XGETBV with ECX = 0 reads XCR0; it is valid at CPL 3 once
    // the OS set CR4.OSXSAVE, which the caller checked (CPUID.1:ECX.27).
    unsafe {
        asm!(".byte 0x0f, 0x01, 0xd0", in("ecx") 0u32, out("eax") lo, out("edx") hi,
            options(nostack, nomem, preserves_flags))
    };
    (hi as u64) << 32 | lo as u64
}
