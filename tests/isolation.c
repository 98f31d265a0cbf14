// SPDX-License-Identifier: GPL-2.0
/*
 * Isolation: nothing but a uintr_fd received on purpose lets a thread
 * reach a receiver, and an index works only in the thread that
 * registered it.
 *
 * - A process that never got the fd tries every fd number 0..1023 (with
 *   the receiver's own numbers among them, and /proc/<pid>/fd/<n> of the
 *   receiver's): uintr_register_sender(2) connects only to its own uintr
 *   fd and fails with EBADF or EOPNOTSUPP everywhere else.
 * - SENDUIPI before any registration raises SIGILL for every index (a
 *   receiver that is no sender too); connected to its own receiver alone,
 *   index 0 works and 1..255 (and beyond the table) raise SIGSEGV, posting
 *   nothing (delivery.c's senduipi_faults checks one index of each).
 * - A sibling thread's SENDUIPI with a sender's index: SIGILL if it never
 *   registered, its own entry (another vector) or SIGSEGV if it did, and
 *   SIGILL in a child forked by the sender (syscalls.c's
 *   sender_indexes_are_per_thread checks the registrations only).
 * - exec (lifetime.c checks the fd, the handler, UIF and the counters):
 *   an interrupt pending at exec is not delivered to the new image, a
 *   sender that keeps sending to the old image reaches nothing in the new
 *   one, an exec by a sibling thread drops every thread's state, and the
 *   new image's SENDUIPI raises SIGILL.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

#include "kselftest_harness.h"

static char *self_path;

static atomic_long hits[64];

static UINTR_HANDLER(count)
{
	hits[vector & 63]++;
}

static long all_hits(void)
{
	long n = 0;

	for (int i = 0; i < 64; i++)
		n += hits[i];
	return n;
}

/* Waits up to 2 s for n deliveries in all. */
static int wait_hits(long n)
{
	for (int i = 0; i < 2000 && all_hits() < n; i++)
		usleep(1000);
	return all_hits() >= n;
}

/* Is an interrupt pending for this receiver?  (A zero timeout only looks.) */
static long pending(void)
{
	struct __kernel_timespec zero = { 0 };

	return UINTR_RET(uintr_wait(UINTR_WAIT_TIMEOUT, &zero));
}

/*
 * SENDUIPI with a signal handler in place: 0 if it executed, else the
 * signal it raised, negated if the signal did not come from a SENDUIPI.
 */
static __thread sigjmp_buf trap_env;
static __thread volatile int trap_armed, trap_sig, trap_code, trap_at_senduipi;

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	if (!trap_armed) {
		/* Not ours: die of it when the instruction runs again. */
		sigaction(sig, &dfl, NULL);
		return;
	}
	trap_armed = 0;
	trap_sig = sig;
	trap_code = si->si_code;
	trap_at_senduipi = uintr_is_senduipi((const unsigned char *)uc->uc_mcontext.gregs[REG_RIP]);
	siglongjmp(trap_env, 1);
}

static int install_traps(void)
{
	struct sigaction sa = {
		.sa_sigaction = on_trap,
		/* No mask to restore after siglongjmp: sigsetjmp(env, 0). */
		.sa_flags = SA_SIGINFO | SA_NODEFER,
	};

	return sigaction(SIGILL, &sa, NULL) || sigaction(SIGSEGV, &sa, NULL) ? -1 : 0;
}

static int send_signal(unsigned long long index)
{
	if (sigsetjmp(trap_env, 0))
		return trap_at_senduipi ? trap_sig : -trap_sig;
	trap_armed = 1;
	_senduipi(index);
	trap_armed = 0;
	return 0;
}

/* Indexes past the 256-entry table, up to all ones. */
static const unsigned long long beyond[] = {
	256, 257, 4096, 1ull << 31, 1ull << 32, 1ull << 63, ~0ull,
};

/*
 * Counts the indexes 0..255 and beyond[] whose SENDUIPI does not raise
 * want (first: from `first` on); prints the first few.
 */
static int sends_raise(int first, int want)
{
	int wrong = 0;

	for (int i = first; i < 256 + (int)ARRAY_SIZE(beyond); i++) {
		unsigned long long index = i < 256 ? (unsigned long long)i : beyond[i - 256];
		int got = send_signal(index);

		if (got != want && wrong++ < 5)
			fprintf(stderr, "# SENDUIPI %#llx: signal %d, expected %d (code %d)\n",
				index, got, want, trap_code);
	}
	return wrong;
}

TEST(senduipi_before_registering_is_sigill_for_every_index)
{
	ASSERT_EQ(0, install_traps());
	EXPECT_EQ(0, sends_raise(0, SIGILL));
	EXPECT_EQ(ILL_ILLOPN, trap_code);
	/* A receiver is no sender: still no UITT. */
	ASSERT_EQ(0, uintr_register_handler(count, 0));
	ASSERT_GE(uintr_create_fd(3, 0), 0);
	EXPECT_EQ(0, sends_raise(0, SIGILL));
}

TEST(connected_to_its_own_receiver_only_index_0_works)
{
	int fd;

	ASSERT_EQ(0, install_traps());
	ASSERT_EQ(0, uintr_register_handler(count, 0));
	fd = uintr_create_fd(9, 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, uintr_register_sender(fd, 0));
	/* UIF is clear: what a send posts stays pending, to be seen. */
	EXPECT_EQ(0, sends_raise(1, SIGSEGV));
	EXPECT_EQ(-ETIMEDOUT, pending()) TH_LOG("a faulting SENDUIPI posted");
	EXPECT_EQ(0, send_signal(0));
	EXPECT_EQ(-EINTR, pending());
	EXPECT_EQ(0, all_hits());
	_stui();
	EXPECT_TRUE(wait_hits(1));
	EXPECT_EQ(1, hits[9]);
	EXPECT_EQ(1, all_hits());
}

/*
 * The process that never got the fd: `theirs` are the receiver's fd
 * numbers (known here, but only as numbers).  Returns the number of
 * answers that the man pages do not give.
 */
#define OWN_VECTOR 61

static int outsider(pid_t receiver, const int *theirs, int n)
{
	int devnull = open("/dev/null", O_RDWR);
	int own, connected = 0, eopnotsupp = 0, ebadf = 0, bad = 0;
	int refused = 0, reopened = 0, reopen_errno = 0;

	if (devnull < 0 || install_traps())
		return 100;
	/* Before any registration: every index raises SIGILL. */
	bad += sends_raise(0, SIGILL);
	/* Half of the receiver's numbers are open files here too. */
	for (int i = 0; i < n; i += 2)
		if (dup2(devnull, theirs[i]) < 0)
			return 101;
	/* One of them a uintr fd of our own, which must connect. */
	if (uintr_register_handler(count, 0))
		return 102;
	own = uintr_create_fd(OWN_VECTOR, 0);
	if (own < 0)
		return 103;
	for (int fd = 0; fd < 1024; fd++) {
		long ret = UINTR_RET(uintr_register_sender(fd, 0));
		long want = fd == own ? 0 :
			    fcntl(fd, F_GETFD) >= 0 ? -EOPNOTSUPP : -EBADF;

		connected += ret >= 0;
		eopnotsupp += ret == -EOPNOTSUPP;
		ebadf += ret == -EBADF;
		if (ret != want) {
			fprintf(stderr, "# fd %d: %ld, expected %ld\n", fd, ret, want);
			bad++;
		}
	}
	/* The receiver's files through /proc: no way in either. */
	for (int i = 0; i < n; i++) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", receiver, theirs[i]);
		fd = open(path, O_RDWR);
		if (fd < 0) {
			refused++;
			reopen_errno = errno;
			continue;
		}
		reopened++;
		if (UINTR_RET(uintr_register_sender(fd, 0)) != -EOPNOTSUPP) {
			fprintf(stderr, "# %s reopened and connected\n", path);
			bad++;
		}
		close(fd);
	}
	/* Connected to our own receiver alone: only index 0 works. */
	bad += sends_raise(1, SIGSEGV);
	if (send_signal(0))
		bad++;
	_stui();
	if (!wait_hits(1) || hits[OWN_VECTOR] != 1 || all_hits() != 1)
		bad++;
	printf("# fds 0..1023: %d connected (its own), %d EOPNOTSUPP, %d EBADF; /proc/%d/fd: %d refused (%s), %d reopened\n",
	       connected, eopnotsupp, ebadf, receiver, refused,
	       strerror(reopen_errno), reopened);
	fflush(stdout);
	return bad > 99 ? 99 : bad;
}

TEST(unconnected_process_cannot_reach_a_receiver)
{
	int numbers[64], go[2], status;
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	fflush(NULL);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int n = read(go[0], numbers, sizeof(numbers));

		_exit(n == sizeof(numbers) ? outsider(getppid(), numbers, 64) : 104);
	}
	/* The receiver: all 64 vectors, created after the fork. */
	ASSERT_EQ(0, uintr_register_handler(count, 0));
	for (int v = 0; v < 64; v++) {
		numbers[v] = uintr_create_fd(v, 0);
		ASSERT_GE(numbers[v], 0);
	}
	_stui();
	ASSERT_EQ((ssize_t)sizeof(numbers), write(go[1], numbers, sizeof(numbers)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Nothing was posted here. */
	EXPECT_EQ(-ETIMEDOUT, pending());
	EXPECT_EQ(0, all_hits());
}

/* The sibling threads, one after the other while the sender lives. */
static int sibling_fd[2];
static pthread_barrier_t sender_ready, siblings_done;

static void send_index_0(void)
{
	_senduipi(0);
}

struct sibling_result {
	long index;
	int sig[3];	/* signal of SENDUIPI 0, 1, 2 */
	int forked_child_sig;
};

/* Connected to vector 5 (index 0) and vector 6 (index 1). */
static void *sender(void *arg)
{
	struct sibling_result *r = arg;

	r->index = uintr_register_sender(sibling_fd[0], 0);
	if (r->index == 0)
		r->index = uintr_register_sender(sibling_fd[1], 0);
	r->sig[0] = send_signal(0);
	/* UITTs are not inherited across fork either. */
	r->forked_child_sig = uintr_child_signal(send_index_0);
	pthread_barrier_wait(&sender_ready);
	pthread_barrier_wait(&siblings_done);
	return NULL;
}

/* Never registered: no UITT at all. */
static void *bystander(void *arg)
{
	struct sibling_result *r = arg;

	for (int i = 0; i < 3; i++)
		r->sig[i] = send_signal(i);
	return NULL;
}

/* Connected to vector 6 only: its index 0 is vector 6, its 1 nothing. */
static void *other_sender(void *arg)
{
	struct sibling_result *r = arg;

	r->index = uintr_register_sender(sibling_fd[1], 0);
	for (int i = 0; i < 3; i++)
		r->sig[i] = send_signal(i);
	return NULL;
}

TEST(sibling_thread_cannot_use_a_senders_index)
{
	struct sibling_result s = { 0 }, b = { 0 }, o = { 0 };
	pthread_t ts, t;

	ASSERT_EQ(0, install_traps());
	ASSERT_EQ(0, uintr_register_handler(count, 0));
	sibling_fd[0] = uintr_create_fd(5, 0);
	sibling_fd[1] = uintr_create_fd(6, 0);
	ASSERT_GE(sibling_fd[0], 0);
	ASSERT_GE(sibling_fd[1], 0);
	pthread_barrier_init(&sender_ready, NULL, 2);
	pthread_barrier_init(&siblings_done, NULL, 2);
	fflush(NULL);
	ASSERT_EQ(0, pthread_create(&ts, NULL, sender, &s));
	pthread_barrier_wait(&sender_ready);
	ASSERT_EQ(0, pthread_create(&t, NULL, bystander, &b));
	pthread_join(t, NULL);
	ASSERT_EQ(0, pthread_create(&t, NULL, other_sender, &o));
	pthread_join(t, NULL);
	pthread_barrier_wait(&siblings_done);
	pthread_join(ts, NULL);

	EXPECT_EQ(1, s.index);
	EXPECT_EQ(0, s.sig[0]);
	EXPECT_EQ(SIGILL, s.forked_child_sig);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(SIGILL, b.sig[i]) TH_LOG("index %d", i);
	}
	EXPECT_EQ(0, o.index);
	EXPECT_EQ(0, o.sig[0]);
	EXPECT_EQ(SIGSEGV, o.sig[1]);
	EXPECT_EQ(SIGSEGV, o.sig[2]);
	/* One post each: vector 5 from the sender, 6 from the other. */
	_stui();
	EXPECT_TRUE(wait_hits(2));
	EXPECT_EQ(1, hits[5]);
	EXPECT_EQ(1, hits[6]);
	EXPECT_EQ(2, all_hits());
}

/*
 * exec: the new images (see main) exit with 0 when nothing of the old one
 * reached them, else with the number of the check that failed.
 */
static int exec_self(const char *what, int arg)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", arg);
	execl(self_path, self_path, what, buf, NULL);
	return 90;
}

/* Polls for up to 2 s for the counters to be zero. */
static int stats_zero(void)
{
	struct uintr_stats s, zero = { 0 };

	for (int i = 0; i < 200; i++) {
		if (uintr_read_stats(&s) == 0 && uintr_stats_equal(&s, &zero))
			return 1;
		usleep(10000);
	}
	uintr_stats_print("after exec", &s);
	return 0;
}

/* What every new image checks first: no UIF, no UITT. */
static int fresh_image(void)
{
	if (install_traps())
		return 1;
	if (_testui())
		return 2;
	if (send_signal(0) != SIGILL)
		return 3;
	return 0;
}

/* A receiver of its own in the new image: nothing may be pending. */
static int nothing_pending_for_a_new_receiver(int vector)
{
	if (uintr_register_handler(count, 0))
		return 10;
	if (uintr_create_fd(vector, 0) < 0)
		return 11;
	_stui();
	if (pending() != -ETIMEDOUT)
		return 12;
	if (all_hits())
		return 13;
	return 0;
}

static int after_exec_pending(int vector)
{
	return fresh_image() ?: nothing_pending_for_a_new_receiver(vector);
}

TEST(pending_interrupt_does_not_survive_exec)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd;

		if (uintr_register_handler(count, 0))
			_exit(80);
		fd = uintr_create_fd(24, 0);
		if (fd < 0 || uintr_register_sender(fd, 0))
			_exit(81);
		/* Posted with UIF clear: pending, not delivered. */
		_senduipi(0);
		if (pending() != -EINTR || all_hits())
			_exit(82);
		_exit(exec_self("--after-exec-pending", 24));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * The receiver execs while a sender process keeps sending to the old
 * image (it holds a copy of the fd, so its sends stay harmless); the new
 * image registers the same vector and must get none of them.
 */
#define SENDS_AFTER_EXEC 10000

static int after_exec_sender(int ctl)
{
	char c;
	int ret = fresh_image() ?: nothing_pending_for_a_new_receiver(30);

	/* Tell the sender, let it send, look again. */
	if (ret || write(ctl, "e", 1) != 1 || read(ctl, &c, 1) != 1)
		return ret ?: 20;
	if (pending() != -ETIMEDOUT)
		return 21;
	return all_hits() ? 22 : 0;
}

TEST(sends_to_a_receiver_that_execed_reach_nothing)
{
	int sv[2], ctl[2], status, fd, got;
	pid_t receiver;
	long sent = 0;
	ssize_t n;
	char c;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	/* Survives exec (no CLOEXEC): the new image reports on it. */
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, ctl));
	fflush(NULL);
	receiver = fork();
	ASSERT_GE(receiver, 0);
	if (receiver == 0) {
		if (uintr_register_handler(count, 0))
			_exit(80);
		fd = uintr_create_fd(30, 0);
		if (fd < 0 || uintr_send_fd(sv[1], fd))
			_exit(81);
		_stui();
		/* Go when the sender has sent a first batch. */
		if (read(ctl[1], &c, 1) != 1)
			_exit(82);
		_exit(exec_self("--after-exec-sender", ctl[1]));
	}
	close(ctl[1]);
	/* This test process is the sender; it exits after the test. */
	got = uintr_recv_fd(sv[0]);
	ASSERT_GE(got, 0);
	ASSERT_EQ(0, uintr_register_sender(got, 0));
	for (int i = 0; i < 1000; i++, sent++)
		_senduipi(0);
	ASSERT_EQ(1, write(ctl[0], "g", 1));
	/* Sending all through the exec, until the new image is ready. */
	while ((n = recv(ctl[0], &c, 1, MSG_DONTWAIT)) < 0 && errno == EAGAIN) {
		_senduipi(0);
		sent++;
	}
	EXPECT_EQ(1, n) TH_LOG("the new image did not get ready");
	for (int i = 0; i < SENDS_AFTER_EXEC; i++, sent++)
		_senduipi(0);
	ASSERT_EQ(1, write(ctl[0], "d", 1));
	ASSERT_EQ(receiver, waitpid(receiver, &status, 0));
	printf("# %ld SENDUIPIs to the receiver before, during and after its exec\n", sent);
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A sibling thread execs while the main thread is a receiver with an
 * interrupt pending and another thread floods it: the new image starts
 * with nothing, and every thread's state is gone.
 */
static atomic_int flooding;

static void *flooder(void *arg)
{
	long idx = uintr_register_sender(*(int *)arg, 0);

	if (idx < 0)
		_exit(83);
	for (;;) {
		_senduipi(idx);
		flooding = 1;
	}
	return NULL;
}

static void *execer(void *arg)
{
	/* A sender too, as the old image. */
	if (uintr_register_sender(*(int *)arg, 0) < 0)
		_exit(84);
	while (!flooding)
		sched_yield();
	_exit(exec_self("--after-exec-sibling", 0));
}

static int after_exec_sibling(void)
{
	int ret = fresh_image();

	if (ret)
		return ret;
	if (!stats_zero())
		return 30;
	return nothing_pending_for_a_new_receiver(35);
}

TEST(exec_from_a_sibling_thread_drops_every_thread_state)
{
	struct uintr_stats base, zero = { 0 };
	int status;
	pid_t pid;

	/* The new image checks the counters for zero. */
	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_TRUE(uintr_stats_equal(&base, &zero)) uintr_stats_print("base", &base);
	fflush(NULL);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		pthread_t t;
		int fd;

		if (uintr_register_handler(count, 0))
			_exit(80);
		fd = uintr_create_fd(35, 0);
		if (fd < 0)
			_exit(81);
		/* UIF clear: the flood stays pending here. */
		if (pthread_create(&t, NULL, flooder, &fd) ||
		    pthread_create(&t, NULL, execer, &fd))
			_exit(82);
		for (;;)
			pause();
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--after-exec-pending"))
		return after_exec_pending(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "--after-exec-sender"))
		return after_exec_sender(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "--after-exec-sibling"))
		return after_exec_sibling();
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
