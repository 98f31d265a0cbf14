// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt storms: two sender threads and a sender process execute
 * SENDUIPI in a tight loop at one receiver.  The receiver, spinning or
 * asleep in uintr_wait(), keeps making progress while its handler runs;
 * it can unregister in the middle of the storm, after which nothing is
 * delivered, not even to a handler it registers again
 * (uintr_unregister_handler(2)); and an unrelated process making
 * getppid() calls keeps making progress too.
 *
 * The receiver can also mask the stormed vector at its source (from
 * another of its threads): then nothing is delivered, the senders keep
 * sending without an error, and the receiver's loop runs at its quiet
 * rate again; unmasking lets the storm in again.
 *
 * The rates are printed (the project never asserts timings): the only
 * bound is that the bystander keeps 1% of its quiet rate, which only a
 * livelock misses.
 */
#include "uintr_test.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <x86intrin.h>

#include "kselftest_harness.h"

/* Tests that need more than the harness's default 30 s under TCG. */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

#define VECTOR		42
#define SENDERS		3	/* threads 0 and 1, process 2 */
#define QUIET_MS	1000
#define STORM_MS	2000
/* Sends after unregistering, and again after registering a fresh handler. */
#define AFTER_SENDS	20000
#define HANG_SECONDS	60

struct sender {
	atomic_long sent;
	atomic_int ready;
	atomic_int error;
	char pad[48];
};

/* Shared with the children (MAP_SHARED). */
struct shared {
	atomic_int stop;	/* senders and bystander stop */
	atomic_long ops;	/* bystander's getppid() calls */
	struct sender s[SENDERS];
};

static struct shared *sh;
static atomic_long handled, late, fresh_handled;
/* TSC of the handler's first run since it was cleared (0: none yet). */
static volatile unsigned long long first_handler_tsc;
/* When the receiver's current uintr_wait() began (0: it is not in one). */
static atomic_llong wait_since;
static atomic_int watchdog_stop;
static volatile int unregistered;
static int storm_fd;
static pid_t sender_pid;

static UINTR_HANDLER(count)
{
	handled++;
	if (!first_handler_tsc)
		first_handler_tsc = __rdtsc();
	if (unregistered)
		late++;
}

static UINTR_HANDLER(fresh)
{
	fresh_handled++;
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

#define WAIT_FOR(cond) ({						\
	long long __end = now_ns() + HANG_SECONDS * 1000000000LL;	\
	int __ok;							\
	while (!(__ok = !!(cond)) && now_ns() < __end)			\
		usleep(1000);						\
	__ok;								\
})

static long total_sent(void)
{
	long n = 0;

	for (int i = 0; i < SENDERS; i++)
		n += sh->s[i].sent;
	return n;
}

/* SENDUIPI in a tight loop until told to stop. */
static void flood(struct sender *s, int fd)
{
	long idx = uintr_register_sender(fd, 0);
	long n = 0;

	if (idx < 0) {
		s->error = -errno;
		s->ready = 1;
		return;
	}
	s->ready = 1;
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		_senduipi(idx);
		if (!(++n & 255))
			atomic_store_explicit(&s->sent, n, memory_order_relaxed);
	}
	s->sent = n;
}

static void *sender_thread(void *arg)
{
	flood(arg, storm_fd);
	return NULL;
}

/* The unrelated process: a fixed piece of work, counted. */
static void bystander(void)
{
	long n = 0;

	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		syscall(SYS_getppid);
		atomic_store_explicit(&sh->ops, ++n, memory_order_relaxed);
	}
}

/* Where the threads of pid are: state, wchan and kernel stack. */
static void dump_tasks(pid_t pid)
{
	char path[320], text[2048];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid, d->d_name);
		if (uintr_read_file(path, text, sizeof(text)))
			continue;
		fprintf(stderr, "# task %d/%s in %s\n", pid, d->d_name, text);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid, d->d_name);
		if (!uintr_read_file(path, text, sizeof(text)))
			fprintf(stderr, "%s", text);
	}
	if (dir)
		closedir(dir);
}

/* What the receiver, its UPID and the senders look like, on a stall. */
static void dump(const char *what)
{
	long before[SENDERS];

	fprintf(stderr, "# stall: %s\n", what);
	for (int i = 0; i < SENDERS; i++)
		before[i] = sh->s[i].sent;
	usleep(100000);
	for (int i = 0; i < SENDERS; i++)
		fprintf(stderr, "# sender %d: %ld sent, %ld in the last 100 ms\n",
			i, (long)sh->s[i].sent, sh->s[i].sent - before[i]);
	fprintf(stderr, "# handled %ld, bystander %ld\n", (long)handled, (long)sh->ops);
	uintr_dump_fd("the receiver", storm_fd);
	uintr_dump_interrupts();
	dump_tasks(getpid());
	dump_tasks(sender_pid);
}

/*
 * A wait that lasts a second while the senders send is stuck: what the
 * receiver's UPID and thread look like then, while it still sleeps.
 */
static void *watchdog(void *arg)
{
	int told = 0;

	while (!watchdog_stop) {
		long long since = wait_since;

		if (since && now_ns() - since > 1000000000LL && !told) {
			fprintf(stderr, "# the receiver has waited for 1 s\n");
			uintr_dump_fd("the waiting receiver", storm_fd);
			uintr_dump_interrupts();
			dump_tasks(getpid());
			dump_tasks(sender_pid);
			told = 1;
		}
		usleep(10000);
	}
	return NULL;
}

/*
 * The receiver's own loop for ms: spins, or sleeps in uintr_wait().  A
 * wait that times out although the senders sent meanwhile is a lost
 * wakeup, and so is one that ends only when its timer fires (EINTR after
 * about 5 s): the 5 s timeout only turns it into a failure with a dump.
 */
static long receiver_loop(struct __test_metadata *_metadata, int wait_mode,
			  long long ms)
{
	struct __kernel_timespec five_s = { .tv_sec = 5 };
	long long end = now_ns() + ms * 1000000LL;
	long iterations = 0;

	do {
		if (wait_mode) {
			long sent = total_sent();
			unsigned long long tsc0;
			long long start, took;
			long ret;
			int slow;

			first_handler_tsc = 0;
			start = now_ns();
			tsc0 = __rdtsc();
			wait_since = start;
			ret = UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT, &five_s));
			wait_since = 0;
			took = now_ns() - start;
			/* Woken by its timer, not by the interrupts. */
			slow = took >= 4000000000LL;

			/* Returns once the handler ran for a pending interrupt. */
			if ((ret == -ETIMEDOUT || slow) && total_sent() > sent) {
				/*
				 * A sleep to the timer, or handler runs back
				 * to back after a timely wakeup: the handler's
				 * first run tells (TSC scaled by the wait's
				 * own duration).
				 */
				fprintf(stderr, "# wait took %lld ms, first handler run after %lld ms\n",
					took / 1000000,
					first_handler_tsc ? (long long)((first_handler_tsc - tsc0) *
						(double)took / (double)(__rdtsc() - tsc0)) / 1000000 : -1LL);
				dump(slow && ret == -EINTR ?
				     "uintr_wait() woke only with its timer while the senders sent" :
				     "uintr_wait() timed out while the senders sent");
				EXPECT_EQ(-EINTR, ret);
				EXPECT_FALSE(slow);
				return iterations;
			}
			EXPECT_EQ(-EINTR, ret);
			iterations++;
			continue;
		}
		for (int i = 0; i < 256; i++) {
			iterations++;
			__asm__ volatile("" : "+r"(iterations));
		}
	} while (now_ns() < end);
	return iterations;
}

struct phase {
	long long ns;
	long ops, sent, handled;
};

static void mark(struct phase *p)
{
	p->ns = now_ns();
	p->ops = sh->ops;
	p->sent = total_sent();
	p->handled = handled;
}

static double per_second(long n, const struct phase *a, const struct phase *b)
{
	return n * 1e9 / (double)(b->ns - a->ns);
}

/* The shared counters, and the socket that passes the fd to the process. */
static void storm_map(struct __test_metadata *_metadata, int sv[2])
{
	late = 0;
	unregistered = 0;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
}

/* The sender process (on CPU `cpu', or anywhere for -1): floods the fd it receives. */
static pid_t storm_sender_process(int sv[2], int cpu)
{
	pid_t pid = uintr_spawn();

	if (pid == 0) {
		int fd = uintr_recv_fd(sv[1]);

		if (fd < 0)
			_exit(1);
		if (cpu >= 0)
			uintr_pin_cpu(cpu);
		flood(&sh->s[2], fd);
		_exit(0);
	}
	sender_pid = pid;
	return pid;
}

/* This thread becomes the receiver of storm_fd, with UIF set. */
static void storm_receiver(struct __test_metadata *_metadata)
{
	ASSERT_EQ(0, uintr_register_handler(count, 0));
	storm_fd = uintr_create_fd(VECTOR, 0);
	ASSERT_GE(storm_fd, 0);
	_stui();
}

/* The storm at a receiver in this thread; wait_mode: it sleeps in uintr_wait(). */
static void storm(struct __test_metadata *_metadata, int wait_mode)
{
	struct __kernel_timespec ten_ms = { .tv_nsec = 10000000 };
	struct phase q0, q1, s0, s1;
	long quiet_iterations = 0, storm_iterations, sent;
	long long deadline;
	double quiet_rate, storm_rate;
	pid_t by, sproc;
	pthread_t t[2], dog;
	int sv[2], status;

	storm_map(_metadata, sv);
	by = uintr_spawn();
	ASSERT_GE(by, 0);
	if (by == 0) {
		bystander();
		_exit(0);
	}
	sproc = storm_sender_process(sv, -1);
	ASSERT_GE(sproc, 0);
	storm_receiver(_metadata);

	/* Quiet: only the bystander (and a spinning receiver) run. */
	ASSERT_TRUE(WAIT_FOR(sh->ops > 0));
	mark(&q0);
	if (wait_mode)
		usleep(QUIET_MS * 1000);
	else
		quiet_iterations = receiver_loop(_metadata, 0, QUIET_MS);
	mark(&q1);

	/* The storm. */
	ASSERT_EQ(0, uintr_send_fd(sv[0], storm_fd));
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, sender_thread, &sh->s[i]));
	ASSERT_TRUE(WAIT_FOR(sh->s[0].ready && sh->s[1].ready && sh->s[2].ready));
	for (int i = 0; i < SENDERS; i++) {
		ASSERT_EQ(0, sh->s[i].error) TH_LOG("sender %d", i);
	}
	mark(&s0);
	watchdog_stop = 0;
	ASSERT_EQ(0, pthread_create(&dog, NULL, watchdog, NULL));
	storm_iterations = receiver_loop(_metadata, wait_mode, STORM_MS);
	watchdog_stop = 1;
	pthread_join(dog, NULL);
	mark(&s1);

	/* Unregister in the middle of it: nothing is delivered after. */
	EXPECT_EQ(0, uintr_unregister_handler(0));
	unregistered = 1;
	if (wait_mode) {
		EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_wait(0, NULL)));
	}
	sent = total_sent();
	if (!WAIT_FOR(total_sent() >= sent + AFTER_SENDS)) {
		dump("the senders stopped sending");
		ASSERT_TRUE(0);
	}
	/* A new handler, UIF set: the old fd's posts do not reach it. */
	ASSERT_EQ(0, uintr_register_handler(fresh, 0));
	_stui();
	sent = total_sent();
	deadline = now_ns() + HANG_SECONDS * 1000000000LL;
	while (total_sent() < sent + AFTER_SENDS) {
		if (now_ns() > deadline) {
			dump("the senders stopped sending");
			ASSERT_TRUE(0);
		}
		if (wait_mode) {
			EXPECT_EQ(-ETIMEDOUT, UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT,
								    &ten_ms)));
		} else {
			usleep(1000);
		}
	}

	sh->stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(sproc, waitpid(sproc, &status, 0));
	EXPECT_EQ(0, status);
	ASSERT_EQ(by, waitpid(by, &status, 0));
	EXPECT_EQ(0, status);

	quiet_rate = per_second(q1.ops - q0.ops, &q0, &q1);
	storm_rate = per_second(s1.ops - s0.ops, &s0, &s1);
	printf("# %s receiver: %.0f SENDUIPI/s from %d senders, %.0f deliveries/s\n",
	       wait_mode ? "waiting" : "spinning",
	       per_second(s1.sent - s0.sent, &s0, &s1), SENDERS,
	       per_second(s1.handled - s0.handled, &s0, &s1));
	if (wait_mode)
		printf("# receiver: %.0f wakeups/s during the storm\n",
		       per_second(storm_iterations, &s0, &s1));
	else
		printf("# receiver loop: %.0f iterations/s quiet, %.0f during the storm\n",
		       per_second(quiet_iterations, &q0, &q1),
		       per_second(storm_iterations, &s0, &s1));
	printf("# bystander: %.0f getppid/s quiet, %.0f during the storm (%.1f%%)\n",
	       quiet_rate, storm_rate, 100 * storm_rate / quiet_rate);
	fflush(stdout);

	EXPECT_GT(storm_iterations, 0);
	EXPECT_GT(s1.handled - s0.handled, 0);
	EXPECT_EQ(0, late);
	EXPECT_EQ(0, fresh_handled);
	/* Only a livelock gets the bystander below 1% of its quiet rate. */
	EXPECT_GE(storm_rate * 100, quiet_rate);
}

static int repeat(void);

static void *pinned_sender_thread(void *arg)
{
	uintr_pin_cpu(1);
	flood(arg, storm_fd);
	return NULL;
}

static void *mask_from_cpu_1(void *result)
{
	uintr_pin_cpu(1);
	*(long *)result = UINTR_RET(uintr_mask(storm_fd));
	return NULL;
}

/*
 * A storm at a spinning receiver that another of its threads then masks.
 * The receiver has CPU 0 to itself, the senders (two threads and a
 * process) and the masking thread run on CPU 1, so that the receiver's
 * rates differ by the interrupts it takes and nothing else.
 */
static void masked_storm(struct __test_metadata *_metadata)
{
	struct phase q0, q1, s0, s1, m0, m1;
	long quiet, stormy, masked, mask_ret = -1, settled;
	pthread_t t[2], masker;
	int sv[2], status;
	pid_t sproc;

	storm_map(_metadata, sv);
	uintr_pin_cpu(0);
	sproc = storm_sender_process(sv, 1);
	ASSERT_GE(sproc, 0);
	storm_receiver(_metadata);

	mark(&q0);
	quiet = receiver_loop(_metadata, 0, QUIET_MS);
	mark(&q1);

	ASSERT_EQ(0, uintr_send_fd(sv[0], storm_fd));
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, pinned_sender_thread, &sh->s[i]));
	ASSERT_TRUE(WAIT_FOR(sh->s[0].ready && sh->s[1].ready && sh->s[2].ready));
	for (int i = 0; i < SENDERS; i++) {
		ASSERT_EQ(0, sh->s[i].error) TH_LOG("sender %d", i);
	}
	mark(&s0);
	stormy = receiver_loop(_metadata, 0, QUIET_MS);
	mark(&s1);

	ASSERT_EQ(0, pthread_create(&masker, NULL, mask_from_cpu_1, &mask_ret));
	ASSERT_EQ(0, pthread_join(masker, NULL));
	EXPECT_EQ(0, mask_ret);
	/* A notification sent before the mask returned may still arrive. */
	receiver_loop(_metadata, 0, 10);
	settled = handled;
	mark(&m0);
	masked = receiver_loop(_metadata, 0, QUIET_MS);
	mark(&m1);
	EXPECT_EQ(settled, handled) TH_LOG("delivered while masked");
	/* The senders kept sending, and none of them faulted. */
	EXPECT_GT(m1.sent - m0.sent, 0);

	EXPECT_EQ(0, uintr_unmask(storm_fd));
	EXPECT_TRUE(WAIT_FOR(handled > settled)) TH_LOG("nothing after unmasking");

	sh->stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(sproc, waitpid(sproc, &status, 0));
	EXPECT_EQ(0, status);
	printf("# %.0f SENDUIPI/s from %d senders, %.0f deliveries/s; masked: %.0f SENDUIPI/s\n",
	       per_second(s1.sent - s0.sent, &s0, &s1), SENDERS,
	       per_second(s1.handled - s0.handled, &s0, &s1),
	       per_second(m1.sent - m0.sent, &m0, &m1));
	printf("# receiver loop: %.0f iterations/s quiet, %.0f during the storm (%.1f%%), %.0f masked (%.1f%%)\n",
	       per_second(quiet, &q0, &q1), per_second(stormy, &s0, &s1),
	       100 * per_second(stormy, &s0, &s1) / per_second(quiet, &q0, &q1),
	       per_second(masked, &m0, &m1),
	       100 * per_second(masked, &m0, &m1) / per_second(quiet, &q0, &q1));
	fflush(stdout);
	EXPECT_EQ(0, uintr_unregister_handler(0));
	close(storm_fd);
	close(sv[0]);
	close(sv[1]);
	munmap(sh, sizeof(*sh));
}

TEST_F_TIMEOUT(slow, masking_gives_the_receiver_its_quiet_rate, 300)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	for (int i = repeat(); i > 0 && _metadata->exit_code != KSFT_FAIL; i--)
		masked_storm(_metadata);
}

/* uintr_storm_repeat=N on the kernel command line: N storms per test. */
static int repeat(void)
{
	const char *env = getenv("uintr_storm_repeat");

	return env ? atoi(env) : 1;
}

TEST_F_TIMEOUT(slow, spinning_receiver_progresses_and_unregisters, 300)
{
	for (int i = repeat(); i > 0 && _metadata->exit_code != KSFT_FAIL; i--) {
		storm(_metadata, 0);
		EXPECT_EQ(0, uintr_unregister_handler(0));
	}
}

TEST_F_TIMEOUT(slow, waiting_receiver_progresses_and_unregisters, 300)
{
	for (int i = repeat(); i > 0 && _metadata->exit_code != KSFT_FAIL; i--) {
		storm(_metadata, 1);
		EXPECT_EQ(0, uintr_unregister_handler(0));
	}
}

TEST_HARNESS_MAIN
