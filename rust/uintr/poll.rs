// SPDX-License-Identifier: GPL-2.0

//! Files and their wait queues: the raw poll plumbing, kept in this one
//! module.
//!
//! A [`FileRef`] is a counted reference to an open file.  A [`Hook`] holds
//! one and puts wait queue entries on the queues the file's `poll` names,
//! as epoll does; each wakeup of those queues calls [`Woken::woken`] on the
//! value the hook owns, with the wakeup's events, under the queue's lock.
//!
//! The entries come off their queues before the hook's memory goes: its
//! drop takes each off under the queue's lock, so no wake function runs
//! for it afterwards.  A queue that lives shorter than its file
//! (signalfd's: its task's) is woken with `POLLFREE` before it goes, and
//! freed only an RCU grace period later (wake_up_pollfree()): the wake
//! function then takes its entry off and, as its last access to the hook,
//! forgets the queue; the drop reads the queue under rcu_read_lock(), as
//! epoll's does.

use core::ffi::c_void;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use kernel::bindings;
use kernel::ffi::{c_int, c_uint};
use kernel::prelude::*;
use kernel::types::Opaque;

use crate::events::POLLFREE;

/// The most wait queues a hooked file's `poll` may name: pipes and ttys
/// name two, a reader's and a writer's.
pub(crate) const QUEUES: usize = 2;

/// A counted reference to an open file, put on drop.
pub(crate) struct FileRef(NonNull<bindings::file>);

// SAFETY: the reference may be put by any thread (fput() defers the
// release to a context that can run it).
unsafe impl Send for FileRef {}
// SAFETY: shared access only reads the file's immutable fields.
unsafe impl Sync for FileRef {}

impl FileRef {
    /// The file behind the calling thread's descriptor `fd`; `EBADF` if
    /// it is not open.
    pub(crate) fn get(fd: i32) -> Result<Self> {
        let fd = c_uint::try_from(fd).map_err(|_| EBADF)?;
        // SAFETY: `fget` accepts any descriptor number and returns either
        // NULL or a counted reference to an open file.
        NonNull::new(unsafe { bindings::fget(fd) })
            .map(Self)
            .ok_or(EBADF)
    }

    /// Takes over the counted reference `file`.
    ///
    /// # Safety
    ///
    /// `file` is a counted reference to an open file, which the caller
    /// gives up.
    #[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
    pub(crate) unsafe fn from_raw(file: NonNull<bindings::file>) -> Self {
        Self(file)
    }

    /// The file.
    pub(crate) fn as_ptr(&self) -> *mut bindings::file {
        self.0.as_ptr()
    }

    /// The file's operations, which tell what kind of file it is.
    pub(crate) fn operations(&self) -> *const bindings::file_operations {
        // SAFETY: we hold a reference, so the file is valid; `f_op` is
        // set when it is opened and not changed afterwards.
        unsafe { (*self.as_ptr()).f_op }
    }

    /// The file's `private_data`, which its operations interpret.
    pub(crate) fn private_data(&self) -> *mut c_void {
        // SAFETY: as in `operations`.
        unsafe { (*self.as_ptr()).private_data }
    }

    /// Whether the file can be polled (a regular file, say, cannot).
    pub(crate) fn can_poll(&self) -> bool {
        // SAFETY: the operations of an open file are a valid, static table.
        unsafe { (*self.operations()).poll.is_some() }
    }

    /// The inode number of the file, for fdinfo.
    pub(crate) fn inode_number(&self) -> u64 {
        // SAFETY: an open file's inode is valid for as long as it is open.
        let ino = unsafe { (*(*self.as_ptr()).f_inode).i_ino };
        // x86-64 only: `unsigned long` is 64 bits wide, the cast is exact.
        ino as u64
    }

    /// Whether `self` and `other` are references to the same file.
    pub(crate) fn is(&self, other: &FileRef) -> bool {
        self.0 == other.0
    }
}

impl Drop for FileRef {
    fn drop(&mut self) {
        // SAFETY: the reference was taken by `fget` in `get` and is put
        // exactly once, here.
        unsafe { bindings::fput(self.as_ptr()) };
    }
}

/// What a hook tells of a wakeup of its file's queues.
pub(crate) trait Woken: Send + Sync {
    /// A watched queue was woken with `events` (0: the waker gave none).
    /// Runs under the queue's lock, in any context (hard interrupts for
    /// timerfd), maybe with interrupts off: it must not sleep.
    fn woken(&self, events: u32);
}

/// One wait queue entry of a hook.
#[repr(C)]
struct Entry<T: Woken> {
    /// The C entry, first, so that the wake function finds the rest.
    wait: Opaque<bindings::wait_queue_entry>,
    /// The queue the entry is on; null while on none (not yet, taken off,
    /// or the queue went with `POLLFREE`).
    head: AtomicPtr<bindings::wait_queue_head>,
    /// The hook, set before the entry goes on a queue.
    hook: AtomicPtr<Hook<T>>,
}

impl<T: Woken> Entry<T> {
    fn new() -> Self {
        Self {
            wait: Opaque::uninit(),
            head: AtomicPtr::new(ptr::null_mut()),
            hook: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

/// A file whose wait queues call `T` on their wakeups, once armed.
#[pin_data(PinnedDrop)]
pub(crate) struct Hook<T: Woken> {
    #[pin]
    entries: [Entry<T>; QUEUES],
    /// `arm` ran.
    armed: AtomicBool,
    file: FileRef,
    #[pin]
    owner: T,
}

// SAFETY: the C entries are only touched under their queues' locks (by
// the wait queue code, `queue`, `wake` and `unhook`); the rest is a file
// reference and `T`, which are `Send`.
unsafe impl<T: Woken> Send for Hook<T> {}
// SAFETY: as for `Send`; shared access reaches `T` only as `&T`, which is
// `Sync`.
unsafe impl<T: Woken> Sync for Hook<T> {}

/// The poll table `Hook::arm` passes to the file's `poll`.
#[repr(C)]
struct Table<T: Woken> {
    /// The C table, first, so that the queue function finds the rest.
    table: bindings::poll_table,
    hook: *const Hook<T>,
    /// Entries used so far.
    used: usize,
    /// The file named more queues than there are entries.
    overflow: bool,
}

impl<T: Woken> Hook<T> {
    /// A hook on `file`, not yet on its queues, owning `owner`.
    pub(crate) fn new(file: FileRef, owner: impl PinInit<T, Error>) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            entries: core::array::from_fn(|_| Entry::new()),
            armed: AtomicBool::new(false),
            file,
            owner <- owner,
        }? Error)
    }

    /// The value the wakeups are told to.
    pub(crate) fn owner(&self) -> &T {
        &self.owner
    }

    /// The hooked file.
    pub(crate) fn file(&self) -> &FileRef {
        &self.file
    }

    /// Puts the entries on the queues the file's `poll` names and returns
    /// the events it is ready for now (`events`: those of interest).  From
    /// then on, maybe before this returns, wakeups call the owner.
    /// `EBUSY` if armed already; `EPERM` if the file names more than
    /// [`QUEUES`] queues (the hook is then on none).  Process context.
    pub(crate) fn arm(&self, events: u32) -> Result<u32> {
        if self.armed.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        let mut table = Table::<T> {
            table: bindings::poll_table {
                _qproc: Some(queue::<T>),
                _key: events,
            },
            hook: self,
            used: 0,
            overflow: false,
        };
        // The hook is pinned (only `new`, a `PinInit`, makes one), so the
        // address the entries keep stays valid until its drop takes them
        // off.
        // SAFETY: we hold a reference to the file; `table` outlives the
        // call, and `queue` finds it from its first field.
        let ready = unsafe { bindings::vfs_poll(self.file.as_ptr(), &mut table.table) };
        if table.overflow {
            self.unhook();
            return Err(EPERM);
        }
        Ok(ready)
    }

    /// Takes the entries off their queues: once this returns, no wake
    /// function runs for the hook.
    fn unhook(&self) {
        for entry in &self.entries {
            let _rcu = RcuReadLock::new();
            let head = entry.head.load(Ordering::Acquire);
            if head.is_null() {
                continue;
            }
            // A queue is freed only a grace period after a `POLLFREE`
            // wakeup, whose wake function forgot it before that wakeup
            // ended.  The entry is on the queue or, taken off by that wake
            // function (`list_del_init`), linked to itself, which
            // remove_wait_queue() accepts; its lock waits for a running
            // wake function.
            // SAFETY: so the queue is still there: we read `head` inside
            // a read-side section, and it was not null.
            unsafe { bindings::remove_wait_queue(head, entry.wait.get()) };
            entry.head.store(ptr::null_mut(), Ordering::Relaxed);
        }
    }
}

#[pinned_drop]
impl<T: Woken> PinnedDrop for Hook<T> {
    fn drop(self: Pin<&mut Self>) {
        // Before the owner and the file go.
        self.unhook();
    }
}

/// An RCU read-side critical section, while it lives.
struct RcuReadLock;

impl RcuReadLock {
    fn new() -> Self {
        // SAFETY: paired with rcu_read_unlock() in `drop`, in this thread.
        unsafe { bindings::rcu_read_lock() };
        Self
    }
}

impl Drop for RcuReadLock {
    fn drop(&mut self) {
        // SAFETY: ends the section `new` began.
        unsafe { bindings::rcu_read_unlock() };
    }
}

/// `poll_table._qproc`: the file's `poll` names the queue `head`.
///
/// # Safety
///
/// Called by the file's `poll` during `Hook::arm`'s vfs_poll(), in its
/// thread, with the table `arm` passed and a queue of the file.
unsafe extern "C" fn queue<T: Woken>(
    _file: *mut bindings::file,
    head: *mut bindings::wait_queue_head,
    table: *mut bindings::poll_table,
) {
    // SAFETY: `table` is the first field of the `Table` of the running
    // `arm`, which nothing else touches meanwhile.
    let table = unsafe { &mut *table.cast::<Table<T>>() };
    // SAFETY: the hook outlives its `arm`.
    let hook = unsafe { &*table.hook };
    let Some(entry) = hook.entries.get(table.used) else {
        table.overflow = true;
        return;
    };
    table.used += 1;
    // Published by the queue's lock, which the wakers take.
    entry.hook.store(table.hook.cast_mut(), Ordering::Relaxed);
    entry.head.store(head, Ordering::Relaxed);
    let wait = entry.wait.get();
    // SAFETY: the entry is the hook's own and on no queue; `head` is a
    // queue of the file, which we hold.
    unsafe {
        bindings::init_waitqueue_func_entry(wait, Some(wake::<T>));
        bindings::add_wait_queue(head, wait);
    }
}

/// The wake function of a hook's entries: calls the owner.
///
/// # Safety
///
/// Called by a waker of the queue, under its lock, with an entry that
/// `queue` put there.
unsafe extern "C" fn wake<T: Woken>(
    wait: *mut bindings::wait_queue_entry,
    _mode: c_uint,
    _sync: c_int,
    key: *mut c_void,
) -> c_int {
    // An entry is on a queue only until its hook's drop takes it off,
    // under the queue's lock, which the waker holds.
    // SAFETY: so `wait` is the first field of an `Entry<T>` of a live hook.
    let entry = unsafe { &*wait.cast::<Entry<T>>() };
    // SAFETY: set before the entry went on the queue; the hook lives, as
    // above.
    let hook = unsafe { &*entry.hook.load(Ordering::Relaxed) };
    // The key is the wakeup's poll events (poll_to_key()), or null: the
    // cast keeps the events' 32 bits.
    let events = key as usize as u32;
    hook.owner.woken(events);
    if events & POLLFREE != 0 {
        // SAFETY: the waker holds the queue's lock, under which entries
        // come off; the entry is on that queue.
        unsafe { bindings::list_del_init(ptr::addr_of_mut!((*wait).entry)) };
        // The last access to the hook: once `unhook` sees null, the hook
        // may go.
        entry.head.store(ptr::null_mut(), Ordering::Release);
    }
    0
}
