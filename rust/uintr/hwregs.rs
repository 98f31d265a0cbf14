// SPDX-License-Identifier: GPL-2.0

//! The UINTR MSRs as the hardware backend programs them.
//!
//! A thread's user interrupt state on a UINTR CPU is six MSRs (saved and
//! restored with its XSAVE state): UIRR, the handler, the stack
//! adjustment, MISC (UITTSZ in bits 31:0, UINV in bits 39:32), the UPID
//! address and the UITT address (bit 0: SENDUIPI enabled).  A receiver
//! owns the handler, the stack adjustment, UINV, the UPID address and
//! UIRR; a sender owns UITTSZ and the UITT address.  The two share MISC,
//! so every change is a read-modify-write of the owner's bits only: this
//! module says which bits, the backend applies them.  Pure, host-tested.

/// IA32_UINTR_RR: the pending requests (UIRR), one bit per vector.
pub(crate) const MSR_UIRR: u32 = 0x985;
/// IA32_UINTR_HANDLER: the handler's (canonical) address.
pub(crate) const MSR_HANDLER: u32 = 0x986;
/// IA32_UINTR_STACKADJUST: bit 0 clear: RSP -= value; set: RSP = value.
pub(crate) const MSR_STACK_ADJUST: u32 = 0x987;
/// IA32_UINTR_MISC: UITTSZ (bits 31:0) and UINV (bits 39:32).
pub(crate) const MSR_MISC: u32 = 0x988;
/// IA32_UINTR_PD: the UPID's address.
pub(crate) const MSR_PD: u32 = 0x989;
/// IA32_UINTR_TT: the UITT's address; bit 0 enables SENDUIPI.
pub(crate) const MSR_TT: u32 = 0x98a;

/// MISC bits 31:0: the highest valid UITT index.
const MISC_UITTSZ: u64 = 0xffff_ffff;
/// MISC bits 39:32: the notification vector the CPU recognizes.
const MISC_UINV_SHIFT: u32 = 32;
/// The bits of UINV.
const MISC_UINV: u64 = 0xff << MISC_UINV_SHIFT;
/// TT bit 0: SENDUIPI is enabled.
const TT_SENDUIPI: u64 = 1 << 0;
/// STACKADJUST bit 0: load RSP instead of subtracting from it.
const STACK_ADJUST_LOAD: u64 = 1 << 0;

/// Bit 63 is set in kernel addresses only.  (The syscall checks the real
/// end of the user address space, which keeps an address canonical.)
const KERNEL_HALF: u64 = 1 << 63;

/// A UPID is 64-byte aligned (PD bits 5:0 are reserved).
const UPID_ALIGN: u64 = 64;
/// A UITT is 16-byte aligned (TT bits 3:1 are reserved).
const UITT_ALIGN: u64 = 16;

/// One read-modify-write of an MSR of the current thread: the bits of
/// `clear` are cleared, then those of `set` set (the C helper computes
/// `(old & !clear) | set`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct MsrWrite {
    /// The MSR.
    pub(crate) msr: u32,
    /// Bits to clear.
    pub(crate) clear: u64,
    /// Bits to set (a subset of `clear`, or of the MSR's free bits).
    pub(crate) set: u64,
}

impl MsrWrite {
    /// Replaces the bits of `field` by `value`.
    const fn field(msr: u32, field: u64, value: u64) -> Self {
        MsrWrite {
            msr,
            clear: field,
            set: value & field,
        }
    }

    /// Replaces the whole MSR by `value`.
    const fn whole(msr: u32, value: u64) -> Self {
        Self::field(msr, u64::MAX, value)
    }
}

/// Why the registers of a receiver or a sender cannot be programmed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Invalid {
    /// The UPID or UITT address violates its alignment.
    Misaligned,
    /// A stack adjustment with bit 0 set would load RSP, not subtract.
    StackAdjust,
    /// An alternate stack's top is not a user address.
    AltStack,
    /// A UITT needs at least one entry.
    EmptyTable,
}

/// A receiver registers: the handler, the stack adjustment (subtracted
/// from RSP), the UPID and the notification vector.  UIRR starts empty.
pub(crate) fn load_receiver(
    handler: u64,
    stack_adjust: u64,
    upid: u64,
    uinv: u8,
) -> Result<[MsrWrite; 5], Invalid> {
    if upid % UPID_ALIGN != 0 {
        return Err(Invalid::Misaligned);
    }
    if stack_adjust & STACK_ADJUST_LOAD != 0 {
        return Err(Invalid::StackAdjust);
    }
    Ok([
        MsrWrite::whole(MSR_UIRR, 0),
        MsrWrite::whole(MSR_HANDLER, handler),
        MsrWrite::whole(MSR_STACK_ADJUST, stack_adjust),
        MsrWrite::whole(MSR_PD, upid),
        MsrWrite::field(MSR_MISC, MISC_UINV, u64::from(uinv) << MISC_UINV_SHIFT),
    ])
}

/// The receiver's stack adjustment changes (uintr_alt_stack()): an amount
/// to subtract from RSP, or with bit 0 set the top of an alternate stack,
/// a user address.
pub(crate) fn set_stack_adjust(stack_adjust: u64) -> Result<MsrWrite, Invalid> {
    if stack_adjust & STACK_ADJUST_LOAD != 0 && stack_adjust & KERNEL_HALF != 0 {
        return Err(Invalid::AltStack);
    }
    Ok(MsrWrite::whole(MSR_STACK_ADJUST, stack_adjust))
}

/// A receiver goes: UINV first (the CPU stops recognizing), then the
/// UPID, handler, stack adjustment and pending requests.
pub(crate) fn unload_receiver() -> [MsrWrite; 5] {
    [
        MsrWrite::field(MSR_MISC, MISC_UINV, 0),
        MsrWrite::whole(MSR_PD, 0),
        MsrWrite::whole(MSR_HANDLER, 0),
        MsrWrite::whole(MSR_STACK_ADJUST, 0),
        MsrWrite::whole(MSR_UIRR, 0),
    ]
}

/// A sender registers its table of `entries` entries: UITTSZ first, then
/// the address with SENDUIPI enabled.
pub(crate) fn load_sender(uitt: u64, entries: u32) -> Result<[MsrWrite; 2], Invalid> {
    if uitt % UITT_ALIGN != 0 {
        return Err(Invalid::Misaligned);
    }
    if entries == 0 {
        return Err(Invalid::EmptyTable);
    }
    Ok([
        MsrWrite::field(MSR_MISC, MISC_UITTSZ, u64::from(entries - 1)),
        MsrWrite::whole(MSR_TT, uitt | TT_SENDUIPI),
    ])
}

/// A sender goes: SENDUIPI disabled first, then UITTSZ cleared.
pub(crate) fn unload_sender() -> [MsrWrite; 2] {
    [
        MsrWrite::whole(MSR_TT, 0),
        MsrWrite::field(MSR_MISC, MISC_UITTSZ, 0),
    ]
}

/// Re-arms recognition: UINV is `uinv` again, UITTSZ untouched.  XSAVES
/// clears UINV once it has saved it; XRSTORS sets it again, but a thread
/// whose registers stayed loaded (switched back to the same CPU with
/// nothing else using the FPU there, or the parent of a fork, whose
/// registers were saved into the child's buffer) gets no XRSTORS and
/// would run on with UINV = 0: every notification would then reach the
/// kernel instead of the CPU's recognition.
pub(crate) fn arm_notifications(uinv: u8) -> MsrWrite {
    MsrWrite::field(MSR_MISC, MISC_UINV, u64::from(uinv) << MISC_UINV_SHIFT)
}

/// Recognition in software: `requests` join UIRR.
pub(crate) fn add_requests(requests: u64) -> MsrWrite {
    MsrWrite {
        msr: MSR_UIRR,
        clear: 0,
        set: requests,
    }
}

/// Clears the `requests` bits of UIRR.
pub(crate) fn clear_requests(requests: u64) -> MsrWrite {
    MsrWrite {
        msr: MSR_UIRR,
        clear: requests,
        set: 0,
    }
}

/// Reads UIRR (a write that changes nothing).
pub(crate) fn read_requests() -> MsrWrite {
    add_requests(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MSR's value after `w`, from `old`, as the C helper computes it.
    fn apply(w: &MsrWrite, old: u64) -> u64 {
        (old & !w.clear) | w.set
    }

    /// The six MSRs of one thread, as the CPU would hold them.
    #[derive(Default, Debug, PartialEq)]
    struct Regs([u64; 6]);

    impl Regs {
        fn apply(&mut self, writes: &[MsrWrite]) {
            for w in writes {
                assert!((MSR_UIRR..=MSR_TT).contains(&w.msr), "{w:?}");
                let reg = &mut self.0[(w.msr - MSR_UIRR) as usize];
                *reg = apply(w, *reg);
            }
        }

        fn get(&self, msr: u32) -> u64 {
            self.0[(msr - MSR_UIRR) as usize]
        }
    }

    const HANDLER: u64 = 0x7f00_1234_5678;
    const UPID: u64 = 0xffff_8880_0123_4540;
    const UITT: u64 = 0xffff_8880_0456_7000;

    #[test]
    fn receiver_programs_its_registers_as_the_sdm_lays_them_out() {
        let mut regs = Regs::default();
        regs.apply(&load_receiver(HANDLER, 128, UPID, 0xec).unwrap());
        assert_eq!(regs.get(MSR_HANDLER), HANDLER);
        assert_eq!(regs.get(MSR_STACK_ADJUST), 128);
        assert_eq!(regs.get(MSR_PD), UPID);
        assert_eq!(regs.get(MSR_MISC), 0xec << 32);
        assert_eq!(regs.get(MSR_UIRR), 0);
        assert_eq!(regs.get(MSR_TT), 0);
    }

    #[test]
    fn alternate_stack_loads_rsp_and_goes_back() {
        let mut regs = Regs::default();
        regs.apply(&load_receiver(HANDLER, 128, UPID, 0xec).unwrap());
        regs.apply(&[set_stack_adjust(0x7f00_0000_2001).unwrap()]);
        assert_eq!(regs.get(MSR_STACK_ADJUST), 0x7f00_0000_2001);
        assert_eq!(regs.get(MSR_HANDLER), HANDLER);
        regs.apply(&[set_stack_adjust(128).unwrap()]);
        assert_eq!(regs.get(MSR_STACK_ADJUST), 128);
        assert_eq!(set_stack_adjust(UPID | 1), Err(Invalid::AltStack));
    }

    #[test]
    fn sender_programs_uittsz_and_enables_senduipi() {
        let mut regs = Regs::default();
        regs.apply(&load_sender(UITT, 256).unwrap());
        assert_eq!(regs.get(MSR_TT), UITT | 1);
        assert_eq!(regs.get(MSR_MISC), 255);
    }

    #[test]
    fn receiver_and_sender_share_misc_without_touching_each_other() {
        let mut regs = Regs::default();
        regs.apply(&load_sender(UITT, 256).unwrap());
        regs.apply(&load_receiver(HANDLER, 128, UPID, 0xec).unwrap());
        assert_eq!(regs.get(MSR_MISC), (0xec << 32) | 255);
        regs.apply(&unload_sender());
        assert_eq!(regs.get(MSR_MISC), 0xec << 32);
        assert_eq!(regs.get(MSR_PD), UPID);
        regs.apply(&load_sender(UITT, 256).unwrap());
        regs.apply(&unload_receiver());
        assert_eq!(regs.get(MSR_MISC), 255);
        assert_eq!(regs.get(MSR_TT), UITT | 1);
        regs.apply(&unload_sender());
        assert_eq!(regs, Regs::default());
    }

    #[test]
    fn unloading_a_receiver_drops_its_pending_requests() {
        let mut regs = Regs::default();
        regs.apply(&load_receiver(HANDLER, 128, UPID, 0xec).unwrap());
        regs.apply(&[add_requests(1 << 63), add_requests(1 << 5)]);
        assert_eq!(regs.get(MSR_UIRR), (1 << 63) | (1 << 5));
        regs.apply(&unload_receiver());
        assert_eq!(regs, Regs::default());
    }

    #[test]
    fn taking_requests_clears_only_those_read() {
        let mut regs = Regs::default();
        regs.apply(&load_receiver(HANDLER, 128, UPID, 0xec).unwrap());
        regs.apply(&[add_requests((1 << 63) | (1 << 5))]);
        let read = regs.get(MSR_UIRR);
        // A notification recognized between the read and the clear.
        regs.apply(&[add_requests(1 << 7)]);
        regs.apply(&[clear_requests(read)]);
        assert_eq!(regs.get(MSR_UIRR), 1 << 7);
        let misc = regs.get(MSR_MISC);
        regs.apply(&[clear_requests(1 << 7)]);
        assert_eq!(regs.get(MSR_UIRR), 0);
        assert_eq!(regs.get(MSR_MISC), misc);
    }

    #[test]
    fn registering_again_starts_with_nothing_pending() {
        let mut regs = Regs::default();
        regs.apply(&[add_requests(1 << 9)]);
        regs.apply(&load_receiver(HANDLER, 128, UPID, 0xec).unwrap());
        assert_eq!(regs.get(MSR_UIRR), 0);
    }

    #[test]
    fn rearming_restores_uinv_that_xsaves_cleared() {
        let mut regs = Regs::default();
        regs.apply(&load_sender(UITT, 256).unwrap());
        regs.apply(&load_receiver(HANDLER, 128, UPID, 0xec).unwrap());
        let misc = regs.get(MSR_MISC);
        // XSAVES: UINV cleared, UITTSZ kept.
        regs.0[(MSR_MISC - MSR_UIRR) as usize] &= !MISC_UINV;
        assert_eq!(regs.get(MSR_MISC), 255);
        regs.apply(&[arm_notifications(0xec)]);
        assert_eq!(regs.get(MSR_MISC), misc);
        // Re-arming an armed thread changes nothing.
        let w = arm_notifications(0xec);
        assert_eq!(apply(&w, misc), misc);
    }

    #[test]
    fn adding_requests_keeps_those_already_recognized() {
        let w = add_requests(1 << 3);
        assert_eq!(apply(&w, 1 << 17), (1 << 17) | (1 << 3));
        assert_eq!(apply(&read_requests(), 0xdead), 0xdead);
    }

    #[test]
    fn recognition_is_stopped_before_the_upid_is_forgotten() {
        let writes = unload_receiver();
        let uinv = writes.iter().position(|w| w.msr == MSR_MISC).unwrap();
        let pd = writes.iter().position(|w| w.msr == MSR_PD).unwrap();
        assert!(uinv < pd);
        let writes = unload_sender();
        assert_eq!(writes[0], MsrWrite::whole(MSR_TT, 0));
    }

    #[test]
    fn bad_addresses_and_adjustments_are_refused() {
        assert_eq!(
            load_receiver(HANDLER, 128, UPID + 8, 0xec),
            Err(Invalid::Misaligned)
        );
        assert_eq!(
            load_receiver(HANDLER, 129, UPID, 0xec),
            Err(Invalid::StackAdjust)
        );
        assert_eq!(load_sender(UITT + 4, 256), Err(Invalid::Misaligned));
        assert_eq!(load_sender(UITT, 0), Err(Invalid::EmptyTable));
    }

    #[test]
    fn msr_numbers_are_the_sdms() {
        assert_eq!(
            [
                MSR_UIRR,
                MSR_HANDLER,
                MSR_STACK_ADJUST,
                MSR_MISC,
                MSR_PD,
                MSR_TT
            ],
            [0x985, 0x986, 0x987, 0x988, 0x989, 0x98a]
        );
    }
}
