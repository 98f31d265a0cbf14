// SPDX-License-Identifier: GPL-2.0

//! The events of a watch (UINTR_FD_WATCH): the ABI of `struct
//! uintr_watch`, and which wakeups of the watched file post.
//!
//! A wakeup of a wait queue carries a key, the poll events it is about
//! (`poll_to_key()`), or none (null) when the waker does not say; a
//! wakeup without events may be about any of them, so it posts.

/// `EPOLLIN` (`<uapi/linux/eventpoll.h>`).
pub(crate) const EPOLLIN: u32 = 0x0001;
/// `EPOLLPRI`.
pub(crate) const EPOLLPRI: u32 = 0x0002;
/// `EPOLLOUT`.
pub(crate) const EPOLLOUT: u32 = 0x0004;
/// `EPOLLERR`.
pub(crate) const EPOLLERR: u32 = 0x0008;
/// `EPOLLHUP`.
pub(crate) const EPOLLHUP: u32 = 0x0010;
/// `EPOLLRDHUP`.
pub(crate) const EPOLLRDHUP: u32 = 0x2000;

/// The events a watch may name.
pub(crate) const WATCHABLE: u32 = EPOLLIN | EPOLLPRI | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLRDHUP;

/// A valid `struct uintr_watch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WatchRequest {
    /// The descriptor of the file to watch (not yet looked up).
    pub(crate) fd: i32,
    /// The events that post, a non-empty subset of [`WATCHABLE`].
    pub(crate) events: u32,
}

/// Why a `struct uintr_watch` is refused: the call's `EINVAL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadRequest {
    /// No event, or one a watch cannot name.
    Events,
    /// A flag that is not defined (none is yet).
    Flags,
}

impl WatchRequest {
    /// Size of `struct uintr_watch`, in 64-bit words.
    pub(crate) const WORDS: usize = 2;

    /// Parses `struct uintr_watch { __s32 fd; __u32 events; __u64 flags; }`
    /// as the two little-endian words user memory holds.
    pub(crate) fn parse(words: [u64; Self::WORDS]) -> Result<Self, BadRequest> {
        // The low and high halves of the first word: the casts keep them.
        let fd = words[0] as u32 as i32;
        let events = (words[0] >> 32) as u32;
        if words[1] != 0 {
            return Err(BadRequest::Flags);
        }
        if events == 0 || events & !WATCHABLE != 0 {
            return Err(BadRequest::Events);
        }
        Ok(Self { fd, events })
    }
}

/// `POLLFREE`: the wait queue is about to be freed (its wakeup also
/// carries `EPOLLHUP`).
pub(crate) const POLLFREE: u32 = 0x4000;

/// Whether a wakeup whose key carries `key` posts for a watch of
/// `watched` events.
pub(crate) fn posts(key: u32, watched: u32) -> bool {
    key == 0 || key & watched != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(fd: i32, events: u32, flags: u64) -> [u64; 2] {
        [u64::from(fd as u32) | u64::from(events) << 32, flags]
    }

    #[test]
    fn parses_fd_and_events() {
        assert_eq!(
            WatchRequest::parse(words(7, EPOLLIN | EPOLLHUP, 0)),
            Ok(WatchRequest {
                fd: 7,
                events: EPOLLIN | EPOLLHUP
            })
        );
        assert_eq!(
            WatchRequest::parse(words(-1, WATCHABLE, 0)),
            Ok(WatchRequest {
                fd: -1,
                events: WATCHABLE
            })
        );
    }

    #[test]
    fn every_single_event_is_accepted() {
        for event in [EPOLLIN, EPOLLPRI, EPOLLOUT, EPOLLERR, EPOLLHUP, EPOLLRDHUP] {
            assert!(WatchRequest::parse(words(3, event, 0)).is_ok());
        }
    }

    #[test]
    fn no_event_or_an_unknown_one_is_refused() {
        assert_eq!(WatchRequest::parse(words(3, 0, 0)), Err(BadRequest::Events));
        for bit in 0..32 {
            let event = 1u32 << bit;
            if event & WATCHABLE == 0 {
                assert_eq!(
                    WatchRequest::parse(words(3, EPOLLIN | event, 0)),
                    Err(BadRequest::Events),
                    "bit {bit}"
                );
            }
        }
        // EPOLLET, EPOLLONESHOT, POLLFREE: not a watch's.
        assert!(WatchRequest::parse(words(3, EPOLLIN | 1 << 31, 0)).is_err());
        assert!(WatchRequest::parse(words(3, EPOLLIN | 1 << 30, 0)).is_err());
        assert!(WatchRequest::parse(words(3, EPOLLIN | POLLFREE, 0)).is_err());
    }

    #[test]
    fn any_flag_is_refused() {
        for bit in 0..64 {
            assert_eq!(
                WatchRequest::parse(words(3, EPOLLIN, 1 << bit)),
                Err(BadRequest::Flags)
            );
        }
    }

    #[test]
    fn a_wakeup_posts_for_a_watched_event_or_without_events() {
        assert!(posts(EPOLLIN, EPOLLIN));
        assert!(posts(EPOLLIN | EPOLLOUT, EPOLLOUT));
        assert!(!posts(EPOLLOUT, EPOLLIN));
        assert!(posts(0, EPOLLIN));
        // POLLFREE comes with EPOLLHUP: a watch of EPOLLHUP hears it.
        assert!(posts(EPOLLHUP | POLLFREE, EPOLLHUP));
        assert!(!posts(EPOLLHUP | POLLFREE, EPOLLIN));
    }
}
