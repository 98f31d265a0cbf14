// SPDX-License-Identifier: GPL-2.0

//! The uintr_fd and ipi fd files: the raw VFS plumbing, kept in this one
//! module.
//!
//! A uintr_fd is an anonymous-inode file whose `private_data` is one
//! reference to a [`UintrFd`] (an `Arc` turned into a raw pointer); an ipi
//! fd (uintr_ipi_fd()) one to an [`IpiFd`], a use of a sender table.
//! The reference is taken back in `release`, which the VFS calls once,
//! when the last reference to the file is gone.  Nothing else here owns
//! anything: lookups and ioctls borrow the reference while they hold the
//! file (what the ioctls do is in [`ioctl`]).

use core::ffi::c_void;
use core::ptr;
use kernel::bindings;
use kernel::c_str;
use kernel::ffi::{c_int, c_long, c_uint, c_ulong};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::Arc;
use kernel::types::ForeignOwnable;

use crate::errno;
use crate::ioctl;
use crate::limits::Counted;
use crate::poll::FileRef;
use crate::shared::IpiFd;
use crate::thread::ThreadState;
use crate::trace;
use crate::uintr_fd::UintrFd;

/// The file operations of every uintr_fd.
struct FileOps(bindings::file_operations);

// SAFETY: the table is immutable and holds only function pointers and
// nulls, which any thread may read.
unsafe impl Sync for FileOps {}

static UINTR_FD_FOPS: FileOps = FileOps({
    // SAFETY: `file_operations` is a C struct of function pointers and
    // plain values; all-zero means "no such hook", which is valid.
    let mut ops: bindings::file_operations = unsafe { core::mem::zeroed() };
    ops.release = Some(release);
    ops.show_fdinfo = Some(show_fdinfo);
    ops.unlocked_ioctl = Some(ioctl);
    ops
});

static UINTR_IPI_FOPS: FileOps = FileOps({
    // SAFETY: as for `UINTR_FD_FOPS`.
    let mut ops: bindings::file_operations = unsafe { core::mem::zeroed() };
    ops.release = Some(release_ipi);
    ops.unlocked_ioctl = Some(ioctl_ipi);
    ops
});

/// The ioctl of an ipi fd (`<linux/uintr.h>`): share its table.
const UIPI_SET_TARGET_TABLE: u32 = kernel::ioctl::_IO(b'u' as u32, 0);

/// Creates a file (`O_CLOEXEC`) named `name` with the operations `ops`,
/// owning one reference to `object`; the operations take it back.
fn create_file<T: 'static>(
    name: &'static CStr,
    ops: &'static FileOps,
    object: Arc<T>,
) -> Result<usize> {
    let private = object.into_foreign();
    // The name is a NUL-terminated static string and the operations static.
    // SAFETY: `private` is a foreign `Arc<T>`; the file owns it on success.
    let fd = unsafe {
        bindings::anon_inode_getfd(
            name.as_char_ptr(),
            &ops.0,
            private as *mut c_void,
            (bindings::O_RDONLY | bindings::O_CLOEXEC) as c_int,
        )
    };
    if fd < 0 {
        // SAFETY: on failure no file was created, so nobody else owns
        // `private`: take the reference back (and drop it).
        drop(unsafe { Arc::<T>::from_foreign(private) });
        return Err(Error::from_errno(fd));
    }
    // `fd` is non-negative here: the conversion is exact.
    Ok(fd as usize)
}

/// Creates a uintr_fd (`O_CLOEXEC`) owning one reference to `object`.
pub(crate) fn create(object: Arc<UintrFd>) -> Result<usize> {
    create_file(c_str!("[uintr_fd]"), &UINTR_FD_FOPS, object)
}

/// Creates an ipi fd (`O_CLOEXEC`) owning one reference to `object`.
pub(crate) fn create_ipi_fd(object: Arc<IpiFd>) -> Result<usize> {
    create_file(c_str!("[uintr_ipi]"), &UINTR_IPI_FOPS, object)
}

/// The uintr_fd object behind the caller's descriptor `fd`: `EBADF` if
/// `fd` is not open, `EOPNOTSUPP` if it is not a uintr_fd.
pub(crate) fn lookup(fd: i32) -> Result<Arc<UintrFd>> {
    let file = FileRef::get(fd)?;
    if !ptr::eq(file.operations(), &UINTR_FD_FOPS.0) {
        return Err(errno::eopnotsupp());
    }
    // `release` takes the file's reference back; it cannot run while we hold one.
    // SAFETY: a file with our operations has a foreign `Arc<UintrFd>` there.
    let object = unsafe { Arc::<UintrFd>::borrow(file.private_data()) };
    Ok(object.into())
}

/// `file_operations.release`: the last reference to the file is gone.
///
/// # Safety
///
/// Called by the VFS, once per file, with a file created by [`create`].
unsafe extern "C" fn release(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // This is the only place that takes the reference back.
    // SAFETY: `file` is valid; its `private_data` is the `Arc` from `create`.
    let object = unsafe { Arc::<UintrFd>::from_foreign((*file).private_data) };
    object.release();
    trace::fd_release(object.vector(), object.receiver());
    0
}

/// `file_operations.unlocked_ioctl` of a uintr_fd.
///
/// # Safety
///
/// Called by the VFS, in the calling thread's context, with a live file
/// created by [`create`].
unsafe extern "C" fn ioctl(file: *mut bindings::file, cmd: c_uint, arg: c_ulong) -> c_long {
    // SAFETY: the file is live for this call, so its `private_data` is
    // still the reference owned by the file.
    let object = unsafe { Arc::<UintrFd>::borrow((*file).private_data) };
    // x86-64 only: `c_ulong` is 64 bits wide, the conversion is exact.
    to_c_long(ioctl::fd_ioctl(&object, cmd, arg as u64))
}

/// An ioctl's return value.
fn to_c_long(result: Result<usize>) -> c_long {
    match result {
        // The values are small counts: the conversion is exact.
        Ok(value) => value as c_long,
        // An errno is a small negative number: the conversion is exact.
        Err(err) => err.to_errno() as c_long,
    }
}

/// `file_operations.show_fdinfo`: `/proc/<pid>/fdinfo/<fd>`.
///
/// # Safety
///
/// Called by the VFS with a valid `seq_file` and a live file of ours.
unsafe extern "C" fn show_fdinfo(m: *mut bindings::seq_file, file: *mut bindings::file) {
    // SAFETY: the file is live for this call, so its `private_data` is
    // still the reference owned by the file.
    let object = unsafe { Arc::<UintrFd>::borrow((*file).private_data) };
    let receiver = object.receiver();
    let (control, pir) = receiver.upid().snapshot();
    // SAFETY: `m` is valid for this call; the format is NUL-terminated and
    // its conversions match the arguments (`%s`: a static C string).
    unsafe {
        bindings::seq_printf(
            m,
            c_str!(concat!(
                "uintr_vector:\t%u\n",
                "uintr_receiver_tid:\t%d\n",
                "uintr_receiver_active:\t%d\n",
                "uintr_receiver_state:\t%s\n",
                "uintr_senders:\t%u\n",
                "uintr_receiver_senders:\t%u\n",
                "uintr_masked:\t%d\n",
                "uintr_upid_control:\t%#llx\n",
                "uintr_upid_pir:\t%#llx\n",
            ))
            .as_char_ptr(),
            c_uint::from(object.vector()),
            receiver.tid(),
            c_int::from(receiver.is_active()),
            receiver.state_name().as_char_ptr(),
            object.sender_count() as c_uint,
            receiver.connections().get() as c_uint,
            c_int::from(object.is_masked()),
            control,
            pir,
        )
    };
    let watches = receiver.watches();
    // SAFETY: as above.
    unsafe {
        bindings::seq_printf(
            m,
            c_str!("uintr_watches:\t%u\n").as_char_ptr(),
            watches.count(object.vector()) as c_uint,
        )
    };
    watches.show(object.vector(), |inode, events, posts| {
        // SAFETY: as above; `%lu` and `%llu` take 64-bit values.
        unsafe {
            bindings::seq_printf(
                m,
                c_str!("uintr_watch:\tino:%lu events:%#x posts:%llu\n").as_char_ptr(),
                inode,
                events,
                posts,
            )
        };
    });
}

/// `file_operations.release` of an ipi fd: its use of the table goes.
///
/// # Safety
///
/// Called by the VFS, once per file, with a file created by
/// [`create_ipi_fd`].
unsafe extern "C" fn release_ipi(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // This is the only place that takes the reference back.
    // SAFETY: `file` is valid; its `private_data` is the `Arc` from
    // `create_ipi_fd`.
    drop(unsafe { Arc::<IpiFd>::from_foreign((*file).private_data) });
    0
}

/// `file_operations.unlocked_ioctl` of an ipi fd.
///
/// # Safety
///
/// Called by the VFS, in the calling thread's context, with a live file
/// created by [`create_ipi_fd`].
unsafe extern "C" fn ioctl_ipi(file: *mut bindings::file, cmd: c_uint, _arg: c_ulong) -> c_long {
    if cmd != UIPI_SET_TARGET_TABLE {
        return ENOTTY.to_errno() as c_long;
    }
    // SAFETY: the file is live for this call, so its `private_data` is
    // still the reference owned by the file.
    let object = unsafe { Arc::<IpiFd>::borrow((*file).private_data) };
    // SAFETY: the calling thread's own state, in its own context.
    let thread = unsafe { ThreadState::from_raw(bindings::uintr_current_thread()) };
    to_c_long(ioctl::set_target_table(&thread, object.table()))
}
