// SPDX-License-Identifier: GPL-2.0

//! The uintr_fd object: one vector of one receiver, shareable like any fd.
//!
//! Whoever holds the fd may connect to the receiver as a sender (one
//! connection per sender thread).  The object holds its receiver and its
//! vector; it lists its connections so that closing the last reference to
//! the file tears them all down, even when the senders are other
//! processes.  The vector returns to the receiver when the object goes.
//!
//! uintr_register_self() uses the same object without a file: the
//! receiver holds it and releases it when it unregisters or exits.
//!
//! The receiver's process controls the fd's senders (its ioctls): it can
//! mask the vector at the source, so that SENDUIPI through any of the
//! fd's connections posts nothing.  A masked connection's UITT entry stays
//! valid (the sender cannot tell) but names a sink that never notifies
//! (`upid::sink_address`) instead of the receiver's UPID.  And it can
//! revoke connections, as if their senders had unregistered: those made
//! by one process, or all of them.
//!
//! The receiver's process can also have the kernel post the vector: it
//! watches a file, whose wakeups then post as a SENDUIPI through a
//! connection would (see `watch`).  A watch counts as a connection of the
//! fd; its receiver lists it.

use core::sync::atomic::{AtomicBool, Ordering};
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};

use crate::limits::{self, Charge};
use crate::pid::ProcessPid;
use crate::poll::FileRef;
use crate::receiver::{Receiver, SelfEntry};
use crate::stats::{self, Live};
use crate::trace::{self, Thread};
use crate::watch::{self, WatchSpec};

/// A vector claimed from a receiver, returned on drop.
struct VectorClaim {
    receiver: Arc<Receiver>,
    vector: u8,
}

impl Drop for VectorClaim {
    fn drop(&mut self) {
        self.receiver.release_vector(self.vector);
    }
}

/// A sender table, as the fds connected to it reach it: a connection
/// installs itself in the table and takes its entries down again.
/// (`sender::Sender` is the table; it lives above the fds it connects.)
pub(crate) trait Table: Send + Sync {
    /// Fills a free entry with a connection to `fd`'s receiver and
    /// returns its index.  Called with `fd`'s connection lock held.
    fn install(&self, fd: &Arc<UintrFd>) -> Result<usize>;
    /// Invalidates entry `index` if it still is a connection to `fd`.
    /// Called with `fd`'s connection lock held.
    fn uninstall(&self, index: usize, fd: &UintrFd);
    /// Masks or unmasks entry `index` if it is a connection to `fd`.
    /// Called with `fd`'s connection lock held.
    fn set_masked(&self, index: usize, fd: &UintrFd, masked: bool);
    /// Returns once no SENDUIPI that read one of the table's entries
    /// before its last change can still be under way.  Process context.
    fn wait_for_senduipis(&self);
}

/// Whether `conn` is `table`'s connection.
fn is_of<T: Table>(conn: &Connection, table: &T) -> bool {
    core::ptr::addr_eq(&*conn.sender as *const dyn Table, table as *const T)
}

/// One sender connected through this fd.
struct Connection {
    sender: Arc<dyn Table>,
    /// The sender's UITT index.
    index: usize,
    /// The process of the thread that connected, for revocation.
    process: ProcessPid,
    /// Counts the connection against its receiver's and user's limits.
    _charge: Charge,
}

/// The connections of an fd.
struct Connections {
    /// Free places are `None` and reused.
    list: KVec<Option<Connection>>,
    /// The file was closed: no new connections.
    released: bool,
}

impl Connections {
    /// The number of connected senders.
    fn senders(&self) -> usize {
        self.list.iter().flatten().count()
    }
}

/// The object behind a uintr_fd.
#[pin_data]
pub(crate) struct UintrFd {
    claim: VectorClaim,
    /// Lock order: this lock, then a sender's table lock.
    #[pin]
    connections: Mutex<Connections>,
    /// The vector is masked; changed under the connection lock.
    masked: AtomicBool,
    /// Counts this object in [`stats::FDS`].
    _live: Live,
}

impl UintrFd {
    /// Claims `vector` of `receiver` for a new fd object.
    pub(crate) fn new(receiver: &Arc<Receiver>, vector: u8) -> Result<Arc<Self>> {
        receiver.claim_vector(vector)?;
        let claim = VectorClaim {
            receiver: receiver.clone(),
            vector,
        };
        let connections = Connections {
            list: KVec::new(),
            released: false,
        };
        Arc::pin_init(
            pin_init!(Self {
                claim,
                connections <- new_mutex!(connections, "uintr::UintrFd::connections"),
                masked: AtomicBool::new(false),
                _live: Live::new(&stats::FDS),
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// The receiver the fd's interrupts go to.
    pub(crate) fn receiver(&self) -> &Arc<Receiver> {
        &self.claim.receiver
    }

    /// The fd's vector.
    pub(crate) fn vector(&self) -> u8 {
        self.claim.vector
    }

    /// Whether the vector is masked (stable under the connection lock).
    pub(crate) fn is_masked(&self) -> bool {
        self.masked.load(Ordering::Relaxed)
    }

    /// Masks the vector at its source, or unmasks it.  Once masking
    /// returns, no SENDUIPI through the fd's connections, present or
    /// future, posts or notifies (what was posted before stays pending);
    /// once unmasking returns, they post again.  What was sent meanwhile
    /// is dropped.
    pub(crate) fn set_masked(&self, masked: bool) {
        let conns = self.connections.lock();
        if self.masked.swap(masked, Ordering::Relaxed) == masked {
            return;
        }
        // The emulator reads the mask under each table's lock, which this
        // takes after the change: a send that starts later sees it.
        for conn in conns.list.iter().flatten() {
            conn.sender.set_masked(conn.index, self, masked);
        }
        self.receiver().watches().set_masked(self.vector(), masked);
        if masked {
            // On the hardware, a SENDUIPI that read an entry before its
            // change may still be posting to the receiver: wait for the
            // CPUs of each connected table, not for every CPU.
            for conn in conns.list.iter().flatten() {
                conn.sender.wait_for_senduipis();
            }
        }
        drop(conns);
    }

    /// Connects `sender` and returns its UITT index.
    ///
    /// `EISCONN` if it is connected already, `ESHUTDOWN` if the receiver
    /// is gone, `ENOSPC` if the sender's table, the fd or the receiver is
    /// full, `EMFILE` if the user has all the connections it may have
    /// (see [`limits`]).  Nothing changes on an error.
    pub(crate) fn connect<T: Table + 'static>(self: &Arc<Self>, sender: &Arc<T>) -> Result<usize> {
        let mut guard = self.connections.lock();
        let conns = &mut *guard;
        if conns.released {
            return Err(EBADF);
        }
        if !self.receiver().takes_senders() {
            return Err(crate::errno::eshutdown());
        }
        if conns.list.iter().flatten().any(|c| is_of(c, &**sender)) {
            return Err(crate::errno::eisconn());
        }
        if self.connection_count(conns) >= limits::fd_connections() {
            return Err(ENOSPC);
        }
        let charge = Charge::new(self.receiver())?;
        let process = ProcessPid::current()?;
        let place = match conns.list.iter().position(Option::is_none) {
            Some(place) => place,
            None => {
                conns.list.push(None, GFP_KERNEL_ACCOUNT)?;
                conns.list.len() - 1
            }
        };
        let index = sender.install(self)?;
        conns.list[place] = Some(Connection {
            sender: sender.clone(),
            index,
            process,
            _charge: charge,
        });
        trace::connect(index, self.vector(), self.receiver());
        Ok(index)
    }

    /// Disconnects `sender`; `EINVAL` if it is not connected.
    pub(crate) fn disconnect<T: Table>(&self, sender: &Arc<T>) -> Result {
        let mut conns = self.connections.lock();
        let conn = conns
            .list
            .iter_mut()
            .find(|c| matches!(c, Some(c) if is_of(c, &**sender)))
            .and_then(Option::take)
            .ok_or(EINVAL)?;
        conn.sender.uninstall(conn.index, self);
        Ok(())
    }

    /// Disconnects the senders that process `pid` (in the caller's PID
    /// namespace) connected, or every sender for `None`, as unregistering
    /// would: their next SENDUIPI on the index faults.  Returns how many
    /// connections it cut.
    pub(crate) fn revoke(&self, pid: Option<i32>) -> usize {
        let mut conns = self.connections.lock();
        let mut cut = 0;
        for place in conns.list.iter_mut() {
            let chosen = place
                .as_ref()
                .is_some_and(|c| pid.map_or(true, |pid| c.process.in_current_namespace() == pid));
            if !chosen {
                continue;
            }
            if let Some(conn) = place.take() {
                conn.sender.uninstall(conn.index, self);
                cut += 1;
            }
        }
        cut
    }

    /// The number of connected senders.
    pub(crate) fn sender_count(&self) -> usize {
        self.connections.lock().senders()
    }

    /// What the fd's limit bounds: its senders and its watches.
    fn connection_count(&self, conns: &Connections) -> usize {
        conns.senders() + self.receiver().watches().count(self.vector())
    }

    /// Watches `file` for `events` (valid, see `events::WatchRequest`):
    /// from now on its wakeups post the vector, and if it is ready for
    /// one of them now, that posts once at once.
    ///
    /// `EBADF` once the fd is released, `ESHUTDOWN` if the receiver is
    /// gone, `EEXIST` if `file` is watched through this fd already,
    /// `EPERM` if it names more wait queues than a watch has, `ENOSPC` or
    /// `EMFILE` as for a connection (see [`limits`]).
    pub(crate) fn watch(&self, file: FileRef, events: u32) -> Result {
        let conns = self.connections.lock();
        if conns.released {
            return Err(EBADF);
        }
        let receiver = self.receiver();
        if !receiver.takes_senders() {
            return Err(crate::errno::eshutdown());
        }
        if receiver.watches().contains(self.vector(), &file) {
            return Err(EEXIST);
        }
        if self.connection_count(&conns) >= limits::fd_connections() {
            return Err(ENOSPC);
        }
        let watch = watch::start(WatchSpec {
            file,
            events,
            upid: receiver.upid().clone(),
            vector: self.vector(),
            receiver_tid: receiver.global_tid(),
            masked: self.is_masked(),
            charge: Charge::new(receiver)?,
        })?;
        // Refused once the receiver is gone: the watch then ends here.
        receiver.watches().add(watch)
    }

    /// Ends the watch of `file`; `ENOENT` if there is none.
    pub(crate) fn unwatch(&self, file: &FileRef) -> Result {
        let _conns = self.connections.lock();
        self.receiver().watches().remove(self.vector(), file)
    }

    /// The last reference to the file is gone: tear down every connection
    /// and end every watch.
    pub(crate) fn release(&self) {
        let mut conns = self.connections.lock();
        conns.released = true;
        self.receiver().watches().end(self.vector());
        for place in conns.list.iter_mut() {
            if let Some(conn) = place.take() {
                conn.sender.uninstall(conn.index, self);
            }
        }
    }
}

/// The receiver holds the objects of uintr_register_self() through this.
impl SelfEntry for UintrFd {
    fn release(&self) {
        UintrFd::release(self)
    }
}
