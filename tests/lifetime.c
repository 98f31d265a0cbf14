// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetimes: what fork, exec and fd passing inherit, and teardown of
 * receivers, senders and uintr_fds in every order, within a process and
 * across processes.  The live-object counters must come back to where
 * they started.
 */
#include "uintr_test.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

static char *self_path;

static int setup_receiver(int vector)
{
	if (uintr_register_handler(uintr_test_handler(), 0))
		return -1;
	return uintr_create_fd(vector, 0);
}

TEST(counters_are_readable)
{
	struct uintr_stats s;

	ASSERT_EQ(0, uintr_read_stats(&s));
	uintr_stats_print("now", &s);
}

TEST(fork_inherits_the_fd_not_the_registrations)
{
	struct uintr_stats base;
	int fd, status;
	pid_t pid;

	ASSERT_EQ(0, uintr_read_stats(&base));
	fd = setup_receiver(4);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, uintr_register_sender(fd, 0));

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* No handler, no sender connection in the child... */
		if (uintr_create_fd(5, 0) != -1 || errno != EINVAL)
			_exit(1);
		if (uintr_unregister_handler(0) != -1 || errno != EINVAL)
			_exit(2);
		if (uintr_unregister_sender(fd, 0) != -1 || errno != EINVAL)
			_exit(3);
		/* ...but the fd works, with the child's own index space. */
		if (uintr_register_sender(fd, 0) != 0)
			_exit(4);
		if (uintr_register_handler(uintr_test_handler(), 0) != 0)
			_exit(5);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The child's sender and receiver are gone; ours are intact. */
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(base, 1, 1, 1, 1, 1, 1)));
	EXPECT_EQ(-EISCONN, UINTR_RET(uintr_register_sender(fd, 0)));
}

/* Runs after exec (see main): nothing of uintr may have survived. */
static int after_exec(int fd)
{
	struct uintr_stats s, zero = { 0 };

	if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
		return 10;
	if (uintr_unregister_handler(0) != -1 || errno != EINVAL)
		return 11;
	/* UIF was set before exec; exec resets it. */
	if (_testui())
		return 13;
	if (uintr_read_stats(&s) || !uintr_stats_equal(&s, &zero)) {
		uintr_stats_print("after exec", &s);
		return 12;
	}
	return 0;
}

TEST(exec_closes_the_fd_and_drops_all_state)
{
	struct uintr_stats base, zero = { 0 };
	int fd, status;
	pid_t pid;

	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_TRUE(uintr_stats_equal(&base, &zero)) uintr_stats_print("base", &base);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		char arg[16];

		fd = setup_receiver(8);
		if (fd < 0 || uintr_register_sender(fd, 0) != 0)
			_exit(20);
		_stui();
		snprintf(arg, sizeof(arg), "%d", fd);
		execl(self_path, self_path, "--after-exec", arg, NULL);
		_exit(21);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST(scm_rights_sender_in_another_process)
{
	struct uintr_stats base;
	int sv[2], fd, status;
	pid_t pid;

	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		char go;
		int got = uintr_recv_fd(sv[1]);

		if (got < 0)
			_exit(30);
		if (uintr_register_sender(got, 0) != 0)
			_exit(31);
		/* The connection outlives our copy of the fd. */
		close(got);
		if (write(sv[1], "r", 1) != 1 || read(sv[1], &go, 1) != 1)
			_exit(32);
		_exit(0);
	}
	fd = setup_receiver(11);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, uintr_send_fd(sv[0], fd));
	char ready;
	ASSERT_EQ(1, read(sv[0], &ready, 1));
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(base, 1, 1, 1, 1, 1, 1)));

	/* Our close is the last reference: it disconnects the other process. */
	close(fd);
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(base, 1, 1, 1, 1, 0, 0)));
	ASSERT_EQ(1, write(sv[0], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(base, 1, 0, 1, 0, 0, 0)));
}

/* A thread that registers as a receiver, creates an fd, and exits. */
static void *receiver_then_exit(void *arg)
{
	*(int *)arg = setup_receiver(20);
	return NULL;
}

TEST(receiver_thread_exits_first)
{
	struct uintr_stats base;
	pthread_t t;
	int fd;

	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_EQ(0, pthread_create(&t, NULL, receiver_then_exit, &fd));
	pthread_join(t, NULL);
	ASSERT_GE(fd, 0);
	/* The fd keeps the receiver object, which refuses senders. */
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(base, 1, 0, 1, 0, 1, 0)));
	EXPECT_EQ(-ESHUTDOWN, UINTR_RET(uintr_register_sender(fd, 0)));
	close(fd);
	EXPECT_TRUE(uintr_stats_reach(base));
}

/*
 * pthread_join() returns once the exiting thread's mm is gone (the
 * child-tid futex), before the kernel releases the thread's receiver:
 * even right after the join, the receiver must refuse a new sender.
 */
TEST(receiver_thread_refuses_senders_right_after_join)
{
	struct uintr_stats base;
	int i, fd, accepted = 0;
	pthread_t t;

	ASSERT_EQ(0, uintr_read_stats(&base));
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, pthread_create(&t, NULL, receiver_then_exit, &fd));
		ASSERT_EQ(0, pthread_join(t, NULL));
		ASSERT_GE(fd, 0);
		if (uintr_register_sender(fd, 0) >= 0) {
			accepted++;
			uintr_unregister_sender(fd, 0);
		}
		close(fd);
	}
	EXPECT_EQ(0, accepted) TH_LOG("%d of %d exited receivers took a sender",
				      accepted, i);
	EXPECT_TRUE(uintr_stats_reach(base));
}

TEST(receiver_thread_exits_while_connected)
{
	struct uintr_stats base;
	pthread_t t;
	int fd;

	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_EQ(0, pthread_create(&t, NULL, receiver_then_exit, &fd));
	pthread_join(t, NULL);
	ASSERT_GE(fd, 0);
	/* Connect before the thread exits would be racy; do it as a fresh
	 * receiver instead: register in this thread, connect, unregister. */
	close(fd);
	fd = setup_receiver(21);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, uintr_register_sender(fd, 0));
	ASSERT_EQ(0, uintr_unregister_handler(0));
	/* The UPID stays while the connection can reach it. */
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(base, 1, 1, 1, 1, 1, 1)));
	ASSERT_EQ(0, uintr_unregister_sender(fd, 0));
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(base, 1, 1, 1, 1, 1, 0)));
	close(fd);
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(base, 0, 1, 0, 1, 0, 0)));
}

/* A thread of this process connected to a uintr_fd of this thread. */
FIXTURE(sender_thread) {
	struct uintr_stats base;
	pthread_barrier_t connected, finish;
	int fd;
	long index;
	pthread_t t;
};

static void *sender_thread_main(void *arg)
{
	FIXTURE_DATA(sender_thread) *self = arg;

	self->index = uintr_register_sender(self->fd, 0);
	pthread_barrier_wait(&self->connected);
	pthread_barrier_wait(&self->finish);
	return NULL;
}

FIXTURE_SETUP(sender_thread)
{
	ASSERT_EQ(0, uintr_read_stats(&self->base));
	pthread_barrier_init(&self->connected, NULL, 2);
	pthread_barrier_init(&self->finish, NULL, 2);
	self->fd = setup_receiver(30);
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, pthread_create(&self->t, NULL, sender_thread_main, self));
	pthread_barrier_wait(&self->connected);
	ASSERT_EQ(0, self->index);
}

FIXTURE_TEARDOWN(sender_thread) {}

/* Lets the sender thread exit and waits for it. */
static void sender_thread_exit(FIXTURE_DATA(sender_thread) *self)
{
	pthread_barrier_wait(&self->finish);
	pthread_join(self->t, NULL);
}

TEST_F(sender_thread, exits_first)
{
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(self->base, 1, 1, 1, 1, 1, 1)));
	sender_thread_exit(self);
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(self->base, 1, 0, 1, 0, 1, 0)));
	/* The fd still takes new senders. */
	EXPECT_EQ(0, uintr_register_sender(self->fd, 0));
}

TEST_F(sender_thread, fd_closed_while_connected)
{
	close(self->fd);
	/* Connection and fd object gone while the sender still lives. */
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(self->base, 1, 1, 1, 1, 0, 0)));
	sender_thread_exit(self);
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(self->base, 1, 0, 1, 0, 0, 0)));
	/* The vector is free again. */
	EXPECT_GE(uintr_create_fd(30, 0), 0);
}

TEST(receiver_process_exits_before_sender_process)
{
	struct uintr_stats base;
	int sv[2], status, fd;
	pid_t receiver;
	char ok;

	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	receiver = fork();
	ASSERT_GE(receiver, 0);
	if (receiver == 0) {
		int rfd = setup_receiver(40);

		if (rfd < 0 || uintr_send_fd(sv[1], rfd))
			_exit(40);
		_exit(0);
	}
	fd = uintr_recv_fd(sv[0]);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(receiver, waitpid(receiver, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The receiver process is gone; its fd object lives in ours. */
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(base, 1, 0, 1, 0, 1, 0)));
	EXPECT_EQ(-ESHUTDOWN, UINTR_RET(uintr_register_sender(fd, 0)));
	close(fd);
	EXPECT_TRUE(uintr_stats_reach(base));
	(void)ok;
}

TEST(everything_freed_after_the_tests)
{
	struct uintr_stats now, zero = { 0 };

	/* Every earlier test ran in its own process, now gone. */
	ASSERT_EQ(0, uintr_read_stats(&now));
	EXPECT_TRUE(uintr_stats_equal(&now, &zero)) uintr_stats_print("now", &now);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--after-exec"))
		return after_exec(atoi(argv[2]));
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
