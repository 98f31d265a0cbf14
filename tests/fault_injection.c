// SPDX-License-Identifier: GPL-2.0
/*
 * Out of memory at every allocation of every uintr system call: with
 * /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION, failslab and
 * fail_page_alloc) the test fails the 1st, 2nd, ... fault point reached
 * inside one call until the call gets through without reaching it.  Each
 * injected failure must give ENOMEM and leave nothing behind: the live
 * object counters do not move, the thread can register again, the vector
 * stays free.  A call that makes the process's shared sender table runs
 * in a child process, whose exit frees the table with the address space.
 * Skipped on kernels without fault injection (the DEBUG=1 kernel has it).
 */
#include "uintr_test.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kselftest_harness.h"

#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define FAIL_PAGE_ALLOC	"/sys/kernel/debug/fail_page_alloc/"

/* More fault points than any of the calls reaches. */
#define MAX_FAULT_POINTS	300

/*
 * By default failslab and fail_page_alloc leave alone the allocations that
 * may sleep (all of ours) and order-0 pages; count them all, quietly.
 * Probability stays 0: only fail-nth injects, and only in this task.
 */
static int setup_injection(int on)
{
	const char *wait = on ? "N" : "Y";

	return uintr_write_file(FAILSLAB "ignore-gfp-wait", wait) ||
	       uintr_write_file(FAILSLAB "verbose", on ? "0" : "2") ||
	       uintr_write_file(FAIL_PAGE_ALLOC "ignore-gfp-wait", wait) ||
	       uintr_write_file(FAIL_PAGE_ALLOC "min-order", on ? "0" : "1") ||
	       uintr_write_file(FAIL_PAGE_ALLOC "verbose", on ? "0" : "2");
}

static void *handler_address(void)
{
	return uintr_test_handler();
}

/* What a scenario holds between its steps. */
struct scenario_state {
	int fd[2];
};

/* What a scenario sets up and calls under injection. */
struct scenario {
	const char *name;
	/* Outside injection; returns 0 or -1. */
	int (*prepare)(struct scenario_state *st);
	/* The call under test: its raw result (-1 and errno on failure). */
	long (*call)(struct scenario_state *st);
	/* What a successful call returns, or -1 for a new fd (closed). */
	long success;
	/* If nonzero, the call "succeeds" with -1 and this errno instead. */
	int success_errno;
	/* Run in a child process: the call leaves a table in the mm. */
	int in_process;
};

static int prep_nothing(struct scenario_state *st)
{
	return 0;
}

static int prep_handler(struct scenario_state *st)
{
	return uintr_register_handler(handler_address(), 0) ? -1 : 0;
}

static int prep_fd(struct scenario_state *st)
{
	if (prep_handler(st))
		return -1;
	st->fd[0] = uintr_create_fd(3, 0);
	return st->fd[0] < 0 ? -1 : 0;
}

static int prep_two_fds_one_connected(struct scenario_state *st)
{
	if (prep_fd(st))
		return -1;
	st->fd[1] = uintr_create_fd(4, 0);
	if (st->fd[1] < 0)
		return -1;
	return uintr_register_sender(st->fd[0], 0) == 0 ? 0 : -1;
}

/* A uintr_fd and an eventfd to watch through it. */
static int prep_fd_and_eventfd(struct scenario_state *st)
{
	if (prep_fd(st))
		return -1;
	st->fd[1] = eventfd(0, EFD_CLOEXEC);
	return st->fd[1] < 0 ? -1 : 0;
}

static long call_watch(struct scenario_state *st)
{
	return uintr_watch(st->fd[0], st->fd[1], EPOLLIN);
}

static long call_register_handler(struct scenario_state *st)
{
	return uintr_register_handler(handler_address(), 0);
}

static long call_register_handler_interrupt_sleep(struct scenario_state *st)
{
	return uintr_register_handler(handler_address(),
				      UINTR_HANDLER_FLAG_INTERRUPT_SLEEP);
}

static long call_create_fd(struct scenario_state *st)
{
	return uintr_create_fd(3, 0);
}

static long call_register_sender(struct scenario_state *st)
{
	return uintr_register_sender(st->fd[0], 0);
}

static long call_register_second_sender(struct scenario_state *st)
{
	return uintr_register_sender(st->fd[1], 0);
}

static int prep_self_entry(struct scenario_state *st)
{
	if (prep_handler(st))
		return -1;
	return uintr_register_self(6, 0) == 0 ? 0 : -1;
}

static long call_register_self(struct scenario_state *st)
{
	return uintr_register_self(5, 0);
}

/*
 * A table whose first page is full: four helper receivers (threads that
 * stay until the child process exits) with 64 fds each, all connected.
 * The call then grows the table by a page.
 */
static pthread_barrier_t helpers_ready;
static int helper_fds[256];

static void *helper_receiver(void *arg)
{
	int *fds = arg;

	if (uintr_register_handler(handler_address(), 0) == 0)
		for (int v = 0; v < 64; v++)
			fds[v] = uintr_create_fd(v, 0);
	pthread_barrier_wait(&helpers_ready);
	for (;;)
		pause();
	return NULL;
}

static int prep_full_page(struct scenario_state *st)
{
	pthread_t t;

	if (prep_fd(st) || pthread_barrier_init(&helpers_ready, NULL, 5))
		return -1;
	for (int r = 0; r < 4; r++)
		if (pthread_create(&t, NULL, helper_receiver, helper_fds + 64 * r))
			return -1;
	pthread_barrier_wait(&helpers_ready);
	for (int i = 0; i < 256; i++)
		if (helper_fds[i] <= 0 || uintr_register_sender(helper_fds[i], 0) != i)
			return -1;
	return 0;
}

static long call_register_sender_shared(struct scenario_state *st)
{
	return uintr_register_sender(st->fd[0], UINTR_SENDER_SHARED);
}

static long call_register_self_shared(struct scenario_state *st)
{
	return uintr_register_self(5, UINTR_SENDER_SHARED);
}

/*
 * The process's first ipi fd makes its shared table.  (The ioctl that
 * installs a table allocates nothing, so it has no scenario.)
 */
static long call_ipi_fd(struct scenario_state *st)
{
	return uintr_ipi_fd(0);
}

static long call_wait(struct scenario_state *st)
{
	static const struct __kernel_timespec zero;

	return uintr_wait(UINTR_WAIT_TIMEOUT, &zero);
}

static struct scenario scenarios[] = {
	{ "register_handler", prep_nothing, call_register_handler, 0, 0, 0 },
	{ "register_handler(INTERRUPT_SLEEP)", prep_nothing,
	  call_register_handler_interrupt_sleep, 0, 0, 0 },
	{ "create_fd", prep_handler, call_create_fd, -1, 0, 0 },
	{ "register_sender", prep_fd, call_register_sender, 0, 0, 0 },
	{ "register_sender(second fd)", prep_two_fds_one_connected,
	  call_register_second_sender, 1, 0, 0 },
	{ "uintr_wait", prep_handler, call_wait, 0, ETIMEDOUT, 0 },
	{ "register_self", prep_handler, call_register_self, 0, 0, 0 },
	{ "register_self(second entry)", prep_self_entry, call_register_self, 1, 0, 0 },
	{ "register_sender(SHARED)", prep_fd, call_register_sender_shared, 0, 0, 1 },
	{ "register_self(SHARED)", prep_handler, call_register_self_shared, 0, 0, 1 },
	{ "ipi_fd", prep_nothing, call_ipi_fd, -1, 0, 1 },
	{ "register_sender(the table grows)", prep_full_page, call_register_sender, 256, 0, 1 },
	{ "watch", prep_fd_and_eventfd, call_watch, 0, 0, 0 },
};

/* One attempt, in a thread of its own so that its exit frees it all. */
struct attempt {
	const struct scenario *s;
	int nth;
	/* Results. */
	int setup_failed;
	int injected;
	long ret;
	int err;
};

/*
 * Faults in the stack the call will use, so that no page fault of ours
 * reaches fail_page_alloc while the injection is armed.
 */
static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char pad[64 * 1024];

	for (size_t i = 0; i < sizeof(pad); i += 4096)
		pad[i] = 0;
}

static void *run_attempt(void *arg)
{
	struct attempt *a = arg;
	struct scenario_state st = { .fd = { -1, -1 } };
	char nth[16], left[16] = "";
	int fail_nth;
	ssize_t n;

	prefault_stack();
	fail_nth = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fail_nth < 0 || a->s->prepare(&st)) {
		a->setup_failed = 1;
		return NULL;
	}
	snprintf(nth, sizeof(nth), "%d", a->nth);
	/* Warm the very paths used below, with nothing armed. */
	if (write(fail_nth, "0", 1) != 1) {
		a->setup_failed = 1;
		return NULL;
	}
	if (write(fail_nth, nth, strlen(nth)) != (ssize_t)strlen(nth)) {
		a->setup_failed = 1;
		return NULL;
	}
	a->ret = a->s->call(&st);
	a->err = errno;
	n = pread(fail_nth, left, sizeof(left) - 1, 0);
	if (write(fail_nth, "0", 1) != 1 || n <= 0) {
		a->setup_failed = 1;
		return NULL;
	}
	/* 0: the n-th fault point was reached and failed. */
	a->injected = atoi(left) == 0;
	close(fail_nth);
	/* Its exit frees the thread's registrations; fds are the process's. */
	if (a->s->success == -1 && a->ret >= 0)
		close(a->ret);
	for (int i = 0; i < 2; i++)
		if (st.fd[i] >= 0)
			close(st.fd[i]);
	return NULL;
}

/*
 * Runs one attempt to its end, in a thread or (s->in_process) in a child
 * process that reports through shared memory; returns 0 or -1.
 */
static int start_attempt(struct attempt *a)
{
	struct attempt *shared;
	pthread_t t;
	int status;
	pid_t pid;

	if (!a->s->in_process)
		return pthread_create(&t, NULL, run_attempt, a) ||
		       pthread_join(t, NULL) ? -1 : 0;
	shared = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -1;
	*shared = *a;
	pid = fork();
	if (pid == 0) {
		run_attempt(shared);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		shared->setup_failed = 1;
	*a = *shared;
	munmap(shared, sizeof(*a));
	return 0;
}

/* Whether the attempt's call did what it does when nothing fails. */
static int succeeded(const struct scenario *s, const struct attempt *a)
{
	if (s->success_errno)
		return a->ret == -1 && a->err == s->success_errno;
	return a->ret >= 0 && (s->success < 0 || a->ret == s->success);
}

/*
 * Fails the 1st, 2nd, ... fault point of the call until it passes them
 * all.  A failed fault point gives ENOMEM, or nothing at all when the
 * allocation that failed copes with it (a debugging allocator's metadata,
 * say); never anything else, and never objects left behind.  Returns how
 * many fault points gave ENOMEM, or -1.
 */
static int run_scenario(struct __test_metadata *_metadata,
			const struct scenario *s, const struct uintr_stats *base)
{
	int enomem = 0, absorbed = 0;

	for (int nth = 1; nth <= MAX_FAULT_POINTS; nth++) {
		struct attempt a = { .s = s, .nth = nth };

		if (start_attempt(&a) || a.setup_failed) {
			TH_LOG("%s: fault point %d: setup failed", s->name, nth);
			return -1;
		}
		if (!uintr_stats_become(base)) {
			TH_LOG("%s: fault point %d (%s) left objects behind",
			       s->name, nth, a.injected ? "failed" : "passed");
			return -1;
		}
		if (a.injected && a.ret == -1 && a.err == ENOMEM) {
			enomem++;
			continue;
		}
		if (!succeeded(s, &a)) {
			TH_LOG("%s: fault point %d%s: got %ld (%s)", s->name, nth,
			       a.injected ? " failed" : " not reached", a.ret,
			       a.ret == -1 ? strerror(a.err) : "success");
			return -1;
		}
		if (a.injected) {
			absorbed++;
			continue;
		}
		/* The call got through all its fault points. */
		printf("# %s: %d fault points: %d gave ENOMEM, %d were absorbed, nothing left behind\n",
		       s->name, nth - 1, enomem, absorbed);
		return enomem;
	}
	TH_LOG("%s: more than %d fault points", s->name, MAX_FAULT_POINTS);
	return -1;
}

FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, every_allocation_fails_cleanly, 900)
{
	struct uintr_stats base;
	int total = 0, calls_with_enomem = 0;

	if (access("/proc/thread-self/fail-nth", F_OK) ||
	    access(FAILSLAB, F_OK) || access(FAIL_PAGE_ALLOC, F_OK))
		SKIP(return, "no fault injection in this kernel (DEBUG=1 has it)");
	ASSERT_EQ(0, setup_injection(1));
	ASSERT_EQ(0, uintr_read_stats(&base));
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		int n = run_scenario(_metadata, &scenarios[i], &base);

		EXPECT_GE(n, 0);
		if (n > 0) {
			calls_with_enomem++;
			total += n;
		}
	}
	EXPECT_EQ(0, setup_injection(0));
	printf("# %d injected faults gave ENOMEM, in %d of %zu calls\n", total,
	       calls_with_enomem, sizeof(scenarios) / sizeof(scenarios[0]));
	/* Every call allocates: one that never gave ENOMEM was not reached. */
	EXPECT_EQ(sizeof(scenarios) / sizeof(scenarios[0]),
		  (size_t)calls_with_enomem);
}

TEST_HARNESS_MAIN
