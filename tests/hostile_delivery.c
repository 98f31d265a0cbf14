// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile contexts for delivery and emulation.  A user interrupt due while
 * the user stack pointer is unmapped, read-only, non-canonical or a kernel
 * address cannot have its frame written: the task gets a signal with its
 * registers as they were (RIP at the instruction the delivery preceded,
 * RSP untouched), and nothing is written anywhere.  The emulation, which
 * writes the frame from the kernel, says so with SIGSEGV (SI_KERNEL); on
 * UINTR hardware the CPU's push faults as any user-mode store would: a
 * page fault (SIGSEGV, SEGV_MAPERR or SEGV_ACCERR) or, at a non-canonical
 * address, a stack fault (SIGBUS).  A
 * handler address that is not mapped is entered after a good frame and
 * faults there.  The instructions on a page that is not executable or not
 * readable fault as any instruction would (SIGSEGV at that address); the
 * emulator never sees them.
 *
 * Each case runs in a child whose SIGSEGV and SIGBUS handler, on an
 * alternate stack, reports the signal's details and the registers through
 * shared memory.
 */
#include "uintr_test.h"

#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>

/* As in interrupt_sleep.c: the fixture wrapper's `child` and setjmp(). */
#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"

#define VECTOR		7
#define CHILD_REPORTED	42

/* What the child's SIGSEGV handler saw. */
struct report {
	int signo, code;
	uint64_t addr, rip, rsp;
	/* The handler address the child registered. */
	uint64_t handler;
	/* The four words at RSP (the delivery frame, when one was pushed). */
	uint64_t words[4];
};

static struct report *rep;

/* Never entered: these deliveries fail before. */
static UINTR_HANDLER(unused_handler)
{
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	rep->signo = sig;
	rep->code = si->si_code;
	rep->addr = (uint64_t)si->si_addr;
	rep->rip = uc->uc_mcontext.gregs[REG_RIP];
	rep->rsp = uc->uc_mcontext.gregs[REG_RSP];
	_exit(CHILD_REPORTED);
}

/* The SIGSEGV handler, on a stack of its own. */
static int catch_segv(void)
{
	static char altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = {
		.sa_sigaction = on_segv,
		.sa_flags = SA_SIGINFO | SA_ONSTACK,
	};

	return sigaltstack(&ss, NULL) || sigaction(SIGSEGV, &sa, NULL) ||
	       sigaction(SIGBUS, &sa, NULL);
}

/* Where STUI_ON_STACK resumes: the instruction after STUI. */
extern const char after_stui[];

/*
 * Switches to stack `rsp` and executes STUI with a request pending: the
 * delivery happens on the way back to user mode, on that stack.  Never
 * returns.
 */
static void __attribute__((noinline, noreturn)) stui_on_stack(uint64_t rsp)
{
	__asm__ volatile("mov %0, %%rsp\n\t"
			 ".byte 0xf3, 0x0f, 0x01, 0xef\n\t"	/* stui */
			 ".globl after_stui\n"
			 "after_stui:\n\t"
			 "jmp after_stui"
			 : : "r"(rsp) : "memory");
	__builtin_unreachable();
}

/* A receiver with UIF clear and VECTOR pending (sent to itself). */
static int pending_to_self(void *handler)
{
	int fd;

	if (catch_segv() || uintr_register_handler(handler, 0))
		return -1;
	fd = uintr_create_fd(VECTOR, 0);
	if (fd < 0 || uintr_register_sender(fd, 0) != 0)
		return -1;
	_clui();
	_senduipi(0);
	return 0;
}

/* An address range that is certainly not mapped. */
static uint64_t unmapped_page(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 0;
	munmap(p, 4096);
	return (uint64_t)p;
}

/* Runs fn(arg) in a child; returns its exit code, -1 if it did not exit. */
static int run_child(void (*fn)(uint64_t), uint64_t arg)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		fn(arg);
		_exit(1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void deliver_on_stack(uint64_t rsp)
{
	if (pending_to_self(unused_handler))
		_exit(2);
	stui_on_stack(rsp);
}

FIXTURE(shared)
{
	void *page;
};

FIXTURE_SETUP(shared)
{
	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rep);
	self->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
}

FIXTURE_TEARDOWN(shared)
{
	munmap(rep, sizeof(*rep));
	munmap(self->page, 4096);
}

/*
 * The failed delivery left the registers alone and raised the signal of
 * this mode: SIGSEGV (SI_KERNEL) in emulation; on the hardware hw_signo
 * with a page fault's code (SEGV_MAPERR or SEGV_ACCERR: which one depends
 * on the page tables, the address is no user mapping either way) or, for
 * SIGBUS, the stack fault's SI_KERNEL.
 */
static void expect_failed_delivery(struct __test_metadata *_metadata,
				   uint64_t rsp, int exit_code, int hw_signo)
{
	ASSERT_EQ(CHILD_REPORTED, exit_code);
	if (!uintr_hardware_mode()) {
		EXPECT_EQ(SIGSEGV, rep->signo);
		EXPECT_EQ(SI_KERNEL, rep->code);
	} else if (hw_signo == SIGBUS) {
		EXPECT_EQ(SIGBUS, rep->signo);
		EXPECT_EQ(SI_KERNEL, rep->code);
	} else {
		EXPECT_EQ(SIGSEGV, rep->signo);
		EXPECT_TRUE(rep->code == SEGV_MAPERR || rep->code == SEGV_ACCERR)
			TH_LOG("si_code %d", rep->code);
	}
	EXPECT_EQ(rsp, rep->rsp);
	EXPECT_EQ((uint64_t)after_stui, rep->rip);
}

TEST_F(shared, unmapped_stack)
{
	uint64_t rsp = unmapped_page() + 4096;

	ASSERT_NE(4096ull, rsp);
	expect_failed_delivery(_metadata, rsp, run_child(deliver_on_stack, rsp),
			       SIGSEGV);
}

TEST_F(shared, non_canonical_stack)
{
	uint64_t rsp = 0x8000000000001000ull;

	expect_failed_delivery(_metadata, rsp, run_child(deliver_on_stack, rsp),
			       SIGBUS);
}

TEST_F(shared, kernel_stack_address)
{
	uint64_t rsp = 0xffff888000100000ull;

	expect_failed_delivery(_metadata, rsp, run_child(deliver_on_stack, rsp),
			       SIGSEGV);
}

static void *ro_page;

static void deliver_on_read_only_stack(uint64_t rsp)
{
	if (mprotect(ro_page, 4096, PROT_READ))
		_exit(3);
	deliver_on_stack(rsp);
}

/* The child's view of the page is read-only; ours shows it untouched. */
TEST_F(shared, read_only_stack)
{
	uint64_t rsp = (uint64_t)self->page + 4096;
	const uint64_t *words = self->page;

	ro_page = self->page;
	expect_failed_delivery(_metadata, rsp,
			       run_child(deliver_on_read_only_stack, rsp), SIGSEGV);
	for (int i = 0; i < 512; i++) {
		ASSERT_EQ(0ull, words[i]) TH_LOG("word %d written", i);
	}
}

/*
 * The handler's address is a user address that is not mapped: the frame
 * is pushed and the fetch at the handler faults.
 */
static void on_segv_with_frame(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	const uint64_t *frame = (const uint64_t *)uc->uc_mcontext.gregs[REG_RSP];

	for (int i = 0; i < 4; i++)
		rep->words[i] = frame[i];
	on_segv(sig, si, ctx);
}

static void unmapped_handler_child(uint64_t rsp)
{
	struct sigaction sa = {
		.sa_sigaction = on_segv_with_frame,
		.sa_flags = SA_SIGINFO | SA_ONSTACK,
	};
	uint64_t handler;

	if (catch_segv() || sigaction(SIGSEGV, &sa, NULL))
		_exit(2);
	handler = unmapped_page();
	if (!handler || uintr_register_handler((void *)handler, 0))
		_exit(4);
	rep->handler = handler;
	{
		int fd = uintr_create_fd(VECTOR, 0);

		if (fd < 0 || uintr_register_sender(fd, 0) != 0)
			_exit(5);
	}
	_clui();
	_senduipi(0);
	stui_on_stack(rsp);
}

TEST_F(shared, unmapped_handler)
{
	uint64_t top = (uint64_t)self->page + 4096;

	ASSERT_EQ(CHILD_REPORTED, run_child(unmapped_handler_child, top));
	ASSERT_NE(0ull, rep->handler);
	EXPECT_EQ(rep->handler, rep->rip);
	EXPECT_EQ(rep->handler, rep->addr);
	EXPECT_EQ(SEGV_MAPERR, rep->code);
	/*
	 * The frame: vector, RIP after STUI, RFLAGS, the old RSP; 16-byte
	 * aligned below the 128-byte red zone.
	 */
	EXPECT_EQ((uint64_t)VECTOR, rep->words[0]);
	EXPECT_EQ((uint64_t)after_stui, rep->words[1]);
	EXPECT_EQ(top, rep->words[3]);
	EXPECT_EQ(((top - 128) & ~15ull) - 32, rep->rsp);
}

/* CLUI on a page the CPU may not execute, or not even read. */
static void clui_on_page(uint64_t prot)
{
	static const unsigned char clui[] = { 0xf3, 0x0f, 0x01, 0xee, 0xc3 };
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED || catch_segv())
		_exit(2);
	memcpy(page, clui, sizeof(clui));
	if (mprotect(page, 4096, prot))
		_exit(3);
	rep->words[0] = (uint64_t)page;
	((void (*)(void))page)();
	_exit(0);
}

TEST_F(shared, instruction_on_non_executable_page)
{
	ASSERT_EQ(CHILD_REPORTED, run_child(clui_on_page, PROT_READ | PROT_WRITE));
	EXPECT_EQ(SEGV_ACCERR, rep->code);
	EXPECT_EQ(rep->words[0], rep->addr);
	EXPECT_EQ(rep->words[0], rep->rip);
}

TEST_F(shared, instruction_on_unreadable_page)
{
	ASSERT_EQ(CHILD_REPORTED, run_child(clui_on_page, PROT_NONE));
	EXPECT_EQ(SEGV_ACCERR, rep->code);
	EXPECT_EQ(rep->words[0], rep->addr);
	EXPECT_EQ(rep->words[0], rep->rip);
}

TEST_HARNESS_MAIN
