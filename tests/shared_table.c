// SPDX-License-Identifier: GPL-2.0
/*
 * A sender table shared by a process's threads (UINTR_SENDER_SHARED) and
 * passed to other processes (uintr_ipi_fd(), UIPI_SET_TARGET_TABLE): an
 * index works in every thread, present and future, and in the processes
 * that installed the table; fork passes it on in neither direction and
 * exec leaves it; every
 * error; teardown in every order with the counters back where they were.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"

/* Waits up to 5 s for at least n deliveries, with UIF set. */
static int recorded_with_uif(int n)
{
	_stui();
	return uintr_wait_recorded(n);
}

/*
 * Exec'd by exec_leaves_the_table: the new image never shares the old
 * table, so SENDUIPI is a #UD (SIGILL) there.
 */
__attribute__((constructor)) static void send_after_exec(void)
{
	if (getenv("UINTR_SEND_AFTER_EXEC")) {
		_senduipi(0);
		_exit(0);
	}
}

TEST(rejects_unknown_flags)
{
	int fd;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	fd = uintr_create_fd(1, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_sender(fd, 2)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_sender(fd, ~0u)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_self(2, 2)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_ipi_fd(1)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_ipi_fd(~0u)));
}

TEST(own_table_first_is_ebusy)
{
	int fd1, fd2;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	fd1 = uintr_create_fd(1, 0);
	fd2 = uintr_create_fd(2, 0);
	ASSERT_GE(fd1, 0);
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, uintr_register_sender(fd1, 0));
	EXPECT_EQ(-EBUSY, UINTR_RET(uintr_register_sender(fd2, UINTR_SENDER_SHARED)));
	EXPECT_EQ(-EBUSY, UINTR_RET(uintr_register_self(3, UINTR_SENDER_SHARED)));
	/* Without the flag the thread's own table takes it. */
	EXPECT_EQ(1, uintr_register_sender(fd2, 0));
}

static long shared_index;

static void *send_shared(void *arg)
{
	_senduipi(shared_index);
	return NULL;
}

TEST(threads_that_never_registered_send)
{
	pthread_t t;

	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	shared_index = uintr_register_self(7, UINTR_SENDER_SHARED);
	ASSERT_EQ(0, shared_index);
	/* A thread created after the registration. */
	ASSERT_EQ(0, pthread_create(&t, NULL, send_shared, NULL));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_TRUE(recorded_with_uif(1));
	EXPECT_EQ(7ull, uintr_recorded_vector);
	/* And this thread, which joined it by registering. */
	_senduipi(shared_index);
	EXPECT_TRUE(recorded_with_uif(2));
}

static int sibling_fd;
static long sibling_index;

static void *register_shared(void *arg)
{
	sibling_index = uintr_register_sender(sibling_fd, UINTR_SENDER_SHARED);
	return NULL;
}

TEST(index_of_a_sibling_works_here)
{
	pthread_t t;

	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	sibling_fd = uintr_create_fd(12, 0);
	ASSERT_GE(sibling_fd, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, register_shared, NULL));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, sibling_index);
	/* The sibling is gone; the table is the process's. */
	_senduipi(sibling_index);
	ASSERT_TRUE(recorded_with_uif(1));
	EXPECT_EQ(12ull, uintr_recorded_vector);
	/* Connecting the same fd again: once per table. */
	EXPECT_EQ(-EISCONN, UINTR_RET(uintr_register_sender(sibling_fd,
							     UINTR_SENDER_SHARED)));
	/* Any thread of the process may disconnect it. */
	EXPECT_EQ(0, uintr_unregister_sender(sibling_fd, 0));
}

/*
 * fork() passes no table on: the child starts without one, as after
 * execve(), so the parent's index is a #UD (SIGILL) there and the
 * parent's receiver gets nothing.
 */
TEST(forked_child_cannot_use_the_parents_indexes)
{
	int status;
	pid_t pid;
	long idx;

	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	idx = uintr_register_self(33, UINTR_SENDER_SHARED);
	ASSERT_GE(idx, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		_senduipi(idx);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status)) TH_LOG("child exited with %d",
						WEXITSTATUS(status));
	EXPECT_EQ(SIGILL, WTERMSIG(status));
	usleep(10000);
	_stui();
	EXPECT_EQ(0, uintr_recorded);
}

/*
 * And the other direction: a connection a forked child makes lands in a
 * table of the child's own, never in the parent's.  The child's first
 * index is 0 (in the parent's table 0 is taken), and the parent's next
 * one is 1 while the child's connection lives.
 */
TEST(forked_childs_connections_stay_its_own)
{
	int sv[2], status;
	long child_idx;
	pid_t pid;
	char go;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	ASSERT_EQ(0, uintr_register_self(33, UINTR_SENDER_SHARED));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		long own;

		if (uintr_register_handler(uintr_record, 0))
			_exit(30);
		own = uintr_register_self(34, UINTR_SENDER_SHARED);
		if (write(sv[1], &own, sizeof(own)) != sizeof(own))
			_exit(31);
		if (own < 0)
			_exit(32);
		/* The child's index reaches the child's receiver. */
		_senduipi(own);
		if (!recorded_with_uif(1) || uintr_recorded_vector != 34)
			_exit(33);
		/* Keep the connection until the parent has looked. */
		_exit(read(sv[1], &go, 1) == 1 ? 0 : 34);
	}
	ASSERT_EQ((ssize_t)sizeof(child_idx),
		  read(sv[0], &child_idx, sizeof(child_idx)));
	EXPECT_EQ(0, child_idx);
	EXPECT_EQ(1, uintr_register_self(35, UINTR_SENDER_SHARED));
	_senduipi(1);
	EXPECT_TRUE(recorded_with_uif(1));
	EXPECT_EQ(35ull, uintr_recorded_vector);
	ASSERT_EQ(1, write(sv[0], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child: status %#x", status);
}

/*
 * Sharing with a child is explicit: this thread connects its own vector
 * in the shared table, and the child installs the table from the ipi fd
 * it inherited.  Returns the child's pid (0 in the child, which exits 30
 * if it cannot install the table) and the index through idx.
 */
static pid_t fork_sharing_the_table(struct __test_metadata *_metadata,
				    int vector, long *idx)
{
	int ipi;
	pid_t pid;

	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0)) return -1;
	*idx = uintr_register_self(vector, UINTR_SENDER_SHARED);
	ASSERT_GE(*idx, 0) return -1;
	ipi = uintr_ipi_fd(0);
	ASSERT_GE(ipi, 0) return -1;
	pid = fork();
	ASSERT_GE(pid, 0) return -1;
	if (pid == 0 && uintr_set_target_table(ipi))
		_exit(30);
	return pid;
}

TEST(forked_child_shares_through_an_ipi_fd)
{
	int status;
	pid_t pid;
	long idx;

	pid = fork_sharing_the_table(_metadata, 36, &idx);
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		_senduipi(idx);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child: status %#x", status);
	EXPECT_TRUE(recorded_with_uif(1));
	EXPECT_EQ(36ull, uintr_recorded_vector);
}

/*
 * A process that installed a table from an ipi fd and then execs: the
 * new image starts without it (and without the fd, which is
 * close-on-exec), so SENDUIPI is a #UD (SIGILL) there.
 */
TEST(exec_leaves_the_table)
{
	int status;
	pid_t pid;
	long idx;

	pid = fork_sharing_the_table(_metadata, 5, &idx);
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		setenv("UINTR_SEND_AFTER_EXEC", "1", 1);
		execl("/proc/self/exe", "shared_table", (char *)NULL);
		_exit(40);
	}
	/* What the new image sends on. */
	EXPECT_EQ(0, idx);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status)) TH_LOG("child exited with %d",
						WEXITSTATUS(status));
	EXPECT_EQ(SIGILL, WTERMSIG(status));
	usleep(10000);
	_stui();
	EXPECT_EQ(0, uintr_recorded);
}

/*
 * Another process installs this process's table from an ipi fd and sends
 * on an index made here: the receiver here gets it.
 */
TEST(ipi_fd_shares_the_table_with_another_process)
{
	int sv[2], status, ipi;
	pid_t pid;
	long idx;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = uintr_spawn();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int got = uintr_recv_fd(sv[1]);
		long index;

		if (got < 0 || read(sv[1], &index, sizeof(index)) != sizeof(index))
			_exit(30);
		if (ioctl(got, 0x1234) != -1 || errno != ENOTTY)
			_exit(31);
		if (uintr_set_target_table(got))
			_exit(32);
		/* Installing the same table again is no change. */
		if (uintr_set_target_table(got))
			_exit(33);
		close(got);
		_senduipi(index);
		_exit(0);
	}
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	idx = uintr_register_self(44, UINTR_SENDER_SHARED);
	ASSERT_GE(idx, 0);
	ipi = uintr_ipi_fd(0);
	ASSERT_GE(ipi, 0);
	EXPECT_EQ(FD_CLOEXEC, fcntl(ipi, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, uintr_send_fd(sv[0], ipi));
	ASSERT_EQ((ssize_t)sizeof(idx), write(sv[0], &idx, sizeof(idx)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child: status %#x", status);
	EXPECT_TRUE(recorded_with_uif(1));
	EXPECT_EQ(44ull, uintr_recorded_vector);
}

TEST(second_table_is_ebusy)
{
	int ipi, sv[2], status;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = uintr_spawn();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* This process makes a table of its own first. */
		int own = uintr_ipi_fd(0), got = uintr_recv_fd(sv[1]);

		if (own < 0 || got < 0)
			_exit(30);
		_exit(uintr_set_target_table(got) == -1 && errno == EBUSY ? 0 : 31);
	}
	ipi = uintr_ipi_fd(0);
	ASSERT_GE(ipi, 0);
	ASSERT_EQ(0, uintr_send_fd(sv[0], ipi));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child: status %#x", status);
}

/*
 * Counters relative to base: receivers (with their UPIDs), tables (with
 * their UITTs), uintr_fd objects, connections, ipi fds.
 */
static struct uintr_stats with(struct uintr_stats base, long receivers,
			       long tables, long fds, long connections,
			       long ipi_fds)
{
	base = uintr_stats_plus(base, receivers, tables, receivers, tables, fds,
				connections);
	base.ipi_fds += ipi_fds;
	return base;
}

static void *join_and_exit(void *arg)
{
	_senduipi(*(long *)arg);
	return NULL;
}

/* In a child: the receiver goes before the table's users. */
static int receiver_goes_first(const struct uintr_stats *base)
{
	pthread_t t;
	int fd, ipi;
	long idx;

	if (uintr_register_handler(uintr_record, 0))
		return 1;
	fd = uintr_create_fd(9, 0);
	idx = uintr_register_sender(fd, UINTR_SENDER_SHARED);
	if (fd < 0 || idx != 0)
		return 2;
	if (pthread_create(&t, NULL, join_and_exit, &idx) || pthread_join(t, NULL))
		return 3;
	if (!uintr_stats_reach(with(*base, 1, 1, 1, 1, 0)))
		return 4;
	ipi = uintr_ipi_fd(0);
	if (ipi < 0 || uintr_unregister_handler(0))
		return 5;
	/* The fd's close disconnects the table; receiver and fd object go. */
	close(fd);
	if (!uintr_stats_reach(with(*base, 0, 1, 0, 0, 1)))
		return 6;
	/* This thread, the mm and the ipi fd hold the (empty) table. */
	close(ipi);
	return 0;
}

TEST(receiver_goes_first_then_the_process)
{
	struct uintr_stats base;
	int status;
	pid_t pid;

	ASSERT_EQ(0, uintr_read_stats(&base));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(receiver_goes_first(&base));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_TRUE(uintr_stats_become(&base));
}

/* The sending process goes; the receiver here keeps its fd. */
TEST(sending_process_goes_first)
{
	struct uintr_stats base;
	int status, fd;
	pid_t pid;

	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	fd = uintr_create_fd(21, 0);
	ASSERT_GE(fd, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		long idx = uintr_register_sender(fd, UINTR_SENDER_SHARED);
		pthread_t t;

		if (idx != 0 || pthread_create(&t, NULL, join_and_exit, &idx) ||
		    pthread_join(t, NULL))
			_exit(30);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_TRUE(recorded_with_uif(1));
	EXPECT_EQ(21ull, uintr_recorded_vector);
	/* The child's table and connection went with it. */
	EXPECT_TRUE(uintr_stats_reach(with(base, 1, 0, 1, 0, 0)));
}

/* A child process whose table is held by an ipi fd in its parent only. */
TEST(table_held_by_an_ipi_fd_alone)
{
	struct uintr_stats base;
	int sv[2], got, status;
	pid_t pid;

	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd, ipi;

		if (uintr_register_handler(uintr_test_handler(), 0))
			_exit(30);
		fd = uintr_create_fd(3, 0);
		if (fd < 0 || uintr_register_sender(fd, UINTR_SENDER_SHARED) != 0)
			_exit(31);
		ipi = uintr_ipi_fd(0);
		if (ipi < 0 || uintr_send_fd(sv[1], ipi))
			_exit(32);
		_exit(0);
	}
	got = uintr_recv_fd(sv[0]);
	ASSERT_GE(got, 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/*
	 * The child is gone, and with it its uintr_fd, whose close removed
	 * the connection: only the (empty) table is left, held by our fd.
	 */
	EXPECT_TRUE(uintr_stats_reach(with(base, 0, 1, 0, 0, 1)));
	close(got);
	EXPECT_TRUE(uintr_stats_become(&base));
}

TEST_HARNESS_MAIN
