// SPDX-License-Identifier: GPL-2.0

//! Register and stack-frame arithmetic for user-interrupt delivery, `UIRET`
//! and `TESTUI`.
//!
//! These are the architectural state transitions of the Intel SDM "User
//! Interrupts" chapter, expressed as pure functions on register values. The
//! emulator reads and writes user memory and the saved user registers itself;
//! keeping the arithmetic here makes it testable on the host and keeps the
//! code that touches user memory short.
//!
//! Delivery of user-interrupt vector `v` (UIRR != 0, UIF = 1, CPL 3):
//!
//! ```text
//! tmp = RSP
//! RSP = STACKADJUST bit 0 ? STACKADJUST & !1 : RSP - STACKADJUST
//! RSP &= !0xF
//! push tmp; push RFLAGS; push RIP; push v
//! UIRR[v] = 0; UIF = 0; RFLAGS.TF = RFLAGS.RF = 0; RIP = HANDLER
//! ```
//!
//! The handler therefore sees `[vector][rip][rflags][rsp]` at its RSP, lowest
//! address first. `UIRET` runs after the handler popped the vector and pops
//! RIP, RFLAGS (through [`UIRET_RFLAGS_MASK`]) and RSP, then sets UIF.

/// RFLAGS carry flag (bit 0).
pub(crate) const RFLAGS_CF: u64 = 1 << 0;
/// RFLAGS bit 1, reserved and always 1.
pub(crate) const RFLAGS_FIXED_ONE: u64 = 1 << 1;
/// RFLAGS parity flag (bit 2).
pub(crate) const RFLAGS_PF: u64 = 1 << 2;
/// RFLAGS auxiliary-carry flag (bit 4).
pub(crate) const RFLAGS_AF: u64 = 1 << 4;
/// RFLAGS zero flag (bit 6).
pub(crate) const RFLAGS_ZF: u64 = 1 << 6;
/// RFLAGS sign flag (bit 7).
pub(crate) const RFLAGS_SF: u64 = 1 << 7;
/// RFLAGS trap flag (bit 8).
pub(crate) const RFLAGS_TF: u64 = 1 << 8;
/// RFLAGS direction flag (bit 10).
pub(crate) const RFLAGS_DF: u64 = 1 << 10;
/// RFLAGS overflow flag (bit 11).
pub(crate) const RFLAGS_OF: u64 = 1 << 11;
/// RFLAGS nested-task flag (bit 14).
pub(crate) const RFLAGS_NT: u64 = 1 << 14;
/// RFLAGS resume flag (bit 16).
pub(crate) const RFLAGS_RF: u64 = 1 << 16;
/// RFLAGS alignment-check flag (bit 18).
pub(crate) const RFLAGS_AC: u64 = 1 << 18;
/// RFLAGS CPUID-available flag (bit 21).
pub(crate) const RFLAGS_ID: u64 = 1 << 21;

/// RFLAGS bits that `UIRET` takes from the popped value (`0x254DD5`); all
/// other bits keep their current value.
pub(crate) const UIRET_RFLAGS_MASK: u64 = RFLAGS_CF
    | RFLAGS_PF
    | RFLAGS_AF
    | RFLAGS_ZF
    | RFLAGS_SF
    | RFLAGS_TF
    | RFLAGS_DF
    | RFLAGS_OF
    | RFLAGS_NT
    | RFLAGS_RF
    | RFLAGS_AC
    | RFLAGS_ID;

/// RFLAGS bits cleared when a user-interrupt handler is entered.
pub(crate) const DELIVERY_CLEARED_RFLAGS: u64 = RFLAGS_TF | RFLAGS_RF;

/// Arithmetic flags that `TESTUI` clears (`CF` is set from UIF instead).
pub(crate) const TESTUI_CLEARED_RFLAGS: u64 =
    RFLAGS_OF | RFLAGS_SF | RFLAGS_ZF | RFLAGS_AF | RFLAGS_PF;

/// Bit 0 of UINT_STACKADJUST: the value is an absolute stack pointer rather
/// than an amount to subtract from RSP.
pub(crate) const STACK_ADJUST_ABSOLUTE: u64 = 1;

/// Alignment of the stack before the delivery frame is pushed.
pub(crate) const DELIVERY_STACK_ALIGN: u64 = 16;

/// Number of 8-byte words pushed by delivery.
pub(crate) const DELIVERY_FRAME_WORDS: usize = 4;

/// Bytes pushed by delivery (vector, RIP, RFLAGS, RSP).
pub(crate) const DELIVERY_FRAME_BYTES: u64 = 32;

/// Words popped by `UIRET` (RIP, RFLAGS, RSP).
pub(crate) const UIRET_FRAME_WORDS: usize = 3;

/// The result of delivering a user interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeliveryFrame {
    /// RSP on entry to the handler; the frame starts here.
    pub(crate) new_rsp: u64,
    /// The frame in memory order from `new_rsp` upwards: vector, RIP,
    /// RFLAGS, old RSP.
    pub(crate) words: [u64; DELIVERY_FRAME_WORDS],
    /// RFLAGS on entry to the handler (TF and RF cleared).
    pub(crate) handler_rflags: u64,
}

/// Register state produced by `UIRET` (UIF becomes 1 as well).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UiretState {
    /// The popped RIP. The caller must check it with [`is_canonical`] and
    /// raise `#GP` (deliver `SIGSEGV`) if it is not.
    pub(crate) rip: u64,
    /// The merged RFLAGS, see [`uiret_rflags`].
    pub(crate) rflags: u64,
    /// The popped RSP.
    pub(crate) rsp: u64,
}

/// Returns the 16-byte aligned stack top below which the delivery frame is
/// pushed, from the interrupted RSP and UINT_STACKADJUST.
pub(crate) fn delivery_stack_top(rsp: u64, stack_adjust: u64) -> u64 {
    let unaligned = if stack_adjust & STACK_ADJUST_ABSOLUTE != 0 {
        stack_adjust & !STACK_ADJUST_ABSOLUTE
    } else {
        rsp.wrapping_sub(stack_adjust)
    };
    unaligned & !(DELIVERY_STACK_ALIGN - 1)
}

/// The smallest alternate stack: room for the delivery frame below its
/// top, whatever the top's alignment.
pub(crate) const ALT_STACK_MIN_BYTES: u64 = DELIVERY_FRAME_BYTES + DELIVERY_STACK_ALIGN;

/// UINT_STACKADJUST for an alternate stack `[sp, sp + size)` in a user
/// address space that ends at `limit`: the top with
/// [`STACK_ADJUST_ABSOLUTE`] set.  `None` if the stack is NULL, too small
/// for the frame, wraps around or does not end in user space.
pub(crate) fn alt_stack_adjust(sp: u64, size: u64, limit: u64) -> Option<u64> {
    if sp == 0 || size < ALT_STACK_MIN_BYTES {
        return None;
    }
    let top = sp.checked_add(size)?;
    if top > limit {
        return None;
    }
    Some(top | STACK_ADJUST_ABSOLUTE)
}

/// Returns the RFLAGS value the handler starts with.
pub(crate) fn handler_rflags(rflags: u64) -> u64 {
    rflags & !DELIVERY_CLEARED_RFLAGS
}

/// Computes the frame and register changes for delivering `vector`
/// (0..=63) to a task interrupted at `rip` with `rsp` and `rflags`.
///
/// The caller writes `words` to user memory at `new_rsp`, then sets RSP to
/// `new_rsp`, RFLAGS to `handler_rflags`, RIP to the handler, clears UIF and
/// clears the vector's UIRR bit.
pub(crate) fn delivery_frame(
    rsp: u64,
    stack_adjust: u64,
    rflags: u64,
    rip: u64,
    vector: u8,
) -> DeliveryFrame {
    let top = delivery_stack_top(rsp, stack_adjust);
    DeliveryFrame {
        new_rsp: top.wrapping_sub(DELIVERY_FRAME_BYTES),
        words: [u64::from(vector), rip, rflags, rsp],
        handler_rflags: handler_rflags(rflags),
    }
}

/// Merges the RFLAGS value popped by `UIRET` into the current RFLAGS.
pub(crate) fn uiret_rflags(popped_rflags: u64, current_rflags: u64) -> u64 {
    let merged = (current_rflags & !UIRET_RFLAGS_MASK) | (popped_rflags & UIRET_RFLAGS_MASK);
    merged | RFLAGS_FIXED_ONE
}

/// Computes the register state after `UIRET` from the three words it popped
/// (RIP, RFLAGS, RSP, in that order) and the current RFLAGS.
pub(crate) fn uiret(
    popped_rip: u64,
    popped_rflags: u64,
    popped_rsp: u64,
    current_rflags: u64,
) -> UiretState {
    UiretState {
        rip: popped_rip,
        rflags: uiret_rflags(popped_rflags, current_rflags),
        rsp: popped_rsp,
    }
}

/// Returns RFLAGS after `TESTUI`: `CF` = `uif`; OF, SF, ZF, AF and PF
/// cleared; all other bits unchanged.
pub(crate) fn testui_flags(rflags: u64, uif: bool) -> u64 {
    let cleared = rflags & !(TESTUI_CLEARED_RFLAGS | RFLAGS_CF);
    if uif {
        cleared | RFLAGS_CF
    } else {
        cleared
    }
}

/// The width of linear addresses (48, or 57 with 5-level paging), from
/// the end of the user address space: user space is the lower half of
/// the canonical range less a guard page, so its last byte has bit
/// `width - 2` as its highest.
pub(crate) fn linear_address_bits(user_limit: u64) -> u32 {
    65 - user_limit.leading_zeros()
}

/// Returns whether `addr` is canonical for `bits`-bit linear addresses,
/// i.e. bits 63:`bits - 1` are all equal.
pub(crate) fn is_canonical(addr: u64, bits: u32) -> bool {
    let upper = addr >> (bits - 1);
    upper == 0 || upper == u64::MAX >> (bits - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The twelve bits of the UIRET mask, by bit number.
    const MASK_BITS: [u32; 12] = [0, 2, 4, 6, 7, 8, 10, 11, 14, 16, 18, 21];

    #[test]
    fn constants_match_sdm() {
        assert_eq!(UIRET_RFLAGS_MASK, 0x254DD5);
        let from_bits = MASK_BITS.iter().fold(0u64, |acc, &b| acc | (1 << b));
        assert_eq!(from_bits, UIRET_RFLAGS_MASK);
        assert_eq!(RFLAGS_FIXED_ONE, 0x2);
        assert_eq!(DELIVERY_CLEARED_RFLAGS, 0x10100);
        assert_eq!(TESTUI_CLEARED_RFLAGS, 0x8D4);
        assert_eq!(DELIVERY_FRAME_BYTES, 8 * DELIVERY_FRAME_WORDS as u64);
        assert_eq!(UIRET_FRAME_WORDS, 3);
        assert_eq!(RFLAGS_DF | RFLAGS_NT | RFLAGS_AC | RFLAGS_ID, 0x244400);
    }

    #[test]
    fn delivery_relative_stack_adjust() {
        let rsp = 0x7FFF_0000_1238;
        let frame = delivery_frame(rsp, 128, 0x246, 0x40_1000, 17);
        // 0x1238 - 0x80 = 0x11B8, aligned down to 0x11B0, minus 32.
        assert_eq!(frame.new_rsp, 0x7FFF_0000_1190);
        assert_eq!(frame.words, [17, 0x40_1000, 0x246, rsp]);
        assert_eq!(frame.handler_rflags, 0x246);
    }

    #[test]
    fn delivery_absolute_stack_adjust() {
        // Bit 0 set: the value (minus bit 0) replaces RSP.
        let stack = 0x7000_0000_1235;
        let frame = delivery_frame(0x7FFF_FFFF_E008, stack, 0x202, 0x1234, 63);
        assert_eq!(frame.new_rsp, 0x7000_0000_1210);
        assert_eq!(frame.words, [63, 0x1234, 0x202, 0x7FFF_FFFF_E008]);
        // The original RSP does not influence the location.
        for rsp in [0, 8, 0x7000_0000_1000, u64::MAX] {
            assert_eq!(delivery_stack_top(rsp, stack), 0x7000_0000_1230);
        }
        // An already aligned absolute stack is used as is.
        assert_eq!(delivery_stack_top(0x1234, 0x8001), 0x8000);
    }

    #[test]
    fn alt_stack_bounds() {
        const LIMIT: u64 = 0x7FFF_FFFF_F000;
        let adjust = alt_stack_adjust(0x7000_0000_0000, 0x2000, LIMIT).unwrap();
        assert_eq!(adjust, 0x7000_0000_2001);
        // The frame lies inside the stack, whatever its alignment.
        for sp in 0x1000..0x1010u64 {
            let adjust = alt_stack_adjust(sp, ALT_STACK_MIN_BYTES, LIMIT).unwrap();
            let frame = delivery_frame(0x7FFF_0000_0000, adjust, 0x202, 0, 1);
            assert!(frame.new_rsp >= sp, "sp {sp:#x}");
            assert!(frame.new_rsp + DELIVERY_FRAME_BYTES <= sp + ALT_STACK_MIN_BYTES);
        }
        // An odd top loses bit 0 to the mode bit and stays inside.
        assert_eq!(
            delivery_stack_top(0, alt_stack_adjust(0x1001, 0x100, LIMIT).unwrap()),
            0x1100
        );
        assert_eq!(alt_stack_adjust(0, 0x2000, LIMIT), None);
        assert_eq!(
            alt_stack_adjust(0x1000, ALT_STACK_MIN_BYTES - 1, LIMIT),
            None
        );
        assert_eq!(alt_stack_adjust(u64::MAX - 0x100, 0x1000, LIMIT), None);
        assert_eq!(
            alt_stack_adjust(LIMIT - 0x1000, 0x1000, LIMIT),
            Some(LIMIT | 1)
        );
        assert_eq!(alt_stack_adjust(LIMIT - 0x1000, 0x1001, LIMIT), None);
    }

    #[test]
    fn delivery_zero_stack_adjust() {
        assert_eq!(delivery_stack_top(0x1008, 0), 0x1000);
        assert_eq!(delivery_frame(0x1000, 0, 0x202, 0, 0).new_rsp, 0xFE0);
    }

    #[test]
    fn delivery_alignment() {
        for adjust in [0u64, 8, 128, 0x1000, 0x1008] {
            for low in 0..16u64 {
                let rsp = 0x7FFF_FFFF_0000 + low;
                let frame = delivery_frame(rsp, adjust, 0x202, 0, 5);
                let below = rsp - adjust;
                assert_eq!(frame.new_rsp % 16, 0, "rsp {rsp:#x} adj {adjust:#x}");
                assert!(frame.new_rsp + DELIVERY_FRAME_BYTES <= below);
                assert!(below - (frame.new_rsp + DELIVERY_FRAME_BYTES) < 16);
            }
        }
    }

    #[test]
    fn delivery_wraps_instead_of_panicking() {
        assert_eq!(delivery_stack_top(0x10, 0x100), 0xFFFF_FFFF_FFFF_FF10);
        assert_eq!(
            delivery_frame(0x10, 1, 0x2, 0, 0).new_rsp,
            0xFFFF_FFFF_FFFF_FFE0
        );
    }

    #[test]
    fn delivery_clears_tf_and_rf_only() {
        let rflags = 0x2 | RFLAGS_TF | RFLAGS_RF | RFLAGS_ZF | RFLAGS_AC | (1 << 9);
        let frame = delivery_frame(0x8000, 0, rflags, 0, 1);
        assert_eq!(frame.handler_rflags, 0x2 | RFLAGS_ZF | RFLAGS_AC | (1 << 9));
        // The saved copy keeps TF and RF.
        assert_eq!(frame.words[2], rflags);
        assert_eq!(handler_rflags(u64::MAX), !(RFLAGS_TF | RFLAGS_RF));
    }

    #[test]
    fn delivery_then_uiret_restores_state() {
        let (rsp, rip) = (0x7FFF_FFFF_D123, 0x55_5555_1000);
        let rflags = 0x2 | RFLAGS_CF | RFLAGS_TF | RFLAGS_OF | (1 << 9);
        let frame = delivery_frame(rsp, 256, rflags, rip, 42);
        // The handler pops the vector; UIRET pops the remaining three words.
        assert_eq!(frame.words[0], 42);
        let [_, popped_rip, popped_rflags, popped_rsp] = frame.words;
        let state = uiret(popped_rip, popped_rflags, popped_rsp, frame.handler_rflags);
        assert_eq!(state, UiretState { rip, rflags, rsp });
    }

    #[test]
    fn uiret_takes_masked_bits_from_stack() {
        for bit in 0..64 {
            let flag = 1u64 << bit;
            let in_mask = MASK_BITS.contains(&bit);
            let got = uiret_rflags(flag, 0);
            let want = if in_mask { flag | 0x2 } else { 0x2 };
            assert_eq!(got, want, "popped bit {bit}");
        }
    }

    #[test]
    fn uiret_keeps_unmasked_bits_from_current() {
        for bit in 0..64 {
            let flag = 1u64 << bit;
            let in_mask = MASK_BITS.contains(&bit);
            let got = uiret_rflags(0, flag);
            let want = if in_mask { 0x2 } else { flag | 0x2 };
            assert_eq!(got, want, "current bit {bit}");
        }
    }

    #[test]
    fn uiret_merge_all_ones() {
        assert_eq!(uiret_rflags(u64::MAX, 0), UIRET_RFLAGS_MASK | 0x2);
        assert_eq!(uiret_rflags(0, u64::MAX), !UIRET_RFLAGS_MASK);
        assert_eq!(uiret_rflags(u64::MAX, u64::MAX), u64::MAX);
        // Bit 1 is forced even when cleared in both.
        assert_eq!(uiret_rflags(0, 0), 0x2);
        // IF (bit 9) and IOPL (bits 12-13) cannot be changed through UIRET.
        assert_eq!(uiret_rflags(0x3002, 0x202), 0x202);
    }

    #[test]
    fn uiret_passes_rip_and_rsp_through() {
        let state = uiret(0xDEAD_BEEF, 0x2 | RFLAGS_DF, 0x7FFF_0000_0008, 0x202);
        assert_eq!(state.rip, 0xDEAD_BEEF);
        assert_eq!(state.rsp, 0x7FFF_0000_0008);
        assert_eq!(state.rflags, 0x202 | RFLAGS_DF);
    }

    #[test]
    fn testui_sets_cf_from_uif() {
        let base = 0x202 | RFLAGS_DF;
        assert_eq!(testui_flags(base, true), base | RFLAGS_CF);
        assert_eq!(testui_flags(base | RFLAGS_CF, false), base);
        assert_eq!(testui_flags(base, false), base);
    }

    #[test]
    fn testui_clears_arithmetic_flags() {
        let arith = RFLAGS_OF | RFLAGS_SF | RFLAGS_ZF | RFLAGS_AF | RFLAGS_PF;
        assert_eq!(testui_flags(0x202 | arith, false), 0x202);
        assert_eq!(testui_flags(0x202 | arith, true), 0x202 | RFLAGS_CF);
        // Every other bit is preserved.
        let others = !(arith | RFLAGS_CF);
        assert_eq!(testui_flags(u64::MAX, false), others);
        assert_eq!(testui_flags(u64::MAX, true), others | RFLAGS_CF);
        assert_eq!(testui_flags(0, true), RFLAGS_CF);
    }

    #[test]
    fn canonical_addresses() {
        for addr in [
            0,
            0x7FFF_FFFF_FFFF,
            0x40_1000,
            0xFFFF_8000_0000_0000,
            0xFFFF_FFFF_FFFF_F000,
            u64::MAX,
        ] {
            assert!(is_canonical(addr, 48), "{addr:#x}");
            assert!(is_canonical(addr, 57), "{addr:#x}");
        }
        for addr in [
            0x8000_0000_0000,
            0xFFFF_7FFF_FFFF_FFFF,
            0x0001_0000_0000_0000,
            0x00FF_FFFF_FFFF_FFFF,
        ] {
            assert!(!is_canonical(addr, 48), "{addr:#x}");
            assert!(is_canonical(addr, 57), "{addr:#x}");
        }
        for addr in [
            0x0100_0000_0000_0000,
            0xFEFF_FFFF_FFFF_FFFF,
            0x8000_0000_0000_0000,
            0x7FFF_FFFF_FFFF_FFFF,
        ] {
            assert!(!is_canonical(addr, 48), "{addr:#x}");
            assert!(!is_canonical(addr, 57), "{addr:#x}");
        }
        // Any single bit in 63:width-1 alone is non-canonical; any bit
        // below is fine.
        for bit in 0..64 {
            assert_eq!(is_canonical(1u64 << bit, 48), bit < 47, "bit {bit}");
            assert_eq!(is_canonical(1u64 << bit, 57), bit < 56, "bit {bit}");
        }
    }

    #[test]
    fn address_width_from_the_user_limit() {
        // TASK_SIZE_MAX with 4 KiB pages: 4-level and 5-level paging.
        assert_eq!(linear_address_bits((1 << 47) - 4096), 48);
        assert_eq!(linear_address_bits((1 << 56) - 4096), 57);
    }
}
