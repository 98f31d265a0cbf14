// SPDX-License-Identifier: GPL-2.0

//! Decoder for the x86 User Interrupt (UINTR) instructions.
//!
//! The emulator traps the `#UD` raised by a CPU without UINTR support, fetches
//! up to 15 bytes at the user RIP and calls [`decode`] to find out whether the
//! faulting instruction is one it emulates and how long it is (so RIP can be
//! advanced past it). Anything this decoder does not accept must be left to
//! the normal `SIGILL` path.
//!
//! Recognised instructions (64-bit mode only):
//!
//! | Instruction    | Encoding                               |
//! |----------------|----------------------------------------|
//! | `UIRET`        | `F3 0F 01 EC`                          |
//! | `TESTUI`       | `F3 0F 01 ED`                          |
//! | `CLUI`         | `F3 0F 01 EE`                          |
//! | `STUI`         | `F3 0F 01 EF`                          |
//! | `SENDUIPI r64` | `F3 [REX] 0F C7 /6`, `ModRM.mod == 11` |
//!
//! # Prefix policy
//!
//! The policy is deliberately conservative: whatever is not explicitly
//! accepted below is reported as [`DecodeError::NotUintr`], so the task gets
//! `SIGILL` rather than a guessed emulation.
//!
//! - Any number of segment-override prefixes (`26 2E 36 3E 64 65`), the
//!   address-size prefix `67` and repeated `F3` prefixes may appear, in any
//!   order, before the opcode. They are ignored.
//! - At least one `F3` prefix is required.
//! - `F2`, `F0` (`LOCK`) and `66` anywhere in the prefix sequence reject the
//!   instruction.
//! - A REX prefix (`40..=4F`) is accepted only immediately before the `0F`
//!   escape byte. `REX.B` extends the `SENDUIPI` register number; all other
//!   REX bits (including `REX.W`) are ignored, and REX is ignored entirely for
//!   the `0F 01` forms.
//! - `SENDUIPI` memory forms (`ModRM.mod != 11`) and `0F C7` with
//!   `ModRM.reg != 6` are rejected.
//! - The whole instruction must fit in 15 bytes (the architectural limit).
//!
//! # Truncated input
//!
//! The fetch may stop early at an unmapped page. If the input runs out while
//! the bytes seen so far could still be the start of an accepted instruction
//! (within the 15-byte limit), [`DecodeError::Truncated`] is returned;
//! otherwise the result is [`DecodeError::NotUintr`]. Bytes past the first 15
//! are never examined.

/// Architectural maximum length of an x86 instruction, in bytes.
pub(crate) const MAX_INSN_LEN: usize = 15;

/// The `REP`/`REPE` prefix that selects the UINTR instructions.
const PREFIX_REP: u8 = 0xF3;
/// The two-byte opcode escape byte.
const ESCAPE_0F: u8 = 0x0F;
/// Second opcode byte of `UIRET`, `TESTUI`, `CLUI` and `STUI`.
const OPCODE_GROUP7: u8 = 0x01;
/// Second opcode byte of `SENDUIPI`.
const OPCODE_GROUP9: u8 = 0xC7;
/// Third byte of `UIRET` (`F3 0F 01 EC`).
const MODRM_UIRET: u8 = 0xEC;
/// Third byte of `TESTUI` (`F3 0F 01 ED`).
const MODRM_TESTUI: u8 = 0xED;
/// Third byte of `CLUI` (`F3 0F 01 EE`).
const MODRM_CLUI: u8 = 0xEE;
/// Third byte of `STUI` (`F3 0F 01 EF`).
const MODRM_STUI: u8 = 0xEF;
/// `ModRM.mod` value selecting a register operand.
const MODRM_MOD_REGISTER: u8 = 0b11;
/// `ModRM.reg` opcode extension of `SENDUIPI` (`0F C7 /6`).
const MODRM_REG_SENDUIPI: u8 = 6;
/// The `REX.B` bit, extending `ModRM.rm` to a 4-bit register number.
const REX_B: u8 = 0x1;

/// A decoded UINTR instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Insn {
    /// `UIRET`: return from a user-interrupt handler.
    Uiret,
    /// `TESTUI`: copy the user-interrupt flag (UIF) into `CF`.
    Testui,
    /// `CLUI`: clear UIF.
    Clui,
    /// `STUI`: set UIF.
    Stui,
    /// `SENDUIPI r64`: send a user IPI selected by a register.
    Senduipi {
        /// GPR number in x86 encoding order (`rax` = 0 ... `r15` = 15).
        reg: u8,
    },
}

/// A successfully decoded instruction together with its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decoded {
    /// The instruction.
    pub(crate) insn: Insn,
    /// Length in bytes, including all prefixes (RIP advances by this much).
    pub(crate) len: usize,
}

/// Why [`decode`] did not return an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// The bytes are not an instruction this emulator handles.
    NotUintr,
    /// The input ended, but the bytes seen so far could still start a UINTR
    /// instruction; more bytes are needed to decide.
    Truncated,
}

/// Classification of one byte in the prefix area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PrefixByte {
    /// `F3`.
    Rep,
    /// A segment override or `67`: accepted and ignored.
    Ignored,
    /// A REX prefix, carrying its value.
    Rex(u8),
    /// The `0F` escape byte: the prefix area has ended.
    Escape,
    /// Anything else: not a UINTR instruction.
    Other,
}

/// Classifies a byte met while scanning prefixes.
fn classify_prefix(byte: u8) -> PrefixByte {
    match byte {
        PREFIX_REP => PrefixByte::Rep,
        0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 | 0x67 => PrefixByte::Ignored,
        0x40..=0x4F => PrefixByte::Rex(byte),
        ESCAPE_0F => PrefixByte::Escape,
        _ => PrefixByte::Other,
    }
}

/// Sequential reader over the fetched bytes that enforces the length limit.
struct Cursor<'a> {
    /// The fetched bytes.
    bytes: &'a [u8],
    /// Index of the next byte to read (equals the bytes consumed so far).
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Creates a cursor at the start of `bytes`.
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    /// Reads the next byte.
    ///
    /// `min_left` is the smallest number of bytes, counting this one, that
    /// any accepted instruction still needs from here. If that cannot fit in
    /// [`MAX_INSN_LEN`] the instruction is rejected, even when the input has
    /// run out, so [`DecodeError::Truncated`] is only reported when a UINTR
    /// instruction is still possible.
    fn fetch(&mut self, min_left: usize) -> Result<u8, DecodeError> {
        if self.pos + min_left > MAX_INSN_LEN {
            return Err(DecodeError::NotUintr);
        }
        let byte = *self.bytes.get(self.pos).ok_or(DecodeError::Truncated)?;
        self.pos += 1;
        Ok(byte)
    }
}

/// Decodes the UINTR instruction at the start of `bytes`.
///
/// `bytes` holds up to [`MAX_INSN_LEN`] bytes fetched at the user RIP; it may
/// be shorter if the fetch stopped at an unmapped page. See the module
/// documentation for the accepted prefixes and the meaning of the errors.
pub(crate) fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let mut cursor = Cursor::new(bytes);
    let rex = scan_prefixes(&mut cursor)?;
    // The `0F` escape has been consumed: opcode byte plus one more remain.
    let insn = match cursor.fetch(2)? {
        OPCODE_GROUP7 => decode_group7(cursor.fetch(1)?)?,
        OPCODE_GROUP9 => decode_group9(cursor.fetch(1)?, rex)?,
        _ => return Err(DecodeError::NotUintr),
    };
    Ok(Decoded {
        insn,
        len: cursor.pos,
    })
}

/// Consumes the prefixes and the `0F` escape byte.
///
/// Returns the REX prefix value, or 0 if there was none.
fn scan_prefixes(cursor: &mut Cursor<'_>) -> Result<u8, DecodeError> {
    let mut seen_rep = false;
    loop {
        // Shortest completion: [F3 if still missing] 0F xx yy.
        let min_left = if seen_rep { 3 } else { 4 };
        match classify_prefix(cursor.fetch(min_left)?) {
            PrefixByte::Rep => seen_rep = true,
            PrefixByte::Ignored => {}
            PrefixByte::Escape if seen_rep => return Ok(0),
            PrefixByte::Rex(rex) if seen_rep => {
                // REX must be immediately followed by 0F xx yy.
                return match cursor.fetch(3)? {
                    ESCAPE_0F => Ok(rex),
                    _ => Err(DecodeError::NotUintr),
                };
            }
            PrefixByte::Escape | PrefixByte::Rex(_) | PrefixByte::Other => {
                return Err(DecodeError::NotUintr);
            }
        }
    }
}

/// Decodes the byte after `0F 01`.
fn decode_group7(modrm: u8) -> Result<Insn, DecodeError> {
    match modrm {
        MODRM_UIRET => Ok(Insn::Uiret),
        MODRM_TESTUI => Ok(Insn::Testui),
        MODRM_CLUI => Ok(Insn::Clui),
        MODRM_STUI => Ok(Insn::Stui),
        _ => Err(DecodeError::NotUintr),
    }
}

/// Decodes the ModRM byte after `0F C7`; only `SENDUIPI r64` is accepted.
fn decode_group9(modrm: u8, rex: u8) -> Result<Insn, DecodeError> {
    let mode = modrm >> 6;
    let reg = (modrm >> 3) & 0x7;
    let rm = modrm & 0x7;
    if mode != MODRM_MOD_REGISTER || reg != MODRM_REG_SENDUIPI {
        return Err(DecodeError::NotUintr);
    }
    let rex_b = if rex & REX_B != 0 { 0x8 } else { 0 };
    Ok(Insn::Senduipi { reg: rm | rex_b })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shorthand for a successful decode.
    fn ok(insn: Insn, len: usize) -> Result<Decoded, DecodeError> {
        Ok(Decoded { insn, len })
    }

    /// Asserts that every strict prefix of `bytes` is reported as truncated.
    fn assert_truncated_prefixes(bytes: &[u8]) {
        for split in 0..bytes.len() {
            assert_eq!(
                decode(&bytes[..split]),
                Err(DecodeError::Truncated),
                "prefix {:02x?} of {:02x?}",
                &bytes[..split],
                bytes
            );
        }
    }

    #[test]
    fn no_operand_instructions() {
        assert_eq!(decode(&[0xF3, 0x0F, 0x01, 0xEC]), ok(Insn::Uiret, 4));
        assert_eq!(decode(&[0xF3, 0x0F, 0x01, 0xED]), ok(Insn::Testui, 4));
        assert_eq!(decode(&[0xF3, 0x0F, 0x01, 0xEE]), ok(Insn::Clui, 4));
        assert_eq!(decode(&[0xF3, 0x0F, 0x01, 0xEF]), ok(Insn::Stui, 4));
    }

    #[test]
    fn trailing_bytes_do_not_change_length() {
        let bytes = [0xF3, 0x0F, 0x01, 0xEF, 0x90, 0x90, 0xC3];
        assert_eq!(decode(&bytes), ok(Insn::Stui, 4));
        let bytes = [0xF3, 0x0F, 0xC7, 0xF0, 0xF3, 0x0F, 0x01, 0xEC];
        assert_eq!(decode(&bytes), ok(Insn::Senduipi { reg: 0 }, 4));
    }

    #[test]
    fn neighbouring_group7_bytes_rejected() {
        for modrm in [0xEB, 0xE8, 0xF0, 0xF8, 0xCA, 0xCB, 0x00, 0x2C] {
            assert_eq!(
                decode(&[0xF3, 0x0F, 0x01, modrm]),
                Err(DecodeError::NotUintr),
                "modrm {modrm:#x}"
            );
        }
    }

    #[test]
    fn senduipi_all_low_registers() {
        for rm in 0..8u8 {
            let modrm = 0xF0 | rm;
            assert_eq!(
                decode(&[0xF3, 0x0F, 0xC7, modrm]),
                ok(Insn::Senduipi { reg: rm }, 4)
            );
        }
    }

    #[test]
    fn senduipi_rex_b_selects_high_registers() {
        for rm in 0..8u8 {
            let modrm = 0xF0 | rm;
            assert_eq!(
                decode(&[0xF3, 0x41, 0x0F, 0xC7, modrm]),
                ok(Insn::Senduipi { reg: rm + 8 }, 5)
            );
        }
        assert_eq!(
            decode(&[0xF3, 0x41, 0x0F, 0xC7, 0xF7]),
            ok(Insn::Senduipi { reg: 15 }, 5)
        );
    }

    #[test]
    fn senduipi_only_rex_b_matters() {
        for rex in 0x40..=0x4Fu8 {
            let expected = 3 + if rex & 1 != 0 { 8 } else { 0 };
            assert_eq!(
                decode(&[0xF3, rex, 0x0F, 0xC7, 0xF3]),
                ok(Insn::Senduipi { reg: expected }, 5),
                "rex {rex:#x}"
            );
        }
        // REX.W alone (48) is ignored.
        assert_eq!(
            decode(&[0xF3, 0x48, 0x0F, 0xC7, 0xF1]),
            ok(Insn::Senduipi { reg: 1 }, 5)
        );
    }

    #[test]
    fn rex_ignored_for_group7() {
        assert_eq!(decode(&[0xF3, 0x41, 0x0F, 0x01, 0xEC]), ok(Insn::Uiret, 5));
        assert_eq!(decode(&[0xF3, 0x4F, 0x0F, 0x01, 0xEF]), ok(Insn::Stui, 5));
    }

    #[test]
    fn senduipi_memory_forms_rejected() {
        for mode in 0..3u8 {
            for rm in 0..8u8 {
                let modrm = (mode << 6) | (6 << 3) | rm;
                let bytes = [0xF3, 0x0F, 0xC7, modrm, 0, 0, 0, 0, 0, 0];
                assert_eq!(
                    decode(&bytes),
                    Err(DecodeError::NotUintr),
                    "modrm {modrm:#x}"
                );
            }
        }
    }

    #[test]
    fn group9_other_reg_fields_rejected() {
        for reg in (0..8u8).filter(|&r| r != 6) {
            let modrm = 0xC0 | (reg << 3) | 1;
            assert_eq!(
                decode(&[0xF3, 0x0F, 0xC7, modrm]),
                Err(DecodeError::NotUintr),
                "modrm {modrm:#x}"
            );
        }
    }

    #[test]
    fn other_opcodes_rejected() {
        let cases: [&[u8]; 6] = [
            &[0xF3, 0x0F, 0x02, 0xEC],
            &[0xF3, 0x0F, 0xC8, 0xF0],
            &[0xF3, 0x90],
            &[0x0F, 0x0B],
            &[0x90],
            &[0xC4, 0xE2, 0x79, 0x00],
        ];
        for bytes in cases {
            assert_eq!(decode(bytes), Err(DecodeError::NotUintr), "{bytes:02x?}");
        }
    }

    #[test]
    fn missing_rep_prefix_rejected() {
        // 0F C7 /6 without F3 is RDRAND; 0F 01 EE without F3 is RDPKRU.
        assert_eq!(decode(&[0x0F, 0xC7, 0xF0]), Err(DecodeError::NotUintr));
        assert_eq!(decode(&[0x0F, 0x01, 0xEE]), Err(DecodeError::NotUintr));
        assert_eq!(
            decode(&[0x2E, 0x0F, 0x01, 0xEE]),
            Err(DecodeError::NotUintr)
        );
        // Rejected as soon as 0F is seen, even without further bytes.
        assert_eq!(decode(&[0x0F]), Err(DecodeError::NotUintr));
        // A REX without a preceding F3 can never become UINTR.
        assert_eq!(decode(&[0x41]), Err(DecodeError::NotUintr));
        assert_eq!(
            decode(&[0x41, 0x0F, 0xC7, 0xF0]),
            Err(DecodeError::NotUintr)
        );
    }

    #[test]
    fn accepted_prefixes() {
        let bytes = [0x2E, 0xF3, 0x67, 0x65, 0xF3, 0x0F, 0x01, 0xED];
        assert_eq!(decode(&bytes), ok(Insn::Testui, 8));
        for prefix in [0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x67, 0xF3] {
            assert_eq!(
                decode(&[prefix, 0xF3, 0x0F, 0x01, 0xEE]),
                ok(Insn::Clui, 5),
                "prefix {prefix:#x}"
            );
            assert_eq!(
                decode(&[0xF3, prefix, 0x4A, 0x0F, 0xC7, 0xF2]),
                ok(Insn::Senduipi { reg: 2 }, 6),
                "prefix {prefix:#x}"
            );
        }
    }

    #[test]
    fn forbidden_prefixes_rejected() {
        for bad in [0xF2, 0xF0, 0x66] {
            let cases = [
                [bad, 0xF3, 0x0F, 0x01, 0xEC],
                [0xF3, bad, 0x0F, 0x01, 0xEC],
                [0xF3, bad, 0x0F, 0xC7, 0xF0],
            ];
            for bytes in cases {
                assert_eq!(decode(&bytes), Err(DecodeError::NotUintr), "{bytes:02x?}");
            }
            // Rejected immediately, not reported as truncated.
            assert_eq!(decode(&[0xF3, bad]), Err(DecodeError::NotUintr));
        }
    }

    #[test]
    fn rex_must_precede_escape() {
        // REX followed by another prefix.
        let bytes = [0x41, 0xF3, 0x0F, 0xC7, 0xF0];
        assert_eq!(decode(&bytes), Err(DecodeError::NotUintr));
        let bytes = [0xF3, 0x41, 0xF3, 0x0F, 0xC7, 0xF0];
        assert_eq!(decode(&bytes), Err(DecodeError::NotUintr));
        let bytes = [0xF3, 0x41, 0x2E, 0x0F, 0xC7, 0xF0];
        assert_eq!(decode(&bytes), Err(DecodeError::NotUintr));
        // Two REX prefixes.
        let bytes = [0xF3, 0x41, 0x41, 0x0F, 0xC7, 0xF0];
        assert_eq!(decode(&bytes), Err(DecodeError::NotUintr));
    }

    #[test]
    fn truncated_at_every_split() {
        assert_truncated_prefixes(&[0xF3, 0x0F, 0x01, 0xEC]);
        assert_truncated_prefixes(&[0xF3, 0x0F, 0x01, 0xED]);
        assert_truncated_prefixes(&[0xF3, 0x0F, 0x01, 0xEE]);
        assert_truncated_prefixes(&[0xF3, 0x0F, 0x01, 0xEF]);
        assert_truncated_prefixes(&[0xF3, 0x0F, 0xC7, 0xF0]);
        assert_truncated_prefixes(&[0xF3, 0x41, 0x0F, 0xC7, 0xF7]);
        assert_truncated_prefixes(&[0x2E, 0x67, 0xF3, 0x65, 0xF3, 0x49, 0x0F, 0xC7, 0xF5]);
    }

    #[test]
    fn truncated_only_when_still_possible() {
        assert_eq!(decode(&[0xF3, 0x0F, 0x02]), Err(DecodeError::NotUintr));
        assert_eq!(decode(&[0xF3, 0x41, 0x90]), Err(DecodeError::NotUintr));
        assert_eq!(decode(&[0x2E, 0x90]), Err(DecodeError::NotUintr));
    }

    #[test]
    fn fifteen_byte_limit() {
        // 11 prefixes + F3 0F 01 EC = 15 bytes: accepted.
        let mut bytes = [0x2E; 15];
        bytes[11..].copy_from_slice(&[0xF3, 0x0F, 0x01, 0xEC]);
        assert_eq!(decode(&bytes), ok(Insn::Uiret, 15));
        assert_truncated_prefixes(&bytes);

        // 12 prefixes + F3 0F 01 EC = 16 bytes: rejected, even with the
        // complete instruction supplied.
        let mut bytes = [0x2E; 16];
        bytes[12..].copy_from_slice(&[0xF3, 0x0F, 0x01, 0xEC]);
        assert_eq!(decode(&bytes), Err(DecodeError::NotUintr));
        // Truncated inputs are rejected once the limit can no longer be met.
        assert_eq!(decode(&bytes[..11]), Err(DecodeError::Truncated));
        assert_eq!(decode(&bytes[..12]), Err(DecodeError::NotUintr));
        assert_eq!(decode(&bytes[..13]), Err(DecodeError::NotUintr));

        // 14 x F3 then REX: REX would be byte 15 with 0F xx yy still to come.
        let mut bytes = [0xF3; 18];
        bytes[10..].copy_from_slice(&[0x41, 0x0F, 0xC7, 0xF0, 0, 0, 0, 0]);
        assert_eq!(decode(&bytes), ok(Insn::Senduipi { reg: 8 }, 14));
        let mut bytes = [0xF3; 16];
        bytes[11..].copy_from_slice(&[0x41, 0x0F, 0xC7, 0xF0, 0]);
        assert_eq!(decode(&bytes), ok(Insn::Senduipi { reg: 8 }, 15));
        let mut bytes = [0xF3; 16];
        bytes[12..].copy_from_slice(&[0x41, 0x0F, 0xC7, 0xF0]);
        assert_eq!(decode(&bytes), Err(DecodeError::NotUintr));
        assert_eq!(decode(&bytes[..12]), Err(DecodeError::Truncated));
        assert_eq!(decode(&bytes[..13]), Err(DecodeError::NotUintr));
    }

    #[test]
    fn endless_prefixes_rejected() {
        assert_eq!(decode(&[0xF3; 15]), Err(DecodeError::NotUintr));
        assert_eq!(decode(&[0x2E; 64]), Err(DecodeError::NotUintr));
        // Without F3 the limit is reached one byte earlier.
        assert_eq!(decode(&[0x2E; 11]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[0x2E; 12]), Err(DecodeError::NotUintr));
        assert_eq!(decode(&[0xF3; 12]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[0xF3; 13]), Err(DecodeError::NotUintr));
    }

    #[test]
    fn classify_prefix_table() {
        assert_eq!(classify_prefix(0xF3), PrefixByte::Rep);
        assert_eq!(classify_prefix(0x3E), PrefixByte::Ignored);
        assert_eq!(classify_prefix(0x4C), PrefixByte::Rex(0x4C));
        assert_eq!(classify_prefix(0x0F), PrefixByte::Escape);
        assert_eq!(classify_prefix(0xF2), PrefixByte::Other);
        assert_eq!(classify_prefix(0x3F), PrefixByte::Other);
    }

    #[test]
    fn max_len_constant() {
        assert_eq!(MAX_INSN_LEN, 15);
    }
}
