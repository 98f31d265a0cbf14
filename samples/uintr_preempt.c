// SPDX-License-Identifier: GPL-2.0
/*
 * uintr_preempt: a preemptive user-level scheduler on one kernel thread.
 *
 * GREEN compute-bound green threads share one kernel thread; none ever
 * yields.  A timerfd expiring every millisecond is watched on a user
 * vector (UINTR_FD_WATCH), so each tick interrupts whichever green thread
 * runs, without a system call, a signal or a kernel module.  The handler
 * reads the timerfd (which re-arms a periodic timerfd) and, if a green
 * thread was running, has it call the scheduler as it returns: it points
 * the interrupt's return address at a trampoline and keeps the
 * interrupted one for it.  The trampoline saves every register the
 * thread may have live, calls the scheduler, which switches to the next
 * green thread, and, once the thread is scheduled again, restores them
 * and returns to where the tick interrupted it.  (A handler cannot switch
 * stacks itself: the compiler saves only the registers the handler uses,
 * and UIRET restores nothing else.)
 *
 * Each green thread counts its loop iterations and the time it ran (from
 * being switched in to being switched out); after TICKS ticks the threads
 * stop, and each one's turns, share of the time and of the work, and the
 * tick rate are printed.  Fair round robin gives each about 1/GREEN of the
 * time.  (The work done in a turn also depends on how fast the CPU ran
 * then: an emulator's virtual CPU that its host stalls does none while
 * the clock, and so the timer, goes on.)
 *
 * Build: gcc -muintr -mgeneral-regs-only -static uintr_preempt.c \
 *            $(pkg-config --cflags --libs libuintr)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <libuintr.h>

#define GREEN		4		/* green threads */
#define TICKS		400		/* 1 ms each */
#define VECTOR		7
#define STACK_SIZE	(64 * 1024)
#define RED_ZONE	128		/* below RSP, the interrupted code's */

/* A green thread's saved stack pointer (its registers are on its stack). */
struct green {
	uint64_t rsp;
	volatile unsigned long work;	/* loop iterations */
	uint64_t ran_ns;		/* time between switch-in and -out */
	unsigned long turns;		/* times it was switched in */
	int done;
};

static struct green green[GREEN];
static struct green scheduler;		/* main(), while green threads run */
static int current;			/* the green thread that runs */
static volatile int running_green;	/* one of them runs (not main) */
static volatile int stop;		/* TICKS ticks have passed */

/*
 * Set by the handler when it sends the running thread to the scheduler,
 * cleared by the thread that the scheduler resumes: a tick meanwhile (the
 * trampoline and the switch run with user interrupts enabled) must not
 * send it again.
 */
static volatile int in_switch;
/* The interrupted RIP, for the trampoline (which names it in assembly). */
uint64_t resume_rip __attribute__((used));

static int timer_fd;
static volatile unsigned long ticks, preemptions;
static uint64_t switched_in_at;		/* when the current thread started */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

/* Accounts the turn of the thread that stops running now. */
static void end_turn(int me)
{
	green[me].ran_ns += now_ns() - switched_in_at;
}

/* Starts the turn of the thread that runs now. */
static void start_turn(int me)
{
	green[me].turns++;
	switched_in_at = now_ns();
}

/*
 * switch_stack(from, to): saves the callee-saved registers on the stack,
 * the stack pointer in *from, and resumes the thread whose stack pointer
 * is *to (as it saved it here, or as green_init laid it out).
 */
void switch_stack(uint64_t *from, const uint64_t *to);
asm(".text\n"
    ".globl switch_stack\n"
    "switch_stack:\n"
    "	pushq %rbp\n"
    "	pushq %rbx\n"
    "	pushq %r12\n"
    "	pushq %r13\n"
    "	pushq %r14\n"
    "	pushq %r15\n"
    "	movq %rsp, (%rdi)\n"
    "	movq (%rsi), %rsp\n"
    "	popq %r15\n"
    "	popq %r14\n"
    "	popq %r13\n"
    "	popq %r12\n"
    "	popq %rbx\n"
    "	popq %rbp\n"
    "	ret\n");

/* The next green thread that has not finished after `from`, or -1. */
static int next_green(int from)
{
	for (int i = 1; i <= GREEN; i++) {
		int g = (from + i) % GREEN;

		if (!green[g].done)
			return g;
	}
	return -1;
}

/* Called by the trampoline, on the preempted thread's stack. */
void green_yield(void)
{
	int me = current;
	int next = next_green(me);

	preemptions++;
	if (next != me) {
		end_turn(me);
		current = next;
		switch_stack(&green[me].rsp, &green[next].rsp);
		/* Scheduled again. */
		start_turn(me);
	}
	in_switch = 0;
}

/*
 * The trampoline: entered instead of the interrupted instruction, with
 * that instruction's RSP lowered past its red zone.  It pushes the
 * interrupted RIP as its return address, saves RFLAGS, the caller-saved
 * registers and the x87/SSE state (the callee-saved ones are
 * switch_stack's), calls green_yield() on a 64-byte-aligned stack, and
 * returns to the interrupted RIP with its RSP ("ret $RED_ZONE").
 */
void preempt_trampoline(void);
asm(".text\n"
    ".globl preempt_trampoline\n"
    "preempt_trampoline:\n"
    "	pushq resume_rip(%rip)\n"
    "	pushfq\n"
    "	pushq %rax\n"
    "	pushq %rcx\n"
    "	pushq %rdx\n"
    "	pushq %rsi\n"
    "	pushq %rdi\n"
    "	pushq %r8\n"
    "	pushq %r9\n"
    "	pushq %r10\n"
    "	pushq %r11\n"
    "	pushq %rbp\n"
    "	movq %rsp, %rbp\n"
    "	subq $512, %rsp\n"
    "	andq $-64, %rsp\n"
    "	fxsave64 (%rsp)\n"
    "	call green_yield\n"
    "	fxrstor64 (%rsp)\n"
    "	movq %rbp, %rsp\n"
    "	popq %rbp\n"
    "	popq %r11\n"
    "	popq %r10\n"
    "	popq %r9\n"
    "	popq %r8\n"
    "	popq %rdi\n"
    "	popq %rsi\n"
    "	popq %rdx\n"
    "	popq %rcx\n"
    "	popq %rax\n"
    "	popfq\n"
    "	ret $128\n");

_Static_assert(RED_ZONE == 128, "the trampoline's ret skips the red zone");

/* A tick. */
static LIBUINTR_HANDLER(on_tick)
{
	uint64_t expirations;

	if (libuintr_syscall3(SYS_read, timer_fd, (long)&expirations, sizeof(expirations)) == sizeof(expirations))
		ticks += expirations;
	if (ticks >= TICKS)
		stop = 1;
	if (!running_green || in_switch)
		return;
	in_switch = 1;
	resume_rip = frame->rip;
	frame->rip = (uint64_t)preempt_trampoline;
	frame->rsp -= RED_ZONE;
}

/* A green thread's last act: the next one runs, or main when none is left. */
static void __attribute__((noreturn)) green_exit(void)
{
	int me = current;
	int next;

	in_switch = 1;			/* no preemption while switching */
	end_turn(me);
	green[me].done = 1;
	next = next_green(me);
	if (next < 0) {
		running_green = 0;
		switch_stack(&green[me].rsp, &scheduler.rsp);
	} else {
		current = next;
		switch_stack(&green[me].rsp, &green[next].rsp);
	}
	abort();
}

/* Where each green thread starts: compute until told to stop. */
static void __attribute__((noreturn)) green_main(void)
{
	struct green *me = &green[current];

	start_turn(current);
	in_switch = 0;
	while (!stop)
		me->work++;
	green_exit();
}

/* Lays out a new stack as switch_stack() leaves a switched-out one. */
static int green_init(struct green *g)
{
	uint64_t *top;
	char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (stack == MAP_FAILED)
		return -1;
	top = (uint64_t *)(stack + STACK_SIZE);
	*--top = 0;				/* green_main's return address */
	*--top = (uint64_t)green_main;		/* switch_stack's */
	for (int i = 0; i < 6; i++)
		*--top = 0;			/* rbp rbx r12 r13 r14 r15 */
	g->rsp = (uint64_t)top;
	return 0;
}

int main(void)
{
	struct itimerspec every_ms = {
		.it_value.tv_nsec = 1000000,
		.it_interval.tv_nsec = 1000000,
	};
	uint64_t total_ns = 0, least_ns = ~0ull, most_ns = 0;
	unsigned long total = 0, least = ~0ul;
	uint64_t start, elapsed_us;
	int fd, ret;

	if (!libuintr_available()) {
		fprintf(stderr, "uintr_preempt: user interrupts not available\n");
		return 1;
	}
	ret = libuintr_register_handler(on_tick, 0);
	fd = ret ? ret : libuintr_create_fd(VECTOR, 0);
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0 || timer_fd < 0) {
		fprintf(stderr, "uintr_preempt: setup failed\n");
		return 1;
	}
	for (int i = 0; i < GREEN; i++) {
		if (green_init(&green[i])) {
			perror("uintr_preempt: mmap");
			return 1;
		}
	}
	ret = libuintr_watch(fd, timer_fd, EPOLLIN);
	if (ret || timerfd_settime(timer_fd, 0, &every_ms, NULL)) {
		fprintf(stderr, "uintr_preempt: watch: %d\n", ret);
		return 1;
	}
	start = now_ns();
	/* green_main() lets the ticks preempt; main() they must not. */
	in_switch = 1;
	running_green = 1;
	current = 0;
	_stui();
	switch_stack(&scheduler.rsp, &green[0].rsp);
	/* Every green thread has finished. */
	_clui();
	elapsed_us = (now_ns() - start) / 1000;
	for (int i = 0; i < GREEN; i++) {
		total += green[i].work;
		least = green[i].work < least ? green[i].work : least;
		total_ns += green[i].ran_ns;
		least_ns = green[i].ran_ns < least_ns ? green[i].ran_ns : least_ns;
		most_ns = green[i].ran_ns > most_ns ? green[i].ran_ns : most_ns;
	}
	for (int i = 0; i < GREEN; i++)
		printf("uintr_preempt: green thread %d: %lu turns, %lu.%lu %% of the time, %lu iterations (%lu.%lu %% of the work)\n",
		       i, green[i].turns,
		       (unsigned long)(green[i].ran_ns * 100 / total_ns),
		       (unsigned long)(green[i].ran_ns * 1000 / total_ns % 10),
		       green[i].work, green[i].work * 100 / total,
		       green[i].work * 1000 / total % 10);
	printf("uintr_preempt: %lu ticks in %lu ms (%lu per second), %lu preemptions\n",
	       ticks, (unsigned long)(elapsed_us / 1000),
	       (unsigned long)(ticks * 1000000 / (elapsed_us ? elapsed_us : 1)), preemptions);
	/*
	 * Round robin: every thread worked, the one that ran longest ran at
	 * most twice as long as the shortest, and each was preempted (ticks
	 * that came while a thread was being switched, or late, coalesce).
	 */
	if (least == 0 || most_ns > 2 * least_ns || preemptions < 2 * GREEN) {
		fprintf(stderr, "uintr_preempt: FAILED: unfair or no preemption\n");
		return 1;
	}
	printf("uintr_preempt: success: %d green threads preempted by a timerfd on a user vector\n",
	       GREEN);
	return 0;
}
