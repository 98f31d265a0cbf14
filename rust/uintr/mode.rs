// SPDX-License-Identifier: GPL-2.0

//! Hardware or emulation: the `uintr=` boot parameter and the mode it
//! selects.
//!
//! `uintr=auto` (the default) uses the CPU's User Interrupts when it has
//! them and the kernel's emulation of the instructions otherwise; `hw` only
//! the hardware (off without it), `emulate` the emulation even on a UINTR
//! CPU, `off` nothing.  The request is recorded while the kernel parses its
//! command line, before the CPUs are set up; the mode is fixed once, at
//! the component's initcall.  Pure logic, host-tested.

use core::sync::atomic::{AtomicU8, Ordering};

/// How User Interrupts run on this boot (the values of C's `enum uintr_mode`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Mode {
    /// No User Interrupts: the system calls fail with `EOPNOTSUPP`.
    Off = 0,
    /// The kernel executes the instructions on behalf of the CPU.
    Emulated = 1,
    /// The CPU executes them.
    Hardware = 2,
}

/// What the `uintr=` boot parameter asked for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Request {
    /// The hardware if present, else the emulation.
    Auto = 0,
    /// The hardware only.
    Hardware = 1,
    /// The emulation, even on a UINTR CPU.
    Emulate = 2,
    /// Nothing.
    Off = 3,
}

impl Request {
    /// Parses the value of `uintr=`.
    pub(crate) fn parse(value: &[u8]) -> Option<Self> {
        match value {
            b"auto" => Some(Request::Auto),
            b"hw" => Some(Request::Hardware),
            b"emulate" => Some(Request::Emulate),
            b"off" => Some(Request::Off),
            _ => None,
        }
    }

    /// The parameter's spelling, for the boot log.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Request::Auto => "auto",
            Request::Hardware => "hw",
            Request::Emulate => "emulate",
            Request::Off => "off",
        }
    }

    /// Whether the CPU's own UINTR may be enabled.
    pub(crate) fn allows_hardware(self) -> bool {
        matches!(self, Request::Auto | Request::Hardware)
    }

    /// The mode this request gives with or without usable UINTR hardware.
    pub(crate) fn resolve(self, hardware_usable: bool) -> Mode {
        match (self, hardware_usable) {
            (Request::Off, _) | (Request::Hardware, false) => Mode::Off,
            (Request::Emulate, _) | (Request::Auto, false) => Mode::Emulated,
            (Request::Auto, true) | (Request::Hardware, true) => Mode::Hardware,
        }
    }

    fn from_u8(value: u8) -> Self {
        match value {
            1 => Request::Hardware,
            2 => Request::Emulate,
            3 => Request::Off,
            _ => Request::Auto,
        }
    }
}

impl Mode {
    /// The mode's name, for the boot log.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Emulated => "emulated",
            Mode::Hardware => "hardware",
        }
    }

    fn from_u8(value: u8) -> Self {
        match value {
            1 => Mode::Emulated,
            2 => Mode::Hardware,
            _ => Mode::Off,
        }
    }
}

/// The request of the command line (`Request` as `u8`).
static REQUEST: AtomicU8 = AtomicU8::new(Request::Auto as u8);
/// The mode in force (`Mode` as `u8`); `Off` until the initcall ran.
static MODE: AtomicU8 = AtomicU8::new(Mode::Off as u8);

/// Records the request of the command line.
pub(crate) fn set_request(request: Request) {
    REQUEST.store(request as u8, Ordering::Relaxed);
}

/// The request recorded by [`set_request`] (`auto` if none).
pub(crate) fn request() -> Request {
    Request::from_u8(REQUEST.load(Ordering::Relaxed))
}

/// Fixes the mode for this boot from the request and whether the UINTR
/// hardware can be used.
pub(crate) fn select(hardware_usable: bool) -> Mode {
    let mode = request().resolve(hardware_usable);
    MODE.store(mode as u8, Ordering::Release);
    mode
}

/// The mode in force.
pub(crate) fn current() -> Mode {
    Mode::from_u8(MODE.load(Ordering::Acquire))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_four_spellings_only() {
        assert_eq!(Request::parse(b"auto"), Some(Request::Auto));
        assert_eq!(Request::parse(b"hw"), Some(Request::Hardware));
        assert_eq!(Request::parse(b"emulate"), Some(Request::Emulate));
        assert_eq!(Request::parse(b"off"), Some(Request::Off));
        for bad in [&b""[..], b"on", b"HW", b"auto ", b"emul", b"offf"] {
            assert_eq!(Request::parse(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn names_round_trip() {
        for r in [
            Request::Auto,
            Request::Hardware,
            Request::Emulate,
            Request::Off,
        ] {
            assert_eq!(Request::parse(r.name().as_bytes()), Some(r));
            assert_eq!(Request::from_u8(r as u8), r);
        }
        for m in [Mode::Off, Mode::Emulated, Mode::Hardware] {
            assert_eq!(Mode::from_u8(m as u8), m);
        }
    }

    #[test]
    fn resolution_table() {
        use Mode::*;
        let table = [
            (Request::Auto, false, Emulated),
            (Request::Auto, true, Hardware),
            (Request::Hardware, false, Off),
            (Request::Hardware, true, Hardware),
            (Request::Emulate, false, Emulated),
            (Request::Emulate, true, Emulated),
            (Request::Off, false, Off),
            (Request::Off, true, Off),
        ];
        for (request, cpu, mode) in table {
            assert_eq!(request.resolve(cpu), mode, "{:?} cpu={}", request, cpu);
        }
    }

    #[test]
    fn hardware_is_hidden_unless_it_may_be_used() {
        assert!(Request::Auto.allows_hardware());
        assert!(Request::Hardware.allows_hardware());
        assert!(!Request::Emulate.allows_hardware());
        assert!(!Request::Off.allows_hardware());
    }

    #[test]
    fn select_uses_the_recorded_request() {
        set_request(Request::Emulate);
        assert_eq!(select(true), Mode::Emulated);
        assert_eq!(current(), Mode::Emulated);
        set_request(Request::Off);
        assert_eq!(select(false), Mode::Off);
        assert_eq!(current(), Mode::Off);
    }
}
