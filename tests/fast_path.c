// SPDX-License-Identifier: GPL-2.0
/*
 * The hardware's fast path: on a UINTR CPU, a notification to a receiver
 * whose registers are loaded is recognized by the CPU itself (UINV), and
 * the kernel never sees it; /proc/interrupts counts only those that reach
 * the kernel's handler (UIN).  A receiver spinning in user mode gets N
 * user IPIs while UIN barely moves: fresh, after it slept (switched back
 * to a CPU where its registers stayed loaded: no XRSTORS) and after it
 * forked (fork saves its registers into the child's buffer with XSAVES,
 * which clears UINV), the last with the child as the sender.  Both are
 * the cases where XSAVES has left UINV = 0 and the kernel must arm it
 * again.
 *
 * In emulation every notification goes through the kernel, so those cases
 * skip there (delivery.c tests the same IPIs for arrival).  The last
 * case runs in both modes: a receiver forks, and the parent and the child
 * interrupt each other back and forth, each waiting only briefly for its
 * interrupt (a receiver left with UINV = 0 after the fork still gets its
 * interrupts through the kernel, only later; a lost one fails).
 */
#include "uintr_test.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>

/* As in interrupt_sleep.c: the fixture wrapper's `child` and setjmp(). */
#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"

#define VECTOR	7
/* User IPIs per case: each waits for the previous one's delivery. */
#define SENDS	200
/* At most this many may take the kernel's way (a tick, a migration). */
#define KERNEL_SHARE	(SENDS / 10)
/* Guest time for one delivery before the case fails. */
#define DELIVERY_TIMEOUT_S	10

/* Shared with a forked sender. */
struct shared {
	volatile long hits;
	volatile long child_hits;
	volatile int stop;
};

static struct shared *shared;
/* What the handler counts in this process: hits, or a child's. */
static volatile long *my_hits;

UINTR_HANDLER(count_hit)
{
	(*my_hits)++;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Connects through fd and sends SENDS user IPIs, each once the previous
 * one arrived; returns the number that did not arrive in time.
 */
static long send_all(int fd)
{
	long index = uintr_register_sender(fd, 0), i;

	if (index < 0)
		return SENDS;
	for (i = 0; i < SENDS; i++) {
		double deadline = now_s() + DELIVERY_TIMEOUT_S;
		long want = shared->hits + 1;

		_senduipi(index);
		while (shared->hits < want)
			if (now_s() > deadline)
				return SENDS - i;
	}
	return 0;
}

static void *sender_thread(void *arg)
{
	uintr_pin_cpu(1);
	return (void *)send_all(*(int *)arg);
}

/* The receiver spins in user mode, UIF set, until the sender is done. */
static void spin_until_stopped(void)
{
	_stui();
	while (!shared->stop)
		;
	_clui();
}

FIXTURE(fast_path) {
	int fd;
};

FIXTURE_VARIANT(fast_path) {
	/* Before the sends: sleep (and come back with registers loaded). */
	int sleep_first;
	/* The sender is a child forked by the receiver. */
	int forked_sender;
};

FIXTURE_VARIANT_ADD(fast_path, fresh_receiver) {
};

FIXTURE_VARIANT_ADD(fast_path, after_sleeping) {
	.sleep_first = 1,
};

FIXTURE_VARIANT_ADD(fast_path, after_fork_child_sends) {
	.forked_sender = 1,
};

FIXTURE_SETUP(fast_path)
{
	if (!uintr_hardware_mode())
		SKIP(return, "user interrupts are emulated on this boot: every notification is the kernel's");
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	my_hits = &shared->hits;
	uintr_pin_cpu(0);
	ASSERT_EQ(0, uintr_register_handler(count_hit, 0));
	self->fd = uintr_create_fd(VECTOR, 0);
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(fast_path)
{
	if (!uintr_hardware_mode())
		return;
	close(self->fd);
	uintr_unregister_handler(0);
	munmap(shared, sizeof(*shared));
}

TEST_F(fast_path, cpu_recognizes_notifications_itself)
{
	long long before, after;
	long missed = 0;
	pthread_t thread;
	pid_t child = -1;
	int status;

	if (variant->sleep_first)
		usleep(20000);
	before = uintr_irq_count("UIN");
	ASSERT_GE(before, 0);
	if (variant->forked_sender) {
		fflush(NULL);
		child = uintr_spawn();
		ASSERT_GE(child, 0);
		if (child == 0) {
			uintr_pin_cpu(1);
			missed = send_all(self->fd);
			shared->stop = 1;
			_exit(missed > 255 ? 255 : missed);
		}
		spin_until_stopped();
		ASSERT_EQ(child, waitpid(child, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		missed = WEXITSTATUS(status);
	} else {
		void *ret;

		ASSERT_EQ(0, pthread_create(&thread, NULL, sender_thread, &self->fd));
		/* The thread sets stop through its result: join after spinning. */
		while (!shared->stop) {
			_stui();
			if (pthread_tryjoin_np(thread, &ret) == 0) {
				shared->stop = 1;
				missed = (long)ret;
			}
		}
		_clui();
	}
	after = uintr_irq_count("UIN");
	EXPECT_EQ(0, missed) TH_LOG("%ld of %d user IPIs never arrived", missed, SENDS);
	EXPECT_EQ(SENDS - missed, shared->hits);
	EXPECT_LE(after - before, KERNEL_SHARE) {
		TH_LOG("%lld of %d notifications reached the kernel (UIN): the CPU did not recognize them",
		       after - before, SENDS);
		uintr_dump_interrupts();
	}
	TH_LOG("%d user IPIs, %lld through the kernel", SENDS, after - before);
}

/* Round trips of the ping-pong, and guest time allowed for each reply. */
#define PING_PONGS		200
#define REPLY_TIMEOUT_S		2

/* Spins until *counter reaches want; 0, or -1 after REPLY_TIMEOUT_S. */
static int spin_for(volatile long *counter, long want)
{
	double deadline = now_s() + REPLY_TIMEOUT_S;

	while (*counter < want)
		if (now_s() > deadline)
			return -1;
	return 0;
}

/* The child: its own receiver, its fd to the parent, then the replies. */
static int pong(int sock, int parent_fd)
{
	long index;
	int fd;

	my_hits = &shared->child_hits;
	if (uintr_register_handler(count_hit, 0))
		return 10;
	fd = uintr_create_fd(VECTOR, 0);
	if (fd < 0 || uintr_send_fd(sock, fd))
		return 11;
	index = uintr_register_sender(parent_fd, 0);
	if (index < 0)
		return 12;
	_stui();
	for (long i = 1; i <= PING_PONGS; i++) {
		if (spin_for(&shared->child_hits, i))
			return 20;
		_senduipi(index);
	}
	return 0;
}

TEST(ping_pong_with_a_forked_child)
{
	long long before = uintr_irq_count("UIN");
	int sv[2], fd, child_fd, status;
	long index, i;
	pid_t child;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	my_hits = &shared->hits;
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, uintr_register_handler(count_hit, 0));
	fd = uintr_create_fd(VECTOR, 0);
	ASSERT_GE(fd, 0);

	fflush(NULL);
	child = uintr_spawn();
	ASSERT_GE(child, 0);
	if (child == 0)
		_exit(pong(sv[1], fd));
	child_fd = uintr_recv_fd(sv[0]);
	ASSERT_GE(child_fd, 0);
	index = uintr_register_sender(child_fd, 0);
	ASSERT_GE(index, 0);
	_stui();
	for (i = 1; i <= PING_PONGS; i++) {
		_senduipi(index);
		if (spin_for(&shared->hits, i))
			break;
	}
	_clui();
	EXPECT_EQ(PING_PONGS + 1, i) TH_LOG("no reply to ping %ld (child got %ld)",
					    i, shared->child_hits);
	if (i <= PING_PONGS)
		kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
	if (uintr_hardware_mode()) {
		long long through_kernel = uintr_irq_count("UIN") - before;

		EXPECT_LE(through_kernel, 2 * PING_PONGS / 10)
			TH_LOG("%lld of %d notifications reached the kernel (UIN)",
			       through_kernel, 2 * PING_PONGS);
	}
	uintr_unregister_handler(0);
	close(fd);
	close(child_fd);
	munmap(shared, sizeof(*shared));
}

TEST_HARNESS_MAIN
