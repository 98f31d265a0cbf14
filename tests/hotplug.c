// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug: a receiver asleep on a CPU that goes offline is listed on
 * that CPU's wait list, and its UPID sends the kernel vector there; the
 * notification to a dead CPU is dropped.  The kernel must wake it and
 * list it elsewhere, so that the next user IPI still ends its sleep:
 * in uintr_wait(), and in read() with UINTR_HANDLER_FLAG_INTERRUPT_SLEEP.
 * Each case takes CPU 1 offline while the receiver sleeps there, sends,
 * and brings the CPU back.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

/* As in interrupt_sleep.c: the fixture wrapper's `child` and setjmp(). */
#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"

#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"
#define VECTOR		12
/* Guest time a receiver may take to wake before the case fails. */
#define WAKE_TIMEOUT_S	20
/*
 * uintr_wait()'s own timeout, which ends a lost wait (and would run the
 * handler then): far beyond the case's limit, so it cannot pass the case.
 */
#define WAIT_TIMEOUT_S	(3 * WAKE_TIMEOUT_S)

static volatile long hits;

UINTR_HANDLER(count_hit)
{
	hits++;
}

static int set_cpu1_online(int online)
{
	int fd = open(CPU1_ONLINE, O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, online ? "1" : "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* The receiver, on CPU 1. */
struct receiver {
	int interrupt_sleep;
	int pipe[2];
	volatile int fd;	/* its uintr_fd, -1 until created */
	long result;		/* -errno of its sleep */
};

static void *receiver_thread(void *arg)
{
	struct receiver *r = arg;
	struct __kernel_timespec timeout = { .tv_sec = WAIT_TIMEOUT_S };
	char c;
	int fd;

	uintr_pin_cpu(1);
	if (uintr_register_handler(count_hit, r->interrupt_sleep ?
				   UINTR_HANDLER_FLAG_INTERRUPT_SLEEP : 0)) {
		r->result = -errno;
		r->fd = -2;
		return NULL;
	}
	fd = uintr_create_fd(VECTOR, 0);
	r->fd = fd < 0 ? -2 : fd;
	_stui();
	if (r->interrupt_sleep) {
		r->result = read(r->pipe[0], &c, 1) < 0 ? -errno : 0;
	} else {
		r->result = uintr_wait(UINTR_WAIT_TIMEOUT, &timeout) ? -errno : 0;
	}
	uintr_unregister_handler(0);
	return NULL;
}

/* Waits until fdinfo of fd shows the receiver state want ("waiting"). */
static int wait_for_state(int fd, const char *want)
{
	char path[64], text[1024], line[64];
	int i;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(line, sizeof(line), "uintr_receiver_state:\t%s", want);
	for (i = 0; i < 2000; i++) {
		if (!uintr_read_file(path, text, sizeof(text)) && strstr(text, line))
			return 0;
		usleep(5000);
	}
	fprintf(stderr, "# receiver never reached state %s:\n%s", want, text);
	return -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

FIXTURE(hotplug) {
	struct receiver r;
	pthread_t thread;
	int started;
};

FIXTURE_VARIANT(hotplug) {
	int interrupt_sleep;
};

FIXTURE_VARIANT_ADD(hotplug, asleep_in_uintr_wait) {
};

FIXTURE_VARIANT_ADD(hotplug, asleep_in_read_with_interrupt_sleep) {
	.interrupt_sleep = 1,
};

FIXTURE_SETUP(hotplug)
{
	if (access(CPU1_ONLINE, W_OK))
		SKIP(return, "CPU 1 cannot go offline here");
	hits = 0;
	self->r.interrupt_sleep = variant->interrupt_sleep;
	self->r.fd = -1;
	ASSERT_EQ(0, pipe(self->r.pipe));
	uintr_pin_cpu(0);
	ASSERT_EQ(0, pthread_create(&self->thread, NULL, receiver_thread, &self->r));
	self->started = 1;
}

FIXTURE_TEARDOWN(hotplug)
{
	if (!self->started)
		return;
	/* Whatever happened: end the sleep, bring the CPU back. */
	if (write(self->r.pipe[1], "x", 1) != 1)
		perror("pipe");
	pthread_join(self->thread, NULL);
	set_cpu1_online(1);
	close(self->r.pipe[0]);
	close(self->r.pipe[1]);
}

TEST_F_TIMEOUT(hotplug, sleeper_on_an_offlined_cpu_is_woken, 180)
{
	const char *state = variant->interrupt_sleep ? "armed" : "waiting";
	double deadline;
	long index;

	while (self->r.fd == -1)
		usleep(1000);
	ASSERT_GE(self->r.fd, 0) TH_LOG("receiver setup: %ld", self->r.result);
	ASSERT_EQ(0, wait_for_state(self->r.fd, state));

	ASSERT_EQ(0, set_cpu1_online(0)) TH_LOG("offline cpu1: %s", strerror(errno));
	index = uintr_register_sender(self->r.fd, 0);
	ASSERT_GE(index, 0);
	_senduipi(index);

	deadline = now_s() + WAKE_TIMEOUT_S;
	while (!hits && now_s() < deadline)
		usleep(1000);
	if (!hits) {
		uintr_dump_fd("receiver", self->r.fd);
		uintr_dump_interrupts();
	}
	ASSERT_EQ(1, hits) TH_LOG("the receiver that slept on cpu1 was not woken");
	pthread_join(self->thread, NULL);
	self->started = 0;
	EXPECT_EQ(-EINTR, self->r.result);
	uintr_unregister_sender(self->r.fd, 0);
	close(self->r.fd);
	EXPECT_EQ(0, set_cpu1_online(1));
	close(self->r.pipe[0]);
	close(self->r.pipe[1]);
}

TEST_HARNESS_MAIN
