// SPDX-License-Identifier: GPL-2.0

//! Watches: files whose wakeups post a user vector (UINTR_FD_WATCH).
//!
//! A watch posts its vector to its receiver's UPID on every wakeup of the
//! watched file's wait queues that carries one of its events (or none), as
//! a SENDUIPI through a connection to the vector's uintr_fd would: the
//! PIR bit, then the notification unless one is outstanding or
//! suppressed, so posts coalesce with each other and with SENDUIPIs, and
//! a receiver asleep in uintr_wait() is woken through the kernel vector
//! (at once, when it sleeps on the posting CPU).
//! The wakeups run under the queue's lock in any context (a timerfd's in
//! hard interrupt context), so a post takes a raw spinlock with interrupts
//! off and allocates nothing.
//!
//! A watch pins its file (a counted reference, as KVM's irqfd pins its
//! eventfd) and counts as a connection of its uintr_fd, receiver and user.
//! The receiver lists its watches ([`Watches`]); a watch ends when it
//! leaves the list (UINTR_FD_UNWATCH, the release of its uintr_fd, the
//! receiver's unregistration or exit), which takes it off the file's
//! queues and puts the file.  So a watched file that holds the uintr_fd
//! (a Unix socket with it in flight) cannot outlive the receiver's exit.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};

use crate::events;
use crate::glue::{self, CpuPin, IrqsOff};
use crate::limits::Charge;
use crate::poll::{FileRef, Hook, Woken};
use crate::raw_lock::{new_raw_spinlock, RawSpinLock};
use crate::stats::{self, Live};
use crate::trace;
use crate::upid::{Notification, Upid};
use crate::waitlist;

/// What a watch does on a wakeup: post its vector.
#[pin_data]
pub(crate) struct Poster {
    upid: Arc<Upid>,
    vector: u8,
    /// The events that post.
    events: u32,
    /// The receiving thread's TID in the initial PID namespace, for the
    /// trace event.
    receiver_tid: i32,
    /// The vector is masked: nothing is posted.  Held while posting, so
    /// that once masking returns no post is under way.
    #[pin]
    masked: RawSpinLock<bool>,
    /// Wakeups that posted, for fdinfo.
    posts: AtomicU64,
    /// Counts the watch against its receiver's and user's limits.
    _charge: Charge,
    /// Counts this watch in [`stats::WATCHES`].
    _live: Live,
}

impl Woken for Poster {
    fn woken(&self, key: u32) {
        if !events::posts(key, self.events) {
            return;
        }
        let _irqs = IrqsOff::new();
        let masked = self.masked.lock();
        if *masked {
            return;
        }
        let notification = self.upid.post(self.vector);
        drop(masked);
        self.posts.fetch_add(1, Ordering::Relaxed);
        match notification {
            Some(n) => {
                trace::watch_post(self.vector, self.receiver_tid, key, true, n.nv, n.ndst);
                notify(n);
            }
            None => trace::watch_post(self.vector, self.receiver_tid, key, false, 0, 0),
        }
    }
}

/// Sends a post's notification, interrupts off.  A receiver asleep on this
/// CPU (the kernel vector, to this CPU) is woken here, as the kernel
/// vector's handler would wake it, rather than by an interrupt to itself:
/// a timer's or a device's interrupt usually lands where its receiver
/// sleeps.  Waking takes the CPU's wait list lock, which is never held
/// where a wait queue is woken, and wakes nothing under it.
fn notify(n: Notification) {
    if n.nv == waitlist::KERNEL_VECTOR {
        let here = CpuPin::new();
        if here.ndst() == n.ndst {
            waitlist::wake_posted(here.cpu());
            return;
        }
    }
    glue::send_notification(n.ndst, n.nv);
}

/// A watch: a file hooked to a [`Poster`].
pub(crate) type Watch = Hook<Poster>;

/// The facts of a new watch.
pub(crate) struct WatchSpec {
    /// The file to watch.
    pub(crate) file: FileRef,
    /// The events that post, valid (see [`events::WatchRequest`]).
    pub(crate) events: u32,
    /// The receiver's UPID.
    pub(crate) upid: Arc<Upid>,
    /// The vector posted.
    pub(crate) vector: u8,
    /// See [`Poster::receiver_tid`].
    pub(crate) receiver_tid: i32,
    /// Whether the vector is masked now.
    pub(crate) masked: bool,
    /// The watch's charge.
    pub(crate) charge: Charge,
}

/// Makes a watch and arms it: from now on wakeups of the file post, and if
/// the file is ready for one of the events now, that posts once at once.
/// `EPERM` for a file that names more wait queues than a watch has.
/// Process context.
pub(crate) fn start(spec: WatchSpec) -> Result<Arc<Watch>> {
    let events = spec.events;
    let poster = try_pin_init!(Poster {
        upid: spec.upid,
        vector: spec.vector,
        events,
        receiver_tid: spec.receiver_tid,
        masked <- new_raw_spinlock!(spec.masked, "uintr::Poster::masked"),
        posts: AtomicU64::new(0),
        _charge: spec.charge,
        _live: Live::new(&stats::WATCHES),
    }? Error);
    let watch = Arc::pin_init(Hook::<Poster>::new(spec.file, poster), GFP_KERNEL_ACCOUNT)?;
    let ready = watch.arm(events)?;
    if ready & events != 0 {
        watch.owner().woken(ready & events);
    }
    Ok(watch)
}

/// The watches of one receiver, with the vectors they post.
#[pin_data]
pub(crate) struct Watches {
    /// Process context only.  Lock order: a uintr_fd's connection lock,
    /// then this one, then (as a watch ends) the watched file's queue
    /// locks, which are never held around it.
    #[pin]
    list: Mutex<WatchList>,
}

struct WatchList {
    /// Free places are `None` and reused.
    places: KVec<Option<Arc<Watch>>>,
    /// The receiver is gone: no new watches.
    closed: bool,
}

impl WatchList {
    /// The watches of `vector`.
    fn of(&self, vector: u8) -> impl Iterator<Item = &Arc<Watch>> {
        self.places
            .iter()
            .flatten()
            .filter(move |w| w.owner().vector == vector)
    }
}

impl Watches {
    /// No watch yet.
    pub(crate) fn new() -> impl PinInit<Self> {
        let list = WatchList {
            places: KVec::new(),
            closed: false,
        };
        pin_init!(Self {
            list <- new_mutex!(list, "uintr::Watches::list"),
        })
    }

    /// Lists `watch`; `ESHUTDOWN` once the receiver is gone (the watch
    /// then ends as the caller drops it).
    pub(crate) fn add(&self, watch: Arc<Watch>) -> Result {
        let mut list = self.list.lock();
        if list.closed {
            return Err(crate::errno::eshutdown());
        }
        match list.places.iter_mut().find(|place| place.is_none()) {
            Some(place) => *place = Some(watch),
            None => list.places.push(Some(watch), GFP_KERNEL_ACCOUNT)?,
        }
        Ok(())
    }

    /// Whether `file` is watched for `vector`.
    pub(crate) fn contains(&self, vector: u8, file: &FileRef) -> bool {
        self.list.lock().of(vector).any(|w| w.file().is(file))
    }

    /// The number of watches of `vector`.
    pub(crate) fn count(&self, vector: u8) -> usize {
        self.list.lock().of(vector).count()
    }

    /// Ends the watches of `vector` that `chosen` picks; returns how many.
    fn end_where(&self, vector: u8, chosen: impl Fn(&Watch) -> bool) -> usize {
        let mut list = self.list.lock();
        let mut ended = 0;
        for place in list.places.iter_mut() {
            if place
                .as_ref()
                .is_some_and(|w| w.owner().vector == vector && chosen(w))
            {
                *place = None;
                ended += 1;
            }
        }
        ended
    }

    /// Ends the watch of `file` for `vector`; `ENOENT` if there is none.
    pub(crate) fn remove(&self, vector: u8, file: &FileRef) -> Result {
        match self.end_where(vector, |w| w.file().is(file)) {
            0 => Err(ENOENT),
            _ => Ok(()),
        }
    }

    /// Ends the watches of `vector` (its uintr_fd is released).
    pub(crate) fn end(&self, vector: u8) {
        self.end_where(vector, |_| true);
    }

    /// Ends every watch; no new ones (the receiver is gone).
    pub(crate) fn close(&self) {
        let mut list = self.list.lock();
        list.closed = true;
        list.places = KVec::new();
    }

    /// Masks `vector`'s watches, or unmasks them: once this returns, none
    /// posts, or all post again.
    pub(crate) fn set_masked(&self, vector: u8, masked: bool) {
        let list = self.list.lock();
        for watch in list.of(vector) {
            let _irqs = IrqsOff::new();
            *watch.owner().masked.lock() = masked;
        }
    }

    /// Calls `show` with the inode number, events and posts of each watch
    /// of `vector`, for fdinfo.
    pub(crate) fn show(&self, vector: u8, mut show: impl FnMut(u64, u32, u64)) {
        let list = self.list.lock();
        for watch in list.of(vector) {
            let poster = watch.owner();
            show(
                watch.file().inode_number(),
                poster.events,
                poster.posts.load(Ordering::Relaxed),
            );
        }
    }
}
