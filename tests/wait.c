// SPDX-License-Identifier: GPL-2.0
/*
 * uintr_wait(): a receiver sleeps until a user interrupt is pending, its
 * handler runs, and the call returns EINTR.  Woken by a thread and by
 * another process, never lost when the sender races the sleep (with UIF
 * clear around the call, or set and UINTR_WAIT_VALUE), ended by a signal
 * or by its timeout, and torn down cleanly when the receiver dies asleep
 * while senders keep sending.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "kselftest_harness.h"

/* Tests that need more than the harness's default 30 s under TCG. */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

static atomic_long handled;
static volatile long last_vector = -1;

static UINTR_HANDLER(count)
{
	last_vector = vector;
	handled++;
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long wait_for(long long ns)
{
	struct __kernel_timespec t = {
		.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL,
	};

	return UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT, &t));
}

/* uintr_wait(UINTR_WAIT_VALUE | UINTR_WAIT_TIMEOUT) on `word'. */
static long wait_value(const volatile void *word, unsigned long long expected,
		       long long ns)
{
	struct __kernel_timespec t = {
		.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL,
	};

	return libuintr_wait_value(word, expected, UINTR_WAIT_TIMEOUT, &t);
}

/* Registers `count` with UIF set and returns a uintr_fd for `vector`. */
static int receiver_setup(struct __test_metadata *_metadata, int vector)
{
	int fd;

	handled = 0;
	last_vector = -1;
	if (uintr_register_handler(count, 0)) {
		TH_LOG("register_handler: %s", strerror(errno));
		return -1;
	}
	fd = uintr_create_fd(vector, 0);
	_stui();
	return fd;
}

TEST(needs_a_handler)
{
	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_wait(0, NULL)));
	EXPECT_EQ(-EOPNOTSUPP, wait_for(1000));
}

TEST(unknown_flags_are_einval)
{
	ASSERT_GE(receiver_setup(_metadata, 1), 0);
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_wait(4, NULL)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_wait(~0u, NULL)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_wait(0x80000000u, NULL)));
}

TEST(bad_timeouts)
{
	struct __kernel_timespec t;

	ASSERT_GE(receiver_setup(_metadata, 1), 0);
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT, NULL)));
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT,
						(void *)0xffffffff81000000ull)));
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT,
						(void *)0x8000000000000000ull)));
	t = (struct __kernel_timespec){ .tv_sec = -1 };
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT, &t)));
	t = (struct __kernel_timespec){ .tv_nsec = 1000000000 };
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT, &t)));
	t = (struct __kernel_timespec){ .tv_nsec = -1 };
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT, &t)));
	EXPECT_EQ(0, handled);
}

TEST(bad_words)
{
	static unsigned long long words[2];
	struct __kernel_timespec t = { .tv_nsec = -1 };

	EXPECT_EQ(-EOPNOTSUPP, wait_value(words, 0, 0));
	ASSERT_GE(receiver_setup(_metadata, 1), 0);
	EXPECT_EQ(-EINVAL, wait_value((char *)words + 4, 0, 0));
	EXPECT_EQ(-EFAULT, wait_value(NULL, 0, 0));
	EXPECT_EQ(-EFAULT, wait_value((void *)0xffffffff81000000ull, 0, 0));
	EXPECT_EQ(-EFAULT, wait_value((void *)0x8000000000000000ull, 0, 0));
	/* The timeout is checked first; libuintr_wait() passes no word. */
	EXPECT_EQ(-EINVAL, libuintr_wait_value(words, 1, UINTR_WAIT_TIMEOUT, &t));
	EXPECT_EQ(-EFAULT, libuintr_wait(UINTR_WAIT_VALUE, NULL));
	EXPECT_EQ(0, handled);
}

/*
 * A word that changed fails at once, one that did not sleeps: the whole
 * 64 bits are compared.
 */
TEST(value_compares_the_word)
{
	static unsigned long long word = 0x100000005ull;
	long long start;

	ASSERT_GE(receiver_setup(_metadata, 1), 0);
	start = now_ns();
	EXPECT_EQ(-EAGAIN, wait_value(&word, 5, 5000000000LL));
	EXPECT_EQ(-EAGAIN, wait_value(&word, 0x200000005ull, 5000000000LL));
	EXPECT_LT(now_ns() - start, 4000000000LL);
	start = now_ns();
	EXPECT_EQ(-ETIMEDOUT, wait_value(&word, 0x100000005ull, 50000000));
	EXPECT_GE(now_ns() - start, 50000000);
	EXPECT_EQ(0, handled);
}

TEST(timeout_expires)
{
	long long start;

	ASSERT_GE(receiver_setup(_metadata, 1), 0);
	start = now_ns();
	EXPECT_EQ(-ETIMEDOUT, wait_for(50000000));
	EXPECT_GE(now_ns() - start, 50000000);
	start = now_ns();
	EXPECT_EQ(-ETIMEDOUT, wait_for(0));
	EXPECT_EQ(0, handled);
}

TEST(pending_before_the_call_returns_at_once)
{
	int fd = receiver_setup(_metadata, 9);
	long idx;

	ASSERT_GE(fd, 0);
	idx = uintr_register_sender(fd, 0);
	ASSERT_EQ(0, idx);
	_clui();
	_senduipi(idx);
	/* Recognized, not delivered (UIF = 0): the wait must not sleep. */
	EXPECT_EQ(-EINTR, wait_for(5000000000LL));
	EXPECT_EQ(0, handled);
	_stui();
	EXPECT_EQ(1, handled);
	EXPECT_EQ(9, last_vector);
}

struct sender_args {
	int fd;
	long long delay_ns;
	int sends;
};

static void *delayed_sender(void *p)
{
	struct sender_args *a = p;
	long idx = uintr_register_sender(a->fd, 0);
	struct timespec d = {
		.tv_sec = a->delay_ns / 1000000000LL,
		.tv_nsec = a->delay_ns % 1000000000LL,
	};

	if (idx < 0)
		return (void *)1;
	nanosleep(&d, NULL);
	for (int i = 0; i < a->sends; i++)
		_senduipi(idx);
	return NULL;
}

TEST(woken_by_a_thread)
{
	struct sender_args a = { .delay_ns = 50000000, .sends = 1 };
	pthread_t t;
	void *ret;
	long long start;

	a.fd = receiver_setup(_metadata, 33);
	ASSERT_GE(a.fd, 0);
	start = now_ns();
	ASSERT_EQ(0, pthread_create(&t, NULL, delayed_sender, &a));
	/* The handler runs before the call returns to its caller. */
	EXPECT_EQ(-EINTR, wait_for(10000000000LL));
	EXPECT_EQ(1, handled);
	EXPECT_EQ(33, last_vector);
	EXPECT_GE(now_ns() - start, 50000000);
	pthread_join(t, &ret);
	EXPECT_EQ(NULL, ret);
}

/* UIF stays set: the handler runs on the way out of the call it ended. */
TEST(value_wait_woken_by_a_thread)
{
	struct sender_args a = { .delay_ns = 50000000, .sends = 1 };
	pthread_t t;
	void *ret;

	a.fd = receiver_setup(_metadata, 34);
	ASSERT_GE(a.fd, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, delayed_sender, &a));
	EXPECT_EQ(-EINTR, wait_value(&handled, 0, 10000000000LL));
	EXPECT_EQ(1, handled);
	EXPECT_EQ(34, last_vector);
	pthread_join(t, &ret);
	EXPECT_EQ(NULL, ret);
}

/* A huge timeout saturates instead of overflowing into the past. */
TEST(huge_timeout_does_not_expire)
{
	struct __kernel_timespec t = { .tv_sec = 0x7fffffffffffffffll };
	struct sender_args a = { .delay_ns = 50000000, .sends = 1 };
	pthread_t th;

	a.fd = receiver_setup(_metadata, 2);
	ASSERT_GE(a.fd, 0);
	ASSERT_EQ(0, pthread_create(&th, NULL, delayed_sender, &a));
	EXPECT_EQ(-EINTR, UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT, &t)));
	EXPECT_EQ(1, handled);
	pthread_join(th, NULL);
}

TEST(woken_by_a_thread_without_timeout)
{
	struct sender_args a = { .delay_ns = 20000000, .sends = 3 };
	pthread_t t;

	a.fd = receiver_setup(_metadata, 4);
	ASSERT_GE(a.fd, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, delayed_sender, &a));
	EXPECT_EQ(-EINTR, UINTR_RET(uintr_wait(0, NULL)));
	EXPECT_GE(handled, 1);
	pthread_join(t, NULL);
}

/*
 * A crowd of receivers asleep in uintr_wait() on one CPU, all posted to
 * at once, round after round.  The kernel vector's handler then finds
 * many due waiters in one interrupt among many that are not (asleep
 * again after their wakeup, or not yet posted to); it must wake each due
 * one once and lose none.  Each round's time is printed, not checked
 * (make bench measures).  The sender's table grows past its first page.
 */
#define CROWD		2000
#define CROWD_DEBUG	500
#define CROWD_ROUNDS	10

struct crowd_member {
	pthread_t thread;
	atomic_int fd;
	atomic_int rounds_woken;
	atomic_int errors;
};

static struct crowd_member crowd[CROWD];
static atomic_int crowd_ready;

static UINTR_HANDLER(crowd_handler)
{
}

static void *crowd_receiver(void *p)
{
	struct crowd_member *m = p;
	int fd;

	uintr_pin_cpu(1);
	if (uintr_register_handler(crowd_handler, 0)) {
		m->errors++;
		m->fd = -2;
		return NULL;
	}
	fd = uintr_create_fd(0, 0);
	m->fd = fd < 0 ? -2 : fd;
	if (fd < 0)
		return NULL;
	/* UIF clear: a post before the wait makes it return at once. */
	_clui();
	for (int r = 0; r < CROWD_ROUNDS; r++) {
		crowd_ready++;
		if (UINTR_RET(uintr_wait(0, NULL)) != -EINTR)
			m->errors++;
		_stui();	/* the handler runs */
		_clui();
		m->rounds_woken++;
	}
	return NULL;
}

TEST_F_TIMEOUT(slow, a_crowd_asleep_on_one_cpu_is_woken_together, 600)
{
	static long index[CROWD];
	int n = uintr_debug_kernel() ? CROWD_DEBUG : CROWD;
	struct rlimit files = { n + 64, n + 64 };
	pthread_attr_t attr;
	long long t0;
	int i, r, late;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &files));
	uintr_pin_cpu(0);
	crowd_ready = 0;
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstacksize(&attr, 64 * 1024));
	for (i = 0; i < n; i++) {
		crowd[i].fd = -1;
		ASSERT_EQ(0, pthread_create(&crowd[i].thread, &attr,
					    crowd_receiver, &crowd[i]));
	}
	for (i = 0; i < n; i++) {
		while (crowd[i].fd == -1)
			usleep(100);
		ASSERT_GE(crowd[i].fd, 0) TH_LOG("receiver %d did not register", i);
		index[i] = uintr_register_sender(crowd[i].fd, 0);
		ASSERT_GE(index[i], 0) TH_LOG("connection %d: %s", i, strerror(errno));
	}
	for (r = 0; r < CROWD_ROUNDS; r++) {
		t0 = now_ns();
		while (crowd_ready < (r + 1) * n && now_ns() - t0 < 60000000000LL)
			usleep(1000);
		ASSERT_EQ((r + 1) * n, crowd_ready);
		usleep(20000);	/* let the last ones fall asleep */
		t0 = now_ns();
		for (i = 0; i < n; i++)
			_senduipi(index[i]);
		for (i = 0; i < n; i++)
			while (crowd[i].rounds_woken <= r &&
			       now_ns() - t0 < 60000000000LL)
				usleep(1000);
		for (late = 0, i = 0; i < n; i++)
			late += crowd[i].rounds_woken <= r;
		ASSERT_EQ(0, late) TH_LOG("round %d: %d receivers never woke", r, late);
		TH_LOG("round %d: %d receivers on CPU 1 woken in %lld ms", r, n,
		       (now_ns() - t0) / 1000000);
	}
	for (i = 0; i < n; i++) {
		pthread_join(crowd[i].thread, NULL);
		EXPECT_EQ(0, crowd[i].errors) TH_LOG("receiver %d", i);
		close(crowd[i].fd);
	}
	pthread_attr_destroy(&attr);
}

/*
 * The RFC's call has one argument, uintr_wait(flags), and its programs
 * make it with syscall(), whatever the other argument registers hold.
 * Without the flags that select them, the kernel reads none of them.
 */
static long one_argument_wait(unsigned int flags)
{
	register long timeout __asm__("rsi") = 0x10;
	register long word __asm__("rdx") = (long)0xffff888000000000ull;
	register long expected __asm__("r10") = -1;
	long ret = 476;	/* __NR_uintr_wait */

	__asm__ volatile("syscall"
			 : "+a"(ret), "+r"(timeout), "+r"(word), "+r"(expected)
			 : "D"((long)flags)
			 : "rcx", "r11", "memory");
	return ret;
}

TEST(one_argument_call_ignores_the_other_registers)
{
	struct sender_args a = { .delay_ns = 20000000, .sends = 1 };
	pthread_t t;

	a.fd = receiver_setup(_metadata, 5);
	ASSERT_GE(a.fd, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, delayed_sender, &a));
	/* A bad timeout or word would fail at once; this one blocks. */
	EXPECT_EQ(-EINTR, one_argument_wait(0));
	EXPECT_EQ(1, handled);
	EXPECT_EQ(5, last_vector);
	pthread_join(t, NULL);
}

TEST(woken_by_another_process)
{
	int fd = receiver_setup(_metadata, 60);
	int status;
	pid_t pid;

	ASSERT_GE(fd, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* The fd is inherited; the uintr state is not. */
		long idx = uintr_register_sender(fd, 0);

		if (idx < 0)
			_exit(1);
		usleep(50000);
		_senduipi(idx);
		_exit(0);
	}
	EXPECT_EQ(-EINTR, wait_for(10000000000LL));
	EXPECT_EQ(1, handled);
	EXPECT_EQ(60, last_vector);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void on_usr1(int sig) { (void)sig; }

struct waiter_result {
	long ret;
	long long elapsed;
};

static void *waiting_receiver(void *p)
{
	struct waiter_result *r = p;
	long long start = now_ns();

	if (uintr_register_handler(count, 0)) {
		r->ret = -1000;
		return NULL;
	}
	_stui();
	r->ret = wait_for(20000000000LL);
	r->elapsed = now_ns() - start;
	uintr_unregister_handler(0);
	return NULL;
}

TEST(a_signal_ends_the_wait)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct waiter_result r = { 0 };
	pthread_t t;

	handled = 0;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, waiting_receiver, &r));
	usleep(100000);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	EXPECT_EQ(-EINTR, r.ret);
	EXPECT_LT(r.elapsed, 10000000000LL);
	EXPECT_EQ(0, handled);
}

static int proc_interrupts_total(const char *name)
{
	static char buf[65536];
	char *line;
	int total = 0;

	if (uintr_read_file("/proc/interrupts", buf, sizeof(buf)))
		return -1;
	line = strstr(buf, name);
	if (!line)
		return -1;
	line += strlen(name);
	for (;;) {
		char *end;
		long v = strtol(line, &end, 10);

		if (end == line)
			break;
		total += v;
		line = end;
	}
	return total;
}

TEST(kernel_vector_is_counted)
{
	struct sender_args a = { .delay_ns = 50000000, .sends = 1 };
	int before = proc_interrupts_total("UIK:");
	pthread_t t;

	ASSERT_GE(before, 0);
	a.fd = receiver_setup(_metadata, 1);
	ASSERT_GE(a.fd, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, delayed_sender, &a));
	EXPECT_EQ(-EINTR, wait_for(10000000000LL));
	pthread_join(t, NULL);
	EXPECT_GT(proc_interrupts_total("UIK:"), before);
}

/*
 * The lost-wakeup hunt: each round the sender fires as soon as the
 * receiver announces it is about to wait, so the post lands anywhere
 * between the receiver's last look and its sleep.  Every round must end
 * with EINTR, never with the (generous) timeout, and the handler run.
 * The receiver masks user interrupts (CLUI) around the announcement and
 * the wait, as a program must: with UIF set, a post that arrives before
 * the call is delivered before it, and the call then waits for the next.
 * The debug kernel does a quarter of the rounds (70 s for all of them).
 */
#define RACE_ROUNDS		100000
#define RACE_ROUNDS_DEBUG	25000

static long race_rounds;
static atomic_long race_round, race_sent;
static int race_fd;

static void *race_sender(void *unused)
{
	long idx = uintr_register_sender(race_fd, 0);

	if (idx < 0)
		return (void *)1;
	for (long round = 1; round <= race_rounds; round++) {
		while (atomic_load(&race_round) < round)
			;
		_senduipi(idx);
		race_sent = round;
	}
	return NULL;
}

/* A receiver of `vector' and a thread that sends once per round. */
static int race_start(struct __test_metadata *_metadata, int vector,
		      pthread_t *sender)
{
	race_rounds = uintr_debug_kernel() ? RACE_ROUNDS_DEBUG : RACE_ROUNDS;
	race_round = 0;
	race_sent = 0;
	race_fd = receiver_setup(_metadata, vector);
	if (race_fd < 0)
		return -1;
	return pthread_create(sender, NULL, race_sender, NULL);
}

TEST_F_TIMEOUT(slow, sender_races_the_sleep, 600)
{
	long timeouts = 0, other = 0, undelivered = 0;
	long long start = now_ns();
	pthread_t t;

	ASSERT_EQ(0, race_start(_metadata, 17, &t));
	for (long round = 1; round <= race_rounds; round++) {
		long ret;

		_clui();
		race_round = round;
		ret = wait_for(5000000000LL);
		_stui();
		if (ret == -ETIMEDOUT)
			timeouts++;
		else if (ret != -EINTR)
			other++;
		/* EINTR: pending, so STUI delivered this round's request. */
		if (handled != round) {
			undelivered++;
			handled = round;
		}
	}
	pthread_join(t, NULL);
	printf("# %ld rounds in %lld ms\n", race_rounds, (now_ns() - start) / 1000000);
	EXPECT_EQ(0, timeouts);
	EXPECT_EQ(0, other);
	EXPECT_EQ(0, undelivered);
	EXPECT_EQ(race_rounds, handled);
}

/*
 * As sender_races_the_sleep, with UIF set throughout: a request handled
 * between the look at the count and the call changed the count, so the
 * call fails with EAGAIN instead of sleeping until a request that never
 * comes (a timeout here).
 */
TEST_F_TIMEOUT(slow, sender_races_a_value_wait, 600)
{
	long timeouts = 0, other = 0, eagain = 0;
	long long start = now_ns();
	pthread_t t;

	ASSERT_EQ(0, race_start(_metadata, 18, &t));
	for (long round = 1; round <= race_rounds; round++) {
		long seen;

		race_round = round;
		while ((seen = handled) < round) {
			long ret = wait_value(&handled, seen, 5000000000LL);

			if (ret == -ETIMEDOUT)
				timeouts++;
			else if (ret == -EAGAIN)
				eagain++;
			else if (ret != -EINTR)
				other++;
		}
	}
	pthread_join(t, NULL);
	printf("# %ld rounds in %lld ms, %ld calls found the count changed\n",
	       race_rounds, (now_ns() - start) / 1000000, eagain);
	EXPECT_EQ(0, timeouts);
	EXPECT_EQ(0, other);
	EXPECT_EQ(race_rounds, handled);
}

/* The fdinfo of a uintr_fd: receiver state, UPID control word and PIR. */
struct fd_state {
	char state[16];
	unsigned long long control, pir;
};

static int read_fd_state(int fd, struct fd_state *st, char *text, size_t size)
{
	char path[64];
	const char *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (uintr_read_file(path, text, size))
		return -1;
	p = strstr(text, "uintr_receiver_state:\t");
	if (!p || sscanf(p, "uintr_receiver_state:\t%15s", st->state) != 1)
		return -1;
	p = strstr(text, "uintr_upid_control:\t");
	if (!p || sscanf(p, "uintr_upid_control:\t%llx", &st->control) != 1)
		return -1;
	p = strstr(text, "uintr_upid_pir:\t");
	if (!p || sscanf(p, "uintr_upid_pir:\t%llx", &st->pir) != 1)
		return -1;
	return 0;
}

/* arch/x86/include/asm/irq_vectors.h */
#define UINTR_NOTIFICATION_VECTOR_FOR_TESTS	0xeaull
#define UINTR_KERNEL_VECTOR_FOR_TESTS		0xe9ull

#define UPID_ON		0x1ull
#define UPID_SN		0x2ull
#define UPID_NV(c)	(((c) >> 16) & 0xff)

static atomic_int fdinfo_fd = -1;

static void *watch_then_send(void *p)
{
	struct fd_state *seen = p;
	char text[512];
	long idx;

	for (int i = 0; i < 10000; i++) {
		if (read_fd_state(fdinfo_fd, seen, text, sizeof(text)))
			return (void *)1;
		if (!strcmp(seen->state, "waiting"))
			break;
		usleep(1000);
	}
	idx = uintr_register_sender(fdinfo_fd, 0);
	if (idx < 0)
		return (void *)2;
	_senduipi(idx);
	return NULL;
}

/*
 * While the receiver sleeps in uintr_wait(), its UPID notifies the kernel
 * vector with no notification outstanding; afterwards the user vector
 * again.  fdinfo shows both.
 */
TEST(fdinfo_shows_the_wait)
{
	struct fd_state during = { 0 }, after;
	char text[512];
	pthread_t t;
	void *ret;

	fdinfo_fd = receiver_setup(_metadata, 12);
	ASSERT_GE(fdinfo_fd, 0);
	ASSERT_EQ(0, read_fd_state(fdinfo_fd, &after, text, sizeof(text)));
	EXPECT_STREQ("running", after.state);
	EXPECT_EQ(UINTR_NOTIFICATION_VECTOR_FOR_TESTS, UPID_NV(after.control));
	EXPECT_EQ(0ull, after.control & (UPID_ON | UPID_SN)) TH_LOG("%s", text);
	ASSERT_EQ(0, pthread_create(&t, NULL, watch_then_send, &during));
	EXPECT_EQ(-EINTR, wait_for(10000000000LL));
	pthread_join(t, &ret);
	ASSERT_EQ(NULL, ret);
	EXPECT_STREQ("waiting", during.state);
	EXPECT_EQ(UINTR_KERNEL_VECTOR_FOR_TESTS, UPID_NV(during.control));
	EXPECT_EQ(0ull, during.control & (UPID_ON | UPID_SN));
	EXPECT_EQ(0ull, during.pir);
	EXPECT_EQ(1, handled);
	ASSERT_EQ(0, read_fd_state(fdinfo_fd, &after, text, sizeof(text)));
	EXPECT_STREQ("running", after.state);
	EXPECT_EQ(UINTR_NOTIFICATION_VECTOR_FOR_TESTS, UPID_NV(after.control));
	EXPECT_EQ(0ull, after.pir);
}

/*
 * Both parties block: A sends to B and waits, B waits and answers.  A
 * lost wakeup leaves both asleep; the waits' timeout turns that into a
 * failure with both UPIDs in the log.  The rounds can be raised from the
 * kernel command line (uintr_pingpong_rounds=N) for a long stress run.
 */
#define PINGPONG_ROUNDS		50000
#define PINGPONG_ROUNDS_DEBUG	5000

static atomic_long pp_hits[64];
static atomic_int pp_fd[2] = { -1, -1 };
static atomic_int pp_stalled;
static long pp_rounds;

static UINTR_HANDLER(count_per_vector)
{
	pp_hits[vector & 63]++;
}

static void pp_dump(int me, long round)
{
	fprintf(stderr, "# party %c stalled in round %ld\n", 'A' + me, round);
	uintr_dump_fd("A", pp_fd[0]);
	uintr_dump_fd("B", pp_fd[1]);
	uintr_dump_interrupts();
}

/*
 * Waits until the handler counted `want` hits of `vector`.  A wait that
 * times out is a lost wakeup; so is one that ends only when its timer
 * fires (its interrupt was posted long before, but the wakeup came with
 * the timer: EINTR after about 5 s).
 */
static int pp_await(int me, int vector, long want)
{
	while (pp_hits[vector] < want) {
		long long start = now_ns();
		long ret = 0;

		_clui();
		if (pp_hits[vector] < want && !pp_stalled)
			ret = wait_for(5000000000LL);
		_stui();
		if (pp_stalled)
			return -1;
		if (ret == -ETIMEDOUT || now_ns() - start >= 4000000000LL) {
			pp_stalled = 1;
			fprintf(stderr, "# wait returned %ld after %lld ms\n", ret,
				(now_ns() - start) / 1000000);
			pp_dump(me, want);
			return -1;
		}
		if (ret && ret != -EINTR) {
			pp_stalled = 1;
			fprintf(stderr, "# party %c: wait failed with %ld\n",
				'A' + me, ret);
			pp_dump(me, want);
			return -1;
		}
	}
	return 0;
}

/* Party `me` (0: A, 1: B) receives on vector 20 + me. */
static long pp_party(int me)
{
	int vector = 20 + me;
	long idx;

	if (uintr_register_handler(count_per_vector, 0))
		return -1;
	pp_fd[me] = uintr_create_fd(vector, 0);
	if (pp_fd[me] < 0)
		return -1;
	while (pp_fd[!me] < 0)
		;
	idx = uintr_register_sender(pp_fd[!me], 0);
	if (idx < 0)
		return -1;
	_stui();
	for (long i = 1; i <= pp_rounds; i++) {
		if (me == 0)
			_senduipi(idx);
		if (pp_await(me, vector, i))
			return -1;
		if (me == 1)
			_senduipi(idx);
	}
	_clui();
	return 0;
}

static void *pp_party_b(void *unused)
{
	return (void *)pp_party(1);
}

TEST_F_TIMEOUT(slow, both_parties_block, 600)
{
	const char *env = getenv("uintr_pingpong_rounds");
	long long start = now_ns();
	void *b_ret;
	pthread_t b;

	pp_rounds = uintr_debug_kernel() ? PINGPONG_ROUNDS_DEBUG : PINGPONG_ROUNDS;
	if (env)
		pp_rounds = atol(env);
	ASSERT_EQ(0, pthread_create(&b, NULL, pp_party_b, NULL));
	EXPECT_EQ(0, pp_party(0));
	pthread_join(b, &b_ret);
	EXPECT_EQ(NULL, b_ret);
	EXPECT_EQ(0, pp_stalled);
	EXPECT_EQ(pp_rounds, pp_hits[20]);
	EXPECT_EQ(pp_rounds, pp_hits[21]);
	printf("# %ld round trips, both blocked, in %lld ms\n", pp_rounds,
	       (now_ns() - start) / 1000000);
}

/*
 * The receiver dies asleep (SIGKILL) while a sender keeps sending: the
 * sends stay harmless, and once the fd is closed nothing is left alive.
 */
TEST_F_TIMEOUT(slow, receiver_killed_while_waiting_and_senders_send, 120)
{
	struct uintr_stats before, after;
	int sv[2], fd, status;
	long idx;
	pid_t pid;

	ASSERT_EQ(0, uintr_read_stats(&before));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		fd = receiver_setup(_metadata, 5);
		if (fd < 0 || uintr_send_fd(sv[1], fd))
			_exit(1);
		close(fd);
		for (;;)
			uintr_wait(0, NULL);
	}
	close(sv[1]);
	fd = uintr_recv_fd(sv[0]);
	ASSERT_GE(fd, 0);
	idx = uintr_register_sender(fd, 0);
	ASSERT_GE(idx, 0);
	for (int i = 0; i < 20000; i++) {
		_senduipi(idx);
		if (i == 10000)
			kill(pid, SIGKILL);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	for (int i = 0; i < 1000; i++)
		_senduipi(idx);
	EXPECT_EQ(0, uintr_unregister_sender(fd, 0));
	close(fd);
	close(sv[0]);
	ASSERT_EQ(0, uintr_read_stats(&after));
	uintr_stats_print("before", &before);
	uintr_stats_print("after", &after);
	/* This thread stays a sender (with an empty UITT) until it exits. */
	EXPECT_EQ(before.receivers, after.receivers);
	EXPECT_EQ(before.upids, after.upids);
	EXPECT_EQ(before.fds, after.fds);
	EXPECT_EQ(before.connections, after.connections);
}

TEST_HARNESS_MAIN
