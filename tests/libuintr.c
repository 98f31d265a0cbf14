// SPDX-License-Identifier: GPL-2.0
/*
 * libuintr: every function of the library.  The system call wrappers
 * return -errno and leave errno alone, libuintr_available() says yes on
 * this kernel and leaves nothing registered, fds travel over a socketpair,
 * and a handler declared with LIBUINTR_HANDLER() receives real interrupts
 * from a thread and from another process.
 */
#include "uintr_test.h"
#include "libuintr.h"

#include <pthread.h>
#include <stdatomic.h>

#include "kselftest_harness.h"

/* Not a handler anyone calls: registration tests only. */
static LIBUINTR_HANDLER(unused_handler)
{
}

static atomic_long hits;
static volatile unsigned long long last_vector = ~0ull;
static volatile int frame_ok;

/* Declared with the library's macro, as a program would. */
static LIBUINTR_HANDLER(on_uintr)
{
	frame_ok = frame != NULL;
	last_vector = vector;
	hits++;
}

#define ERRNO_CANARY 4242

TEST(handler_calls_return_negative_errno)
{
	errno = ERRNO_CANARY;
	EXPECT_EQ(-EFAULT, libuintr_register_handler(NULL, 0));
	EXPECT_EQ(-EINVAL, libuintr_register_handler((void *)unused_handler, 4));
	EXPECT_EQ(-EINVAL, libuintr_register_handler((void *)unused_handler,
						     UINTR_HANDLER_FLAG_RESTART));
	EXPECT_EQ(-EINVAL, libuintr_unregister_handler(0));
	EXPECT_EQ(ERRNO_CANARY, errno);

	ASSERT_EQ(0, libuintr_register_handler((void *)unused_handler, 0));
	EXPECT_EQ(-EBUSY, libuintr_register_handler((void *)unused_handler, 0));
	EXPECT_EQ(-EINVAL, libuintr_unregister_handler(1));
	EXPECT_EQ(0, libuintr_unregister_handler(0));
	EXPECT_EQ(-EINVAL, libuintr_unregister_handler(0));
	EXPECT_EQ(ERRNO_CANARY, errno);
}

TEST(create_fd_returns_fd_or_negative_errno)
{
	int fd;

	errno = ERRNO_CANARY;
	/* No handler registered: EINVAL (uintr_create_fd(2)). */
	EXPECT_EQ(-EINVAL, libuintr_create_fd(0, 0));

	ASSERT_EQ(0, libuintr_register_handler((void *)unused_handler, 0));
	EXPECT_EQ(-EINVAL, libuintr_create_fd(UINTR_MAX_VECTORS, 0));
	EXPECT_EQ(-EINVAL, libuintr_create_fd(1ull << 32, 0));
	EXPECT_EQ(-EINVAL, libuintr_create_fd(0, 1));
	fd = libuintr_create_fd(63, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(-EBUSY, libuintr_create_fd(63, 0));
	EXPECT_EQ(ERRNO_CANARY, errno);
	close(fd);
	EXPECT_EQ(0, libuintr_unregister_handler(0));
}

TEST(sender_calls_return_index_or_negative_errno)
{
	int fd, pipefd[2];

	errno = ERRNO_CANARY;
	EXPECT_EQ(-EBADF, libuintr_register_sender(-1, 0));
	EXPECT_EQ(-EBADF, libuintr_unregister_sender(-1, 0));
	ASSERT_EQ(0, pipe(pipefd));
	EXPECT_EQ(-EOPNOTSUPP, libuintr_register_sender(pipefd[0], 0));
	EXPECT_EQ(-EOPNOTSUPP, libuintr_unregister_sender(pipefd[0], 0));

	ASSERT_EQ(0, libuintr_register_handler((void *)unused_handler, 0));
	fd = libuintr_create_fd(3, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, libuintr_register_sender(fd, 2));
	EXPECT_EQ(-EINVAL, libuintr_unregister_sender(fd, 0));
	EXPECT_EQ(0, libuintr_register_sender(fd, 0));
	EXPECT_EQ(-EISCONN, libuintr_register_sender(fd, 0));
	EXPECT_EQ(-EINVAL, libuintr_unregister_sender(fd, 1));
	EXPECT_EQ(0, libuintr_unregister_sender(fd, 0));
	EXPECT_EQ(-EINVAL, libuintr_unregister_sender(fd, 0));

	/* The receiver is gone: new connections are refused. */
	EXPECT_EQ(0, libuintr_unregister_handler(0));
	EXPECT_EQ(-ESHUTDOWN, libuintr_register_sender(fd, 0));
	EXPECT_EQ(ERRNO_CANARY, errno);
	close(fd);
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST(wait_returns_negative_errno)
{
	struct __kernel_timespec t = { 0 };

	errno = ERRNO_CANARY;
	/* No handler registered: EOPNOTSUPP (uintr_wait(2)). */
	EXPECT_EQ(-EOPNOTSUPP, libuintr_wait(0, NULL));
	EXPECT_EQ(-EOPNOTSUPP, libuintr_wait(UINTR_WAIT_TIMEOUT, &t));

	ASSERT_EQ(0, libuintr_register_handler((void *)unused_handler, 0));
	EXPECT_EQ(-EINVAL, libuintr_wait(4, NULL));
	EXPECT_EQ(-EFAULT, libuintr_wait(UINTR_WAIT_TIMEOUT, NULL));
	t.tv_nsec = 1000000000;
	EXPECT_EQ(-EINVAL, libuintr_wait(UINTR_WAIT_TIMEOUT, &t));
	t.tv_nsec = 1000000;
	EXPECT_EQ(-ETIMEDOUT, libuintr_wait(UINTR_WAIT_TIMEOUT, &t));
	EXPECT_EQ(ERRNO_CANARY, errno);
	EXPECT_EQ(0, libuintr_unregister_handler(0));
}

TEST(available_leaves_nothing_behind)
{
	struct uintr_stats before, after;
	int fd;

	ASSERT_EQ(0, uintr_read_stats(&before));
	errno = ERRNO_CANARY;
	EXPECT_EQ(1, libuintr_available());
	EXPECT_EQ(1, libuintr_available());
	EXPECT_EQ(ERRNO_CANARY, errno);
	ASSERT_EQ(0, uintr_read_stats(&after));
	if (!uintr_stats_equal(&before, &after)) {
		uintr_stats_print("before", &before);
		uintr_stats_print("after", &after);
	}
	EXPECT_TRUE(uintr_stats_equal(&before, &after));

	/* No handler was left registered by the probe. */
	EXPECT_EQ(-EINVAL, libuintr_unregister_handler(0));
	EXPECT_EQ(0, libuintr_register_handler((void *)unused_handler, 0));

	/* A receiver's registration survives the probe untouched. */
	fd = libuintr_create_fd(7, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(1, libuintr_available());
	EXPECT_EQ(-EBUSY, libuintr_register_handler((void *)unused_handler, 0));
	EXPECT_EQ(-EBUSY, libuintr_create_fd(7, 0));
	EXPECT_EQ(0, libuintr_register_sender(fd, 0));
	EXPECT_EQ(0, libuintr_unregister_sender(fd, 0));
	close(fd);
	EXPECT_EQ(0, libuintr_unregister_handler(0));
}

TEST(send_and_receive_fds)
{
	int sv[2], pipefd[2], got;
	char c = 0;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, pipe(pipefd));

	errno = ERRNO_CANARY;
	ASSERT_EQ(0, libuintr_send_fd(sv[0], pipefd[1]));
	got = libuintr_recv_fd(sv[1]);
	ASSERT_GE(got, 0);
	EXPECT_NE(pipefd[1], got);
	EXPECT_EQ(FD_CLOEXEC, fcntl(got, F_GETFD) & FD_CLOEXEC);
	/* The same pipe: what goes into the copy comes out of the pipe. */
	EXPECT_EQ(1, write(got, "x", 1));
	EXPECT_EQ(1, read(pipefd[0], &c, 1));
	EXPECT_EQ('x', c);
	close(got);

	/* A message without a descriptor. */
	EXPECT_EQ(1, write(sv[0], "y", 1));
	EXPECT_EQ(-EBADMSG, libuintr_recv_fd(sv[1]));

	/* Bad descriptors and sockets. */
	EXPECT_EQ(-EBADF, libuintr_send_fd(sv[0], -1));
	EXPECT_EQ(-EBADF, libuintr_send_fd(-1, pipefd[1]));
	EXPECT_EQ(-ENOTSOCK, libuintr_send_fd(pipefd[1], pipefd[0]));
	EXPECT_EQ(-ENOTSOCK, libuintr_recv_fd(pipefd[0]));

	/* The peer has gone. */
	close(sv[0]);
	EXPECT_EQ(-EPIPE, libuintr_recv_fd(sv[1]));
	EXPECT_EQ(-EPIPE, libuintr_send_fd(sv[1], pipefd[0]));
	EXPECT_EQ(ERRNO_CANARY, errno);
	close(sv[1]);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* Waits for `want' hits: CLUI, look, uintr_wait(), STUI (uintr_wait(2)). */
static int await_hits(long want)
{
	struct __kernel_timespec t = { .tv_sec = 10 };
	int ret;

	while (hits < want) {
		_clui();
		ret = hits < want ? libuintr_wait(UINTR_WAIT_TIMEOUT, &t) : -EINTR;
		_stui();
		if (ret != -EINTR)
			return ret;
	}
	return 0;
}

static void *thread_sender(void *arg)
{
	int fd = *(int *)arg;
	int idx = libuintr_register_sender(fd, 0);

	if (idx < 0)
		return (void *)(long)idx;
	_senduipi(idx);
	return (void *)(long)libuintr_unregister_sender(fd, 0);
}

TEST(handler_macro_receives_from_a_thread)
{
	pthread_t t;
	void *res;
	int fd;

	hits = 0;
	ASSERT_EQ(0, libuintr_register_handler((void *)on_uintr, 0));
	fd = libuintr_create_fd(42, 0);
	ASSERT_GE(fd, 0);
	_stui();
	ASSERT_EQ(0, pthread_create(&t, NULL, thread_sender, &fd));
	EXPECT_EQ(0, await_hits(1));
	ASSERT_EQ(0, pthread_join(t, &res));
	EXPECT_EQ(0, (long)res);
	EXPECT_EQ(1, hits);
	EXPECT_EQ(42ull, last_vector);
	EXPECT_TRUE(frame_ok);
	_clui();
	close(fd);
	EXPECT_EQ(0, libuintr_unregister_handler(0));
}

TEST(handler_macro_receives_from_a_process)
{
	int sv[2], fd, status;
	pid_t pid;

	hits = 0;
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int got = libuintr_recv_fd(sv[1]);
		int idx;

		if (got < 0)
			_exit(10);
		idx = libuintr_register_sender(got, 0);
		if (idx < 0)
			_exit(11);
		_senduipi(idx);
		_senduipi(idx);	/* may coalesce with the first */
		_exit(0);
	}
	ASSERT_EQ(0, libuintr_register_handler((void *)on_uintr, 0));
	fd = libuintr_create_fd(17, 0);
	ASSERT_GE(fd, 0);
	_stui();
	ASSERT_EQ(0, libuintr_send_fd(sv[0], fd));
	EXPECT_EQ(0, await_hits(1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_GE(hits, 1);
	EXPECT_LE(hits, 2);
	EXPECT_EQ(17ull, last_vector);
	_clui();
	close(fd);
	close(sv[0]);
	close(sv[1]);
	EXPECT_EQ(0, libuintr_unregister_handler(0));
}

TEST_HARNESS_MAIN
