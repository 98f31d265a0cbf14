// SPDX-License-Identifier: GPL-2.0
/*
 * ipc_bench: round-trip latency of a 1-byte ping-pong between two parties,
 * for user IPIs and the usual IPC mechanisms, as in the table of the UINTR
 * RFC (User IPI 1.0, eventfd 9.7x, signal 14.8x, pipe 16.3x, Unix socket
 * 17.3x).
 *
 * Build:
 *   gcc -O2 -static -pthread -Wall -Wextra -Wno-unused-parameter -Werror \
 *       -muintr -I build/obj-headers/usr/include -o ipc_bench bench/ipc_bench.c
 * (the patched kernel's `make headers`: <linux/uintr.h> and __NR_uintr_*).
 *
 * Party A sends a ping and waits for the pong; party B waits for the ping
 * and answers it.  A times every round trip with CLOCK_MONOTONIC.  A is
 * pinned to the first usable CPU and B to the second, so every message
 * crosses CPUs, as in the RFC's measurements.
 *
 * Each row runs in a child process watched by the main process: a row that
 * makes no progress for -t seconds is killed and reported, so a broken
 * mechanism (a lost user IPI, say) cannot hang the benchmark, and a crash
 * costs one row, not the run.  The samples come back in a MAP_SHARED
 * mapping, which also serves the two parties when they are processes.
 *
 * Without UINTR (a kernel without the system calls: ENOSYS; uintr=off:
 * EOPNOTSUPP; the instructions raising SIGILL) the uintr rows are reported
 * as skipped and the ratios are taken against the fastest round-trip row.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86gprintrin.h>

#include <linux/uintr.h>

#define DEFAULT_ITERATIONS	100000L
#define DEFAULT_WARMUP		1000L
#define DEFAULT_STALL_S		10
/* Keeps the futex/shm-spin sequence number (2 per round trip) in an int. */
#define MAX_ITERATIONS		100000000L
#define MAX_JOBS		32
#define CACHELINE		64
#define NAME_LEN		32
#define NOTE_LEN		320

#define PARTY_A			0
#define PARTY_B			1

#define NSEC_PER_SEC		1000000000ULL

#define load_acquire(p)		__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

/* ---- UINTR system calls (glibc has no wrappers) ---- */

static inline long uintr_register_handler(void *handler, unsigned int flags)
{
	return syscall(__NR_uintr_register_handler, handler, flags);
}

static inline long uintr_unregister_handler(unsigned int flags)
{
	return syscall(__NR_uintr_unregister_handler, flags);
}

static inline long uintr_create_fd(unsigned long long vector, unsigned int flags)
{
	return syscall(__NR_uintr_create_fd, vector, flags);
}

static inline long uintr_register_sender(int fd, unsigned int flags)
{
	return syscall(__NR_uintr_register_sender, fd, flags);
}

static inline long uintr_wait(unsigned int flags, const void *timeout,
			      const volatile unsigned long *word,
			      unsigned long expected)
{
	return syscall(__NR_uintr_wait, flags, timeout, word, expected);
}

static inline long uintr_unregister_sender(int fd, unsigned int flags)
{
	return syscall(__NR_uintr_unregister_sender, fd, flags);
}

/* ---- state shared by the main process, a row and its two parties ---- */

/*
 * One MAP_SHARED mapping per row.  The words that the parties poll or
 * bounce between CPUs sit on their own cache lines so that the spinning
 * rows measure one line transfer per message, not false sharing.
 */
struct row_shm {
	/* Round trips done by A (warm-up included); the watchdog polls it. */
	long progress __attribute__((aligned(CACHELINE)));

	/* The first failure claims the message; failed says it is complete. */
	int claimed __attribute__((aligned(CACHELINE)));
	int failed;
	char error[256];

	int arrived;		/* start barrier */
	int done;		/* senduipi-cost: A has finished sending */
	pid_t pid[2], tid[2];	/* the parties: tgkill's target, stall dumps */

	/* futex and shm-spin: 2i+1 is ping i, 2i+2 is its pong. */
	int seq __attribute__((aligned(CACHELINE)));

	/* tick rows: work units done again because the tick missed them */
	long redone;

	uint64_t samples[] __attribute__((aligned(CACHELINE)));
};

struct mech;

/* A row as its process sees it; fork copies it to party B's process. */
struct row {
	const struct mech *m;
	bool procs;		/* parties are processes, not threads */
	bool one_cpu;		/* both parties share a CPU: spinning yields */
	long iterations, warmup;
	int cpu[2];
	int tx[2], rx[2];	/* byte streams: what each party writes/reads */
	int sock[2];		/* uintr: exchanges the uintr_fds */
	sigset_t sigs;		/* signal: the blocked ping-pong signal */
	struct row_shm *sh;
};

struct party {
	struct row *r;
	int me;			/* PARTY_A or PARTY_B */
	int ufd;		/* uintr: own uintr_fd (receiver side) */
	int peer_ufd;		/* uintr: the other party's (sender side) */
	long uitt;		/* uintr: UITT index for SENDUIPI */
	int epfd;		/* epoll-eventfd: own epoll instance */
	int tfd;		/* timer rows: the timerfd */
	timer_t timer;		/* timer-signal, tick-signal: the POSIX timer */
	unsigned long expiries;	/* timer rows: expiries seen so far */
};

#define MECH_UINTR	0x1	/* needs user interrupts */
#define MECH_ONE_WAY	0x2	/* times one send, not a round trip */
#define MECH_SLEEPS	0x4	/* uintr: the waiting party blocks in uintr_wait() */
/*
 * What the feature costs tasks that do not use it (make bench-overhead):
 * not IPC, so not in "all" and without a ratio.
 */
#define MECH_OVERHEAD	0x8
#define MECH_ONE_CPU	0x10	/* both parties on the first CPU */
#define MECH_THREADS	0x20	/* threads only: not in "all-proc" */
#define MECH_CLUI	0x40	/* uintr: waits between CLUI and STUI */
/*
 * A timer's expiry, not a message: the sample is the time from the
 * expiry to the thread that learns of it (MECH_EXPIRY), or what one
 * tick costs a computation it interrupts (MECH_TICK); one party only.
 */
#define MECH_EXPIRY	0x80
#define MECH_TICK	0x100
#define MECH_TIMER	(MECH_EXPIRY | MECH_TICK)
#define MECH_SIGNAL	0x200	/* timer rows: a POSIX timer and SIGALRM */

/*
 * A mechanism: setup runs once in the row process before the parties
 * start; init and fini run in each party on its CPU; A calls ping (timed)
 * and B calls pong once per round trip.
 */
struct mech {
	const char *name;
	unsigned int flags;
	size_t msg_len;
	void (*setup)(struct row *r);
	void (*init)(struct party *p);
	void (*ping)(struct party *p, long i);
	void (*pong)(struct party *p, long i);
	void (*fini)(struct party *p);
	/* Timer rows: one sample of A (ns), instead of timing ping. */
	uint64_t (*sample)(struct party *p, long i);
	const char *what;
};

/* The row being run by this process, for fail(). */
static struct row_shm *cur_shm;

/*
 * Records the first error of a row and ends the calling process (with
 * threads, both parties).  The watchdog in the main process sees `failed',
 * kills what is left of the row and prints the message.
 */
static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	struct row_shm *sh = cur_shm;
	va_list ap;

	if (!__atomic_exchange_n(&sh->claimed, 1, __ATOMIC_ACQ_REL)) {
		va_start(ap, fmt);
		vsnprintf(sh->error, sizeof(sh->error), fmt, ap);
		va_end(ap);
		store_release(&sh->failed, 1);
	}
	_exit(2);
}

#define fail_errno(what)	fail("%s: %s", what, strerror(errno))

/* ---- small helpers ---- */

/* CLOCK_MONOTONIC cannot fail once main() has checked that it works. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* One iteration of a busy wait: on a shared CPU the peer needs it. */
static inline void relax(const struct row *r)
{
	if (r->one_cpu)
		sched_yield();
	else
		__asm__ volatile("pause" ::: "memory");
}

static void xwrite(int fd, const void *buf, size_t len, const char *what)
{
	ssize_t n;

	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		fail_errno(what);
	if ((size_t)n != len)
		fail("%s: short write (%zd of %zu bytes)", what, n, len);
}

static void xread(int fd, void *buf, size_t len, const char *what)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		fail_errno(what);
	if (n == 0)
		fail("%s: unexpected end of file", what);
	if ((size_t)n != len)
		fail("%s: short read (%zd of %zu bytes)", what, n, len);
}

static void pin(int cpu, int me)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("sched_setaffinity(CPU %d) for party %c: %s", cpu,
		     'A' + me, strerror(errno));
}

/* Both parties ready; yields because the peer may still be setting up. */
static void start_barrier(struct row_shm *sh)
{
	__atomic_add_fetch(&sh->arrived, 1, __ATOMIC_ACQ_REL);
	while (load_acquire(&sh->arrived) < 2)
		sched_yield();
}

static long futex(int *uaddr, int op, int val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* Private futexes are cheaper but only work inside one process. */
static int futex_flags(const struct row *r)
{
	return r->procs ? 0 : FUTEX_PRIVATE_FLAG;
}

static void futex_post(int *word, int val, int flags)
{
	store_release(word, val);
	if (futex(word, FUTEX_WAKE | flags, 1) < 0)
		fail_errno("futex(FUTEX_WAKE)");
}

static void futex_await(int *word, int want, int flags)
{
	int v;

	while ((v = load_acquire(word)) != want) {
		/* EAGAIN: the word changed before we slept; look again. */
		if (futex(word, FUTEX_WAIT | flags, v) < 0 &&
		    errno != EAGAIN && errno != EINTR)
			fail_errno("futex(FUTEX_WAIT)");
	}
}

static void spin_await(const struct row *r, int *word, int want)
{
	while (load_acquire(word) != want)
		relax(r);
}

/* Passes an fd over a Unix socket (SCM_RIGHTS): works across processes. */
static void send_fd(int sock, int fd)
{
	char data = 'u';
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &msg, 0) != 1)
		fail_errno("sendmsg(SCM_RIGHTS)");
}

static int recv_fd(int sock)
{
	char data;
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;
	ssize_t n;
	int fd;

	n = recvmsg(sock, &msg, 0);
	if (n < 0)
		fail_errno("recvmsg(SCM_RIGHTS)");
	c = CMSG_FIRSTHDR(&msg);
	if (n != 1 || !c || c->cmsg_type != SCM_RIGHTS)
		fail("recvmsg(SCM_RIGHTS): no fd received");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* ---- uintr-spin and senduipi-cost ---- */

/* Vector of each party's uintr_fd; the handler counts per vector. */
static const int uintr_vector[2] = { 1, 2 };

/* Written only by the handler, read by the spinning main loop. */
static struct {
	volatile unsigned long n;
} __attribute__((aligned(CACHELINE))) uintr_hits[UINTR_MAX_VECTORS];

/*
 * Runs with UIF = 0 and returns with UIRET.  It may only touch
 * general-purpose registers (the interrupted code's vector state is not
 * saved), hence no libc: it bumps the counter of its vector, which also
 * tells the two parties' handlers apart when they share a process.
 */
static void __attribute__((interrupt, target("general-regs-only")))
uintr_handler(struct __uintr_frame *frame, unsigned long long vector)
{
	uintr_hits[vector & (UINTR_MAX_VECTORS - 1)].n++;
}

static void uintr_setup(struct row *r)
{
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, r->sock))
		fail_errno("socketpair");
}

/* Becomes a receiver and hands the new uintr_fd to the peer. */
static void uintr_receiver(struct party *p)
{
	if (uintr_register_handler(uintr_handler, 0) < 0)
		fail_errno("uintr_register_handler");
	p->ufd = uintr_create_fd(uintr_vector[p->me], 0);
	if (p->ufd < 0)
		fail_errno("uintr_create_fd");
	send_fd(p->r->sock[p->me], p->ufd);
}

/* Connects to the peer's uintr_fd; the UITT index is per thread. */
static void uintr_sender(struct party *p)
{
	p->peer_ufd = recv_fd(p->r->sock[p->me]);
	p->uitt = uintr_register_sender(p->peer_ufd, 0);
	if (p->uitt < 0)
		fail_errno("uintr_register_sender");
}

static void uintr_spin_init(struct party *p)
{
	uintr_receiver(p);
	uintr_sender(p);
	_stui();
}

/*
 * Waits until the handler has counted `want` requests.  uintr-spin spins
 * in user space with UIF = 1: the handler interrupts the loop.
 * uintr-wait sleeps in uintr_wait() and the kernel vector wakes it, with
 * UIF = 1 throughout: a request handled just before the call has changed
 * the count, so UINTR_WAIT_VALUE makes the call return at once
 * (EAGAIN) instead of sleeping until the next one; the handler of the
 * request that ends the sleep runs on the way out of the call.
 * uintr-wait-clui closes that race the older way, clearing UIF around the
 * look and the wait, so that such a request stays pending (the call then
 * returns at once); STUI runs the handler.
 */
static void uintr_await(const struct party *p, unsigned long want)
{
	const volatile unsigned long *n = &uintr_hits[uintr_vector[p->me]].n;

	if (!(p->r->m->flags & MECH_SLEEPS)) {
		while (*n < want)
			relax(p->r);
		return;
	}
	if (!(p->r->m->flags & MECH_CLUI)) {
		unsigned long seen;

		while ((seen = *n) < want)
			if (uintr_wait(UINTR_WAIT_VALUE, NULL, n, seen) < 0 &&
			    errno != EINTR && errno != EAGAIN)
				fail_errno("uintr_wait");
		return;
	}
	while (*n < want) {
		_clui();
		if (*n < want && uintr_wait(0, NULL, NULL, 0) < 0 &&
		    errno != EINTR)
			fail_errno("uintr_wait");
		_stui();
	}
}

static void uintr_ping(struct party *p, long i)
{
	_senduipi(p->uitt);
	uintr_await(p, i + 1);
}

static void uintr_pong(struct party *p, long i)
{
	uintr_await(p, i + 1);
	_senduipi(p->uitt);
}

static void uintr_fini(struct party *p)
{
	if (p->peer_ufd >= 0) {
		if (uintr_unregister_sender(p->peer_ufd, 0) < 0)
			fail_errno("uintr_unregister_sender");
		close(p->peer_ufd);
	}
	if (p->ufd >= 0) {
		_clui();
		close(p->ufd);
		if (uintr_unregister_handler(0) < 0)
			fail_errno("uintr_unregister_handler");
	}
}

/*
 * senduipi-cost: what one SENDUIPI costs the sender.  B is a receiver with
 * UIF = 0 that blocks in the kernel, so its UPID has SN set: every send
 * only posts the vector (coalescing in PIR) and notifies nobody.  The
 * warm-up covers the moment before B has gone to sleep.
 */
static void cost_init(struct party *p)
{
	if (p->me == PARTY_A) {
		uintr_sender(p);
	} else {
		uintr_receiver(p);
		_clui();
	}
}

static void cost_send(struct party *p, long i)
{
	_senduipi(p->uitt);
}

static void cost_fini(struct party *p)
{
	struct row_shm *sh = p->r->sh;

	/* Shared futex: works for threads and processes alike. */
	if (p->me == PARTY_A) {
		uintr_fini(p);
		futex_post(&sh->done, 1, 0);
	} else {
		futex_await(&sh->done, 1, 0);
		uintr_fini(p);
	}
}

/* ---- the IPI floor: membarrier(2) ---- */

/*
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED interrupts each other CPU that runs a
 * thread of the process and returns once every one has run the barrier:
 * with B spinning in user space on the other CPU, one call is one IPI
 * round trip from user space, the least a cross-CPU wakeup costs here.
 * Threads only: a CPU that runs another process gets no IPI.
 */
static void membarrier_setup(struct row *r)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		fail_errno("membarrier(REGISTER_PRIVATE_EXPEDITED)");
}

static void membarrier_ping(struct party *p, long i)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		fail_errno("membarrier(PRIVATE_EXPEDITED)");
}

/* B keeps its CPU in the process, in user space, until A is done. */
static void membarrier_fini(struct party *p)
{
	struct row_shm *sh = p->r->sh;

	if (p->me == PARTY_A) {
		store_release(&sh->done, 1);
		return;
	}
	while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE))
		__asm__ volatile("pause" ::: "memory");
}

/*
 * ---- watch-eventfd: the kernel rings the user interrupt ----
 *
 * Each party watches the eventfd its peer writes (UINTR_FD_WATCH), so
 * the peer's write posts the party's vector as a SENDUIPI would.  The
 * waiting party spins with UIF = 1 (watch-eventfd) or blocks in
 * uintr_wait() (watch-eventfd-wait), as in the uintr rows; eventfd (a
 * blocking read) and epoll-eventfd (epoll_wait()) are the same wakeup
 * without user interrupts.
 */
static void watch_init(struct party *p)
{
	struct uintr_watch w = { .fd = p->r->rx[p->me], .events = EPOLLIN };

	if (uintr_register_handler(uintr_handler, 0) < 0)
		fail_errno("uintr_register_handler");
	p->ufd = uintr_create_fd(uintr_vector[p->me], 0);
	if (p->ufd < 0)
		fail_errno("uintr_create_fd");
	if (ioctl(p->ufd, UINTR_FD_WATCH, &w))
		fail_errno("ioctl(UINTR_FD_WATCH)");
	_stui();
}

static void eventfd_add_one(const struct party *p)
{
	uint64_t one = 1;

	xwrite(p->r->tx[p->me], &one, sizeof(one), "eventfd write");
}

static void watch_ping(struct party *p, long i)
{
	eventfd_add_one(p);
	uintr_await(p, i + 1);
}

static void watch_pong(struct party *p, long i)
{
	uintr_await(p, i + 1);
	eventfd_add_one(p);
}

/* Edge-triggered: every write is an event, no read needed to rearm. */
static void epoll_init(struct party *p)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };

	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0 || epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->r->rx[p->me], &ev))
		fail_errno("epoll");
}

static void epoll_await(const struct party *p)
{
	struct epoll_event ev;
	int n;

	do
		n = epoll_wait(p->epfd, &ev, 1, -1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		fail_errno("epoll_wait");
}

static void epoll_ping(struct party *p, long i)
{
	eventfd_add_one(p);
	epoll_await(p);
}

static void epoll_pong(struct party *p, long i)
{
	epoll_await(p);
	eventfd_add_one(p);
}

static void epoll_fini(struct party *p)
{
	close(p->epfd);
}

/*
 * ---- timers: the kernel rings at a time ----
 *
 * timer-uintr: a timerfd that the thread watches on its vector
 * (UINTR_FD_WATCH); it spins with UIF = 1 and the expiry interrupts it.
 * timer-uintr-wait: the same, the thread blocked in uintr_wait().
 * timer-signal: a POSIX timer (timer_create) that sends SIGALRM to the
 * thread, which spins; the signal handler counts.  timer-read: a
 * blocking read() of a timerfd.  Each sample arms the timer TIMER_AHEAD_NS
 * ahead, at an absolute CLOCK_MONOTONIC time, and is the time from that
 * expiry until the thread sees the handler's count change (or read()
 * return): expiry, delivery, the handler and its return.
 *
 * tick-uintr and tick-signal: what one tick costs the computation it
 * interrupts.  A work unit (a fixed loop) is timed with one expiry inside
 * it, less the same unit timed just before without; a unit the tick
 * missed is done again.  With ICOUNT=1 a
 * nanosecond is an instruction: the sample is the instructions that one
 * tick (the hrtimer interrupt, the post or the signal, the handler, the
 * return) took from the interrupted thread.
 */
#define TIMER_AHEAD_NS		50000
#define TICK_AT_NS		20000
#define TICK_WORK_LOOPS		50000

/* The SIGALRM handler's count, read by the spinning thread. */
static volatile unsigned long alarm_hits;

static void alarm_handler(int sig)
{
	alarm_hits++;
}

/* The handler's count that the spinning rows watch. */
static const volatile unsigned long *timer_count(const struct party *p)
{
	return p->r->m->flags & MECH_SIGNAL ? &alarm_hits :
		&uintr_hits[uintr_vector[p->me]].n;
}

/* A timerfd: watched on the row's vector (MECH_UINTR) or read. */
static void timerfd_init(struct party *p)
{
	struct uintr_watch w = { .events = EPOLLIN };

	p->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (p->tfd < 0)
		fail_errno("timerfd_create");
	if (!(p->r->m->flags & MECH_UINTR))
		return;
	w.fd = p->tfd;
	if (uintr_register_handler(uintr_handler, 0) < 0)
		fail_errno("uintr_register_handler");
	p->ufd = uintr_create_fd(uintr_vector[p->me], 0);
	if (p->ufd < 0)
		fail_errno("uintr_create_fd");
	if (ioctl(p->ufd, UINTR_FD_WATCH, &w))
		fail_errno("ioctl(UINTR_FD_WATCH)");
	_stui();
}

/* A POSIX timer whose SIGALRM goes to this thread (SIGEV_THREAD_ID). */
static void posix_timer_init(struct party *p)
{
	struct sigaction sa = { .sa_handler = alarm_handler };
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = SIGALRM,
	};
	sigset_t alrm;

	sev._sigev_un._tid = gettid();	/* glibc names no sigev_notify_thread_id */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	if (sigaction(SIGALRM, &sa, NULL) ||
	    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL))
		fail_errno("sigaction(SIGALRM)");
	if (timer_create(CLOCK_MONOTONIC, &sev, &p->timer))
		fail_errno("timer_create");
}

/* Party A owns the timer; B has nothing to do. */
static void timer_init(struct party *p)
{
	if (p->me != PARTY_A)
		return;
	if (p->r->m->flags & MECH_SIGNAL)
		posix_timer_init(p);
	else
		timerfd_init(p);
}

static void timer_fini(struct party *p)
{
	if (p->me != PARTY_A)
		return;
	if (p->r->m->flags & MECH_SIGNAL) {
		timer_delete(p->timer);
		return;
	}
	close(p->tfd);
	uintr_fini(p);
}

/* Arms the row's timer to expire once at `when` (CLOCK_MONOTONIC, ns). */
static void arm_at(const struct party *p, uint64_t when)
{
	struct itimerspec its = {
		.it_value = {
			.tv_sec = when / NSEC_PER_SEC,
			.tv_nsec = when % NSEC_PER_SEC,
		},
	};

	if (p->r->m->flags & MECH_SIGNAL) {
		if (timer_settime(p->timer, TIMER_ABSTIME, &its, NULL))
			fail_errno("timer_settime");
	} else if (timerfd_settime(p->tfd, TFD_TIMER_ABSTIME, &its, NULL)) {
		fail_errno("timerfd_settime");
	}
}

/* Waits for the next expiry as the row does: spinning, uintr_wait() or read(). */
static void timer_await(struct party *p)
{
	unsigned long want = ++p->expiries;
	uint64_t expirations;

	if (p->r->m->flags & MECH_UINTR)
		uintr_await(p, want);
	else if (p->r->m->flags & MECH_SIGNAL)
		while (alarm_hits < want)
			__asm__ volatile("pause" ::: "memory");
	else
		xread(p->tfd, &expirations, sizeof(expirations), "timerfd read");
}

static uint64_t expiry_sample(struct party *p, long i)
{
	uint64_t expiry = now_ns() + TIMER_AHEAD_NS;

	arm_at(p, expiry);
	timer_await(p);
	return now_ns() - expiry;
}

/* The work a tick interrupts: a chain through memory, not shortened by -O2. */
static uint64_t work_unit(void)
{
	uint64_t t0 = now_ns();
	volatile unsigned long x = 0;

	for (long k = 0; k < TICK_WORK_LOOPS; k++)
		x = x + 1;
	return now_ns() - t0;
}

/*
 * A unit with one expiry inside it, less the unit just before it without
 * one (0 if less).  Paired, because a clock's rate may depend on what the
 * other CPU does: the model's advances by the mean of its CPUs'
 * instructions, a halted CPU counting as a fixed quantum.
 */
static uint64_t tick_sample(struct party *p, long i)
{
	const volatile unsigned long *n = timer_count(p);

	for (;;) {
		uint64_t bare = work_unit(), took;

		arm_at(p, now_ns() + TICK_AT_NS);
		took = work_unit();
		if (*n > p->expiries) {
			p->expiries++;
			return took > bare ? took - bare : 0;
		}
		/* The tick came after the unit: wait for it, and do it again. */
		timer_await(p);
		p->r->sh->redone++;
	}
}

/* ---- eventfd, pipe, unix: blocking read/write of one message ---- */

static void eventfd_setup(struct row *r)
{
	int ab = eventfd(0, 0), ba = eventfd(0, 0);

	if (ab < 0 || ba < 0)
		fail_errno("eventfd");
	r->tx[PARTY_A] = r->rx[PARTY_B] = ab;
	r->tx[PARTY_B] = r->rx[PARTY_A] = ba;
}

static void pipe_setup(struct row *r)
{
	int ab[2], ba[2];

	if (pipe(ab) || pipe(ba))
		fail_errno("pipe");
	r->tx[PARTY_A] = ab[1];
	r->rx[PARTY_B] = ab[0];
	r->tx[PARTY_B] = ba[1];
	r->rx[PARTY_A] = ba[0];
}

static void unix_setup(struct row *r)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		fail_errno("socketpair");
	r->tx[PARTY_A] = r->rx[PARTY_A] = sv[0];
	r->tx[PARTY_B] = r->rx[PARTY_B] = sv[1];
}

/* eventfd moves 8-byte counters; pipe and unix move 1 byte. */
static void stream_ping(struct party *p, long i)
{
	const struct row *r = p->r;
	uint64_t msg = 1;

	xwrite(r->tx[p->me], &msg, r->m->msg_len, "write ping");
	xread(r->rx[p->me], &msg, r->m->msg_len, "read pong");
}

static void stream_pong(struct party *p, long i)
{
	const struct row *r = p->r;
	uint64_t msg;

	xread(r->rx[p->me], &msg, r->m->msg_len, "read ping");
	msg = 1;
	xwrite(r->tx[p->me], &msg, r->m->msg_len, "write pong");
}

/*
 * ---- eventfd-spin, watch-pipe, sigio-pipe ----
 *
 * eventfd-spin: the floor of learning of an eventfd write, a
 * non-blocking read() in a loop.  watch-pipe and sigio-pipe: a pipe
 * write that the peer learns of through its watch or through an
 * F_SETSIG signal (an eventfd has no fasync, so no SIGIO: the pipe is
 * the file both can use); the peer then reads the byte, as the pipe row
 * does with a blocking read().
 */
static void eventfd_spin_setup(struct row *r)
{
	eventfd_setup(r);
	if (fcntl(r->rx[PARTY_A], F_SETFL, O_NONBLOCK) ||
	    fcntl(r->rx[PARTY_B], F_SETFL, O_NONBLOCK))
		fail_errno("fcntl(O_NONBLOCK)");
}

static void eventfd_spin_await(const struct party *p)
{
	uint64_t n;

	while (read(p->r->rx[p->me], &n, sizeof(n)) != sizeof(n))
		if (errno != EAGAIN && errno != EINTR)
			fail_errno("eventfd read");
}

static void eventfd_spin_ping(struct party *p, long i)
{
	eventfd_add_one(p);
	eventfd_spin_await(p);
}

static void eventfd_spin_pong(struct party *p, long i)
{
	eventfd_spin_await(p);
	eventfd_add_one(p);
}

/* Each thread's own count of its F_SETSIG signal. */
static __thread volatile unsigned long sigio_hits;

static void sigio_handler(int sig)
{
	sigio_hits++;
}

/* The pipe's reader gets SIGRTMIN+1 on each write (F_SETSIG), this thread only. */
static void sigio_init(struct party *p)
{
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = gettid() };
	struct sigaction sa = { .sa_handler = sigio_handler };
	int fd = p->r->rx[p->me];

	if (sigaction(SIGRTMIN + 1, &sa, NULL))
		fail_errno("sigaction");
	if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, SIGRTMIN + 1) ||
	    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK))
		fail_errno("fcntl(F_SETOWN_EX, F_SETSIG, O_ASYNC)");
}

static void pipe_write_one(const struct party *p)
{
	xwrite(p->r->tx[p->me], "x", 1, "pipe write");
}

/* Waits for the count of the row's notification, then reads the byte. */
static void notified_read(struct party *p, long i)
{
	char c;

	if (p->r->m->flags & MECH_UINTR)
		uintr_await(p, i + 1);
	else
		while (sigio_hits < (unsigned long)i + 1)
			__asm__ volatile("pause" ::: "memory");
	xread(p->r->rx[p->me], &c, 1, "pipe read");
}

static void notified_ping(struct party *p, long i)
{
	pipe_write_one(p);
	notified_read(p, i);
}

static void notified_pong(struct party *p, long i)
{
	notified_read(p, i);
	pipe_write_one(p);
}

/* ---- signal: a blocked real-time signal, sigwaitinfo and tgkill ---- */

/* Blocked before B exists, so that B inherits the mask. */
static void signal_setup(struct row *r)
{
	sigemptyset(&r->sigs);
	sigaddset(&r->sigs, SIGRTMIN);
	if (sigprocmask(SIG_BLOCK, &r->sigs, NULL))
		fail_errno("sigprocmask");
}

/* tgkill targets the peer thread itself, also in another process. */
static void signal_send(const struct party *p)
{
	const struct row_shm *sh = p->r->sh;
	int peer = !p->me;

	if (syscall(SYS_tgkill, sh->pid[peer], sh->tid[peer], SIGRTMIN))
		fail_errno("tgkill");
}

static void signal_wait(const struct party *p)
{
	int sig;

	do
		sig = sigwaitinfo(&p->r->sigs, NULL);
	while (sig < 0 && errno == EINTR);
	if (sig < 0)
		fail_errno("sigwaitinfo");
	if (sig != SIGRTMIN)
		fail("sigwaitinfo: unexpected signal %d", sig);
}

static void signal_ping(struct party *p, long i)
{
	signal_send(p);
	signal_wait(p);
}

static void signal_pong(struct party *p, long i)
{
	signal_wait(p);
	signal_send(p);
}

/*
 * ---- futex and shm-spin: a sequence number in shared memory ----
 *
 * The futex rows wake the peer on every message, as a condition variable
 * would.  Where system calls are slow compared with a cache-line transfer,
 * the wake can reach the peer before it has scheduled out, and both parties
 * then ping-pong in the kernel without a context switch: the futex rows
 * can be bimodal, so look at the samples before trusting one median.
 */

static void futex_ping(struct party *p, long i)
{
	int flags = futex_flags(p->r);

	futex_post(&p->r->sh->seq, 2 * i + 1, flags);
	futex_await(&p->r->sh->seq, 2 * i + 2, flags);
}

static void futex_pong(struct party *p, long i)
{
	int flags = futex_flags(p->r);

	futex_await(&p->r->sh->seq, 2 * i + 1, flags);
	futex_post(&p->r->sh->seq, 2 * i + 2, flags);
}

static void shm_ping(struct party *p, long i)
{
	store_release(&p->r->sh->seq, 2 * i + 1);
	spin_await(p->r, &p->r->sh->seq, 2 * i + 2);
}

static void shm_pong(struct party *p, long i)
{
	spin_await(p->r, &p->r->sh->seq, 2 * i + 1);
	store_release(&p->r->sh->seq, 2 * i + 2);
}

/* ---- what tasks that do not use user interrupts pay ---- */

/* One system call that does no work: the cost of entry and exit. */
static void null_syscall(struct party *p, long i)
{
	syscall(SYS_getppid);
}

/* In the order of the RFC's table, the extras last. */
static const struct mech mechs[] = {
	{
		.name = "uintr-spin", .flags = MECH_UINTR,
		.setup = uintr_setup, .init = uintr_spin_init,
		.ping = uintr_ping, .pong = uintr_pong,
		.fini = uintr_fini,
		.what = "SENDUIPI both ways, receiver spinning with UIF=1",
	}, {
		.name = "uintr-wait", .flags = MECH_UINTR | MECH_SLEEPS,
		.setup = uintr_setup, .init = uintr_spin_init,
		.ping = uintr_ping, .pong = uintr_pong,
		.fini = uintr_fini,
		.what = "SENDUIPI both ways, receiver blocked in uintr_wait()",
	}, {
		.name = "uintr-wait-clui",
		.flags = MECH_UINTR | MECH_SLEEPS | MECH_CLUI,
		.setup = uintr_setup, .init = uintr_spin_init,
		.ping = uintr_ping, .pong = uintr_pong,
		.fini = uintr_fini,
		.what = "as uintr-wait, but UIF=0 around the wait (CLUI, STUI)",
	}, {
		.name = "eventfd", .msg_len = sizeof(uint64_t),
		.setup = eventfd_setup,
		.ping = stream_ping, .pong = stream_pong,
		.what = "blocking read/write on two eventfds",
	}, {
		.name = "signal",
		.setup = signal_setup,
		.ping = signal_ping, .pong = signal_pong,
		.what = "tgkill of SIGRTMIN, sigwaitinfo",
	}, {
		.name = "pipe", .msg_len = 1,
		.setup = pipe_setup,
		.ping = stream_ping, .pong = stream_pong,
		.what = "two pipes, 1 byte",
	}, {
		.name = "unix", .msg_len = 1,
		.setup = unix_setup,
		.ping = stream_ping, .pong = stream_pong,
		.what = "socketpair(AF_UNIX, SOCK_STREAM), 1 byte",
	}, {
		.name = "futex",
		.ping = futex_ping, .pong = futex_pong,
		.what = "FUTEX_WAIT/FUTEX_WAKE on a shared int",
	}, {
		.name = "shm-spin",
		.ping = shm_ping, .pong = shm_pong,
		.what = "both spinning on a shared int (the floor)",
	}, {
		.name = "watch-eventfd", .flags = MECH_UINTR,
		.setup = eventfd_setup, .init = watch_init,
		.ping = watch_ping, .pong = watch_pong,
		.fini = uintr_fini,
		.what = "eventfd write, watched: the kernel posts, receiver spinning with UIF=1",
	}, {
		.name = "watch-eventfd-wait", .flags = MECH_UINTR | MECH_SLEEPS,
		.setup = eventfd_setup, .init = watch_init,
		.ping = watch_ping, .pong = watch_pong,
		.fini = uintr_fini,
		.what = "eventfd write, watched: the kernel posts, receiver in uintr_wait()",
	}, {
		.name = "eventfd-spin", .msg_len = sizeof(uint64_t),
		.setup = eventfd_spin_setup,
		.ping = eventfd_spin_ping, .pong = eventfd_spin_pong,
		.what = "eventfd write, the peer in a non-blocking read() loop (the floor)",
	}, {
		.name = "watch-pipe", .flags = MECH_UINTR,
		.setup = pipe_setup, .init = watch_init,
		.ping = notified_ping, .pong = notified_pong,
		.fini = uintr_fini,
		.what = "pipe write, watched: the kernel posts, receiver spinning, then read()",
	}, {
		.name = "sigio-pipe",
		.setup = pipe_setup, .init = sigio_init,
		.ping = notified_ping, .pong = notified_pong,
		.what = "pipe write, F_SETSIG signal to the spinning peer, then read()",
	}, {
		.name = "epoll-eventfd",
		.setup = eventfd_setup, .init = epoll_init,
		.ping = epoll_ping, .pong = epoll_pong,
		.fini = epoll_fini,
		.what = "eventfd write, epoll_wait() (EPOLLET) on the peer's",
	}, {
		.name = "timer-uintr",
		.flags = MECH_UINTR | MECH_EXPIRY | MECH_ONE_WAY | MECH_THREADS,
		.init = timer_init, .sample = expiry_sample, .fini = timer_fini,
		.what = "timerfd expiry, watched: the kernel posts, the thread spinning with UIF=1",
	}, {
		.name = "timer-uintr-wait",
		.flags = MECH_UINTR | MECH_SLEEPS | MECH_EXPIRY | MECH_ONE_WAY | MECH_THREADS,
		.init = timer_init, .sample = expiry_sample, .fini = timer_fini,
		.what = "timerfd expiry, watched: the thread in uintr_wait()",
	}, {
		.name = "timer-signal",
		.flags = MECH_SIGNAL | MECH_EXPIRY | MECH_ONE_WAY | MECH_THREADS,
		.init = timer_init, .sample = expiry_sample, .fini = timer_fini,
		.what = "timer_create() expiry, SIGALRM to the spinning thread",
	}, {
		.name = "timer-read",
		.flags = MECH_EXPIRY | MECH_ONE_WAY | MECH_THREADS,
		.init = timer_init, .sample = expiry_sample, .fini = timer_fini,
		.what = "timerfd expiry, the thread in a blocking read()",
	}, {
		.name = "tick-uintr",
		.flags = MECH_UINTR | MECH_TICK | MECH_ONE_WAY | MECH_THREADS,
		.init = timer_init, .sample = tick_sample, .fini = timer_fini,
		.what = "what one watched-timerfd tick costs the computation it interrupts",
	}, {
		.name = "tick-signal",
		.flags = MECH_SIGNAL | MECH_TICK | MECH_ONE_WAY | MECH_THREADS,
		.init = timer_init, .sample = tick_sample, .fini = timer_fini,
		.what = "what one SIGALRM tick costs the computation it interrupts",
	}, {
		.name = "ipi-floor", .flags = MECH_THREADS,
		.setup = membarrier_setup,
		.ping = membarrier_ping, .fini = membarrier_fini,
		.what = "membarrier(PRIVATE_EXPEDITED) with B spinning: one IPI round trip",
	}, {
		.name = "senduipi-cost", .flags = MECH_UINTR | MECH_ONE_WAY,
		.setup = uintr_setup, .init = cost_init,
		.ping = cost_send, .fini = cost_fini,
		.what = "one SENDUIPI to a blocked receiver with UIF=0 (not a round trip)",
	}, {
		.name = "null-syscall", .flags = MECH_ONE_WAY | MECH_OVERHEAD,
		.ping = null_syscall,
		.what = "getppid(): kernel entry and exit (not a round trip)",
	}, {
		.name = "pipe-1cpu", .msg_len = 1,
		.flags = MECH_OVERHEAD | MECH_ONE_CPU,
		.setup = pipe_setup,
		.ping = stream_ping, .pong = stream_pong,
		.what = "pipe ping-pong on one CPU: two context switches",
	},
};

#define NR_MECHS	(sizeof(mechs) / sizeof(mechs[0]))

/* ---- the shared driver ---- */

/* Touches the sample pages now so that no page fault is timed. */
static void prefault(struct row *r)
{
	for (long i = 0; i < r->iterations; i += 512)
		r->sh->samples[i] = 0;
}

static void measure(struct party *p)
{
	struct row *r = p->r;
	long total = r->warmup + r->iterations;

	for (long i = 0; i < total; i++) {
		uint64_t t0, t1;

		if (r->m->sample) {
			t0 = 0;
			t1 = r->m->sample(p, i);
		} else {
			t0 = now_ns();
			__asm__ volatile("" ::: "memory");
			r->m->ping(p, i);
			__asm__ volatile("" ::: "memory");
			t1 = now_ns();
		}
		if (i >= r->warmup)
			r->sh->samples[i - r->warmup] = t1 - t0;
		__atomic_store_n(&r->sh->progress, i + 1, __ATOMIC_RELAXED);
	}
}

static void run_party(struct party *p)
{
	struct row *r = p->r;
	const struct mech *m = r->m;

	pin(r->cpu[p->me], p->me);
	r->sh->pid[p->me] = getpid();
	r->sh->tid[p->me] = gettid();
	if (p->me == PARTY_A)
		prefault(r);
	if (m->init)
		m->init(p);
	start_barrier(r->sh);
	if (p->me == PARTY_A) {
		measure(p);
	} else if (m->pong) {
		for (long i = 0; i < r->warmup + r->iterations; i++)
			m->pong(p, i);
	}
	if (m->fini)
		m->fini(p);
}

static void *party_thread(void *arg)
{
	run_party(arg);
	return NULL;
}

static void run_threads(struct party *a, struct party *b)
{
	pthread_t t;
	int err;

	err = pthread_create(&t, NULL, party_thread, b);
	if (err)
		fail("pthread_create: %s", strerror(err));
	run_party(a);
	err = pthread_join(t, NULL);
	if (err)
		fail("pthread_join: %s", strerror(err));
}

/* Dies with its parent, so that a killed row leaves nothing behind. */
static void die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		fail_errno("prctl(PR_SET_PDEATHSIG)");
	if (getppid() != parent)
		_exit(2);
}

static void run_procs(struct party *a, struct party *b)
{
	pid_t self = getpid(), pid;
	int status;

	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0) {
		die_with_parent(self);
		run_party(b);
		_exit(0);
	}
	run_party(a);
	if (waitpid(pid, &status, 0) != pid)
		fail_errno("waitpid(party B)");
	if (WIFSIGNALED(status))
		fail("party B killed by signal %d (%s)", WTERMSIG(status),
		     strsignal(WTERMSIG(status)));
	if (WEXITSTATUS(status))
		fail("party B exited with status %d", WEXITSTATUS(status));
}

static sigset_t orig_sigmask;

static void __attribute__((noreturn)) row_main(struct row *r, pid_t parent)
{
	struct party a = { .r = r, .me = PARTY_A, .ufd = -1, .peer_ufd = -1 };
	struct party b = { .r = r, .me = PARTY_B, .ufd = -1, .peer_ufd = -1 };

	cur_shm = r->sh;
	if (sigprocmask(SIG_SETMASK, &orig_sigmask, NULL))
		fail_errno("sigprocmask");
	die_with_parent(parent);
	if (r->m->setup)
		r->m->setup(r);
	if (r->procs)
		run_procs(&a, &b);
	else
		run_threads(&a, &b);
	_exit(0);
}

/* ---- the main process: options, the watchdog, statistics, output ---- */

struct job {
	const struct mech *m;
	bool procs;
};

struct stats {
	double median, mean;
	uint64_t min, max, p99;
	uint64_t pct[101];	/* pct[k]: k-th percentile (nearest rank) */
};

enum row_status { ROW_OK, ROW_SKIPPED, ROW_FAILED };

/*
 * What a row paid on its CPUs (one or two), per round trip, warm-up
 * included: the interrupts of /proc/interrupts rows LOC (timer), RES
 * (reschedule IPIs), CAL (function calls), UIN and UIK (user interrupt
 * notifications, the kernel vector's wakeups), and the idle entries of
 * cpuidle.  So the table shows the regime a row ran in.
 */
#define COSTS 6
static const char *const cost_names[COSTS] = {
	"LOC", "RES", "CAL", "UIN", "UIK", "idle",
};

struct costs {
	long long count[COSTS];	/* < 0: unknown */
};

struct result {
	char name[NAME_LEN];
	const struct mech *m;
	bool procs;
	enum row_status status;
	char note[NOTE_LEN];
	struct stats st;
	double ratio;		/* < 0: none */
	double per_rt[COSTS];	/* < 0: unknown */
};

struct options {
	long iterations, warmup;
	int stall_s;
	const char *json, *csv, *samples;
	bool receiver;
	struct job jobs[MAX_JOBS];
	int nr_jobs;
};

static struct options opt = {
	.iterations = DEFAULT_ITERATIONS,
	.warmup = DEFAULT_WARMUP,
	.stall_s = DEFAULT_STALL_S,
};

static int cpu[2], nr_cpus;

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ipc_bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void job_name(const struct job *j, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", j->m->name, j->procs ? "-proc" : "");
}

/*
 * Waits for the row process, killing it if it reports a failure or its
 * progress counter stands still for stall_s seconds.  SIGCHLD is blocked,
 * so sigtimedwait() returns as soon as the row ends, or after a second.
 */
/* Prints the lines of file `path` that contain `what` (all if NULL). */
static void dump_lines(const char *path, const char *what, const char *prefix)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!what || strstr(line, what))
			fprintf(stderr, "#   %s%s", prefix, line);
	fclose(f);
}

/*
 * A row stalled: before it is killed, show where its parties sleep and,
 * for the user IPI rows, every uintr_fd's receiver state and UPID (see
 * uintr_create_fd(2)), and the notification counters.
 */
static void dump_stall(const struct row_shm *sh)
{
	char path[96];

	for (int me = 0; me < 2; me++) {
		fprintf(stderr, "# stall: party %c (pid %d tid %d)\n", 'A' + me,
			sh->pid[me], sh->tid[me]);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", sh->pid[me],
			 sh->tid[me]);
		dump_lines(path, NULL, "stat: ");
		snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", sh->pid[me],
			 sh->tid[me]);
		dump_lines(path, NULL, "wchan: ");
		fputc('\n', stderr);
		for (int fd = 0; fd < 64; fd++) {
			snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d",
				 sh->pid[me], fd);
			dump_lines(path, "uintr_", "");
		}
	}
	dump_lines("/proc/interrupts", "UI", "");
}

static int watch_row(pid_t pid, struct row_shm *sh, char *why, size_t len)
{
	const struct timespec tick = { .tv_sec = 1 };
	uint64_t since = now_ns();
	long last = -1, progress;
	sigset_t chld;
	int status;
	pid_t w;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			die("waitpid: %s", strerror(errno));
		if (load_acquire(&sh->failed)) {
			/* With processes, the peer of the failed party lives on. */
			kill(pid, SIGKILL);
			if (waitpid(pid, &status, 0) != pid)
				die("waitpid: %s", strerror(errno));
			break;
		}
		progress = load_acquire(&sh->progress);
		if (progress != last) {
			last = progress;
			since = now_ns();
		} else if (now_ns() - since > opt.stall_s * NSEC_PER_SEC) {
			dump_stall(sh);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(why, len,
				 "timeout: no progress for %d s (%ld of %ld round trips done)",
				 opt.stall_s, progress, opt.warmup + opt.iterations);
			return -1;
		}
		sigtimedwait(&chld, NULL, &tick);
	}
	if (load_acquire(&sh->failed)) {
		snprintf(why, len, "%s", sh->error);
		return -1;
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
		return -1;
	}
	if (WEXITSTATUS(status)) {
		snprintf(why, len, "exited with status %d", WEXITSTATUS(status));
		return -1;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts s; p99 is the nearest-rank percentile. */
static void compute_stats(uint64_t *s, long n, struct stats *st)
{
	double sum = 0;

	qsort(s, n, sizeof(*s), cmp_u64);
	for (long i = 0; i < n; i++)
		sum += s[i];
	st->min = s[0];
	st->max = s[n - 1];
	st->median = n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
	st->mean = sum / n;
	st->p99 = s[(99 * n + 99) / 100 - 1];
	st->pct[0] = s[0];
	for (int k = 1; k <= 100; k++)
		st->pct[k] = s[(k * n + 99) / 100 - 1];
}

static int write_samples(const char *name, const uint64_t *s, long n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.txt", opt.samples, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "ipc_bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (long i = 0; i < n; i++)
		fprintf(f, "%llu\n", (unsigned long long)s[i]);
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "ipc_bench: writing %s failed\n", path);
		return -1;
	}
	return 0;
}

/* Copies the samples out of the row's mapping, saves and summarises them. */
static int collect(struct result *res, const struct row_shm *sh)
{
	size_t size = opt.iterations * sizeof(uint64_t);
	uint64_t *s = malloc(size);
	int ret = 0;

	if (!s)
		die("out of memory for %ld samples", opt.iterations);
	memcpy(s, sh->samples, size);
	if (opt.samples)
		ret = write_samples(res->name, s, opt.iterations);
	compute_stats(s, opt.iterations, &res->st);
	free(s);
	return ret;
}

/* CPU cpu's count in /proc/interrupts row name, or -1. */
static long long irq_count(const char *name, int cpu)
{
	char line[4096], *p, *end;
	size_t len = strlen(name);
	long long n = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && n < 0 && fgets(line, sizeof(line), f)) {
		for (p = line; *p == ' '; p++)
			;
		if (strncmp(p, name, len) || p[len] != ':')
			continue;
		p += len + 1;
		for (int i = 0; i <= cpu; i++, p = end) {
			n = strtoll(p, &end, 10);
			if (end == p) {
				n = -1;
				break;
			}
		}
	}
	if (f)
		fclose(f);
	return n;
}

/* CPU cpu's idle entries over its cpuidle states, or -1 without cpuidle. */
static long long idle_entries(int cpu)
{
	long long sum = -1;

	for (int k = 0;; k++) {
		char path[128];
		long long n;
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/usage", cpu, k);
		f = fopen(path, "r");
		if (!f)
			return sum;
		if (fscanf(f, "%lld", &n) == 1)
			sum = (sum < 0 ? 0 : sum) + n;
		fclose(f);
	}
}

/* The counts of the row's CPUs (one CPU counted once). */
static void read_costs(const struct row *r, struct costs *c)
{
	int cpus = r->cpu[0] == r->cpu[1] ? 1 : 2;

	for (int k = 0; k < COSTS; k++) {
		c->count[k] = 0;
		for (int i = 0; i < cpus && c->count[k] >= 0; i++) {
			long long n = k == COSTS - 1 ? idle_entries(r->cpu[i]) :
				irq_count(cost_names[k], r->cpu[i]);

			c->count[k] = n < 0 ? -1 : c->count[k] + n;
		}
	}
}

static void per_round_trip(const struct costs *a, const struct costs *b,
			   long trips, double *out)
{
	for (int k = 0; k < COSTS; k++)
		out[k] = a->count[k] < 0 || b->count[k] < 0 ? -1 :
			(double)(b->count[k] - a->count[k]) / trips;
}

/* Runs one row in a child process; returns -1 on an output error. */
static int run_row(const struct job *j, struct result *res)
{
	size_t size = sizeof(struct row_shm) + opt.iterations * sizeof(uint64_t);
	bool one_cpu = nr_cpus < 2 || (j->m->flags & MECH_ONE_CPU);
	struct row r = {
		.m = j->m, .procs = j->procs, .one_cpu = one_cpu,
		.iterations = opt.iterations, .warmup = opt.warmup,
		.cpu = { cpu[0], one_cpu ? cpu[0] : cpu[1] },
	};
	pid_t parent = getpid(), pid;
	uint64_t t0 = now_ns();
	struct costs before, after;
	int ret = 0;

	r.sh = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r.sh == MAP_FAILED)
		die("mmap of %zu bytes: %s", size, strerror(errno));
	fprintf(stderr, "# %-20s ", res->name);
	fflush(NULL);
	read_costs(&r, &before);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0)
		row_main(&r, parent);
	if (watch_row(pid, r.sh, res->note, sizeof(res->note))) {
		res->status = ROW_FAILED;
		fprintf(stderr, "FAILED\n");
	} else {
		res->status = ROW_OK;
		read_costs(&r, &after);
		per_round_trip(&before, &after, opt.iterations + opt.warmup,
			       res->per_rt);
		ret = collect(res, r.sh);
		fprintf(stderr, "%.1f s\n", (now_ns() - t0) / 1e9);
		if (r.sh->redone)
			fprintf(stderr, "# %-20s %ld work units done again: the tick came after them\n",
				res->name, r.sh->redone);
	}
	munmap(r.sh, size);
	return ret;
}

/*
 * Probes UINTR in a child: the system call first (ENOSYS without the
 * kernel support, EOPNOTSUPP with uintr=off), then STUI/CLUI, which raise
 * SIGILL where the kernel neither has the hardware nor emulates it.
 * Returns NULL if usable, else the reason.
 */
static const char *uintr_probe(void)
{
	static char why[NOTE_LEN];
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (uintr_register_handler(uintr_handler, 0) < 0)
			_exit(errno);
		_stui();
		_clui();
		_exit(uintr_unregister_handler(0) < 0 ? errno : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGILL)
		return "UINTR instructions raise SIGILL";
	if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "UINTR probe killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status) == ENOSYS)
		return "UINTR system calls not implemented by this kernel (ENOSYS)";
	else if (WEXITSTATUS(status) == EOPNOTSUPP)
		return "UINTR disabled or unsupported (EOPNOTSUPP, uintr=off?)";
	else if (WEXITSTATUS(status))
		snprintf(why, sizeof(why), "UINTR probe failed: %s",
			 strerror(WEXITSTATUS(status)));
	else
		return NULL;
	return why;
}

/* Whether a selected row uses user interrupts. */
static bool uintr_rows_selected(void)
{
	for (int i = 0; i < opt.nr_jobs; i++)
		if (opt.jobs[i].m->flags & MECH_UINTR)
			return true;
	return false;
}

/*
 * --receiver: a process that registers a handler and a uintr_fd and then
 * sleeps until the run ends, so that the rows run while the kernel knows
 * a receiver (the context-switch path's static key is on) that is none of
 * the parties.  Dies if it cannot become one.
 */
static void start_receiver(void)
{
	pid_t parent = getpid(), pid;
	int ready[2], err = 0;

	if (pipe(ready))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(ready[0]);
		die_with_parent(parent);
		if (uintr_register_handler(uintr_handler, 0) < 0 ||
		    uintr_create_fd(0, 0) < 0)
			err = errno;
		if (write(ready[1], &err, sizeof(err)) != sizeof(err) || err)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &err, sizeof(err)) != sizeof(err))
		die("--receiver: the receiver died");
	if (err)
		die("--receiver: cannot become a receiver: %s", strerror(err));
	close(ready[0]);
	printf("# a receiver elsewhere: process %d, asleep, for the whole run\n", pid);
}

/* Median cost of one clock_gettime(), which every sample includes once. */
static double clock_overhead(void)
{
	static uint64_t s[1001];
	struct stats st;

	for (int i = 0; i < 1001; i++) {
		uint64_t t0 = now_ns();

		s[i] = now_ns() - t0;
	}
	compute_stats(s, 1001, &st);
	return st.median;
}

/* The first two CPUs this process may run on. */
static void pick_cpus(void)
{
	cpu_set_t set;
	int found = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity: %s", strerror(errno));
	nr_cpus = CPU_COUNT(&set);
	for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
		if (CPU_ISSET(c, &set))
			cpu[found++] = c;
	if (found < 2)
		cpu[1] = cpu[0];
}

static const struct result *find_row(const struct result *res, int n,
				     const char *mech, bool procs)
{
	for (int i = 0; i < n; i++)
		if (res[i].status == ROW_OK && res[i].procs == procs &&
		    !strcmp(res[i].m->name, mech))
			return &res[i];
	return NULL;
}

/* The fastest measured round-trip row. */
static const struct result *best_row(const struct result *res, int n)
{
	const struct result *best = NULL;

	for (int i = 0; i < n; i++) {
		if (res[i].status != ROW_OK ||
		    (res[i].m->flags & (MECH_ONE_WAY | MECH_OVERHEAD)))
			continue;
		if (!best || res[i].st.median < best->st.median)
			best = &res[i];
	}
	return best;
}

/*
 * The ratios' base: uintr-spin (threads, else processes) as in the RFC;
 * without it the fastest round-trip row.  One-way rows get no ratio.
 */
static const struct result *ratio_base(struct result *res, int n)
{
	const struct result *base = find_row(res, n, "uintr-spin", false);

	if (!base)
		base = find_row(res, n, "uintr-spin", true);
	if (!base)
		base = best_row(res, n);
	for (int i = 0; i < n && base; i++) {
		if (res[i].status == ROW_OK &&
		    !(res[i].m->flags & (MECH_ONE_WAY | MECH_OVERHEAD)))
			res[i].ratio = res[i].st.median / base->st.median;
	}
	return base;
}

static void print_table(const struct result *res, int n)
{
	printf("%-20s %10s %10s %10s %10s %10s %8s\n", "mechanism", "median_us",
	       "p99_us", "mean_us", "min_us", "max_us", "ratio");
	for (int i = 0; i < n; i++) {
		const struct result *x = &res[i];
		char ratio[16] = "-";

		if (x->status == ROW_SKIPPED) {
			printf("%-20s skipped: %s\n", x->name, x->note);
			continue;
		}
		if (x->status == ROW_FAILED) {
			printf("%-20s FAILED: %s\n", x->name, x->note);
			continue;
		}
		if (x->ratio >= 0)
			snprintf(ratio, sizeof(ratio), "%.2f", x->ratio);
		printf("%-20s %10.3f %10.3f %10.3f %10.3f %10.3f %8s\n", x->name,
		       x->st.median / 1e3, x->st.p99 / 1e3, x->st.mean / 1e3,
		       x->st.min / 1e3, x->st.max / 1e3, ratio);
	}
	printf("\nper round trip, on the row's CPUs:\n%-20s", "mechanism");
	for (int k = 0; k < COSTS; k++)
		printf(" %7s", cost_names[k]);
	printf("\n");
	for (int i = 0; i < n; i++) {
		const struct result *x = &res[i];

		if (x->status != ROW_OK)
			continue;
		printf("%-20s", x->name);
		for (int k = 0; k < COSTS; k++) {
			if (x->per_rt[k] < 0)
				printf(" %7s", "-");
			else
				printf(" %7.3f", x->per_rt[k]);
		}
		printf("\n");
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* What a sample of the row is, for the JSON and CSV. */
static const char *row_kind(const struct mech *m)
{
	if (m->flags & MECH_EXPIRY)
		return "expiry";
	if (m->flags & MECH_TICK)
		return "tick";
	return m->flags & MECH_ONE_WAY ? "send" : "round-trip";
}

static void json_row(FILE *f, const struct result *x)
{
	fprintf(f, "{\"mechanism\":");
	json_string(f, x->name);
	fprintf(f, ",\"median_ns\":%.1f,\"p99_ns\":%llu,\"mean_ns\":%.1f,"
		"\"min_ns\":%llu,\"max_ns\":%llu,\"ratio\":",
		x->st.median, (unsigned long long)x->st.p99, x->st.mean,
		(unsigned long long)x->st.min, (unsigned long long)x->st.max);
	if (x->ratio >= 0)
		fprintf(f, "%.3f", x->ratio);
	else
		fprintf(f, "null");
	fprintf(f, ",\"kind\":\"%s\",\"parties\":\"%s\",\"samples\":%ld,"
		"\"percentiles_ns\":[",
		row_kind(x->m),
		x->procs ? "processes" : "threads", opt.iterations);
	for (int k = 0; k <= 100; k++)
		fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)x->st.pct[k]);
	fprintf(f, "],\"per_round_trip\":{");
	for (int k = 0; k < COSTS; k++) {
		fprintf(f, "%s\"%s\":", k ? "," : "", cost_names[k]);
		if (x->per_rt[k] < 0)
			fprintf(f, "null");
		else
			fprintf(f, "%.4f", x->per_rt[k]);
	}
	fprintf(f, "}}");
}

/* Skipped and failed rows, kept out of "rows" so that every row has numbers. */
static void json_others(FILE *f, const struct result *res, int n,
			enum row_status status, const char *key)
{
	bool first = true;

	fprintf(f, "[");
	for (int i = 0; i < n; i++) {
		if (res[i].status != status)
			continue;
		fprintf(f, "%s{\"mechanism\":", first ? "" : ",");
		json_string(f, res[i].name);
		fprintf(f, ",\"%s\":", key);
		json_string(f, res[i].note);
		fprintf(f, "}");
		first = false;
	}
	fprintf(f, "]");
}

static int write_json(FILE *f, const struct result *res, int n,
		      const struct result *base, double clock_ns)
{
	bool first = true;

	fprintf(f, "{\"iterations\":%ld,\"warmup\":%ld,\"cpus\":%d,"
		"\"cpu_a\":%d,\"cpu_b\":%d,\"clock_overhead_ns\":%.1f,"
		"\"ratio_base\":", opt.iterations, opt.warmup, nr_cpus,
		cpu[0], cpu[1], clock_ns);
	if (base)
		json_string(f, base->name);
	else
		fprintf(f, "null");
	fprintf(f, ",\"rows\":[");
	for (int i = 0; i < n; i++) {
		if (res[i].status != ROW_OK)
			continue;
		fprintf(f, first ? "\n" : ",\n");
		json_row(f, &res[i]);
		first = false;
	}
	fprintf(f, "],\n\"skipped\":");
	json_others(f, res, n, ROW_SKIPPED, "reason");
	fprintf(f, ",\n\"failed\":");
	json_others(f, res, n, ROW_FAILED, "error");
	fprintf(f, "}\n");
	return ferror(f) | fclose(f) ? -1 : 0;
}

/* Measured rows only; mechanism names need no quoting. */
static int write_csv(FILE *f, const struct result *res, int n)
{
	fprintf(f, "mechanism,median_ns,p99_ns,mean_ns,min_ns,max_ns,ratio,"
		"kind,parties,samples\n");
	for (int i = 0; i < n; i++) {
		const struct result *x = &res[i];

		if (x->status != ROW_OK)
			continue;
		fprintf(f, "%s,%.1f,%llu,%.1f,%llu,%llu,", x->name,
			x->st.median, (unsigned long long)x->st.p99, x->st.mean,
			(unsigned long long)x->st.min,
			(unsigned long long)x->st.max);
		if (x->ratio >= 0)
			fprintf(f, "%.3f", x->ratio);
		fprintf(f, ",%s,%s,%ld\n",
			row_kind(x->m),
			x->procs ? "processes" : "threads", opt.iterations);
	}
	return ferror(f) | fclose(f) ? -1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ipc_bench [-n iterations] [-w warmup] [-m mech1,mech2,...]\n"
		"                 [-t stall_seconds] [--json FILE] [--csv FILE] [--samples DIR]\n"
		"\n"
		"  -n, --iterations N   timed round trips per row (default %ld)\n"
		"  -w, --warmup N       untimed round trips before them (default %ld)\n"
		"  -m, --mechanisms L   rows to run, comma-separated (default: all)\n"
		"  -t, --timeout S      kill a row after S seconds without progress (default %d)\n"
		"      --json FILE      write the results as JSON\n"
		"      --csv FILE       write the results as CSV\n"
		"      --samples DIR    write each row's samples (ns) to DIR/<mechanism>.txt\n"
		"      --receiver       keep a receiver (a process with a handler and a\n"
		"                       uintr_fd, asleep) for the whole run\n"
		"\n"
		"mechanisms (parties are two threads; append -proc for two processes):\n",
		DEFAULT_ITERATIONS, DEFAULT_WARMUP, DEFAULT_STALL_S);
	for (size_t i = 0; i < NR_MECHS; i++)
		fprintf(f, "  %-15s %s\n", mechs[i].name, mechs[i].what);
	fprintf(f, "  %-15s every row above but null-syscall, pipe-1cpu and the timer rows,\n"
		"  %-15s with threads\n", "all", "");
	fprintf(f, "  %-15s the same, with processes\n", "all-proc");
	fprintf(f, "  %-15s the timer-* and tick-* rows (threads; a sample is one expiry)\n",
		"timers");
}

/* A bad command line: the usage, the complaint, exit status 2. */
static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	usage(stderr);
	fprintf(stderr, "ipc_bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static long parse_long(const char *s, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		usage_error("%s: '%s' is not a number in %ld..%ld", what, s,
			    min, max);
	return v;
}

static void add_job(const struct mech *m, bool procs)
{
	for (int i = 0; i < opt.nr_jobs; i++)
		if (opt.jobs[i].m == m && opt.jobs[i].procs == procs)
			return;
	if (opt.nr_jobs == MAX_JOBS)
		die("too many mechanisms");
	opt.jobs[opt.nr_jobs++] = (struct job){ .m = m, .procs = procs };
}

static void add_all(bool procs)
{
	for (size_t i = 0; i < NR_MECHS; i++)
		if (!(mechs[i].flags & (MECH_OVERHEAD | MECH_TIMER)) &&
		    !(procs && (mechs[i].flags & MECH_THREADS)))
			add_job(&mechs[i], procs);
}

/* "timers": the timer rows, which "all" leaves out (each sample waits). */
static void add_timers(void)
{
	for (size_t i = 0; i < NR_MECHS; i++)
		if (mechs[i].flags & MECH_TIMER)
			add_job(&mechs[i], false);
}

static void add_mech(const char *name)
{
	size_t len = strlen(name);
	bool procs = len > 5 && !strcmp(name + len - 5, "-proc");

	if (!strcmp(name, "all") || !strcmp(name, "all-proc")) {
		add_all(procs);
		return;
	}
	if (!strcmp(name, "timers")) {
		add_timers();
		return;
	}
	if (procs)
		len -= 5;
	for (size_t i = 0; i < NR_MECHS; i++) {
		if (strlen(mechs[i].name) == len &&
		    !strncmp(mechs[i].name, name, len)) {
			if (procs && (mechs[i].flags & MECH_THREADS))
				usage_error("'%s': threads only", name);
			add_job(&mechs[i], procs);
			return;
		}
	}
	usage_error("unknown mechanism '%s'", name);
}

static void parse_mechs(const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;

	if (!copy)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		add_mech(tok);
	free(copy);
	if (!opt.nr_jobs)
		usage_error("-m: no mechanism given");
}

static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iterations", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "mechanisms", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", required_argument, NULL, 'J' },
		{ "csv", required_argument, NULL, 'C' },
		{ "samples", required_argument, NULL, 'S' },
		{ "receiver", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "n:w:m:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			opt.iterations = parse_long(optarg, "-n", 1, MAX_ITERATIONS);
			break;
		case 'w':
			opt.warmup = parse_long(optarg, "-w", 0, MAX_ITERATIONS);
			break;
		case 'm':
			parse_mechs(optarg);
			break;
		case 't':
			opt.stall_s = parse_long(optarg, "-t", 1, 86400);
			break;
		case 'J':
			opt.json = optarg;
			break;
		case 'C':
			opt.csv = optarg;
			break;
		case 'S':
			opt.samples = optarg;
			break;
		case 'R':
			opt.receiver = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!opt.nr_jobs)
		add_all(false);
}

/* Opens the output files before the run, so that a bad path costs nothing. */
static FILE *open_output(const char *path)
{
	FILE *f;

	if (!path)
		return NULL;
	f = fopen(path, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	return f;
}

static void make_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0755) && errno != EEXIST)
		die("mkdir %s: %s", path, strerror(errno));
	if (stat(path, &st))
		die("%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("%s: not a directory", path);
}

static void print_header(double clock_ns, const char *no_uintr)
{
	printf("# ipc_bench: %ld round trips per row after %ld warm-up; "
	       "party A on CPU %d, party B on CPU %d (%d CPU%s usable)\n",
	       opt.iterations, opt.warmup, cpu[0], cpu[1], nr_cpus,
	       nr_cpus == 1 ? "" : "s");
	if (nr_cpus < 2)
		printf("# only one CPU: both parties pinned to CPU %d; round trips "
		       "include context switches and spinning rows yield\n",
		       cpu[0]);
	printf("# clock_gettime(CLOCK_MONOTONIC): %.0f ns per call, "
	       "included in every sample (not subtracted)\n", clock_ns);
	if (no_uintr)
		printf("# uintr: skipped: %s\n", no_uintr);
}

static void print_footer(const struct result *res, int n,
			 const struct result *base)
{
	int ok = 0, skipped = 0, failed = 0;

	for (int i = 0; i < n; i++) {
		ok += res[i].status == ROW_OK;
		skipped += res[i].status == ROW_SKIPPED;
		failed += res[i].status == ROW_FAILED;
		if (res[i].status == ROW_OK && (res[i].m->flags & MECH_ONE_WAY))
			printf("# %s: %s\n", res[i].name, res[i].m->what);
	}
	if (!base)
		printf("# ratio: no round-trip row measured");
	else if (!strcmp(base->m->name, "uintr-spin"))
		printf("# ratio = median / median of %s", base->name);
	else
		printf("# ratio = median / median of %s (best available row: "
		       "uintr-spin not measured)", base->name);
	printf("; %d measured, %d skipped, %d failed\n", ok, skipped, failed);
}

int main(int argc, char **argv)
{
	static struct result res[MAX_JOBS];
	FILE *json, *csv;
	const struct result *base;
	const char *no_uintr;
	struct timespec ts;
	sigset_t chld;
	double clock_ns;
	int errors = 0;

	parse_options(argc, argv);
	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime(CLOCK_MONOTONIC): %s", strerror(errno));
	json = open_output(opt.json);
	csv = open_output(opt.csv);
	if (opt.samples)
		make_dir(opt.samples);

	/* The watchdog waits for SIGCHLD with sigtimedwait(). */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, &orig_sigmask))
		die("sigprocmask: %s", strerror(errno));

	pick_cpus();
	/* The probe registers a handler: not for rows that don't need it. */
	no_uintr = uintr_rows_selected() ? uintr_probe() : NULL;
	if (opt.receiver)
		start_receiver();
	clock_ns = clock_overhead();
	print_header(clock_ns, no_uintr);
	fflush(stdout);

	for (int i = 0; i < opt.nr_jobs; i++) {
		struct result *x = &res[i];

		x->m = opt.jobs[i].m;
		x->procs = opt.jobs[i].procs;
		x->ratio = -1;
		job_name(&opt.jobs[i], x->name, sizeof(x->name));
		if ((x->m->flags & MECH_UINTR) && no_uintr) {
			x->status = ROW_SKIPPED;
			snprintf(x->note, sizeof(x->note), "%s", no_uintr);
			fprintf(stderr, "# %-20s skipped\n", x->name);
			continue;
		}
		if (run_row(&opt.jobs[i], x))
			errors++;
		if (x->status == ROW_FAILED) {
			fprintf(stderr, "ipc_bench: %s: %s\n", x->name, x->note);
			errors++;
		}
	}

	base = ratio_base(res, opt.nr_jobs);
	print_table(res, opt.nr_jobs);
	print_footer(res, opt.nr_jobs, base);
	if (json && write_json(json, res, opt.nr_jobs, base, clock_ns)) {
		fprintf(stderr, "ipc_bench: writing %s failed\n", opt.json);
		errors++;
	}
	if (csv && write_csv(csv, res, opt.nr_jobs)) {
		fprintf(stderr, "ipc_bench: writing %s failed\n", opt.csv);
		errors++;
	}
	return errors ? 1 : 0;
}
