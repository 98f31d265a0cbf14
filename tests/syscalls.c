// SPDX-License-Identifier: GPL-2.0
/*
 * The User Interrupt system calls and every error the man pages list.
 */
#include "uintr_test.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "kselftest_harness.h"

/* Not canonical with 4- or 5-level paging (bits 63:56 differ). */
#define NONCANONICAL ((void *)0x4000000000000000ull)
#define KERNEL_TEXT ((void *)0xffffffff81000000ull)

TEST(register_handler_rejects_flags)
{
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_handler(uintr_test_handler(), 4)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_handler(uintr_test_handler(), 1u << 31)));
	/* RESTART qualifies INTERRUPT_SLEEP; alone it means nothing. */
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_handler(uintr_test_handler(),
							    UINTR_HANDLER_FLAG_RESTART)));
}

TEST(register_handler_rejects_bad_addresses)
{
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_register_handler(NULL, 0)));
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_register_handler(KERNEL_TEXT, 0)));
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_register_handler(NONCANONICAL, 0)));
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_register_handler((void *)-1ull, 0)));
}

TEST(register_handler_twice_is_ebusy)
{
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	EXPECT_EQ(-EBUSY, UINTR_RET(uintr_register_handler(uintr_test_handler(), 0)));
	ASSERT_EQ(0, uintr_unregister_handler(0));
	/* After unregistering, the thread may register again. */
	EXPECT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
}

TEST(unregister_handler_errors)
{
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_unregister_handler(0)));
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_unregister_handler(2)));
	EXPECT_EQ(0, uintr_unregister_handler(0));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_unregister_handler(0)));
}

TEST(create_fd_needs_a_handler)
{
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_create_fd(0, 0)));
}

TEST(create_fd_rejects_bad_vectors_and_flags)
{
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_create_fd(64, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_create_fd(-1ull, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_create_fd(1ull << 63, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_create_fd(0, 1)));
}

TEST(create_fd_is_cloexec_and_one_per_vector)
{
	int fd, again;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	fd = uintr_create_fd(5, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(-EBUSY, UINTR_RET(uintr_create_fd(5, 0)));
	/* Closing the fd frees the vector. */
	close(fd);
	again = uintr_create_fd(5, 0);
	EXPECT_GE(again, 0);
}

TEST(create_fd_all_64_vectors)
{
	int fds[64];

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	for (int v = 0; v < 64; v++) {
		fds[v] = uintr_create_fd(v, 0);
		ASSERT_GE(fds[v], 0) TH_LOG("vector %d: %s", v, strerror(errno));
	}
	for (int v = 0; v < 64; v++)
		EXPECT_EQ(-EBUSY, UINTR_RET(uintr_create_fd(v, 0)));
}

TEST(unregister_handler_keeps_fds_and_frees_nothing_early)
{
	int fd;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	fd = uintr_create_fd(3, 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, uintr_unregister_handler(0));
	/* The fd stays open and valid, but no sender may connect. */
	EXPECT_EQ(0, fcntl(fd, F_GETFD) < 0);
	EXPECT_EQ(-ESHUTDOWN, UINTR_RET(uintr_register_sender(fd, 0)));
	/* A new registration has a fresh vector space. */
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	EXPECT_GE(uintr_create_fd(3, 0), 0);
}

TEST(fdinfo_shows_vector_and_receiver)
{
	char path[64], buf[512];
	int fd;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	fd = uintr_create_fd(42, 0);
	ASSERT_GE(fd, 0);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ASSERT_EQ(0, uintr_read_file(path, buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "uintr_vector:\t42\n")) TH_LOG("%s", buf);
	snprintf(path, sizeof(path), "uintr_receiver_tid:\t%d\n", gettid());
	EXPECT_NE(NULL, strstr(buf, path)) TH_LOG("%s", buf);
}

/*
 * Whether the fdinfo of fd in process pid (0: the caller; /proc is the
 * initial namespace's) names receiver TID tid.
 */
static int fdinfo_names_tid(pid_t pid, int fd, pid_t tid)
{
	char path[64], buf[512], want[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(want, sizeof(want), "uintr_receiver_tid:\t%d\n", tid);
	if (uintr_read_file(path, buf, sizeof(buf)))
		return 0;
	if (!strstr(buf, want))
		fprintf(stderr, "# %s: no '%s' in:\n%s", path, want, buf);
	return strstr(buf, want) != NULL;
}

/*
 * fdinfo shows the receiver's TID as the reader's PID namespace sees it,
 * 0 where the receiver is not visible, like a pidfd's: in a new namespace
 * the receiver outside is invisible, and the one inside is pid 1 there,
 * while the parent namespace sees it under its own number.
 */
TEST(fdinfo_tid_follows_the_readers_pid_namespace)
{
	int outer, inner, status, up[2], down[2];
	pid_t middle, child;
	char c;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	outer = uintr_create_fd(43, 0);
	ASSERT_GE(outer, 0);
	middle = fork();
	ASSERT_GE(middle, 0);
	if (middle == 0) {
		if (unshare(CLONE_NEWPID) || pipe(up) || pipe(down))
			_exit(20);
		child = fork();
		if (child < 0)
			_exit(21);
		if (child == 0) {
			if (getpid() != 1 || !fdinfo_names_tid(0, outer, 0))
				_exit(30);
			if (uintr_register_handler(uintr_test_handler(), 0))
				_exit(31);
			inner = uintr_create_fd(44, 0);
			if (inner < 0 || !fdinfo_names_tid(0, inner, 1))
				_exit(32);
			if (write(up[1], &inner, sizeof(inner)) != sizeof(inner) ||
			    read(down[0], &c, 1) != 1)
				_exit(33);
			_exit(0);
		}
		/* The middle process stayed in the parent namespace. */
		if (read(up[0], &inner, sizeof(inner)) != sizeof(inner))
			_exit(22);
		if (!fdinfo_names_tid(child, inner, child))
			_exit(23);
		if (write(down[1], "", 1) != 1 ||
		    waitpid(child, &status, 0) != child)
			_exit(24);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 25);
	}
	ASSERT_EQ(middle, waitpid(middle, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_TRUE(fdinfo_names_tid(0, outer, gettid()));
}

TEST(register_sender_bad_fds)
{
	int pipefd[2];

	EXPECT_EQ(-EBADF, UINTR_RET(uintr_register_sender(-1, 0)));
	EXPECT_EQ(-EBADF, UINTR_RET(uintr_register_sender(1000, 0)));
	ASSERT_EQ(0, pipe(pipefd));
	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_register_sender(pipefd[0], 0)));
	close(pipefd[1]);
	EXPECT_EQ(-EBADF, UINTR_RET(uintr_register_sender(pipefd[1], 0)));
	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_unregister_sender(pipefd[0], 0)));
	EXPECT_EQ(-EBADF, UINTR_RET(uintr_unregister_sender(-1, 0)));
}

TEST(register_sender_connects_once)
{
	int fd;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	fd = uintr_create_fd(0, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_sender(fd, 2)));
	EXPECT_EQ(0, uintr_register_sender(fd, 0));
	EXPECT_EQ(-EISCONN, UINTR_RET(uintr_register_sender(fd, 0)));
}

TEST(unregister_sender_errors_and_reuse)
{
	int a, b;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	a = uintr_create_fd(1, 0);
	b = uintr_create_fd(2, 0);
	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	/* Not a sender at all, then not connected to this fd. */
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_unregister_sender(a, 0)));
	ASSERT_EQ(0, uintr_register_sender(a, 0));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_unregister_sender(b, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_unregister_sender(a, 1)));
	EXPECT_EQ(1, uintr_register_sender(b, 0));
	EXPECT_EQ(0, uintr_unregister_sender(a, 0));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_unregister_sender(a, 0)));
	/* The freed index is handed out again. */
	EXPECT_EQ(0, uintr_register_sender(a, 0));
}

/* Four receiver threads with 64 fds each: 256 distinct uintr_fds. */
struct receiver_thread {
	pthread_t thread;
	int fds[64];
	int error;
	pthread_barrier_t *ready, *done;
};

static void *receive_64(void *arg)
{
	struct receiver_thread *r = arg;

	if (uintr_register_handler(uintr_test_handler(), 0))
		r->error = errno;
	for (int v = 0; v < 64 && !r->error; v++) {
		r->fds[v] = uintr_create_fd(v, 0);
		if (r->fds[v] < 0)
			r->error = errno;
	}
	pthread_barrier_wait(r->ready);
	pthread_barrier_wait(r->done);
	return NULL;
}

/*
 * 256 connections fill the first page of the table; the next one grows
 * it (the limit, and ENOSPC at it, are in limits.c).
 */
TEST(sender_table_fills_its_first_page_then_grows)
{
	struct receiver_thread r[4];
	pthread_barrier_t ready, done;
	int extra, again;

	pthread_barrier_init(&ready, NULL, 5);
	pthread_barrier_init(&done, NULL, 5);
	for (int i = 0; i < 4; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].ready = &ready;
		r[i].done = &done;
		ASSERT_EQ(0, pthread_create(&r[i].thread, NULL, receive_64, &r[i]));
	}
	pthread_barrier_wait(&ready);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, r[i].error) TH_LOG("receiver %d: %s", i, strerror(r[i].error));
	}

	for (int i = 0; i < 256; i++)
		ASSERT_EQ(i, uintr_register_sender(r[i / 64].fds[i % 64], 0));
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	extra = uintr_create_fd(7, 0);
	again = uintr_create_fd(8, 0);
	ASSERT_GE(extra, 0);
	ASSERT_GE(again, 0);
	EXPECT_EQ(256, uintr_register_sender(extra, 0));
	/* A freed index is handed out before the table grows again. */
	ASSERT_EQ(0, uintr_unregister_sender(r[2].fds[9], 0));
	EXPECT_EQ(2 * 64 + 9, uintr_register_sender(again, 0));

	pthread_barrier_wait(&done);
	for (int i = 0; i < 4; i++)
		pthread_join(r[i].thread, NULL);
}

static void *register_as_sender(void *arg)
{
	return (void *)uintr_register_sender(*(int *)arg, 0);
}

TEST(sender_indexes_are_per_thread)
{
	pthread_t t[2];
	void *ret[2];
	int fd;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	fd = uintr_create_fd(9, 0);
	ASSERT_GE(fd, 0);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, register_as_sender, &fd));
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], &ret[i]);
		EXPECT_EQ(0, (long)ret[i]);
	}
}

TEST_HARNESS_MAIN
