// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel rings user interrupts: a uintr_fd watches a file
 * (UINTR_FD_WATCH) and each wakeup of the file with a watched event posts
 * the fd's vector, as a SENDUIPI would.  Eventfds, timerfds, pipes and
 * sockets post to a running receiver and wake one in uintr_wait(); a file
 * ready when watched posts at once; masking stops the posts and unmasking
 * resumes them; none is lost in lockstep; every error of the man page;
 * every teardown order, with a writer posting meanwhile, gives everything
 * back (the counters of uintr_stats); a queue freed before its file
 * (signalfd's, POLLFREE) and a socket that carries the uintr_fd itself
 * end cleanly.
 */
#include "uintr_test.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>

/*
 * The harness's fixture wrapper keeps `child` across its setjmp(); GCC
 * warns when a test body inlined there is large (as in hotplug.c).
 */
#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"

#define VECTOR	9
#define BIT	(1ull << VECTOR)

static int eventfd_add(int efd, unsigned long long n)
{
	return write(efd, &n, sizeof(n)) == sizeof(n) ? 0 : -1;
}

/* The watches' counter of uintr_stats, -1 if unreadable. */
static long live_watches(void)
{
	struct uintr_stats s;

	return uintr_read_stats(&s) ? -1 : s.watches;
}

/* A receiver (the test's thread) with one fd, for VECTOR, and an eventfd. */
FIXTURE(rx) {
	int fd;
	int efd;
	struct uintr_stats base;
};

FIXTURE_SETUP(rx)
{
	ASSERT_EQ(0, uintr_read_stats(&self->base));
	uintr_recorded = 0;
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	self->fd = uintr_create_fd(VECTOR, 0);
	ASSERT_GE(self->fd, 0);
	self->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ASSERT_GE(self->efd, 0);
}

FIXTURE_TEARDOWN(rx)
{
	_clui();
	close(self->efd);
	close(self->fd);
	uintr_unregister_handler(0);
	EXPECT_TRUE(uintr_stats_become(&self->base));
}

TEST_F(rx, an_eventfd_write_interrupts_the_running_receiver)
{
	ASSERT_EQ(0, uintr_watch(self->fd, self->efd, EPOLLIN));
	EXPECT_EQ(self->base.watches + 1, live_watches());
	/* Not ready yet: nothing posted. */
	EXPECT_EQ(0ull, uintr_pending_now());
	_stui();
	for (int n = 1; n <= 5; n++) {
		ASSERT_EQ(0, eventfd_add(self->efd, 1));
		ASSERT_TRUE(uintr_wait_recorded(n));
		EXPECT_EQ((unsigned long long)VECTOR, uintr_recorded_vector);
	}
	_clui();
	EXPECT_EQ(1, uintr_fdinfo_value(self->fd, "uintr_watches:"));
	EXPECT_EQ(0, uintr_unwatch(self->fd, self->efd));
	EXPECT_EQ(0, uintr_fdinfo_value(self->fd, "uintr_watches:"));
}

TEST_F(rx, a_file_ready_when_watched_posts_once_at_once)
{
	ASSERT_EQ(0, eventfd_add(self->efd, 3));
	ASSERT_EQ(0, uintr_watch(self->fd, self->efd, EPOLLIN | EPOLLOUT));
	EXPECT_EQ(BIT, uintr_pending_now());
	_stui();
	ASSERT_TRUE(uintr_wait_recorded(1));
	usleep(20000);
	EXPECT_EQ(1, uintr_recorded);
}

TEST_F(rx, only_watched_events_post)
{
	unsigned long long n;

	/* Written to, an eventfd wakes its readers with EPOLLIN. */
	ASSERT_EQ(0, uintr_watch(self->fd, self->efd, EPOLLOUT));
	/* Ready for writing already: one post at once; take it. */
	EXPECT_EQ(BIT, uintr_pending_now());
	_stui();
	ASSERT_TRUE(uintr_wait_recorded(1));
	_clui();
	ASSERT_EQ(0, eventfd_add(self->efd, 1));
	usleep(20000);
	EXPECT_EQ(0ull, uintr_pending_now());
	/* Reading wakes the writers, with EPOLLOUT. */
	ASSERT_EQ((ssize_t)sizeof(n), read(self->efd, &n, sizeof(n)));
	EXPECT_EQ(BIT, uintr_pending_now());
}

TEST_F(rx, a_receiver_in_uintr_wait_is_woken_by_a_timer)
{
	struct itimerspec its = { .it_value.tv_nsec = 20000000 };
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

	ASSERT_GE(tfd, 0);
	ASSERT_EQ(0, uintr_watch(self->fd, tfd, EPOLLIN));
	ASSERT_EQ(0, timerfd_settime(tfd, 0, &its, NULL));
	_stui();
	EXPECT_EQ(-EINTR, UINTR_RET(uintr_wait(0, NULL)));
	EXPECT_EQ(1, uintr_recorded);
	EXPECT_EQ((unsigned long long)VECTOR, uintr_recorded_vector);
	close(tfd);
}

/*
 * A periodic timerfd re-arms when it is read: the tick handler reads it,
 * with libuintr's bare system call (a handler uses general registers
 * only).
 */
static int tick_fd;
static volatile int ticks;

static UINTR_HANDLER(tick)
{
	unsigned long long expirations;

	if (libuintr_syscall3(SYS_read, tick_fd, (long)&expirations, sizeof(expirations)) == sizeof(expirations))
		ticks++;
}

TEST_F(rx, a_periodic_timer_ticks_into_a_computing_thread)
{
	struct itimerspec its = {
		.it_value.tv_nsec = 2000000,
		.it_interval.tv_nsec = 2000000,
	};
	volatile unsigned long spin = 0;

	ASSERT_EQ(0, uintr_unregister_handler(0));
	ASSERT_EQ(0, uintr_register_handler(tick, 0));
	close(self->fd);
	self->fd = uintr_create_fd(VECTOR, 0);
	ASSERT_GE(self->fd, 0);
	tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ASSERT_GE(tick_fd, 0);
	ASSERT_EQ(0, uintr_watch(self->fd, tick_fd, EPOLLIN));
	ASSERT_EQ(0, timerfd_settime(tick_fd, 0, &its, NULL));
	_stui();
	/* Compute-bound: the ticks come in without a system call. */
	while (ticks < 20)
		spin++;
	_clui();
	EXPECT_GE(ticks, 20);
	EXPECT_GE(uintr_fdinfo_value(self->fd, "posts:"), 20);
	close(tick_fd);
}

TEST_F(rx, a_pipe_posts_on_data_and_on_the_writers_hangup)
{
	int p[2];

	ASSERT_EQ(0, pipe2(p, O_NONBLOCK | O_CLOEXEC));
	ASSERT_EQ(0, uintr_watch(self->fd, p[0], EPOLLIN | EPOLLHUP));
	EXPECT_EQ(0ull, uintr_pending_now());
	ASSERT_EQ(1, write(p[1], "x", 1));
	EXPECT_EQ(BIT, uintr_pending_now());
	_stui();
	ASSERT_TRUE(uintr_wait_recorded(1));
	_clui();
	/* The last writer's close wakes the reader (with no events given). */
	close(p[1]);
	EXPECT_EQ(BIT, uintr_pending_now());
	close(p[0]);
}

/* Writes to the non-blocking pipe fd until it is full. */
static void fill(int fd)
{
	static const char page[4096];

	while (write(fd, page, sizeof(page)) == sizeof(page))
		;
}

/*
 * A FIFO open for reading and writing names two wait queues: a write
 * wakes the readers' (EPOLLIN), a read from a full pipe the writers'
 * (EPOLLOUT).
 */
TEST_F(rx, a_file_with_two_queues_posts_from_either)
{
	const char *path = "/uintr-watch-fifo";
	char page[4096];
	int fifo;

	unlink(path);
	ASSERT_EQ(0, mkfifo(path, 0600));
	fifo = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ASSERT_GE(fifo, 0);
	unlink(path);
	ASSERT_EQ(0, uintr_watch(self->fd, fifo, EPOLLIN));
	EXPECT_EQ(0ull, uintr_pending_now());
	ASSERT_EQ(1, write(fifo, "x", 1));
	EXPECT_EQ(BIT, uintr_pending_now());
	ASSERT_EQ(1, read(fifo, page, 1));
	_stui();
	ASSERT_TRUE(uintr_wait_recorded(1));
	_clui();
	ASSERT_EQ(0, uintr_unwatch(self->fd, fifo));
	/* Writable at once: that posts; take it. */
	ASSERT_EQ(0, uintr_watch(self->fd, fifo, EPOLLOUT));
	EXPECT_EQ(BIT, uintr_pending_now());
	_stui();
	ASSERT_TRUE(uintr_wait_recorded(2));
	_clui();
	fill(fifo);
	EXPECT_EQ(0ull, uintr_pending_now());
	ASSERT_EQ((ssize_t)sizeof(page), read(fifo, page, sizeof(page)));
	EXPECT_EQ(BIT, uintr_pending_now());
	close(fifo);
}

TEST_F(rx, a_socket_posts_on_data_and_on_hangup)
{
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(0, uintr_watch(self->fd, sv[0], EPOLLRDHUP));
	ASSERT_EQ(1, write(sv[1], "a", 1));
	usleep(20000);
	EXPECT_EQ(0ull, uintr_pending_now());
	close(sv[1]);
	EXPECT_EQ(BIT, uintr_pending_now());
	close(sv[0]);
}

TEST_F(rx, masking_stops_the_posts_and_unmasking_resumes_them)
{
	int p[2];

	ASSERT_EQ(0, uintr_watch(self->fd, self->efd, EPOLLIN));
	ASSERT_EQ(0, uintr_mask(self->fd));
	ASSERT_EQ(0, eventfd_add(self->efd, 1));
	usleep(20000);
	EXPECT_EQ(0ull, uintr_pending_now());
	/* What came while masked is dropped, not replayed. */
	ASSERT_EQ(0, uintr_unmask(self->fd));
	EXPECT_EQ(0ull, uintr_pending_now());
	ASSERT_EQ(0, eventfd_add(self->efd, 1));
	EXPECT_EQ(BIT, uintr_pending_now());
	/* A watch made while masked starts masked. */
	ASSERT_EQ(0, uintr_mask(self->fd));
	_stui();
	ASSERT_TRUE(uintr_wait_recorded(1));
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, uintr_watch(self->fd, p[0], EPOLLIN));
	ASSERT_EQ(1, write(p[1], "y", 1));
	usleep(20000);
	EXPECT_EQ(1, uintr_recorded);
	close(p[0]);
	close(p[1]);
}

TEST_F(rx, unwatch_ends_the_posts)
{
	ASSERT_EQ(0, uintr_watch(self->fd, self->efd, EPOLLIN));
	ASSERT_EQ(0, uintr_unwatch(self->fd, self->efd));
	EXPECT_EQ(self->base.watches, live_watches());
	ASSERT_EQ(0, eventfd_add(self->efd, 1));
	usleep(20000);
	EXPECT_EQ(0ull, uintr_pending_now());
	EXPECT_EQ(-ENOENT, UINTR_RET(uintr_unwatch(self->fd, self->efd)));
	/* Watched again, and ready: it posts at once. */
	ASSERT_EQ(0, uintr_watch(self->fd, self->efd, EPOLLIN));
	EXPECT_EQ(BIT, uintr_pending_now());
}

TEST_F(rx, bad_requests_get_the_documented_errors)
{
	struct uintr_watch w = { .fd = self->efd, .events = EPOLLIN };
	int memfd = memfd_create("regular", MFD_CLOEXEC);
	int closed = dup(self->efd);
	int other = uintr_create_fd(VECTOR + 1, 0);

	ASSERT_GE(memfd, 0);
	ASSERT_GE(closed, 0);
	ASSERT_GE(other, 0);
	close(closed);
	EXPECT_EQ(-EBADF, UINTR_RET(uintr_watch(self->fd, -1, EPOLLIN)));
	EXPECT_EQ(-EBADF, UINTR_RET(uintr_watch(self->fd, closed, EPOLLIN)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_watch(self->fd, self->efd, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_watch(self->fd, self->efd, EPOLLIN | EPOLLET)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_watch(self->fd, self->efd, EPOLLIN | 0x4000)));
	w.flags = 1;
	EXPECT_EQ(-EINVAL, UINTR_RET(ioctl(self->fd, UINTR_FD_WATCH, &w)));
	w.flags = 0;
	EXPECT_EQ(-EFAULT, UINTR_RET(ioctl(self->fd, UINTR_FD_WATCH, (void *)8)));
	/* Files that cannot be polled: a regular file, a uintr_fd. */
	EXPECT_EQ(-EPERM, UINTR_RET(uintr_watch(self->fd, memfd, EPOLLIN)));
	EXPECT_EQ(-EPERM, UINTR_RET(uintr_watch(self->fd, other, EPOLLIN)));
	EXPECT_EQ(-EPERM, UINTR_RET(uintr_watch(self->fd, self->fd, EPOLLIN)));
	ASSERT_EQ(0, ioctl(self->fd, UINTR_FD_WATCH, &w));
	EXPECT_EQ(-EEXIST, UINTR_RET(ioctl(self->fd, UINTR_FD_WATCH, &w)));
	/* Another uintr_fd may watch the same file. */
	EXPECT_EQ(0, uintr_watch(other, self->efd, EPOLLIN));
	EXPECT_EQ(-ENOENT, UINTR_RET(uintr_unwatch(self->fd, memfd)));
	EXPECT_EQ(-EBADF, UINTR_RET(uintr_unwatch(self->fd, -1)));
	EXPECT_EQ(-EBADF, UINTR_RET(ioctl(self->fd, UINTR_FD_UNWATCH, 1ul << 40)));
	/* The ioctls are a uintr_fd's: ENOTTY on other files. */
	EXPECT_EQ(-ENOTTY, UINTR_RET(ioctl(self->efd, UINTR_FD_WATCH, &w)));
	EXPECT_EQ(-ENOTTY, UINTR_RET(ioctl(memfd, UINTR_FD_UNWATCH, self->efd)));
	EXPECT_EQ(self->base.watches + 2, live_watches());
	close(other);
	EXPECT_EQ(self->base.watches + 1, live_watches());
	close(memfd);
}

static int ctl_fd, ctl_efd;

static void watch_from_another_process(void)
{
	if (UINTR_RET(uintr_watch(ctl_fd, ctl_efd, EPOLLIN)) != -EPERM ||
	    UINTR_RET(uintr_unwatch(ctl_fd, ctl_efd)) != -EPERM)
		_exit(1);
}

TEST_F(rx, only_the_receivers_process_may_watch)
{
	int status;
	pid_t pid;

	ctl_fd = self->fd;
	ctl_efd = self->efd;
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		watch_from_another_process();
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(rx, a_gone_receiver_refuses_watches)
{
	ASSERT_EQ(0, uintr_unregister_handler(0));
	EXPECT_EQ(-ESHUTDOWN, UINTR_RET(uintr_watch(self->fd, self->efd, EPOLLIN)));
	EXPECT_EQ(self->base.watches, live_watches());
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
}

/*
 * A sender thread: connects to the fd, reports the result on report[1],
 * and keeps the connection until go[0] is readable; its exit ends it.
 */
struct sender_thread {
	int fd;
	int report[2];
	int go[2];
};

static void *connect_and_hold(void *arg)
{
	struct sender_thread *t = arg;
	long ret = UINTR_RET(uintr_register_sender(t->fd, 0));
	char c;

	if (write(t->report[1], &ret, sizeof(ret)) != sizeof(ret) || ret < 0)
		return NULL;
	(void)!read(t->go[0], &c, 1);
	return NULL;
}

/* Starts a sender thread on fd; returns what its connect gave. */
static long sender_start(struct sender_thread *t, pthread_t *th, int fd)
{
	long ret;

	t->fd = fd;
	if (pipe(t->report) || pipe(t->go) || pthread_create(th, NULL, connect_and_hold, t))
		return -EIO;
	if (read(t->report[0], &ret, sizeof(ret)) != sizeof(ret))
		return -EIO;
	return ret;
}

static void sender_end(struct sender_thread *t, pthread_t th)
{
	(void)!write(t->go[1], "q", 1);
	pthread_join(th, NULL);
	close(t->report[0]);
	close(t->report[1]);
	close(t->go[0]);
	close(t->go[1]);
}

TEST_F(rx, watches_count_against_the_fds_limit)
{
	struct sender_thread t;
	struct uintr_limits saved;
	pthread_t th;
	int efds[3];

	ASSERT_EQ(0, uintr_limits_save(&saved));
	ASSERT_EQ(0, uintr_write_long(UINTR_FD_LIMIT, 2));
	for (int i = 0; i < 3; i++) {
		efds[i] = eventfd(0, EFD_CLOEXEC);
		ASSERT_GE(efds[i], 0);
	}
	EXPECT_EQ(0, uintr_watch(self->fd, efds[0], EPOLLIN));
	EXPECT_EQ(0, uintr_watch(self->fd, efds[1], EPOLLIN));
	EXPECT_EQ(-ENOSPC, UINTR_RET(uintr_watch(self->fd, efds[2], EPOLLIN)));
	/* A sender finds no room either. */
	EXPECT_EQ(-ENOSPC, sender_start(&t, &th, self->fd));
	sender_end(&t, th);
	/* With one watch gone, a sender fits, and then no watch. */
	EXPECT_EQ(0, uintr_unwatch(self->fd, efds[1]));
	EXPECT_GE(sender_start(&t, &th, self->fd), 0);
	EXPECT_EQ(-ENOSPC, UINTR_RET(uintr_watch(self->fd, efds[2], EPOLLIN)));
	sender_end(&t, th);
	EXPECT_EQ(0, uintr_limits_restore(&saved));
	for (int i = 0; i < 3; i++)
		close(efds[i]);
}

/*
 * 20,000 eventfd writes from another thread, each waiting for the
 * handler it causes in the receiver, which computes meanwhile: none is
 * lost.
 */
#define LOCKSTEP_ROUNDS	20000

static atomic_int lockstep_failed;

static void *lockstep_writer(void *arg)
{
	int efd = *(int *)arg;

	for (int i = 1; i <= LOCKSTEP_ROUNDS; i++) {
		if (eventfd_add(efd, 1)) {
			atomic_store(&lockstep_failed, 1);
			return NULL;
		}
		/*
		 * A lost post leaves the receiver short for good: spin, then
		 * sleep a while, then give up (after some 10 s).
		 */
		for (long spin = 0; uintr_recorded < i; spin++) {
			if (spin < 100000)
				continue;
			if (spin > 200000) {
				atomic_store(&lockstep_failed, 1);
				return NULL;
			}
			usleep(100);
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(rx, lockstep_writes_lose_nothing, 600)
{
	volatile unsigned long spin = 0;
	int efd = self->efd;
	pthread_t th;

	atomic_store(&lockstep_failed, 0);
	ASSERT_EQ(0, uintr_watch(self->fd, efd, EPOLLIN));
	_stui();
	ASSERT_EQ(0, pthread_create(&th, NULL, lockstep_writer, &efd));
	while (uintr_recorded < LOCKSTEP_ROUNDS && !atomic_load(&lockstep_failed))
		spin++;
	pthread_join(th, NULL);
	_clui();
	EXPECT_EQ(0, atomic_load(&lockstep_failed));
	EXPECT_EQ(LOCKSTEP_ROUNDS, uintr_recorded);
}

/* A writer that posts as fast as it can until told to stop. */
static atomic_int writer_stop;

static void *writer(void *arg)
{
	int efd = *(int *)arg;

	while (!atomic_load(&writer_stop))
		eventfd_add(efd, 1);
	return NULL;
}

/*
 * Waits up to 5 s until uintr_fd's (only) watch has posted: the writer
 * is running, so what follows races it, also where the host runs the
 * writer's vCPU late.
 */
static int writer_posts_through(int uintr_fd)
{
	for (int i = 0; i < 50000; i++) {
		if (uintr_fdinfo_value(uintr_fd, "posts:") > 0)
			return 1;
		usleep(100);
	}
	return 0;
}

/*
 * Every way a watch ends, 100 times each, while another thread writes
 * to the watched eventfd in a loop: UNWATCH; close of the watched file's
 * descriptor, then of the uintr_fd; unregistering the handler before or
 * after the close.  Nothing may stay behind (the fixture's teardown
 * checks the counters) and nothing may splat; the posts seen before the
 * first teardowns are delivered.
 */
TEST_F_TIMEOUT(rx, every_teardown_order_races_a_writer, 600)
{
	pthread_t th;
	int efd = self->efd;

	atomic_store(&writer_stop, 0);
	ASSERT_EQ(0, pthread_create(&th, NULL, writer, &efd));
	_stui();
	for (int i = 0; i < 100; i++) {
		int fd = uintr_create_fd(VECTOR + 1, 0);
		int dup_efd = dup(efd);

		ASSERT_GE(fd, 0);
		ASSERT_GE(dup_efd, 0);
		ASSERT_EQ(0, uintr_watch(self->fd, efd, EPOLLIN));
		ASSERT_EQ(0, uintr_watch(fd, dup_efd, EPOLLIN));
		ASSERT_TRUE(writer_posts_through(fd));
		EXPECT_EQ(0, uintr_unwatch(self->fd, efd));
		close(dup_efd);
		close(fd);
	}
	for (int i = 0; i < 100; i++) {
		int fd = uintr_create_fd(VECTOR + 1, 0);

		ASSERT_GE(fd, 0);
		ASSERT_EQ(0, uintr_watch(fd, efd, EPOLLIN));
		if (i % 2) {
			ASSERT_EQ(0, uintr_unregister_handler(0));
			close(fd);
		} else {
			close(fd);
			ASSERT_EQ(0, uintr_unregister_handler(0));
		}
		ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
		_stui();
	}
	atomic_store(&writer_stop, 1);
	pthread_join(th, NULL);
	_clui();
	EXPECT_GT(uintr_recorded, 0);
	EXPECT_EQ(self->base.watches, live_watches());
}

/* A child that watches efd (inherited) and exits with the watch on. */
static void exit_with_a_watch(int efd, int how)
{
	int fd;

	if (uintr_register_handler(uintr_record, 0) < 0)
		_exit(1);
	fd = uintr_create_fd(VECTOR, 0);
	if (fd < 0 || uintr_watch(fd, efd, EPOLLIN) < 0)
		_exit(2);
	_stui();
	if (how == 1)
		close(fd);	/* the receiver outlives its fd */
	for (int i = 0; i < 100 && uintr_recorded == 0; i++)
		usleep(1000);
	_exit(0);
}

TEST_F(rx, a_receivers_exit_ends_its_watches)
{
	for (int how = 0; how < 2; how++) {
		int status;
		pid_t pid = fork();

		ASSERT_GE(pid, 0);
		if (pid == 0)
			exit_with_a_watch(self->efd, how);
		usleep(10000);
		eventfd_add(self->efd, 1);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(self->base, 1, 0, 1, 0, 1, 0)));
		EXPECT_EQ(self->base.watches, live_watches());
	}
}

/*
 * A socket whose queue holds the uintr_fd itself, in flight, watched
 * through that fd: the file holds the fd, the fd's watch holds the file.
 * The receiver's exit ends the watch, which breaks the cycle.
 */
static void watch_a_socket_that_holds_the_fd(void)
{
	int sv[2], fd;

	if (uintr_register_handler(uintr_record, 0) < 0)
		_exit(1);
	fd = uintr_create_fd(VECTOR, 0);
	if (fd < 0 || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		_exit(2);
	if (uintr_watch(fd, sv[0], EPOLLIN) < 0)
		_exit(3);
	if (uintr_send_fd(sv[1], fd) < 0)
		_exit(4);
	/* Exit with everything open: only the exit can free it. */
	_exit(0);
}

TEST_F(rx, a_socket_carrying_its_uintr_fd_goes_with_the_receiver)
{
	int status;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (pid == 0)
		watch_a_socket_that_holds_the_fd();
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(self->base, 1, 0, 1, 0, 1, 0)));
	EXPECT_EQ(self->base.watches, live_watches());
}

/*
 * A signalfd: a blocked signal sent to the process posts.  (Its queue
 * is its process's, which the receiver's process is: the queue cannot be
 * freed, with POLLFREE, while the watch lives; the KUnit suite covers
 * POLLFREE.)
 */
TEST_F(rx, a_blocked_signal_posts_through_a_signalfd)
{
	sigset_t set, old;
	int sfd;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, &old));
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	ASSERT_GE(sfd, 0);
	ASSERT_EQ(0, uintr_watch(self->fd, sfd, EPOLLIN));
	EXPECT_EQ(0ull, uintr_pending_now());
	ASSERT_EQ(0, kill(getpid(), SIGUSR2));
	EXPECT_EQ(BIT, uintr_pending_now());
	close(sfd);
	/* The watch holds the signalfd: the fixture's close ends both. */
	ASSERT_EQ(0, sigtimedwait(&set, NULL, &(struct timespec){ 0 }) == SIGUSR2 ? 0 : -1);
	ASSERT_EQ(0, sigprocmask(SIG_SETMASK, &old, NULL));
}

TEST_HARNESS_MAIN
