// SPDX-License-Identifier: GPL-2.0

//! What becomes of a system call that a user interrupt interrupted, for a
//! receiver that asked for its sleeps to be interrupted: the rules of a
//! signal handler, with the receiver's restart flag in the role of
//! SA_RESTART (see signal(7)).  Pure logic, host-tested.

/// The kernel-internal restart codes (include/linux/errno.h); a system
/// call returns them negated, never to user space.
const ERESTARTSYS: i64 = 512;
const ERESTARTNOINTR: i64 = 513;
const ERESTARTNOHAND: i64 = 514;
const ERESTART_RESTARTBLOCK: i64 = 516;

/// The fate of the interrupted call.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Fails with EINTR once the handler returns.
    Eintr,
    /// Is entered again once the handler returns.
    Restart,
    /// Its result stands (it completed, or failed for its own reasons).
    Keep,
}

/// The fate of a system call that returned `ret` while a user interrupt
/// handler is about to run; `restart` is the receiver's restart flag.
pub(crate) fn fate(ret: i64, restart: bool) -> Fate {
    match ret.wrapping_neg() {
        // Calls with a timeout (nanosleep, poll, ...): never restarted
        // after a handler, as for signals.
        ERESTART_RESTARTBLOCK | ERESTARTNOHAND => Fate::Eintr,
        ERESTARTSYS if restart => Fate::Restart,
        ERESTARTSYS => Fate::Eintr,
        ERESTARTNOINTR => Fate::Restart,
        _ => Fate::Keep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restartable_calls_follow_the_flag() {
        assert_eq!(fate(-ERESTARTSYS, false), Fate::Eintr);
        assert_eq!(fate(-ERESTARTSYS, true), Fate::Restart);
    }

    #[test]
    fn timed_calls_fail_even_with_the_flag() {
        for restart in [false, true] {
            assert_eq!(fate(-ERESTARTNOHAND, restart), Fate::Eintr);
            assert_eq!(fate(-ERESTART_RESTARTBLOCK, restart), Fate::Eintr);
        }
    }

    #[test]
    fn nointr_calls_always_restart() {
        assert_eq!(fate(-ERESTARTNOINTR, false), Fate::Restart);
        assert_eq!(fate(-ERESTARTNOINTR, true), Fate::Restart);
    }

    #[test]
    fn other_results_stand() {
        for ret in [0, 5, -4, -14, -515, -517, i64::MIN] {
            assert_eq!(fate(ret, false), Fate::Keep);
            assert_eq!(fate(ret, true), Fate::Keep);
        }
    }
}
