// SPDX-License-Identifier: GPL-2.0

//! A receiver: a thread that registered a user interrupt handler.
//!
//! The receiver owns its UPID and its vector space (64 vectors, each
//! claimed by at most one uintr_fd).  It is reference counted: the thread
//! holds one reference while it is registered, and every uintr_fd created
//! for it holds one, so the fds outlive an unregistered or exited receiver
//! (they then refuse new senders with `ESHUTDOWN`).
//!
//! uintr_register_self() connects the thread to one of its own vectors
//! through a uintr_fd object that no file holds: the receiver keeps those
//! and releases them when it goes, which also invalidates their entries.

use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use kernel::bindings;
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, Mutex, SpinLock};
use kernel::task::Task;
use kernel::types::ARef;
use kernel::{new_mutex, new_spinlock};

use crate::glue::{self, CpuPin, IrqsOff};
use crate::limits::{ConnectionCount, Counted};
use crate::pid::{ProcessPid, ThreadPid};
use crate::raw_lock::{new_raw_spinlock, RawSpinLock};

use crate::stats::{self, Live};
use crate::trace;
use crate::upid::Upid;
use crate::waitlist::{self, Waiter, Wake, KERNEL_VECTOR};
use crate::watch::Watches;

/// Vectors per receiver: 0 (lowest priority) to 63 (highest).
pub(crate) const VECTORS: u64 = 64;

/// STACKADJUST of a receiver without an alternate stack: the delivery
/// frame goes below the x86-64 ABI's red zone (128 bytes), which the
/// interrupted code may use.
pub(crate) const STACK_ADJUST: u64 = 128;

/// The notification vector of every receiver's UPID (UINV).
pub(crate) const NOTIFICATION_VECTOR: u8 = bindings::UINTR_NOTIFICATION_VECTOR as u8;

/// What the receiving thread does, as far as its UPID is concerned.
const RUNNING: u8 = 0;
/// In uintr_wait(): notifications go to the kernel vector.
const WAITING: u8 = 1;
/// Asleep in another system call, with its sleeps to be interrupted:
/// notifications go to the kernel vector.
const ARMED: u8 = 2;

/// The handler flags the receiver registered with.
#[derive(Clone, Copy, Default)]
pub(crate) struct HandlerFlags {
    /// A user interrupt interrupts the thread's interruptible sleeps.
    pub(crate) interrupt_sleep: bool,
    /// ... and the calls that SA_RESTART restarts are restarted.
    pub(crate) restart: bool,
}

impl HandlerFlags {
    /// The flags as uintr_register_handler() takes them.
    pub(crate) fn bits(&self) -> u32 {
        let mut bits = 0;
        if self.interrupt_sleep {
            bits |= bindings::UINTR_HANDLER_FLAG_INTERRUPT_SLEEP;
        }
        if self.restart {
            bits |= bindings::UINTR_HANDLER_FLAG_RESTART;
        }
        bits
    }
}

/// A uintr_fd object of uintr_register_self(), as its receiver holds it:
/// no file refers to it, so the receiver releases it when it goes.
/// (`uintr_fd::UintrFd` is the object; it lives above its receiver.)
pub(crate) trait SelfEntry: Send + Sync {
    /// Tears down the object's connections.
    fn release(&self);
}

/// A registered receiver.
#[pin_data]
pub(crate) struct Receiver {
    /// Where senders post.
    upid: Arc<Upid>,
    /// The handler's user address.
    handler: u64,
    /// The receiving thread's pid, for fdinfo.
    pid: ThreadPid,
    /// Its process's, which controls the senders of its uintr_fds.
    process: ProcessPid,
    /// How the handler was registered.
    flags: HandlerFlags,
    /// Vectors claimed by a uintr_fd (bit n: vector n).
    vectors: AtomicU64,
    /// The senders connected through all of its uintr_fds, bounded by
    /// `kernel.uintr.max_receiver_connections`.
    connections: ConnectionCount,
    /// STACKADJUST: [`STACK_ADJUST`], or the top of the alternate stack
    /// with bit 0 set (uintr_alt_stack()).  Only the thread changes it.
    stack_adjust: AtomicU64,
    /// The fd-less uintr_fd objects of uintr_register_self(); process
    /// context only.  Lock order: this lock, then nothing of theirs (they
    /// are released after it is dropped).
    #[pin]
    self_entries: Mutex<KVec<Arc<dyn SelfEntry>>>,
    /// False once the thread unregistered or exited.
    active: AtomicBool,
    /// The receiving thread, until it unregisters or exits: from the
    /// start of its exit on, it takes no new senders (see
    /// [`Receiver::takes_senders`]).
    #[pin]
    thread: SpinLock<Option<ARef<Task>>>,
    /// RUNNING, WAITING or ARMED.  Only the thread itself changes it, in
    /// its system calls and its own context switches.
    state: AtomicU8,
    /// With `interrupt_sleep`: the entry that puts the thread on a wait
    /// list while it sleeps (it holds the task, so it goes at shutdown).
    /// Locked with interrupts off: it is used from context switches,
    /// under the runqueue lock, hence a raw lock.
    #[pin]
    sleeper: RawSpinLock<Option<Arc<Waiter>>>,
    /// The entry that lists the thread while it sleeps in uintr_wait(),
    /// kept from one call to the next (it holds the task, so it goes at
    /// shutdown).  Only the thread itself takes and returns it.
    #[pin]
    wait_entry: SpinLock<Option<Arc<Waiter>>>,
    /// The files watched through its uintr_fds (UINTR_FD_WATCH); they end
    /// at shutdown.
    #[pin]
    watches: Watches,
    /// Counts this receiver in [`stats::RECEIVERS`].
    _live: Live,
}

impl Receiver {
    /// A new, active receiver with its own UPID, for the current thread.
    pub(crate) fn new(handler: u64, flags: HandlerFlags) -> Result<Arc<Self>> {
        let pid = ThreadPid::current()?;
        let process = ProcessPid::current()?;
        let upid = Upid::new(NOTIFICATION_VECTOR)?;
        let sleeper_entry = if flags.interrupt_sleep {
            Some(Waiter::new(&upid, Wake::InterruptSleep)?)
        } else {
            None
        };
        Arc::pin_init(
            pin_init!(Receiver {
                upid,
                handler,
                pid,
                process,
                flags,
                vectors: AtomicU64::new(0),
                connections: ConnectionCount::new(),
                stack_adjust: AtomicU64::new(STACK_ADJUST),
                self_entries <- new_mutex!(KVec::new(), "uintr_receiver_self_entries"),
                active: AtomicBool::new(true),
                thread <- new_spinlock!(Some(ARef::from(&*current!())), "uintr_receiver_thread"),
                state: AtomicU8::new(RUNNING),
                sleeper <- new_raw_spinlock!(sleeper_entry, "uintr_receiver_sleeper"),
                wait_entry <- new_spinlock!(None, "uintr_receiver_wait_entry"),
                watches <- Watches::new(),
                _live: Live::new(&stats::RECEIVERS),
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// The receiver's UPID.
    pub(crate) fn upid(&self) -> &Arc<Upid> {
        &self.upid
    }

    /// The files watched through its uintr_fds.
    pub(crate) fn watches(&self) -> &Watches {
        &self.watches
    }

    /// The handler's user address.
    pub(crate) fn handler(&self) -> u64 {
        self.handler
    }

    /// How the handler was registered.
    pub(crate) fn flags(&self) -> HandlerFlags {
        self.flags
    }

    /// The stack adjustment of the delivery frame (STACKADJUST).
    pub(crate) fn stack_adjust(&self) -> u64 {
        self.stack_adjust.load(Ordering::Relaxed)
    }

    /// Sets STACKADJUST (the thread itself, for uintr_alt_stack()).
    pub(crate) fn set_stack_adjust(&self, stack_adjust: u64) {
        self.stack_adjust.store(stack_adjust, Ordering::Relaxed);
    }

    /// Keeps `entry`, a uintr_fd object of uintr_register_self(), until
    /// the receiver goes.
    pub(crate) fn keep_self_entry(&self, entry: Arc<dyn SelfEntry>) -> Result {
        self.self_entries.lock().push(entry, GFP_KERNEL_ACCOUNT)?;
        Ok(())
    }

    /// The receiving thread, which calls this, runs here from now on:
    /// point the UPID at this CPU (later context switches keep it so).
    pub(crate) fn activate(&self) {
        let cpu = CpuPin::new();
        self.upid.run_on(cpu.ndst());
    }

    /// The thread, pinned to the CPU `ndst`, is about to sleep in
    /// uintr_wait(): notify the kernel vector there until `unblock`.
    pub(crate) fn block(&self, ndst: u32) {
        self.state.store(WAITING, Ordering::Relaxed);
        self.upid.redirect(ndst, KERNEL_VECTOR);
    }

    /// The thread, pinned to the CPU `ndst`, runs again: notify the user
    /// vector here (the caller then picks up what was posted).
    pub(crate) fn unblock(&self, ndst: u32) {
        self.upid.redirect(ndst, NOTIFICATION_VECTOR);
        self.state.store(RUNNING, Ordering::Relaxed);
    }

    /// Whether the thread is in uintr_wait(), between `block` and
    /// `unblock`.
    pub(crate) fn is_waiting(&self) -> bool {
        self.state.load(Ordering::Relaxed) == WAITING
    }

    /// What the thread does as far as its UPID is concerned, for fdinfo.
    pub(crate) fn state_name(&self) -> &'static CStr {
        match self.state.load(Ordering::Relaxed) {
            WAITING => c_str!("waiting"),
            ARMED => c_str!("armed"),
            _ => c_str!("running"),
        }
    }

    /// The thread leaves the CPU `cpu` (`ndst`) for an interruptible sleep
    /// with user interrupts enabled; `due` says one is pending already.
    /// If it asked for such sleeps to be interrupted, puts it on the CPU's
    /// wait list and points the UPID at the kernel vector there; returns
    /// whether it did.  Called from the context switch.
    pub(crate) fn arm(&self, cpu: usize, ndst: u32, due: bool) -> bool {
        if self.state.load(Ordering::Relaxed) != RUNNING {
            return false;
        }
        let sleeper = self.sleeper.lock();
        let Some(waiter) = sleeper.as_ref() else {
            return false;
        };
        if !waitlist::enqueue(cpu, waiter, due) {
            return false;
        }
        self.state.store(ARMED, Ordering::Relaxed);
        self.upid.redirect(ndst, KERNEL_VECTOR);
        // Posted before the redirect (or pending already): no
        // notification will come, so send one; its handler runs once this
        // CPU has finished the switch.
        if due || self.upid.has_posted() {
            glue::send_notification(ndst, KERNEL_VECTOR);
        }
        true
    }

    /// The thread runs again on the CPU `ndst`: if `arm` put it on a wait
    /// list, takes it off and notifies the user vector here; returns
    /// whether it did.  Called from the context switch.
    pub(crate) fn disarm(&self, ndst: u32) -> bool {
        if self.state.load(Ordering::Relaxed) != ARMED {
            return false;
        }
        if let Some(waiter) = self.sleeper.lock().as_ref() {
            waitlist::dequeue(waiter);
        }
        self.unblock(ndst);
        true
    }

    /// The receiving thread's id in the current task's PID namespace; 0
    /// if it is not visible there.
    pub(crate) fn tid(&self) -> i32 {
        self.pid.in_current_namespace()
    }

    /// Whether the calling thread belongs to the receiving thread's
    /// process (which may have exited since).
    pub(crate) fn is_own_process(&self) -> bool {
        self.process.is_current()
    }

    /// Whether the thread is still registered.
    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Whether a new sender may connect: the thread is registered and not
    /// exiting.  Its receiver is released late in its exit, after its mm
    /// went and woke a joiner through the child-tid futex; `PF_EXITING` is
    /// set before that, so a sender that joined the thread never connects.
    pub(crate) fn takes_senders(&self) -> bool {
        self.is_active()
            && self
                .thread
                .lock()
                .as_ref()
                .is_some_and(|task| !glue::task_is_exiting(task))
    }

    /// Claims `vector` for a new uintr_fd; `EBUSY` if one has it already.
    pub(crate) fn claim_vector(&self, vector: u8) -> Result {
        let bit = 1u64 << vector;
        if self.vectors.fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            return Err(EBUSY);
        }
        Ok(())
    }

    /// Returns `vector` once its uintr_fd is gone.
    pub(crate) fn release_vector(&self, vector: u8) {
        self.vectors.fetch_and(!(1u64 << vector), Ordering::AcqRel);
    }

    /// The entry for a uintr_wait() of the thread: the one the last call
    /// returned, or a new one (the first call, or after `ENOMEM`).
    pub(crate) fn take_wait_entry(&self) -> Result<Arc<Waiter>> {
        // Taken in a statement of its own: the lock is released before a
        // new entry is allocated, which may sleep.
        let kept = self.wait_entry.lock().take();
        match kept {
            Some(waiter) => Ok(waiter),
            None => Waiter::new(&self.upid, Wake::Wait),
        }
    }

    /// A uintr_wait() is done with `waiter`, which is on no list: keeps it
    /// for the next call, unless the receiver is shut down (then it goes).
    pub(crate) fn return_wait_entry(&self, waiter: Arc<Waiter>) {
        let mut slot = self.wait_entry.lock();
        // `shutdown` clears `active` before it empties the slot, under
        // this lock: an entry kept here is always taken back there.
        if self.active.load(Ordering::Acquire) && slot.is_none() {
            *slot = Some(waiter);
            return;
        }
        drop(slot);
        drop(waiter);
    }

    /// The thread unregistered or exited: no more deliveries, no new
    /// senders; the fds stay open, the entries of uintr_register_self()
    /// are invalidated, the watches end (and put their files).
    pub(crate) fn shutdown(&self) {
        self.active.store(false, Ordering::Release);
        self.upid.suppress();
        self.watches.close();
        let entries = core::mem::take(&mut *self.self_entries.lock());
        for entry in entries.iter() {
            entry.release();
        }
        drop(entries);
        let sleeper = {
            let _irqs = IrqsOff::new();
            self.sleeper.lock().take()
        };
        let wait_entry = self.wait_entry.lock().take();
        let thread = self.thread.lock().take();
        // Dropped with interrupts on and no lock held: they may release
        // the task.
        drop(sleeper);
        drop(wait_entry);
        drop(thread);
    }
}

/// The senders connected through its uintr_fds count against its limit.
impl Counted for Receiver {
    fn connections(&self) -> &ConnectionCount {
        &self.connections
    }
}

/// Trace events give the receiving thread's id in the initial PID
/// namespace.
impl trace::Thread for Receiver {
    fn global_tid(&self) -> i32 {
        self.pid.global()
    }
}
