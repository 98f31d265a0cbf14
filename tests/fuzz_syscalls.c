// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall fuzzer: a seeded random sequence of every uintr system call with
 * random and boundary arguments (flag bits, vectors -1/64/2^63, fds of
 * other types, closed fds, handlers NULL/kernel/non-canonical/unmapped,
 * timeouts bad and good, the shared table flag, ipi fds and their ioctl,
 * the uintr_fd ioctls (mask, unmask, revoke) on any fd, uintr_pending()
 * into good and bad buffers), interleaved with close, dup, fork, exec and
 * thread exit, from several threads in several processes.  Every return
 * value must be one the man pages allow for that call, and once everything
 * has exited the live-object counters must be back where they started.
 *
 * The connection limits are set low for the run, so that the calls that
 * connect hit them often: no fd's or receiver's fdinfo may ever show more
 * connections than its limit, nor the live counters more than the user's.
 *
 * UINTR_FUZZ_SEED and UINTR_FUZZ_CALLS (environment) reproduce or
 * lengthen a run; the seed is printed first.  The debug kernel makes a
 * quarter of the calls by default (110 s for all of them).
 */
#include "uintr_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"


#define PROCS		2
#define THREADS		4
#define DEFAULT_CALLS	1000000L
#define DEFAULT_CALLS_DEBUG 250000L
#define POOL		16

/* The connection limits during the run (see limits.c). */
#define FD_ROOM		2
#define RECEIVER_ROOM	3
#define USER_ROOM	16

static UINTR_HANDLER(fuzz_handler)
{
}

/* xorshift64*: small, seedable, good enough to pick arguments. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static uint64_t pick(uint64_t *s, uint64_t n)
{
	return next(s) % n;
}

static uint64_t some_flags(uint64_t *s)
{
	switch (pick(s, 6)) {
	case 0: case 1: return 0;
	case 2: return 1u << pick(s, 32);
	case 3: return UINTR_HANDLER_FLAG_INTERRUPT_SLEEP |
		       (pick(s, 2) ? UINTR_HANDLER_FLAG_RESTART : 0);
	case 4: return ~0u;
	default: return next(s);
	}
}

static void *some_handler(uint64_t *s)
{
	static const uint64_t bad[] = {
		0, 0x1000, 0xffffffff81000000ull, 0x4000000000000000ull,
		0x0000800000000000ull, ~0ull, 0x00007ffffffff000ull,
	};

	if (pick(s, 3))
		return (void *)fuzz_handler;
	return (void *)bad[pick(s, sizeof(bad) / sizeof(bad[0]))];
}

static uint64_t some_vector(uint64_t *s)
{
	static const uint64_t odd[] = { -1ull, 64, 65, 1ull << 63, 1ull << 32, 255 };

	if (pick(s, 4))
		return pick(s, 64);
	return odd[pick(s, sizeof(odd) / sizeof(odd[0]))];
}

enum op { OP_REG, OP_UNREG, OP_CREATE, OP_SEND_REG, OP_SEND_UNREG, OP_WAIT,
	  OP_CLOSE, OP_DUP, OP_SELF, OP_ALT_STACK, OP_IPI_FD, OP_SET_TABLE,
	  OP_FD_CTL, OP_PENDING, OP_FDINFO, OPS };

struct fuzzer {
	uint64_t seed;
	long calls;
	int fds[POOL];		/* uintr_fds, other fds, closed numbers */
	int pipe_fd;
	long count[OPS], succeeded[OPS];
	long enospc, emfile;	/* connections refused by a limit */
	char failure[256];
};

static int some_fd(struct fuzzer *f, uint64_t *s)
{
	switch (pick(s, 8)) {
	case 0: return -1;
	case 1: return f->pipe_fd;
	case 2: return 1000000;
	case 3: return (int)next(s);
	default: return f->fds[pick(s, POOL)];
	}
}

static void remember_fd(struct fuzzer *f, uint64_t *s, int fd)
{
	int slot = pick(s, POOL);

	if (f->fds[slot] > 2 && f->fds[slot] != f->pipe_fd && !pick(s, 2))
		close(f->fds[slot]);
	f->fds[slot] = fd;
}

/* Whether ret/err is a success (if may_succeed) or one of the errors ok. */
static int allowed(long ret, int err, int may_succeed, const int *ok)
{
	if (ret >= 0)
		return may_succeed;
	for (; *ok >= 0; ok++)
		if (*ok == err)
			return 1;
	return 0;
}

/* The errors each call may return (man pages), -1 terminated. */
static const int reg_errs[] = { EINVAL, EFAULT, EBUSY, ENOMEM, -1 };
static const int unreg_errs[] = { EINVAL, -1 };
static const int create_errs[] = { EINVAL, EBUSY, EMFILE, ENFILE, ENOMEM, -1 };
static const int sreg_errs[] = { EINVAL, EBADF, EBUSY, EOPNOTSUPP, EISCONN,
				 ESHUTDOWN, ENOSPC, EMFILE, ENOMEM, -1 };
static const int sunreg_errs[] = { EINVAL, EBADF, EOPNOTSUPP, -1 };
static const int wait_errs[] = { EINTR, ETIMEDOUT, EFAULT, EINVAL, ENOMEM, EOPNOTSUPP,
				 -1 };
static const int self_errs[] = { EINVAL, EBUSY, ENOSPC, EMFILE, ENOMEM, EOPNOTSUPP,
				 -1 };
static const int alt_errs[] = { EINVAL, EOPNOTSUPP, -1 };
static const int ipi_errs[] = { EINVAL, EMFILE, ENFILE, ENOMEM, -1 };
static const int set_table_errs[] = { EBADF, EBUSY, ENOTTY, -1 };
static const int fd_ctl_errs[] = {
	EBADF, ENOTTY, EPERM, EINVAL, EFAULT, EEXIST, ENOENT, ENOSPC, EMFILE,
	ESHUTDOWN, -1
};
static const int pending_errs[] = { EINVAL, EFAULT, EOPNOTSUPP, -1 };

/*
 * A uintr_fd ioctl (or one no file knows) and its argument; a watch names
 * a small descriptor (often one of the fuzzer's own files) with random
 * events and, now and then, flags.
 */
static long fd_ctl(int fd, uint64_t *s)
{
	static const unsigned long cmds[] = {
		UINTR_FD_MASK, UINTR_FD_UNMASK, UINTR_FD_REVOKE, _IO('u', 7),
		_IOW('u', 1, int), UINTR_FD_WATCH, UINTR_FD_UNWATCH,
	};
	static struct uintr_watch w;
	unsigned long cmd = cmds[pick(s, sizeof(cmds) / sizeof(cmds[0]))];
	unsigned long arg;

	switch (pick(s, 5)) {
	case 0: case 1: arg = 0; break;
	case 2: arg = getpid(); break;
	case 3: arg = getppid(); break;
	default: arg = next(s); break;
	}
	if (cmd == UINTR_FD_WATCH && pick(s, 4)) {
		w.fd = pick(s, 24) - 1;
		w.events = pick(s, 2) ? 1u << pick(s, 32) : (unsigned int)next(s);
		w.flags = pick(s, 8) ? 0 : next(s);
		arg = (unsigned long)&w;
	} else if (cmd == UINTR_FD_UNWATCH && pick(s, 4)) {
		arg = pick(s, 24) - 1;
	}
	return ioctl(fd, cmd, arg);
}

/* Flags of the calls that connect: mostly 0, often the shared table. */
static uint64_t sender_flags(uint64_t *s)
{
	switch (pick(s, 8)) {
	case 0: return some_flags(s);
	case 1: case 2: return UINTR_SENDER_SHARED;
	default: return 0;
	}
}
static const int close_errs[] = { EBADF, -1 };

/* The value of field key in fdinfo text; -1 if it has none. */
static long field(const char *text, const char *key)
{
	const char *at = strstr(text, key);

	return at ? strtol(at + strlen(key), NULL, 0) : -1;
}

/*
 * If fd is a uintr_fd, whether its fdinfo shows the limits held: 0, or
 * -1 with f->failure filled.  Other fds (and no fd) pass.
 */
static int check_fdinfo(struct fuzzer *f, int fd)
{
	char path[64], text[2048];
	long senders, receiver_senders;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (fd < 0 || uintr_read_file(path, text, sizeof(text)))
		return 0;
	senders = field(text, "uintr_senders:");
	receiver_senders = field(text, "uintr_receiver_senders:");
	if (senders <= FD_ROOM && receiver_senders <= RECEIVER_ROOM)
		return 0;
	snprintf(f->failure, sizeof(f->failure),
		 "fd %d has %ld senders, its receiver %ld: over the limits", fd,
		 senders, receiver_senders);
	return -1;
}
static const int dup_errs[] = { EBADF, EMFILE, -1 };

/* One random call; returns 0, or -1 with f->failure filled. */
static int one_call(struct fuzzer *f, uint64_t *s)
{
	enum op op = pick(s, OPS);
	struct __kernel_timespec ts = { 0, 0 };
	int may_succeed = 1;
	const int *ok;
	const void *tp;
	long ret;
	int err, fd;

	f->count[op]++;
	switch (op) {
	case OP_REG:
		ret = uintr_register_handler(some_handler(s), some_flags(s));
		ok = reg_errs;
		break;
	case OP_UNREG:
		ret = uintr_unregister_handler(pick(s, 4) ? 0 : some_flags(s));
		ok = unreg_errs;
		break;
	case OP_CREATE:
		ret = uintr_create_fd(some_vector(s), pick(s, 4) ? 0 : some_flags(s));
		ok = create_errs;
		if (ret >= 0)
			remember_fd(f, s, ret);
		break;
	case OP_SEND_REG:
		ret = uintr_register_sender(some_fd(f, s), sender_flags(s));
		ok = sreg_errs;
		break;
	case OP_SEND_UNREG:
		ret = uintr_unregister_sender(some_fd(f, s), pick(s, 4) ? 0 : some_flags(s));
		ok = sunreg_errs;
		break;
	case OP_WAIT:
		/* Never an unbounded sleep: a zero timeout, or bad arguments. */
		switch (pick(s, 4)) {
		case 0: tp = &ts; break;
		case 1: tp = NULL; break;
		case 2: tp = (void *)0xffffffff81000000ull; break;
		default: tp = (void *)1; break;
		}
		if (pick(s, 8)) {
			ret = uintr_wait(UINTR_WAIT_TIMEOUT, tp);
		} else {
			uint64_t fl = some_flags(s) | 4;

			ret = uintr_wait(fl, tp);
		}
		/* uintr_wait() never succeeds. */
		may_succeed = 0;
		ok = wait_errs;
		break;
	case OP_SELF:
		ret = uintr_register_self(some_vector(s), sender_flags(s));
		ok = self_errs;
		break;
	case OP_ALT_STACK:
		/* Nothing is ever delivered here: any stack is harmless. */
		ret = uintr_alt_stack(pick(s, 4) ? (void *)&ts : some_handler(s),
				      pick(s, 4) ? 4096 : next(s),
				      pick(s, 4) ? 0 : some_flags(s));
		ok = alt_errs;
		break;
	case OP_IPI_FD:
		ret = uintr_ipi_fd(pick(s, 4) ? 0 : some_flags(s));
		ok = ipi_errs;
		if (ret >= 0)
			remember_fd(f, s, ret);
		break;
	case OP_SET_TABLE:
		/*
		 * Any fd but stdin/stdout/stderr (a terminal); now and then
		 * a request an ipi fd does not know.
		 */
		fd = some_fd(f, s);
		ret = fd > 2 || fd < 0 ?
			ioctl(fd, pick(s, 8) ? UIPI_SET_TARGET_TABLE : _IO('u', 4 + pick(s, 4)),
			      next(s)) : 0;
		ok = set_table_errs;
		break;
	case OP_FD_CTL:
		/* As OP_SET_TABLE: never a terminal. */
		fd = some_fd(f, s);
		ret = fd > 2 || fd < 0 ? fd_ctl(fd, s) : 0;
		ok = fd_ctl_errs;
		break;
	case OP_PENDING: {
		unsigned long long set;

		switch (pick(s, 4)) {
		case 0: tp = NULL; break;
		case 1: tp = (void *)0xffffffff81000000ull; break;
		default: tp = &set; break;
		}
		ret = uintr_pending((void *)tp, pick(s, 2) ? UINTR_PENDING_TAKE :
					   pick(s, 2) ? 0 : some_flags(s));
		ok = pending_errs;
		break;
	}
	case OP_FDINFO:
		ret = check_fdinfo(f, some_fd(f, s));
		if (ret)
			return -1;
		ok = close_errs;
		break;
	case OP_CLOSE:
		/* Not stdin/stdout/stderr: the results go there. */
		fd = some_fd(f, s);
		ret = fd > 2 || fd < 0 ? close(fd) : 0;
		ok = close_errs;
		break;
	case OP_DUP:
	default:
		ret = dup(some_fd(f, s));
		ok = dup_errs;
		if (ret >= 0)
			remember_fd(f, s, ret);
		break;
	}
	err = errno;
	if (ret >= 0)
		f->succeeded[op]++;
	else if ((op == OP_SEND_REG || op == OP_SELF) && err == ENOSPC)
		f->enospc++;
	else if ((op == OP_SEND_REG || op == OP_SELF) && err == EMFILE)
		f->emfile++;
	if (allowed(ret, err, may_succeed, ok))
		return 0;
	snprintf(f->failure, sizeof(f->failure), "op %d returned %ld (%s)",
		 op, ret, ret < 0 ? strerror(err) : "success not allowed");
	return -1;
}

static void *fuzz_thread(void *arg)
{
	struct fuzzer *f = arg;
	uint64_t s = f->seed | 1;

	if (pipe(f->fds) == 0)
		f->pipe_fd = f->fds[0];
	for (long i = 0; i < f->calls; i++) {
		if (one_call(f, &s))
			return f;
		/* Now and then a child inherits this state and leaves. */
		if (pick(&s, 5000) == 0) {
			pid_t pid = fork();

			if (pid == 0) {
				uint64_t cs = s ^ 0x9e3779b97f4a7c15ull;

				for (int j = 0; j < 50; j++)
					if (one_call(f, &cs))
						_exit(1);
				if (pick(&cs, 2))
					execl("/bin/true", "true", (char *)NULL);
				_exit(0);
			}
			if (pid > 0)
				waitpid(pid, NULL, 0);
		}
	}
	return NULL;
}

/* One process: THREADS fuzzing threads; exit status 0 if all was allowed. */
static int fuzz_process(uint64_t seed, long calls)
{
	struct fuzzer f[THREADS];
	pthread_t t[THREADS];
	int bad = 0;

	for (int i = 0; i < THREADS; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		for (int j = 0; j < POOL; j++)
			f[i].fds[j] = -1;
		f[i].seed = seed + 0x1000193 * (i + 1);
		f[i].calls = calls / THREADS;
		if (pthread_create(&t[i], NULL, fuzz_thread, &f[i]))
			return 2;
	}
	for (int i = 0; i < THREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		if (r) {
			printf("# thread %d (seed %llu): %s\n", i,
			       (unsigned long long)f[i].seed, f[i].failure);
			bad = 1;
		}
		printf("# thread %d calls/successes: reg %ld/%ld unreg %ld/%ld create %ld/%ld sreg %ld/%ld sunreg %ld/%ld wait %ld close %ld/%ld dup %ld/%ld self %ld/%ld alt %ld/%ld ipi %ld/%ld settable %ld/%ld fdctl %ld/%ld pending %ld/%ld; refused: ENOSPC %ld EMFILE %ld\n",
		       i, f[i].count[0], f[i].succeeded[0], f[i].count[1], f[i].succeeded[1],
		       f[i].count[2], f[i].succeeded[2], f[i].count[3], f[i].succeeded[3],
		       f[i].count[4], f[i].succeeded[4], f[i].count[5],
		       f[i].count[6], f[i].succeeded[6], f[i].count[7], f[i].succeeded[7],
		       f[i].count[8], f[i].succeeded[8], f[i].count[9], f[i].succeeded[9],
		       f[i].count[10], f[i].succeeded[10], f[i].count[11], f[i].succeeded[11],
		       f[i].count[12], f[i].succeeded[12], f[i].count[13], f[i].succeeded[13],
		       f[i].enospc, f[i].emfile);
	}
	fflush(stdout);
	return bad;
}

/* Watches the live connections while the fuzzers run: the most seen. */
static atomic_int watching;
static long most_connections;

static void *watch_connections(void *arg)
{
	struct uintr_stats now;

	while (atomic_load(&watching)) {
		if (uintr_read_stats(&now) == 0 && now.connections > most_connections)
			most_connections = now.connections;
		usleep(2000);
	}
	return NULL;
}

/* The limits as they were before the run, put back after it. */
FIXTURE(slow) {
	struct uintr_limits saved;
};

FIXTURE_SETUP(slow)
{
	ASSERT_EQ(0, uintr_limits_save(&self->saved));
}

FIXTURE_TEARDOWN(slow)
{
	EXPECT_EQ(0, uintr_limits_restore(&self->saved));
}

TEST_F_TIMEOUT(slow, random_calls_get_documented_answers, 1200)
{
	const char *env_seed = getenv("UINTR_FUZZ_SEED");
	const char *env_calls = getenv("UINTR_FUZZ_CALLS");
	uint64_t seed = env_seed ? strtoull(env_seed, NULL, 0) : (uint64_t)time(NULL);
	long calls = env_calls ? atol(env_calls) :
		     uintr_debug_kernel() ? DEFAULT_CALLS_DEBUG : DEFAULT_CALLS;
	struct uintr_stats before, after;
	pthread_t watcher;
	pid_t pid[PROCS];
	int failed = 0;

	printf("# seed %llu, %ld calls in %d processes x %d threads\n",
	       (unsigned long long)seed, calls, PROCS, THREADS);
	fflush(stdout);
	ASSERT_EQ(0, uintr_read_stats(&before));
	/* Every live connection is root's: the guest runs nothing else. */
	ASSERT_EQ(0, uintr_write_long(UINTR_FD_LIMIT, FD_ROOM));
	ASSERT_EQ(0, uintr_write_long(UINTR_RECEIVER_LIMIT, RECEIVER_ROOM));
	ASSERT_EQ(0, uintr_write_long(UINTR_USER_LIMIT, before.connections + USER_ROOM));
	most_connections = before.connections;
	atomic_store(&watching, 1);
	ASSERT_EQ(0, pthread_create(&watcher, NULL, watch_connections, NULL));
	for (int p = 0; p < PROCS; p++) {
		pid[p] = fork();
		ASSERT_GE(pid[p], 0);
		if (pid[p] == 0)
			_exit(fuzz_process(seed * (p + 1), calls / PROCS));
	}
	for (int p = 0; p < PROCS; p++) {
		int status;

		ASSERT_EQ(pid[p], waitpid(pid[p], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	atomic_store(&watching, 0);
	pthread_join(watcher, NULL);
	EXPECT_EQ(0, failed);
	printf("# at most %ld live connections (user limit %ld)\n", most_connections,
	       before.connections + USER_ROOM);
	EXPECT_LE(most_connections, before.connections + USER_ROOM);
	ASSERT_EQ(0, uintr_read_stats(&after));
	uintr_stats_print("before", &before);
	uintr_stats_print("after", &after);
	EXPECT_TRUE(uintr_stats_equal(&before, &after));
}

TEST_HARNESS_MAIN
