// SPDX-License-Identifier: GPL-2.0
// Checks of the CPU model's compacted XSAVE forms from user space
// (XSAVEC and compacted XRSTOR), for bochs/patches 0003 and 0004.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint8_t area[8192] __attribute__((aligned(64)));
static int failed, n;

static void ok(int cond, const char *what)
{
	n++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, what);
	if (!cond)
		failed = 1;
}

static void xsavec(uint64_t mask)
{
	asm volatile("xsavec64 %0" : "+m"(area) : "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32)) : "memory");
}

static void xrstor(uint64_t mask)
{
	asm volatile("xrstor64 %0" : : "m"(area), "a"((uint32_t)mask), "d"((uint32_t)(mask >> 32)) : "memory");
}

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;
	asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static uint32_t get_mxcsr(void)
{
	uint32_t v;
	asm volatile("stmxcsr %0" : "=m"(v));
	return v;
}

static void set_mxcsr(uint32_t v)
{
	asm volatile("ldmxcsr %0" : : "m"(v));
}

#define HDR_XSTATE_BV(a) (*(uint64_t *)((a) + 512))
#define HDR_XCOMP_BV(a) (*(uint64_t *)((a) + 520))
#define MXCSR_AT(a) (*(uint32_t *)((a) + 24))

/*
 * Compacted XRSTOR of the SSE component alone, from an area whose
 * XSTATE_BV is xstate_bv and whose MXCSR slot holds saved, with MXCSR
 * set to before; returns MXCSR afterwards.
 */
static unsigned int restore_sse(uint64_t xstate_bv, unsigned int saved,
				unsigned int before)
{
	memset(area, 0, sizeof(area));
	HDR_XSTATE_BV(area) = xstate_bv;
	HDR_XCOMP_BV(area) = 0x8000000000000002ull;
	MXCSR_AT(area) = saved;
	set_mxcsr(before);
	xrstor(0x2);
	return get_mxcsr();
}

int main(void)
{
	uint64_t xcr0 = xgetbv0();
	unsigned int mxcsr;

	printf("TAP version 13\n1..6\n# XCR0 %#llx\n", (unsigned long long)xcr0);

	/* 0003: restore a component that follows one left out of RFBM. */
	if ((xcr0 & 0xe4) == 0xe4) {
		uint64_t k1 = 0x1111222233334444ull, k2 = 0x5555666677778888ull, r1, r2;
		static const uint8_t ones[32] = { [0 ... 31] = 0xa5 };

		asm volatile("vmovdqu %0, %%ymm3" : : "m"(ones) : "xmm3");
		asm volatile("kmovq %0, %%k1\n\tkmovq %1, %%k2" : : "r"(k1), "r"(k2));
		memset(area, 0, sizeof(area));
		xsavec(xcr0);
		asm volatile("kxorq %%k1, %%k1, %%k1\n\tkxorq %%k2, %%k2, %%k2" ::);
		/* RFBM = opmask only; XCOMP_BV still has AVX before it. */
		xrstor(1ull << 5);
		asm volatile("kmovq %%k1, %0\n\tkmovq %%k2, %1" : "=r"(r1), "=r"(r2));
		printf("# XCOMP_BV %#llx k1 %#llx k2 %#llx\n", (unsigned long long)HDR_XCOMP_BV(area),
		       (unsigned long long)r1, (unsigned long long)r2);
		ok(r1 == k1 && r2 == k2, "compacted XRSTOR of opmask alone reads it past AVX state");
	} else {
		ok(1, "# SKIP no AVX-512 in XCR0");
	}

	/* 0004: MXCSR goes with SSE state (bit 1) in the compacted forms. */
	asm volatile("vzeroall" ::: "memory");
	set_mxcsr(0x7f80);
	memset(area, 0, sizeof(area));
	xsavec(0x3);
	printf("# XSTATE_BV %#llx MXCSR slot %#x\n", (unsigned long long)HDR_XSTATE_BV(area), MXCSR_AT(area));
	ok(HDR_XSTATE_BV(area) & 2, "XSAVEC sets XSTATE_BV[1] for MXCSR != 1F80H with XMM regs clear");
	ok(MXCSR_AT(area) == 0x7f80, "XSAVEC saves MXCSR with XMM regs clear");

	{
		static const uint8_t ones[32] = { [0 ... 31] = 0x5a };

		asm volatile("vmovdqu %0, %%ymm4" : : "m"(ones) : "xmm4");
		memset(area, 0xcc, 512);
		memset(area + 512, 0, sizeof(area) - 512);
		xsavec(0x4);
		ok(MXCSR_AT(area) == 0xcccccccc, "XSAVEC of AVX alone leaves the MXCSR slot alone");
	}

	mxcsr = restore_sse(0, 0x3f80, 0x7f80);
	printf("# MXCSR after init-restore %#x\n", mxcsr);
	ok(mxcsr == 0x1f80, "compacted XRSTOR with XSTATE_BV[1] = 0 sets MXCSR to 1F80H");
	mxcsr = restore_sse(0x2, 0x3f80, 0x1f80);
	ok(mxcsr == 0x3f80, "compacted XRSTOR with XSTATE_BV[1] = 1 loads MXCSR");
	set_mxcsr(0x1f80);

	return failed;
}
