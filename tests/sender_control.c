// SPDX-License-Identifier: GPL-2.0
/*
 * The receiver's controls over the senders of its uintr_fd: masking the
 * vector at its source (UINTR_FD_MASK, UINTR_FD_UNMASK) and revoking
 * connections (UINTR_FD_REVOKE).  Only the receiver's process may use
 * them; a masked vector posts nothing, whoever sends (senders connected
 * before and after the mask, other processes, a shared table); unmasking
 * does not replay; a revoked sender faults on its next SENDUIPI, the
 * others keep working, and the counters go back.  A storm against a
 * masked vector is in storm.c.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"

#define VECTOR	21
#define BIT	(1ull << VECTOR)

/*
 * A sender in another process: it connects through the fd it inherited
 * and then sends one SENDUIPI per 's' it reads from its socket, answering
 * each with the index it used ('c' connects again).  It dies of SIGSEGV
 * when its entry was revoked.
 */
struct peer {
	pid_t pid;
	int sock;
};

static void peer_main(int sock, int fd)
{
	long idx = uintr_register_sender(fd, 0);
	char cmd;

	for (;;) {
		if (write(sock, &idx, sizeof(idx)) != sizeof(idx))
			_exit(1);
		if (read(sock, &cmd, 1) != 1 || cmd == 'q')
			_exit(0);
		if (cmd == 'c')
			idx = uintr_register_sender(fd, 0);
		else if (idx >= 0)
			_senduipi(idx);
	}
}

/* Starts a peer on fd; returns the index it got (-1 on failure). */
static long peer_start(struct peer *p, int fd)
{
	long idx;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	p->pid = uintr_spawn();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		close(sv[0]);
		peer_main(sv[1], fd);
	}
	close(sv[1]);
	p->sock = sv[0];
	return read(p->sock, &idx, sizeof(idx)) == sizeof(idx) ? idx : -1;
}

/* Has the peer run command cmd; returns the index it answered, or -1 if it died. */
static long peer_do(struct peer *p, char cmd)
{
	long idx;

	if (write(p->sock, &cmd, 1) != 1 || read(p->sock, &idx, sizeof(idx)) != sizeof(idx))
		return -1;
	return idx;
}

/* Ends the peer; returns the signal that ended it (0: none, -1: error). */
static int peer_end(struct peer *p)
{
	int status;

	/* A dead peer reads nothing: EPIPE (SIGPIPE is ignored). */
	(void)!write(p->sock, "q", 1);
	close(p->sock);
	if (waitpid(p->pid, &status, 0) != p->pid)
		return -1;
	return WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status) ? -1 : 0;
}

/*
 * Whether VECTOR, and only it, is pending (UIF = 0), and is delivered
 * once UIF is set, as the n-th delivery of the test.
 */
static int pending_then_delivered(int n)
{
	if (uintr_pending_now() != BIT)
		return 0;
	_stui();
	return uintr_wait_recorded(n);
}

/* Waits 50 ms (for a notification in flight); returns what arrived. */
static int recorded_after_a_while(void)
{
	usleep(50000);
	return uintr_recorded;
}

/* A receiver (the test's thread) with one fd, for VECTOR. */
FIXTURE(rx) {
	int fd;
};

FIXTURE_SETUP(rx)
{
	signal(SIGPIPE, SIG_IGN);
	uintr_recorded = 0;
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	self->fd = uintr_create_fd(VECTOR, 0);
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(rx)
{
	_clui();
	close(self->fd);
	uintr_unregister_handler(0);
}

static int ctl_fd;
static long ctl_ret[2];

static void *mask_from_a_thread(void *arg)
{
	ctl_ret[0] = UINTR_RET(uintr_mask(ctl_fd));
	ctl_ret[1] = UINTR_RET(uintr_unmask(ctl_fd));
	return NULL;
}

static void try_from_another_process(void)
{
	if (UINTR_RET(uintr_mask(ctl_fd)) != -EPERM ||
	    UINTR_RET(uintr_unmask(ctl_fd)) != -EPERM ||
	    UINTR_RET(uintr_revoke(ctl_fd, 0)) != -EPERM ||
	    UINTR_RET(uintr_revoke(ctl_fd, getppid())) != -EPERM)
		_exit(1);
	/* Unknown commands are ENOTTY for anyone. */
	if (UINTR_RET(ioctl(ctl_fd, _IO('u', 9), 0)) != -ENOTTY)
		_exit(2);
	_exit(0);
}

TEST_F(rx, only_the_receivers_process_controls_the_fd)
{
	pthread_t t;
	int status;
	pid_t pid;

	ctl_fd = self->fd;
	EXPECT_EQ(0, uintr_fdinfo_value(self->fd, "uintr_masked:"));
	EXPECT_EQ(0, uintr_mask(self->fd));
	EXPECT_EQ(1, uintr_fdinfo_value(self->fd, "uintr_masked:"));
	/* Masking twice is masking. */
	EXPECT_EQ(0, uintr_mask(self->fd));
	EXPECT_EQ(0, uintr_unmask(self->fd));
	EXPECT_EQ(0, uintr_unmask(self->fd));
	EXPECT_EQ(0, uintr_fdinfo_value(self->fd, "uintr_masked:"));

	/* Another thread of the process. */
	ASSERT_EQ(0, pthread_create(&t, NULL, mask_from_a_thread, NULL));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, ctl_ret[0]);
	EXPECT_EQ(0, ctl_ret[1]);

	/* Another process that holds the fd (a sender would). */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		try_from_another_process();
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);

	/* Arguments and commands. */
	EXPECT_EQ(-EINVAL, UINTR_RET(ioctl(self->fd, UINTR_FD_MASK, 1)));
	EXPECT_EQ(-EINVAL, UINTR_RET(ioctl(self->fd, UINTR_FD_UNMASK, -1L)));
	EXPECT_EQ(-EINVAL, UINTR_RET(ioctl(self->fd, UINTR_FD_REVOKE, -1L)));
	EXPECT_EQ(-EINVAL, UINTR_RET(ioctl(self->fd, UINTR_FD_REVOKE, 1L << 31)));
	EXPECT_EQ(-ENOTTY, UINTR_RET(ioctl(self->fd, UIPI_SET_TARGET_TABLE, 0)));
	EXPECT_EQ(-ENOTTY, UINTR_RET(ioctl(self->fd, _IOW('u', 1, int), 0)));
	EXPECT_EQ(0, uintr_fdinfo_value(self->fd, "uintr_masked:"));
}

TEST(ipi_fds_and_other_files_know_no_mask)
{
	int ipi = uintr_ipi_fd(0), p[2];

	ASSERT_GE(ipi, 0);
	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(-ENOTTY, UINTR_RET(uintr_mask(ipi)));
	EXPECT_EQ(-ENOTTY, UINTR_RET(uintr_revoke(ipi, 0)));
	EXPECT_EQ(-ENOTTY, UINTR_RET(uintr_mask(p[0])));
	EXPECT_EQ(-EBADF, UINTR_RET(uintr_mask(-1)));
	close(ipi);
	close(p[0]);
	close(p[1]);
}

TEST_F(rx, masked_vector_posts_nothing_and_unmask_replays_nothing)
{
	long idx;

	_clui();
	idx = uintr_register_sender(self->fd, 0);
	ASSERT_GE(idx, 0);
	ASSERT_EQ(0, uintr_mask(self->fd));
	for (int i = 0; i < 3; i++)
		_senduipi(idx);
	EXPECT_EQ(0ull, uintr_pending_now());
	EXPECT_EQ(0, uintr_fdinfo_value(self->fd, "uintr_upid_pir:"));
	ASSERT_EQ(0, uintr_unmask(self->fd));
	/* Dropped, not replayed. */
	EXPECT_EQ(0ull, uintr_pending_now());
	_stui();
	EXPECT_EQ(0, recorded_after_a_while());
	/* And posting again. */
	_senduipi(idx);
	EXPECT_TRUE(uintr_wait_recorded(1));
	EXPECT_EQ((unsigned long long)VECTOR, uintr_recorded_vector);
	EXPECT_EQ(0, uintr_unregister_sender(self->fd, 0));
}

TEST_F(rx, requests_posted_before_the_mask_stay_pending)
{
	long idx;

	_clui();
	idx = uintr_register_sender(self->fd, 0);
	ASSERT_GE(idx, 0);
	_senduipi(idx);
	ASSERT_EQ(0, uintr_mask(self->fd));
	EXPECT_TRUE(pending_then_delivered(1));
	EXPECT_EQ(0, uintr_unregister_sender(self->fd, 0));
}

TEST_F(rx, mask_holds_for_other_processes_and_later_senders)
{
	struct peer early, late;

	_clui();
	ASSERT_GE(peer_start(&early, self->fd), 0);
	ASSERT_EQ(0, uintr_mask(self->fd));
	ASSERT_GE(peer_start(&late, self->fd), 0);
	EXPECT_EQ(2, uintr_fdinfo_value(self->fd, "uintr_senders:"));
	EXPECT_LE(0, peer_do(&early, 's'));
	EXPECT_LE(0, peer_do(&late, 's'));
	EXPECT_EQ(0ull, uintr_pending_now());
	ASSERT_EQ(0, uintr_unmask(self->fd));
	EXPECT_EQ(0ull, uintr_pending_now());
	/* Each of them posts again. */
	EXPECT_LE(0, peer_do(&late, 's'));
	EXPECT_TRUE(pending_then_delivered(1));
	_clui();
	EXPECT_LE(0, peer_do(&early, 's'));
	EXPECT_TRUE(pending_then_delivered(2));
	EXPECT_EQ(0, peer_end(&early));
	EXPECT_EQ(0, peer_end(&late));
}

static long shared_idx;

static void *send_from_a_new_thread(void *arg)
{
	_senduipi(shared_idx);
	return NULL;
}

TEST_F(rx, mask_holds_for_a_shared_table)
{
	pthread_t t;

	_clui();
	shared_idx = uintr_register_sender(self->fd, UINTR_SENDER_SHARED);
	ASSERT_GE(shared_idx, 0);
	ASSERT_EQ(0, uintr_mask(self->fd));
	/* A thread that never registered joins the table and sends. */
	ASSERT_EQ(0, pthread_create(&t, NULL, send_from_a_new_thread, NULL));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0ull, uintr_pending_now());
	ASSERT_EQ(0, uintr_unmask(self->fd));
	ASSERT_EQ(0, pthread_create(&t, NULL, send_from_a_new_thread, NULL));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_TRUE(pending_then_delivered(1));
	EXPECT_EQ(0, uintr_unregister_sender(self->fd, 0));
}

TEST_F(rx, revoke_all_cuts_every_sender_off)
{
	struct uintr_stats connected, now;
	struct peer a, b;

	ASSERT_GE(peer_start(&a, self->fd), 0);
	ASSERT_GE(peer_start(&b, self->fd), 0);
	ASSERT_EQ(0, uintr_read_stats(&connected));
	EXPECT_EQ(2, uintr_revoke(self->fd, 0));
	EXPECT_EQ(0, uintr_fdinfo_value(self->fd, "uintr_senders:"));
	ASSERT_EQ(0, uintr_read_stats(&now));
	EXPECT_EQ(connected.connections - 2, now.connections);
	/* Nothing left to revoke. */
	EXPECT_EQ(0, uintr_revoke(self->fd, 0));
	/* Their next SENDUIPI faults, as after unregistering. */
	EXPECT_EQ(-1, peer_do(&a, 's'));
	EXPECT_EQ(-1, peer_do(&b, 's'));
	EXPECT_EQ(SIGSEGV, peer_end(&a));
	EXPECT_EQ(SIGSEGV, peer_end(&b));
	_stui();
	EXPECT_EQ(0, recorded_after_a_while());
}

TEST_F(rx, revoke_one_process_leaves_the_others)
{
	struct peer a, b;

	ASSERT_GE(peer_start(&a, self->fd), 0);
	ASSERT_GE(peer_start(&b, self->fd), 0);
	/* A PID that connected nothing here: this process's own. */
	EXPECT_EQ(0, uintr_revoke(self->fd, getpid()));
	EXPECT_EQ(1, uintr_revoke(self->fd, a.pid));
	EXPECT_EQ(0, uintr_revoke(self->fd, a.pid));
	EXPECT_EQ(1, uintr_fdinfo_value(self->fd, "uintr_senders:"));
	EXPECT_EQ(-1, peer_do(&a, 's'));
	EXPECT_EQ(SIGSEGV, peer_end(&a));
	/* b still interrupts us. */
	EXPECT_LE(0, peer_do(&b, 's'));
	_stui();
	EXPECT_TRUE(uintr_wait_recorded(1));
	EXPECT_EQ(0, peer_end(&b));
}

TEST_F(rx, revoked_process_may_connect_again_under_the_mask)
{
	struct peer a;
	long idx;

	_clui();
	ASSERT_GE(peer_start(&a, self->fd), 0);
	ASSERT_EQ(0, uintr_mask(self->fd));
	EXPECT_EQ(1, uintr_revoke(self->fd, a.pid));
	/* It still holds the fd: it connects again, masked. */
	idx = peer_do(&a, 'c');
	EXPECT_GE(idx, 0);
	EXPECT_LE(0, peer_do(&a, 's'));
	EXPECT_EQ(0ull, uintr_pending_now());
	ASSERT_EQ(0, uintr_unmask(self->fd));
	EXPECT_LE(0, peer_do(&a, 's'));
	EXPECT_EQ(BIT, uintr_pending_now());
	EXPECT_EQ(0, peer_end(&a));
}

TEST_HARNESS_MAIN
