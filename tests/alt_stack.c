// SPDX-License-Identifier: GPL-2.0
/*
 * uintr_alt_stack(2): the handler's frame on an alternate stack, checked
 * from inside the handler (where its frame is, what it holds), cleared
 * again, every error of the man page, and an unusable alternate stack.
 */
#include "uintr_test.h"

#include <stdint.h>
#include <sys/mman.h>

#include "kselftest_harness.h"

/* Bytes an alternate stack needs at least: the frame, whatever the top's
 * alignment (uintr_alt_stack(2)).
 */
#define MIN_ALT_STACK 48
#define KERNEL_ADDRESS ((void *)0xffff888000000000ull)

static volatile int deliveries;
static volatile uintptr_t frame_at, handler_sp;
static volatile struct __uintr_frame seen;

static UINTR_HANDLER(record_frame)
{
	frame_at = (uintptr_t)frame;
	handler_sp = (uintptr_t)__builtin_frame_address(0);
	seen = *frame;
	deliveries++;
}

/* Registers record_frame and a self entry for vector 1. */
static long setup(struct __test_metadata *_metadata)
{
	long idx;

	deliveries = 0;
	ASSERT_EQ(0, uintr_register_handler(record_frame, 0));
	idx = uintr_register_self(1, 0);
	ASSERT_GE(idx, 0);
	return idx;
}

/* Sends to self with UIF set; 1 once the handler ran. */
static int interrupt_self(long idx)
{
	int before = deliveries;

	_stui();
	_senduipi(idx);
	for (int i = 0; i < 2000 && deliveries == before; i++)
		usleep(1000);
	_clui();
	return deliveries > before;
}

TEST(needs_a_handler)
{
	static char stack[4096];

	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_alt_stack(stack, sizeof(stack), 0)));
	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_alt_stack(NULL, 0, 0)));
}

TEST(rejects_bad_stacks_and_flags)
{
	static char stack[4096];

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_alt_stack(stack, sizeof(stack), 1)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_alt_stack(NULL, 0, 1u << 31)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_alt_stack(NULL, sizeof(stack), 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_alt_stack(stack, 0, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_alt_stack(stack, MIN_ALT_STACK - 1, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_alt_stack(stack, SIZE_MAX, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_alt_stack(KERNEL_ADDRESS, 4096, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_alt_stack((void *)0x7ffffffff000ull,
						     1ull << 40, 0)));
	EXPECT_EQ(0, uintr_alt_stack(stack, MIN_ALT_STACK, 0));
	EXPECT_EQ(0, uintr_alt_stack(NULL, 0, 0));
}

TEST(frame_goes_on_the_alternate_stack)
{
	static char stack[16384] __attribute__((aligned(16)));
	uintptr_t lo = (uintptr_t)stack, hi = lo + sizeof(stack);
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	long idx = setup(_metadata);

	ASSERT_EQ(0, uintr_alt_stack(stack, sizeof(stack), 0));
	ASSERT_TRUE(interrupt_self(idx));
	/* The frame (RIP, RFLAGS, RSP) right below the 16-byte aligned top,
	 * above the vector; the handler's own frame below it.
	 */
	EXPECT_EQ(hi - 24, frame_at);
	EXPECT_TRUE(handler_sp >= lo && handler_sp < hi)
		TH_LOG("handler frame %#lx, stack %#lx-%#lx", handler_sp, lo, hi);
	/* The saved RSP is the interrupted one, on this thread's stack. */
	EXPECT_TRUE(seen.rsp < here + 4096 && seen.rsp > here - 65536)
		TH_LOG("saved RSP %#llx, caller frame %#lx", seen.rsp, here);
	/* Every delivery starts at the top again. */
	ASSERT_TRUE(interrupt_self(idx));
	EXPECT_EQ(hi - 24, frame_at);
}

TEST(unaligned_top_is_aligned_down)
{
	static char stack[4096 + 32] __attribute__((aligned(16)));
	long idx = setup(_metadata);

	ASSERT_EQ(0, uintr_alt_stack(stack + 3, 4096 + 4, 0));
	ASSERT_TRUE(interrupt_self(idx));
	/* Top stack + 4103, aligned down to stack + 4096. */
	EXPECT_EQ((uintptr_t)stack + 4096 - 24, frame_at);
}

TEST(cleared_goes_back_below_the_red_zone)
{
	static char stack[16384] __attribute__((aligned(16)));
	long idx = setup(_metadata);

	ASSERT_EQ(0, uintr_alt_stack(stack, sizeof(stack), 0));
	ASSERT_TRUE(interrupt_self(idx));
	ASSERT_EQ(0, uintr_alt_stack(NULL, 0, 0));
	ASSERT_TRUE(interrupt_self(idx));
	EXPECT_FALSE(frame_at >= (uintptr_t)stack &&
		     frame_at < (uintptr_t)stack + sizeof(stack));
	/* Below the interrupted RSP's red zone (128 bytes), 16-aligned. */
	EXPECT_EQ(((seen.rsp - 128) & ~15ull) - 24, frame_at);
}

TEST(reregistered_handler_has_no_alternate_stack)
{
	static char stack[4096] __attribute__((aligned(16)));
	long idx = setup(_metadata);

	ASSERT_EQ(0, uintr_alt_stack(stack, sizeof(stack), 0));
	ASSERT_EQ(0, uintr_unregister_handler(0));
	idx = setup(_metadata);
	ASSERT_TRUE(interrupt_self(idx));
	EXPECT_EQ(((seen.rsp - 128) & ~15ull) - 24, frame_at);
}

static void deliver_on_unmapped_stack(void)
{
	char *stack = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long idx;

	if (stack == MAP_FAILED || uintr_register_handler(record_frame, 0))
		_exit(10);
	idx = uintr_register_self(1, 0);
	if (idx < 0 || uintr_alt_stack(stack, 8192, 0))
		_exit(11);
	munmap(stack, 8192);
	/* The frame cannot be written: a fault, as on the hardware. */
	interrupt_self(idx);
	_exit(12);
}

TEST(unmapped_alternate_stack_faults)
{
	EXPECT_EQ(SIGSEGV, uintr_child_signal(deliver_on_unmapped_stack));
}

TEST_HARNESS_MAIN
