// SPDX-License-Identifier: GPL-2.0
/*
 * Teardown races with user interrupts in flight: a receiver (a thread of
 * this process or another process), three senders (two threads and a
 * process) and the holders of the uintr_fd go away in every order while
 * the senders flood the receiver with SENDUIPI:
 *
 * - the receiver exits, is SIGKILLed, or unregisters its handler first:
 *   the senders keep sending, harmlessly (uintr_unregister_handler(2)),
 *   and a handler that is gone never runs again;
 * - the receiver is SIGKILLed holding the last reference to the fd, the
 *   last fd is closed, or a third process holding it exits: every
 *   sender's next SENDUIPI raises SIGSEGV (uintr_register_sender(2)),
 *   caught here and checked to come from the SENDUIPI;
 * - senders exit or are SIGKILLed first, and senders unregister and
 *   register again while the others send: a stale index faults every time.
 *
 * Each scenario runs several rounds (receiver thread or process, spinning
 * or asleep in uintr_wait(), a random point of teardown), and after each
 * the live-object counters are back where they started.  The rounds add
 * up to well over 100000 SENDUIPIs sent while the teardown is under way
 * (a quarter as many rounds on a debug kernel); the figures are printed.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <ucontext.h>

#include "kselftest_harness.h"

#define VECTOR		17
#define SLOTS		3	/* sender threads 0 and 1, sender process 2 */
#define PROC_SLOT	2
#define BURST		64	/* sends per register/unregister cycle */
#define HANG_SECONDS	60	/* a wait longer than this is a hang */

enum scenario {
	RECEIVER_EXITS,		/* receiver thread returns / process exits */
	RECEIVER_KILLED,	/* receiver process SIGKILLed, fd held here */
	RECEIVER_KILLED_LAST_FD, /* ...and it held the last fd: SIGSEGV */
	SENDERS_EXIT,		/* a sender thread stops, the process is killed */
	FD_CLOSED,		/* the last fd closed here: SIGSEGV */
	FD_HOLDER_EXITS,	/* a third process held the last fd: SIGSEGV */
	UNREGISTER_HANDLER,	/* the receiver unregisters during the flood */
	UNREGISTER_SENDER,	/* senders cycle unregister/register */
};

static const char *const scenario_name[] = {
	[RECEIVER_EXITS] = "receiver exits",
	[RECEIVER_KILLED] = "receiver killed",
	[RECEIVER_KILLED_LAST_FD] = "receiver killed holding the last fd",
	[SENDERS_EXIT] = "senders exit",
	[FD_CLOSED] = "fd closed",
	[FD_HOLDER_EXITS] = "fd holder exits",
	[UNREGISTER_HANDLER] = "unregister_handler",
	[UNREGISTER_SENDER] = "unregister_sender",
};

/* Whether the senders must end with SIGSEGV (their entry invalidated). */
static int faults_expected(enum scenario sc)
{
	return sc == RECEIVER_KILLED_LAST_FD || sc == FD_CLOSED ||
	       sc == FD_HOLDER_EXITS;
}

struct slot {
	atomic_long sent;	/* SENDUIPIs executed (incl. faulting ones) */
	atomic_long sent_after;	/* ...after the teardown began */
	atomic_int ready;	/* registered (or failed: error set) */
	atomic_int error;	/* a system call failed: its -errno */
	atomic_int faulted;	/* SENDUIPI raised SIGSEGV */
	atomic_int stop;	/* this sender alone stops */
	char pad[64];
};

/* Shared between this process and its children (MAP_SHARED). */
struct shared {
	atomic_int fd;			/* a receiver thread's fd, or -1 */
	atomic_int fd_ready;
	atomic_int receiver_stop;
	atomic_int receiver_unregister;
	atomic_int unregister_ret;	/* 1 until the receiver unregistered */
	atomic_int stop;		/* every sender stops */
	atomic_int torn;		/* the teardown began */
	atomic_int cycle;		/* senders switch to unregister/register */
	atomic_int bad_faults;		/* SIGSEGV elsewhere than at SENDUIPI */
	atomic_long handled;
	atomic_long late;		/* handler ran after unregister_handler */
	atomic_long cycles;
	atomic_long stale_faults;	/* stale index faulted (as it must) */
	atomic_long stale_sent;		/* stale index did not fault (bug) */
	struct slot slot[SLOTS];
};

static struct shared *sh;

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* Polls cond every millisecond; false after HANG_SECONDS. */
#define WAIT_FOR(cond) ({						\
	long long __end = now_ms() + HANG_SECONDS * 1000LL;		\
	int __ok;							\
	while (!(__ok = !!(cond)) && now_ms() < __end)			\
		usleep(1000);						\
	__ok;								\
})

/* The receiver side.  One receiver per process, so a global will do. */
static volatile int unregistered;

static UINTR_HANDLER(on_uintr)
{
	atomic_fetch_add(&sh->handled, 1);
	if (unregistered)
		atomic_fetch_add(&sh->late, 1);
}

/* Registers the handler and creates the fd: the fd or -errno. */
static int receiver_setup(void)
{
	long fd;

	unregistered = 0;
	if (uintr_register_handler(on_uintr, 0))
		return -errno;
	fd = uintr_create_fd(VECTOR, 0);
	return fd < 0 ? -errno : (int)fd;
}

/* Runs until told to stop, spinning or asleep in uintr_wait(). */
static void receive(int wait_mode)
{
	struct __kernel_timespec ten_ms = { .tv_nsec = 10000000 };

	_stui();
	while (!atomic_load(&sh->receiver_stop)) {
		if (atomic_load(&sh->receiver_unregister) && !unregistered) {
			int ret = uintr_unregister_handler(0) ? -errno : 0;

			unregistered = 1;
			atomic_store(&sh->unregister_ret, ret);
		}
		if (wait_mode && !unregistered) {
			uintr_wait(UINTR_WAIT_TIMEOUT, &ten_ms);
		} else {
			for (int i = 0; i < 1000; i++)
				__asm__ volatile("pause");
		}
	}
}

static void *receiver_thread(void *arg)
{
	int fd = receiver_setup();

	atomic_store(&sh->fd, fd);
	atomic_store(&sh->fd_ready, 1);
	if (fd >= 0)
		receive((long)arg);
	return NULL;
}

/* The sender side: SIGSEGV from SENDUIPI ends a flood through siglongjmp. */
static __thread sigjmp_buf fault_env;
static __thread volatile int fault_armed;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	if (!fault_armed) {
		/* Not ours: die of it when the instruction runs again. */
		sigaction(SIGSEGV, &dfl, NULL);
		return;
	}
	fault_armed = 0;
	if (!uintr_is_senduipi((const unsigned char *)uc->uc_mcontext.gregs[REG_RIP]))
		atomic_fetch_add(&sh->bad_faults, 1);
	siglongjmp(fault_env, 1);
}

/* Sends through idx until told to stop; 1 if a SENDUIPI faulted. */
static int flood(struct slot *s, long idx)
{
	if (sigsetjmp(fault_env, 0))
		return 1;
	fault_armed = 1;
	while (!atomic_load(&sh->stop) && !atomic_load(&s->stop) &&
	       !atomic_load(&sh->cycle)) {
		atomic_fetch_add(&s->sent, 1);
		if (atomic_load(&sh->torn))
			atomic_fetch_add(&s->sent_after, 1);
		_senduipi(idx);
	}
	fault_armed = 0;
	return 0;
}

/* 1 if SENDUIPI idx faults, 0 if it executes. */
static int stale_send_faults(long idx)
{
	if (sigsetjmp(fault_env, 0))
		return 1;
	fault_armed = 1;
	_senduipi(idx);
	fault_armed = 0;
	return 0;
}

/* Unregister, SENDUIPI the stale index, register again, send a burst. */
static void cycle(struct slot *s, int fd, long idx)
{
	while (!atomic_load(&sh->stop)) {
		if (uintr_unregister_sender(fd, 0)) {
			atomic_store(&s->error, -errno);
			return;
		}
		if (stale_send_faults(idx))
			atomic_fetch_add(&sh->stale_faults, 1);
		else
			atomic_fetch_add(&sh->stale_sent, 1);
		idx = uintr_register_sender(fd, 0);
		if (idx < 0) {
			atomic_store(&s->error, -errno);
			return;
		}
		for (int i = 0; i < BURST; i++)
			_senduipi(idx);
		atomic_fetch_add(&s->sent, BURST);
		atomic_fetch_add(&s->sent_after, BURST);
		atomic_fetch_add(&sh->cycles, 1);
	}
}

/* A sender's life; close_fd: drop this copy of the fd once connected. */
static void sender(struct slot *s, int fd, int close_fd)
{
	long idx = uintr_register_sender(fd, 0);

	if (idx < 0) {
		atomic_store(&s->error, -errno);
		atomic_store(&s->ready, 1);
		return;
	}
	if (close_fd)
		close(fd);
	atomic_store(&s->ready, 1);
	if (flood(s, idx))
		atomic_store(&s->faulted, 1);
	else if (atomic_load(&sh->cycle))
		cycle(s, fd, idx);
}

static void *sender_thread(void *arg)
{
	struct slot *s = arg;

	sender(s, atomic_load(&sh->fd), 0);
	return NULL;
}

struct round {
	enum scenario sc;
	int receiver_process;	/* else a thread of this process */
	int wait_mode;		/* receiver asleep in uintr_wait() */
	int kill;		/* SIGKILL rather than a clean exit */
	long pre, post;		/* sends before / after the teardown */
};

struct totals {
	long rounds, sent, sent_after, handled, faulted;
	long long ms;
};

static long sum_sent(int after)
{
	long n = 0;

	for (int i = 0; i < SLOTS; i++)
		n += after ? sh->slot[i].sent_after : sh->slot[i].sent;
	return n;
}

static int all_faulted(void)
{
	for (int i = 0; i < SLOTS; i++)
		if (!sh->slot[i].faulted)
			return 0;
	return 1;
}

static int stats_become(struct uintr_stats want)
{
	return uintr_stats_become(&want);
}

static void run_round(struct __test_metadata *_metadata, const struct round *r,
		      struct totals *tot)
{
	enum scenario sc = r->sc;
	int rsv[2] = { -1, -1 }, ssv[2], hsv[2] = { -1, -1 };
	pid_t receiver = -1, sproc, holder = -1;
	pthread_t rthread, sthread[2];
	int fd, status, joined[2] = { 0 };
	struct uintr_stats base;
	long long start = now_ms();
	long handled;
	char c;

	ASSERT_EQ(0, uintr_read_stats(&base));
	memset(sh, 0, sizeof(*sh));
	sh->fd = -1;
	sh->unregister_ret = 1;

	/* Every fork before the first thread. */
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, ssv));
	sproc = uintr_spawn();
	ASSERT_GE(sproc, 0);
	if (sproc == 0) {
		int got = uintr_recv_fd(ssv[1]);

		if (got < 0)
			_exit(1);
		/* Unregister/register needs the fd; the others drop it. */
		sender(&sh->slot[PROC_SLOT], got, sc != UNREGISTER_SENDER);
		_exit(0);
	}
	if (sc == FD_HOLDER_EXITS) {
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, hsv));
		holder = uintr_spawn();
		ASSERT_GE(holder, 0);
		if (holder == 0) {
			int held = uintr_recv_fd(hsv[1]);

			/* Holds it until told to go (or killed). */
			if (held < 0 || write(hsv[1], "h", 1) != 1 ||
			    read(hsv[1], &c, 1) != 1)
				_exit(1);
			_exit(0);
		}
	}
	if (r->receiver_process) {
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, rsv));
		receiver = uintr_spawn();
		ASSERT_GE(receiver, 0);
		if (receiver == 0) {
			int rfd = receiver_setup();

			if (rfd < 0 || uintr_send_fd(rsv[1], rfd))
				_exit(1);
			/* Only this scenario leaves the last fd here. */
			if (sc != RECEIVER_KILLED_LAST_FD)
				close(rfd);
			receive(r->wait_mode);
			_exit(0);
		}
		fd = uintr_recv_fd(rsv[0]);
		ASSERT_GE(fd, 0);
		sh->fd = fd;
	} else {
		ASSERT_EQ(0, pthread_create(&rthread, NULL, receiver_thread,
					    (void *)(long)r->wait_mode));
		ASSERT_TRUE(WAIT_FOR(sh->fd_ready));
		fd = sh->fd;
		ASSERT_GE(fd, 0) TH_LOG("receiver: %s", strerror(-fd));
	}
	ASSERT_EQ(0, uintr_send_fd(ssv[0], fd));
	if (holder > 0) {
		ASSERT_EQ(0, uintr_send_fd(hsv[0], fd));
		ASSERT_EQ(1, read(hsv[0], &c, 1));
	}
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&sthread[i], NULL, sender_thread,
					    &sh->slot[i]));
	ASSERT_TRUE(WAIT_FOR(sh->slot[0].ready && sh->slot[1].ready &&
			     sh->slot[PROC_SLOT].ready));
	for (int i = 0; i < SLOTS; i++) {
		ASSERT_EQ(0, sh->slot[i].error) TH_LOG("sender %d", i);
	}
	/* The receiver process or the holder keeps the last reference. */
	if (sc == RECEIVER_KILLED_LAST_FD || sc == FD_HOLDER_EXITS) {
		close(fd);
		fd = -1;
	}
	ASSERT_TRUE(WAIT_FOR(sum_sent(0) >= r->pre && sh->handled > 0));

	/* The teardown, with the senders sending. */
	atomic_store(&sh->torn, 1);
	switch (sc) {
	case RECEIVER_EXITS:
		sh->receiver_stop = 1;
		if (!r->receiver_process) {
			pthread_join(rthread, NULL);
			break;
		}
		ASSERT_EQ(receiver, waitpid(receiver, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		receiver = -1;
		break;
	case RECEIVER_KILLED:
	case RECEIVER_KILLED_LAST_FD:
		kill(receiver, SIGKILL);
		ASSERT_EQ(receiver, waitpid(receiver, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		receiver = -1;
		break;
	case SENDERS_EXIT:
		sh->slot[0].stop = 1;
		pthread_join(sthread[0], NULL);
		joined[0] = 1;
		if (r->kill)
			kill(sproc, SIGKILL);
		else
			sh->slot[PROC_SLOT].stop = 1;
		ASSERT_EQ(sproc, waitpid(sproc, &status, 0));
		EXPECT_TRUE(r->kill ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL :
			    WIFEXITED(status) && WEXITSTATUS(status) == 0);
		sproc = -1;
		/* Sender 1 is still sending: deliveries go on. */
		handled = sh->handled;
		EXPECT_TRUE(WAIT_FOR(sh->handled > handled));
		break;
	case FD_CLOSED:
		close(fd);
		fd = -1;
		break;
	case FD_HOLDER_EXITS:
		if (r->kill)
			kill(holder, SIGKILL);
		else
			ASSERT_EQ(1, write(hsv[0], "x", 1));
		ASSERT_EQ(holder, waitpid(holder, &status, 0));
		EXPECT_TRUE(r->kill ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL :
			    WIFEXITED(status) && WEXITSTATUS(status) == 0);
		holder = -1;
		break;
	case UNREGISTER_HANDLER:
		sh->receiver_unregister = 1;
		ASSERT_TRUE(WAIT_FOR(sh->unregister_ret != 1));
		EXPECT_EQ(0, sh->unregister_ret);
		break;
	case UNREGISTER_SENDER:
		sh->cycle = 1;
		break;
	}
	if (faults_expected(sc)) {
		EXPECT_TRUE(WAIT_FOR(all_faulted()));
	} else {
		EXPECT_TRUE(WAIT_FOR(sum_sent(1) >= r->post));
	}

	/* Everyone else goes. */
	sh->stop = 1;
	for (int i = 0; i < 2; i++)
		if (!joined[i])
			pthread_join(sthread[i], NULL);
	if (sproc > 0) {
		ASSERT_EQ(sproc, waitpid(sproc, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("sender process: status %#x", status);
	}
	sh->receiver_stop = 1;
	if (receiver > 0) {
		ASSERT_EQ(receiver, waitpid(receiver, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("receiver process: status %#x", status);
	} else if (!r->receiver_process && sc != RECEIVER_EXITS) {
		pthread_join(rthread, NULL);
	}
	if (holder > 0) {
		ASSERT_EQ(1, write(hsv[0], "x", 1));
		ASSERT_EQ(holder, waitpid(holder, &status, 0));
	}
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 2; i++) {
		close(ssv[i]);
		if (rsv[i] >= 0)
			close(rsv[i]);
		if (hsv[i] >= 0)
			close(hsv[i]);
	}

	for (int i = 0; i < SLOTS; i++) {
		EXPECT_EQ(0, sh->slot[i].error) TH_LOG("sender %d", i);
		if (sc == SENDERS_EXIT && i != 1)
			continue;
		EXPECT_EQ(faults_expected(sc), sh->slot[i].faulted)
			TH_LOG("sender %d", i);
	}
	EXPECT_EQ(0, sh->bad_faults);
	if (sc == UNREGISTER_HANDLER) {
		EXPECT_EQ(0, sh->late);
	}
	if (sc == UNREGISTER_SENDER) {
		EXPECT_GT(sh->cycles, 0);
		EXPECT_EQ(0, sh->stale_sent);
		EXPECT_EQ(sh->cycles, sh->stale_faults);
	}
	EXPECT_TRUE(stats_become(base));

	tot->rounds++;
	tot->sent += sum_sent(0);
	tot->sent_after += sum_sent(1);
	tot->handled += sh->handled;
	for (int i = 0; i < SLOTS; i++)
		tot->faulted += sh->slot[i].faulted;
	tot->ms += now_ms() - start;
}

/* Rounds per scenario and sends per round; a debug kernel does fewer. */
#define ROUNDS		64
#define ROUNDS_DEBUG	16
#define PRE_MIN		1000
#define PRE_SPAN	4000
#define POST		4000

static int scenario_rounds(void)
{
	return uintr_debug_kernel() ? ROUNDS_DEBUG : ROUNDS;
}

/* Runs the rounds of one scenario; returns how many completed. */
static long run_scenario(struct __test_metadata *_metadata, enum scenario sc)
{
	struct sigaction sa = {
		.sa_sigaction = on_segv,
		/* No mask to restore after siglongjmp: sigsetjmp(env, 0). */
		.sa_flags = SA_SIGINFO | SA_NODEFER,
	};
	int rounds = scenario_rounds();
	unsigned int seed0 = time(NULL) ^ getpid(), seed = seed0;
	struct totals tot = { 0 };

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL))
		return -1;
	for (int i = 0; i < rounds && _metadata->exit_code != KSFT_FAIL; i++) {
		/* Bits of i pick the receiver, its sleep and the kill. */
		struct round r = {
			.sc = sc,
			.receiver_process = sc == RECEIVER_KILLED ||
					    sc == RECEIVER_KILLED_LAST_FD || (i & 1),
			.wait_mode = !!(i & 2),
			.kill = !!(i & 4) == !(i & 1),
			.pre = PRE_MIN + rand_r(&seed) % PRE_SPAN,
			.post = POST,
		};

		run_round(_metadata, &r, &tot);
	}
	printf("# %s: %ld rounds in %lld ms (seed %u), %ld SENDUIPIs, %ld of them after the teardown began, %ld delivered, %ld senders faulted\n",
	       scenario_name[sc], tot.rounds, tot.ms, seed0, tot.sent,
	       tot.sent_after, tot.handled, tot.faulted);
	return tot.rounds;
}

/* One variant per scenario (more than the default 30 s under TCG). */
FIXTURE(teardown) {};
FIXTURE_VARIANT(teardown) {
	enum scenario sc;
};
FIXTURE_SETUP(teardown) {}
FIXTURE_TEARDOWN(teardown) {}

FIXTURE_VARIANT_ADD(teardown, receiver_exits_first) { .sc = RECEIVER_EXITS };
FIXTURE_VARIANT_ADD(teardown, receiver_process_killed) { .sc = RECEIVER_KILLED };
FIXTURE_VARIANT_ADD(teardown, receiver_process_killed_holding_the_last_fd) {
	.sc = RECEIVER_KILLED_LAST_FD
};
FIXTURE_VARIANT_ADD(teardown, senders_exit_first) { .sc = SENDERS_EXIT };
FIXTURE_VARIANT_ADD(teardown, fd_closed_first) { .sc = FD_CLOSED };
FIXTURE_VARIANT_ADD(teardown, fd_holder_process_exits_first) { .sc = FD_HOLDER_EXITS };
FIXTURE_VARIANT_ADD(teardown, unregister_handler_while_senders_send) {
	.sc = UNREGISTER_HANDLER
};
FIXTURE_VARIANT_ADD(teardown, unregister_sender_while_others_send) {
	.sc = UNREGISTER_SENDER
};

TEST_F_TIMEOUT(teardown, every_round_cleans_up, 300)
{
	EXPECT_EQ(scenario_rounds(), run_scenario(_metadata, variant->sc));
}

TEST_HARNESS_MAIN
