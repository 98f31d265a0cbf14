// SPDX-License-Identifier: GPL-2.0
/*
 * Single-stepping over the UINTR instructions: a debugger that steps a
 * thread with PTRACE_SINGLESTEP stops right after each of STUI, TESTUI,
 * UIRET, CLUI and SENDUIPI, with the SIGTRAP of a single-step trap, as on
 * the CPU.  In emulation the instruction is a #UD that the kernel
 * executes, and the kernel raises the trap that the CPU's #DB would; on
 * UINTR hardware the CPU does it.
 *
 * A user interrupt delivered while a debugger steps the thread pushes the
 * flags the thread sees: not the TF that the debugger forced, which the
 * handler's UIRET would otherwise bring back after the debugger stopped
 * stepping.  The debugger's steps go on into the handler.
 */
#include "uintr_test.h"

#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "kselftest_harness.h"

/*
 * The stepped code.  Each label after an instruction is where the stop
 * after it must be.  UIRET returns to the next instruction through a frame
 * built here; CLUI comes before SENDUIPI (to the caller itself), so that
 * the interrupt stays pending instead of being delivered while stepping.
 */
void uintr_step_code(long index);
extern const char uintr_step_begin[], uintr_step_after_stui[],
	uintr_step_after_testui[], uintr_step_after_uiret[],
	uintr_step_after_clui[], uintr_step_after_senduipi[],
	uintr_step_end[];

__asm__(
	".text\n"
	".globl uintr_step_code\n"
	"uintr_step_code:\n"
	"uintr_step_begin:\n"
	"	stui\n"
	"uintr_step_after_stui:\n"
	"	testui\n"
	"uintr_step_after_testui:\n"
	"	movq %rsp, %rax\n"
	"	pushq %rax\n"
	"	pushfq\n"
	"	leaq uintr_step_after_uiret(%rip), %rax\n"
	"	pushq %rax\n"
	"	uiret\n"
	"uintr_step_after_uiret:\n"
	"	clui\n"
	"uintr_step_after_clui:\n"
	"	senduipi %rdi\n"
	"uintr_step_after_senduipi:\n"
	"	nop\n"
	"uintr_step_end:\n"
	"	ret\n");

static const struct {
	const char *name;
	const char *addr;
} after[] = {
	{ "STUI", uintr_step_after_stui },
	{ "TESTUI", uintr_step_after_testui },
	{ "UIRET", uintr_step_after_uiret },
	{ "CLUI", uintr_step_after_clui },
	{ "SENDUIPI", uintr_step_after_senduipi },
};

#define N_AFTER (sizeof(after) / sizeof(after[0]))

/* Forks `child`, which stops itself with SIGSTOP; returns its pid. */
static pid_t start_traced(struct __test_metadata *_metadata,
			  void (*child)(void))
{
	int status;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (pid == 0)
		child();
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
	return pid;
}

/*
 * One PTRACE_SINGLESTEP: the child's registers at the SIGTRAP stop that
 * ends it.  A lost step would let the child run to its exit.
 */
static void step(struct __test_metadata *_metadata, pid_t pid,
		 struct user_regs_struct *regs)
{
	int status;

	ASSERT_EQ(0, ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status)) TH_LOG("status %#x", status);
	ASSERT_EQ(SIGTRAP, WSTOPSIG(status));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, NULL, regs));
}

/* Lets the child run to its end; returns its wait status. */
static int finish(struct __test_metadata *_metadata, pid_t pid)
{
	int status;

	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, NULL, NULL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	return status;
}

/*
 * In a child: asks to be traced, registers `handler` and connects to its
 * own vector 3; returns the index.  Exits 10..13 if a step fails.
 */
static long traced_self_sender(void *handler)
{
	long index;
	int fd;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(10);
	if (uintr_register_handler(handler, 0))
		_exit(11);
	fd = uintr_create_fd(3, 0);
	if (fd < 0)
		_exit(12);
	index = uintr_register_sender(fd, 0);
	if (index < 0)
		_exit(13);
	return index;
}

/* The child: a receiver and its own sender, stopped before the code. */
static void stepped_child(void)
{
	long index = traced_self_sender(uintr_test_handler());

	raise(SIGSTOP);
	uintr_step_code(index);
	_exit(0);
}

TEST(each_instruction_stops_once_after_itself)
{
	int stopped_after[N_AFTER] = { 0 }, code[N_AFTER] = { 0 };
	pid_t pid = start_traced(_metadata, stepped_child);
	struct user_regs_struct regs;
	int status, inside = 0, steps;
	siginfo_t si;
	size_t i;

	/* From the SIGSTOP into the code and through it, one step at a time. */
	for (steps = 0; steps < 100000; steps++) {
		step(_metadata, pid, &regs);
		if ((const char *)regs.rip == uintr_step_begin)
			inside = 1;
		if (!inside)
			continue;
		ASSERT_EQ(0, ptrace(PTRACE_GETSIGINFO, pid, NULL, &si));
		for (i = 0; i < N_AFTER; i++) {
			if ((const char *)regs.rip == after[i].addr) {
				stopped_after[i]++;
				code[i] = si.si_code;
			}
		}
		if ((const char *)regs.rip == uintr_step_end)
			break;
	}
	ASSERT_TRUE(inside) TH_LOG("never reached the stepped code");
	ASSERT_LT(steps, 100000);
	for (i = 0; i < N_AFTER; i++) {
		EXPECT_EQ(1, stopped_after[i])
			TH_LOG("stops right after %s: %d", after[i].name,
			       stopped_after[i]);
		EXPECT_EQ(TRAP_TRACE, code[i])
			TH_LOG("si_code of the stop after %s", after[i].name);
	}
	status = finish(_metadata, pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
}

/*
 * A delivery under a debugger's single steps.  The interrupt is pending
 * with UIF clear when the stepping begins; STUI lets it in, on the way
 * back to user mode after the step's stop.
 */
void uintr_deliver_step_code(void);
extern const char uintr_deliver_step_begin[], uintr_deliver_step_end[];

__asm__(
	".text\n"
	".globl uintr_deliver_step_code\n"
	"uintr_deliver_step_code:\n"
	"uintr_deliver_step_begin:\n"
	"	stui\n"
	"	nop\n"
	"	nop\n"
	"uintr_deliver_step_end:\n"
	"	ret\n");

#define RFLAGS_TF	0x100

static volatile unsigned long long stepped_frame_rflags;
static volatile int stepped_deliveries;

static UINTR_HANDLER(record_rflags)
{
	stepped_frame_rflags = frame->rflags;
	stepped_deliveries++;
}

static void delivering_child(void)
{
	long index = traced_self_sender(record_rflags);

	__asm__ volatile("clui\n\tsenduipi %0" : : "r"(index) : "memory");
	raise(SIGSTOP);
	uintr_deliver_step_code();
	if (stepped_deliveries != 1)
		_exit(20);
	if (stepped_frame_rflags & RFLAGS_TF)
		_exit(21);
	_exit(0);
}

TEST(delivery_under_single_step_pushes_the_tasks_flags)
{
	int status, inside = 0, in_handler = 0, steps;
	struct user_regs_struct regs;
	const char *rip;
	pid_t pid;

	if (uintr_hardware_mode())
		SKIP(return, "the CPU pushes RFLAGS as they are, a debugger's TF included");
	pid = start_traced(_metadata, delivering_child);
	for (steps = 0; steps < 100000; steps++) {
		step(_metadata, pid, &regs);
		rip = (const char *)regs.rip;
		if (rip == uintr_deliver_step_begin)
			inside = 1;
		else if (inside && (rip < uintr_deliver_step_begin ||
				    rip > uintr_deliver_step_end))
			in_handler++;
		if (rip == uintr_deliver_step_end)
			break;
	}
	ASSERT_TRUE(inside) TH_LOG("never reached the stepped code");
	ASSERT_LT(steps, 100000);
	EXPECT_GT(in_handler, 0) TH_LOG("the steps did not go into the handler");
	status = finish(_metadata, pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x (exit 20: not delivered once; 21: the frame held the debugger's TF)",
		       status);
}

TEST_HARNESS_MAIN
