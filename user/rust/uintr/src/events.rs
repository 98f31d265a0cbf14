// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! The events a watch posts on: epoll's.

use std::fmt;
use std::ops::BitOr;

/// A set of the `EPOLL*` events a [watch](crate::UintrFd::watch) posts on.
///
/// ```
/// use uintr::Events;
/// let e = Events::IN | Events::HUP;
/// assert_eq!(e.bits(), 0x11);
/// assert!(e.contains(Events::IN) && !e.contains(Events::OUT));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Events(u32);

impl Events {
    /// Readable (`EPOLLIN`).
    pub const IN: Events = Events(0x001);
    /// Urgent data (`EPOLLPRI`).
    pub const PRI: Events = Events(0x002);
    /// Writable (`EPOLLOUT`).
    pub const OUT: Events = Events(0x004);
    /// An error (`EPOLLERR`).
    pub const ERR: Events = Events(0x008);
    /// Hang-up (`EPOLLHUP`).
    pub const HUP: Events = Events(0x010);
    /// The peer shut down its writing half (`EPOLLRDHUP`).
    pub const RDHUP: Events = Events(0x2000);

    const ALL: u32 = 0x201f;

    /// The events of `bits`, if all are ones a watch knows.
    pub const fn from_bits(bits: u32) -> Option<Events> {
        if bits & !Self::ALL == 0 {
            Some(Events(bits))
        } else {
            None
        }
    }

    /// The `EPOLL*` bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every event of `other` is in `self`.
    pub const fn contains(self, other: Events) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Events {
    type Output = Events;

    fn bitor(self, rhs: Events) -> Events {
        Events(self.0 | rhs.0)
    }
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(Events, &str); 6] = [
            (Events::IN, "IN"),
            (Events::PRI, "PRI"),
            (Events::OUT, "OUT"),
            (Events::ERR, "ERR"),
            (Events::HUP, "HUP"),
            (Events::RDHUP, "RDHUP"),
        ];
        let mut set = f.debug_set();
        for (e, name) in NAMES {
            if self.contains(e) {
                set.entry(&format_args!("{name}"));
            }
        }
        set.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_events_a_watch_knows_convert() {
        assert_eq!(Events::from_bits(0x2001), Some(Events::IN | Events::RDHUP));
        assert_eq!(Events::from_bits(0x20), None, "EPOLLNVAL is no watch event");
        assert_eq!(Events::from_bits(1 << 31), None, "EPOLLET neither");
    }

    #[test]
    fn the_bits_are_epolls() {
        // <sys/epoll.h>
        assert_eq!(Events::IN.bits(), 0x001);
        assert_eq!(Events::PRI.bits(), 0x002);
        assert_eq!(Events::OUT.bits(), 0x004);
        assert_eq!(Events::ERR.bits(), 0x008);
        assert_eq!(Events::HUP.bits(), 0x010);
        assert_eq!(Events::RDHUP.bits(), 0x2000);
        assert_eq!(format!("{:?}", Events::IN | Events::HUP), "{IN, HUP}");
    }
}
