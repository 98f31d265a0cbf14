// SPDX-License-Identifier: GPL-2.0
/*
 * A receiver blocked in another system call: by default the user
 * interrupt waits until the call returns; with
 * UINTR_HANDLER_FLAG_INTERRUPT_SLEEP it ends the sleep as a signal with a
 * handler would (EINTR after the handler ran), and with
 * UINTR_HANDLER_FLAG_RESTART the calls that SA_RESTART restarts are
 * restarted instead.  Each call is tried in the three modes: a driver
 * thread sends one user interrupt while the receiver sleeps, then, much
 * later, completes the call (data, a futex wake, or just time).
 */
#include "uintr_test.h"

#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <time.h>

/*
 * The harness's fixture wrapper keeps `child` across setjmp(); with test
 * bodies this small, GCC inlines them there and warns about it.  The
 * variable is only read on the path that did not longjmp.
 */
#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"

FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

#define SEND_AFTER_MS	50
#define COMPLETE_AFTER_MS 600

enum call { CALL_READ, CALL_NANOSLEEP, CALL_POLL, CALL_EPOLL, CALL_FUTEX };

struct run {
	enum call call;
	unsigned int flags;	/* register_handler flags */
	int uif;		/* user interrupts enabled while blocked */
	/* set up by the receiver */
	atomic_int fd;		/* uintr_fd, -1 until ready */
	atomic_int tid;		/* the receiver's thread id */
	int pipe[2];
	atomic_int futex_word;
	/* results */
	long ret;
	int err;
	long handled_at_return;
};

static atomic_long handled;

/* 1 until the driver completes the call, 2 after; seen by the handler. */
static volatile int phase, phase_in_handler;

static UINTR_HANDLER(count)
{
	phase_in_handler = phase;
	handled++;
}

static void sleep_ms(long ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static long blocking_call(struct run *r)
{
	/* Completes by itself, well after the driver's "completion". */
	struct timespec t = { .tv_sec = 2 * COMPLETE_AFTER_MS / 1000,
			      .tv_nsec = 2 * COMPLETE_AFTER_MS % 1000 * 1000000 };
	struct pollfd p = { .fd = r->pipe[0], .events = POLLIN };
	struct epoll_event ev = { .events = EPOLLIN };
	char c;
	int ep;
	long ret;

	switch (r->call) {
	case CALL_READ:
		return read(r->pipe[0], &c, 1);
	case CALL_NANOSLEEP:
		return nanosleep(&t, NULL);
	case CALL_POLL:
		return poll(&p, 1, -1);
	case CALL_EPOLL:
		ep = epoll_create1(0);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, r->pipe[0], &ev))
			return -2;
		ret = epoll_wait(ep, &ev, 1, -1);
		r->err = errno;
		close(ep);
		errno = r->err;
		return ret;
	case CALL_FUTEX:
		return syscall(SYS_futex, &r->futex_word, FUTEX_WAIT_PRIVATE, 0,
			       NULL, NULL, 0);
	}
	return -2;
}

static void *receiver(void *p)
{
	struct run *r = p;
	int fd;

	if (uintr_register_handler(count, r->flags))
		return (void *)1;
	fd = uintr_create_fd(3, 0);
	if (fd < 0)
		return (void *)2;
	if (r->uif)
		_stui();
	atomic_store(&r->tid, gettid());
	atomic_store(&r->fd, fd);
	r->ret = blocking_call(r);
	r->err = errno;
	r->handled_at_return = handled;
	_stui();
	uintr_unregister_handler(0);
	close(fd);
	return NULL;
}

/* Waits until thread `tid` of this process sleeps (state S). */
static int wait_until_sleeping(int tid)
{
	char path[64], buf[512], *state;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	for (int i = 0; i < 20000; i++) {
		if (uintr_read_file(path, buf, sizeof(buf)))
			return -1;
		state = strrchr(buf, ')');
		if (state && state[1] == ' ' && state[2] == 'S')
			return 0;
		sleep_ms(1);
	}
	return -1;
}

static void *driver(void *p)
{
	struct run *r = p;
	long idx;

	while (atomic_load(&r->fd) < 0)
		;
	idx = uintr_register_sender(atomic_load(&r->fd), 0);
	if (idx < 0)
		return (void *)1;
	if (wait_until_sleeping(atomic_load(&r->tid)))
		return (void *)3;
	sleep_ms(SEND_AFTER_MS);
	_senduipi(idx);
	sleep_ms(COMPLETE_AFTER_MS);
	/* Complete the call, in case it is still (or again) blocked. */
	phase = 2;
	if (write(r->pipe[1], "x", 1) != 1)
		return (void *)2;
	atomic_store(&r->futex_word, 1);
	syscall(SYS_futex, &r->futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	uintr_unregister_sender(atomic_load(&r->fd), 0);
	return NULL;
}

/* Runs `call` with handler flags `flags`; fills ret/err/handled. */
static void run_call(struct __test_metadata *_metadata, struct run *r,
		     enum call call, unsigned int flags, int uif)
{
	pthread_t rt, dt;
	void *rret, *dret;

	memset(r, 0, sizeof(*r));
	r->call = call;
	r->flags = flags;
	r->uif = uif;
	r->fd = -1;
	handled = 0;
	phase = 1;
	phase_in_handler = 0;
	ASSERT_EQ(0, pipe(r->pipe));
	ASSERT_EQ(0, pthread_create(&rt, NULL, receiver, r));
	ASSERT_EQ(0, pthread_create(&dt, NULL, driver, r));
	pthread_join(rt, &rret);
	pthread_join(dt, &dret);
	close(r->pipe[0]);
	close(r->pipe[1]);
	ASSERT_EQ(NULL, rret);
	ASSERT_EQ(NULL, dret);
	TH_LOG("call %d flags %u uif %d: ret %ld errno %d, handled %ld at return",
	       call, flags, uif, r->ret, r->ret < 0 ? r->err : 0,
	       r->handled_at_return);
}

/* The call's result when it completes: what the driver's action gives. */
static long completed_result(enum call call)
{
	return call == CALL_NANOSLEEP || call == CALL_FUTEX ? 0 : 1;
}

static const unsigned int INTERRUPT = UINTR_HANDLER_FLAG_INTERRUPT_SLEEP;
static const unsigned int RESTART = UINTR_HANDLER_FLAG_RESTART;

/* The three modes for one call; `restarts`: SA_RESTART restarts it. */
static void three_modes(struct __test_metadata *_metadata, enum call call,
			int restarts)
{
	struct run r;

	/* Default: the interrupt waits for the call to complete. */
	run_call(_metadata, &r, call, 0, 1);
	EXPECT_EQ(completed_result(call), r.ret);
	EXPECT_EQ(1, handled);
	EXPECT_EQ(2, phase_in_handler);

	/* Opt-in: EINTR, after the handler ran. */
	run_call(_metadata, &r, call, INTERRUPT, 1);
	EXPECT_EQ(-1, r.ret);
	EXPECT_EQ(EINTR, r.err);
	EXPECT_EQ(1, r.handled_at_return);
	EXPECT_EQ(1, phase_in_handler);

	/* Opt-in with restart: as SA_RESTART for a signal handler. */
	run_call(_metadata, &r, call, INTERRUPT | RESTART, 1);
	/* The handler ran while the call was still blocked. */
	EXPECT_EQ(1, phase_in_handler);
	if (restarts) {
		EXPECT_EQ(completed_result(call), r.ret);
	} else {
		EXPECT_EQ(-1, r.ret);
		EXPECT_EQ(EINTR, r.err);
	}
	EXPECT_EQ(1, r.handled_at_return);
}

TEST_F_TIMEOUT(slow, read_on_a_pipe, 120)
{
	three_modes(_metadata, CALL_READ, 1);
}

TEST_F_TIMEOUT(slow, nanosleep, 120)
{
	three_modes(_metadata, CALL_NANOSLEEP, 0);
}

TEST_F_TIMEOUT(slow, poll, 120)
{
	three_modes(_metadata, CALL_POLL, 0);
}

TEST_F_TIMEOUT(slow, epoll_wait, 120)
{
	three_modes(_metadata, CALL_EPOLL, 0);
}

TEST_F_TIMEOUT(slow, futex_wait, 120)
{
	three_modes(_metadata, CALL_FUTEX, 1);
}

/* With UIF clear the interrupt cannot run, so it interrupts nothing. */
TEST_F_TIMEOUT(slow, masked_interrupt_interrupts_nothing, 120)
{
	struct run r;

	run_call(_metadata, &r, CALL_READ, INTERRUPT, 0);
	EXPECT_EQ(1, r.ret);
	EXPECT_EQ(0, r.handled_at_return);
	/* Delivered by the STUI after the call. */
	EXPECT_EQ(1, handled);
	EXPECT_EQ(2, phase_in_handler);
}

TEST(restart_needs_interrupt_sleep)
{
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_handler(count, RESTART)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_handler(count, 4)));
	EXPECT_EQ(0, uintr_register_handler(count, INTERRUPT | RESTART));
	EXPECT_EQ(0, uintr_unregister_handler(0));
}

TEST_HARNESS_MAIN
