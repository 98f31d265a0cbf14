// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! What the handler trampoline saves: the XSAVE components it asks for and
//! the size of the area they take.
//!
//! The handler is Rust code, which may use the SSE registers (memcpy does)
//! or, built for a later CPU, the AVX ones; the interrupted code may be
//! using any of them. So the trampoline saves every component the kernel
//! enabled in XCR0 (XSAVE, standard format) around the call, except AMX's
//! two (17, TILECFG and 18, TILEDATA): no Rust code the handler runs uses
//! AMX, and their 8 KiB would sit on every delivery's stack.

/// The XSAVE components the trampoline never saves (AMX).
pub(crate) const SKIPPED_COMPONENTS: u64 = (1 << 17) | (1 << 18);

/// The legacy area and the XSAVE header: the smallest standard-format area.
pub(crate) const MIN_AREA: u32 = 512 + 64;

/// The XSAVE area the trampoline uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The requested-feature bitmap for XSAVE/XRSTOR (EDX:EAX).
    pub(crate) mask: u64,
    /// Bytes of the standard-format area that hold those components.
    pub(crate) size: u32,
}

/// The layout for the components enabled in `xcr0`, given `component(i)`,
/// CPUID leaf 0xD subleaf i's (size, offset) of component i >= 2.
pub(crate) fn layout(xcr0: u64, component: impl Fn(u32) -> (u32, u32)) -> Layout {
    let mask = xcr0 & !SKIPPED_COMPONENTS;
    let size = (2..64)
        .filter(|i| mask & (1u64 << i) != 0)
        .map(|i| {
            let (size, offset) = component(i);
            offset + size
        })
        .fold(MIN_AREA, u32::max);
    Layout { mask, size }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The standard-format offsets of a Sapphire Rapids CPU.
    fn sapphire_rapids(i: u32) -> (u32, u32) {
        match i {
            2 => (256, 576),    // AVX
            5 => (64, 1088),    // opmask
            6 => (512, 1152),   // ZMM_Hi256
            7 => (1024, 1664),  // Hi16_ZMM
            9 => (8, 2688),     // PKRU
            17 => (64, 2752),   // TILECFG
            18 => (8192, 2816), // TILEDATA
            _ => panic!("component {i} not enabled"),
        }
    }

    #[test]
    fn sse_only_needs_the_legacy_area_and_header() {
        assert_eq!(
            layout(0x3, sapphire_rapids),
            Layout {
                mask: 0x3,
                size: 576
            }
        );
    }

    #[test]
    fn avx_ends_at_832() {
        assert_eq!(layout(0x7, sapphire_rapids).size, 832);
    }

    #[test]
    fn amx_is_neither_asked_for_nor_given_room() {
        let xcr0 = 0x602e7; // x87 SSE AVX opmask ZMM_Hi256 Hi16_ZMM PKRU TILECFG TILEDATA
        let l = layout(xcr0, sapphire_rapids);
        assert_eq!(l.mask, 0x2e7);
        assert_eq!(l.size, 2696);
    }
}
