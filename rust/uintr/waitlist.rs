// SPDX-License-Identifier: GPL-2.0

//! Per-CPU lists of sleeping receivers, and the kernel vector's handler.
//!
//! A receiver that sleeps is current nowhere, so the notification vector
//! cannot find it.  As on the hardware, its UPID is pointed at the kernel
//! vector instead, at the CPU where it went to sleep, and a [`Waiter`] on
//! that CPU's list names it.  The kernel vector's handler walks the list
//! of its own CPU only and wakes the waiters whose UPID has something
//! posted: no global list, no global lock, no scan of other CPUs' waiters.
//!
//! The interrupt does not say which UPID was posted (on the hardware the
//! CPU posts and notifies by itself), so each kernel vector starts a pass
//! that looks at every waiter of its CPU once and takes the ones it wakes
//! off the list.  How many sleep on a CPU is up to unprivileged users, so
//! the handler itself looks at [`CHUNK`] waiters at most, with interrupts
//! off; the rest of a pass goes on in that CPU's bottom half
//! ([`continue_pass`]), a chunk at a time with interrupts on in between.
//! A handler costs O(1) with interrupts off, a pass O(waiters on the CPU)
//! in all, as in KVM's handler of its posted-interrupt wakeup vector,
//! which walks the CPU's blocked vCPUs.
//!
//! A list's lock is taken with interrupts off (the handler takes it too),
//! possibly under the scheduler's runqueue lock (a receiver going to sleep
//! is enqueued from the context switch): a raw spinlock, which spins with
//! PREEMPT_RT too.  So nothing is woken under it: the handler takes
//! references to the tasks to wake, drops the lock, then wakes them.

use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use kernel::bindings;
use kernel::list::{AtomicTracker, List, ListArc, ListLinks, TryNewListArc};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::task::Task;
use kernel::types::ARef;

use crate::glue::{self, IrqsOff};
use crate::raw_lock::{new_raw_spinlock, RawSpinLock};
use crate::trace;
use crate::upid::Upid;

/// The vector a sleeping receiver's UPID notifies instead of the user
/// vector: the kernel's, whose handler is [`wake_posted`].
pub(crate) const KERNEL_VECTOR: u8 = bindings::UINTR_KERNEL_VECTOR as u8;

/// How the handler wakes a waiter.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// A plain wakeup: the thread sleeps in uintr_wait().
    Wait,
    /// As a signal would (TIF_NOTIFY_SIGNAL and a wakeup): the thread
    /// sleeps in another system call and asked for such sleeps to be
    /// interrupted.
    InterruptSleep,
}

/// One sleeping receiver on a CPU's wait list.
#[pin_data]
pub(crate) struct Waiter {
    #[pin]
    links: ListLinks,
    #[pin]
    tracker: AtomicTracker,
    /// The sleeping thread.
    task: ARef<Task>,
    /// Its UPID, which the handler looks at.
    upid: Arc<Upid>,
    /// How to wake it.
    wake: Wake,
    /// A request was pending already when it was enqueued: wake it even
    /// though nothing is posted.
    due: AtomicBool,
    /// The CPU whose list it is on (meaningful while it is on one).
    cpu: AtomicUsize,
    /// That CPU went offline and [`wake_all`] woke the thread: its UPID
    /// names a dead CPU, it must be listed elsewhere.
    swept: AtomicBool,
}

kernel::list::impl_has_list_links! {
    impl HasListLinks<0> for Waiter { self.links }
}
kernel::list::impl_list_arc_safe! {
    impl ListArcSafe<0> for Waiter { tracked_by tracker: AtomicTracker; }
}
kernel::list::impl_list_item! {
    impl ListItem<0> for Waiter { using ListLinks; }
}

impl Waiter {
    /// A waiter for the current task, which receives on `upid`.
    pub(crate) fn new(upid: &Arc<Upid>, wake: Wake) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Waiter {
                links <- ListLinks::new(),
                tracker <- AtomicTracker::new(),
                task: ARef::from(&*current!()),
                upid: upid.clone(),
                wake,
                due: AtomicBool::new(false),
                cpu: AtomicUsize::new(0),
                swept: AtomicBool::new(false),
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// Whether the CPU it was listed on went offline since (see
    /// [`wake_all`]); enqueueing it again clears the mark.
    pub(crate) fn was_swept(&self) -> bool {
        self.swept.load(Ordering::Acquire)
    }

    /// The kernel vector's recognition for this waiter: whether to wake
    /// it.  Only once its UPID notifies the kernel vector: before that
    /// (between `enqueue` and the redirect, with interrupts on in
    /// uintr_wait()), ON may still belong to a notification of the user
    /// vector; waking the thread for it, while it still runs, would use up
    /// its one wakeup (it leaves the list), and the notification the
    /// redirect makes due would then find it gone and leave it asleep.
    ///
    /// After the redirect, as any recognition, it clears ON and then looks
    /// at PIR: it wakes the thread only for a request the thread will see
    /// when it looks.  An ON without a request (a post that claimed its
    /// notification after the thread took its request, see
    /// [`Upid::claim_notification`]) is cleared without a wakeup, so the
    /// next post notifies again; taken for a wakeup, it would leave the
    /// thread asleep, off the list, under an ON that no post clears.
    fn take_wakeup(&self) -> bool {
        self.upid.acknowledge(KERNEL_VECTOR)
            && (self.upid.has_posted() || self.due.load(Ordering::Relaxed))
    }
}

/// The waiters of one CPU.
struct Waiters {
    list: List<Waiter>,
    /// How many are on `list`.
    len: usize,
    /// How many waiters the current pass has still to look at, from the
    /// head: a pass pops each waiter from the head once and puts the ones
    /// it does not wake at the tail, so `len` pops look at all of them.
    /// Each kernel vector starts a pass over the whole list; 0 when none
    /// is under way.
    unseen: usize,
}

/// The waiters of one CPU, under their lock.
type WaitList = RawSpinLock<Waiters>;

/// One wait list per possible CPU, allocated at boot and never freed.
struct WaitLists {
    lists: KVec<Pin<KBox<WaitList>>>,
}

/// The wait lists, once `init` ran (NULL before, or if it failed).
static WAIT_LISTS: AtomicPtr<WaitLists> = AtomicPtr::new(ptr::null_mut());

/// Allocates the wait lists; called once at boot.
pub(crate) fn init() -> Result {
    let cpus = glue::possible_cpus();
    let mut lists = KVec::with_capacity(cpus, GFP_KERNEL)?;
    for _ in 0..cpus {
        lists.push(
            KBox::pin_init(
                new_raw_spinlock!(
                    Waiters {
                        list: List::new(),
                        len: 0,
                        unseen: 0,
                    },
                    "uintr_wait_list"
                ),
                GFP_KERNEL,
            )?,
            GFP_KERNEL,
        )?;
    }
    let all = KBox::new(WaitLists { lists }, GFP_KERNEL)?;
    // Leaked on purpose: the lists serve for as long as the kernel runs.
    WAIT_LISTS.store(KBox::into_raw(all), Ordering::Release);
    Ok(())
}

/// The wait list of `cpu`, if the lists exist.
fn wait_list(cpu: usize) -> Option<&'static WaitList> {
    let all = WAIT_LISTS.load(Ordering::Acquire);
    if all.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so stored by `init` from a leaked box: valid and
    // never written again for the rest of the kernel's life.
    let all: &'static WaitLists = unsafe { &*all };
    all.lists.get(cpu).map(|list| &**list)
}

/// Whether the wait lists exist (they do unless boot ran out of memory).
pub(crate) fn available() -> bool {
    wait_list(0).is_some()
}

/// Puts `waiter` on the list of `cpu`, unless it is on a list already;
/// `due` says a request is pending already.  Returns whether it was
/// enqueued.  The caller then redirects the UPID.
pub(crate) fn enqueue(cpu: usize, waiter: &Arc<Waiter>, due: bool) -> bool {
    let Some(list) = wait_list(cpu) else {
        return false;
    };
    let Ok(entry) = ListArc::try_from_arc(waiter.clone()) else {
        return false;
    };
    waiter.due.store(due, Ordering::Relaxed);
    waiter.cpu.store(cpu, Ordering::Relaxed);
    waiter.swept.store(false, Ordering::Relaxed);
    let _irqs = IrqsOff::new();
    let mut waiters = list.lock();
    waiters.list.push_back(entry);
    waiters.len += 1;
    true
}

/// Whether `waiter` is on a wait list.
#[cfg(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST)]
pub(crate) fn is_listed(waiter: &Arc<Waiter>) -> bool {
    // Taking the list's tracker fails exactly when a list holds it; the
    // ListArc, if any, gives it back as it drops.
    ListArc::try_from_arc(waiter.clone()).is_err()
}

/// Takes `waiter` off its list, if it is on one.
pub(crate) fn dequeue(waiter: &Waiter) {
    let Some(list) = wait_list(waiter.cpu.load(Ordering::Relaxed)) else {
        return;
    };
    let _irqs = IrqsOff::new();
    // Only `enqueue` sets `waiter.cpu`, and only while `waiter` is on no
    // list; it then puts it on that CPU's list, which only `dequeue` and
    // the handler take it off.
    let mut waiters = list.lock();
    // SAFETY: by the above, `waiter` is on this list or on none.
    if unsafe { waiters.list.remove(waiter) }.is_some() {
        waiters.len -= 1;
    }
}

/// The most waiters a pass looks at with the list's lock held and
/// interrupts off: all the kernel vector's handler does itself.
pub(crate) const CHUNK: usize = 32;

/// The most chunks the bottom half does before it queues itself again, so
/// that a long pass leaves the softirq loop to its budget (and to
/// ksoftirqd).
const CHUNKS_PER_TURN: usize = 8;

/// The tasks a chunk found due, woken once the lock is dropped.
struct Due {
    tasks: [Option<(ARef<Task>, Wake)>; CHUNK],
    n: usize,
}

impl Due {
    fn new() -> Self {
        Due {
            tasks: Default::default(),
            n: 0,
        }
    }

    /// Wakes them all (no lock held); returns how many.
    fn wake(self) -> usize {
        for (task, wake) in self.tasks.iter().flatten() {
            match wake {
                Wake::Wait => task.wake_up(),
                Wake::InterruptSleep => notify_signal(task),
            }
        }
        self.n
    }
}

/// One chunk of the current pass: looks at up to [`CHUNK`] waiters from
/// the head; a due one leaves the list (its request stays pending until
/// it runs; it needs no more notifications) and goes to `due`, the others
/// go to the tail.  Returns how many it looked at.
fn look_at_chunk(waiters: &mut Waiters, due: &mut Due) -> usize {
    // Waiters that left meanwhile shorten the pass.
    waiters.unseen = waiters.unseen.min(waiters.len);
    let mut looked_at = 0;
    while looked_at < CHUNK && waiters.unseen > 0 {
        waiters.unseen -= 1;
        looked_at += 1;
        let Some(waiter) = waiters.list.pop_front() else {
            waiters.unseen = 0;
            break;
        };
        if waiter.take_wakeup() {
            trace::notify(KERNEL_VECTOR, &*waiter.task, waiter.upid.posted());
            due.tasks[due.n] = Some((waiter.task.clone(), waiter.wake));
            due.n += 1;
            waiters.len -= 1;
        } else {
            waiters.list.push_back(waiter);
        }
    }
    looked_at
}

/// What the kernel vector's handler did itself (the KUnit cases look).
#[cfg_attr(not(CONFIG_X86_USER_INTERRUPTS_KUNIT_TEST), allow(dead_code))]
pub(crate) struct Handled {
    /// Waiters it looked at (at most [`CHUNK`]).
    pub(crate) looked_at: usize,
    /// Waiters it woke.
    pub(crate) woken: usize,
}

/// The kernel vector arrived on `cpu` (interrupts are off): starts a pass
/// over its waiters, wakes those of the first chunk that have something
/// posted, and leaves the rest of the pass to the CPU's bottom half.  A
/// pass under way starts over: a waiter due now may have been looked at
/// before its post.
pub(crate) fn wake_posted(cpu: usize) -> Handled {
    let Some(list) = wait_list(cpu) else {
        return Handled {
            looked_at: 0,
            woken: 0,
        };
    };
    let mut due = Due::new();
    let (looked_at, more) = {
        let mut waiters = list.lock();
        waiters.unseen = waiters.len;
        let looked_at = look_at_chunk(&mut waiters, &mut due);
        (looked_at, waiters.unseen > 0)
    };
    let woken = due.wake();
    if more {
        glue::defer_wake_pass(cpu);
    }
    Handled { looked_at, woken }
}

/// The bottom half of `cpu` (or a KUnit case): goes on with the pass the
/// kernel vector started there, a chunk at a time, interrupts off only
/// while it holds the list's lock; returns whether the pass is over.
/// After [`CHUNKS_PER_TURN`] chunks it queues itself again.
pub(crate) fn continue_pass(cpu: usize) -> bool {
    let Some(list) = wait_list(cpu) else {
        return true;
    };
    for _ in 0..CHUNKS_PER_TURN {
        let mut due = Due::new();
        let more = {
            let _irqs = IrqsOff::new();
            let mut waiters = list.lock();
            look_at_chunk(&mut waiters, &mut due);
            waiters.unseen > 0
        };
        due.wake();
        if !more {
            return true;
        }
    }
    glue::defer_wake_pass(cpu);
    false
}

/// `cpu` is dead (called on another CPU, in process context): the
/// notifications sent to it were dropped, so its waiters, whose UPIDs name
/// it, would sleep on.  Takes each one off the list, marks it swept and
/// wakes its thread with a plain wakeup; returns how many.  A thread in
/// uintr_wait() then lists itself on the CPU it runs on (see `wait`); one
/// asleep in another call takes the wakeup as spurious, sleeps again, and
/// the context switch lists it where it sleeps now.  No new waiter can
/// join the list while the CPU is dead.
pub(crate) fn wake_all(cpu: usize) -> usize {
    let Some(list) = wait_list(cpu) else {
        return 0;
    };
    let mut woken = 0;
    loop {
        let mut batch: [Option<ARef<Task>>; CHUNK] = Default::default();
        let mut n = 0;
        {
            let _irqs = IrqsOff::new();
            let mut waiters = list.lock();
            while n < CHUNK {
                let Some(waiter) = waiters.list.pop_front() else {
                    break;
                };
                waiters.len -= 1;
                waiter.swept.store(true, Ordering::Release);
                batch[n] = Some(waiter.task.clone());
                n += 1;
            }
        }
        for task in batch.iter().flatten() {
            task.wake_up();
        }
        woken += n;
        if n < CHUNK {
            return woken;
        }
    }
}

/// Interrupts the interruptible sleep of `task` as a signal would.
fn notify_signal(task: &Task) {
    let raw: *const Task = task;
    // SAFETY: `Task` wraps a `task_struct` transparently, so the pointer
    // is the task's, valid while the reference lives.
    unsafe { bindings::set_notify_signal(raw.cast_mut().cast()) };
}
