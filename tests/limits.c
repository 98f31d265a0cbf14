// SPDX-License-Identifier: GPL-2.0
/*
 * The connection limits: senders per uintr_fd
 * (/proc/sys/kernel/uintr/max_fd_connections, ENOSPC), per receiver
 * (max_receiver_connections, ENOSPC) and per user
 * (/proc/sys/user/max_uintr_connections, EMFILE, counted in every user
 * namespace up to the initial one).  A refused connection changes
 * nothing, a limit lowered below what is in use leaves the connections
 * working, and every way a connection goes gives its charge back.
 *
 * And the sender table that grows past its first 256 entries, up to
 * max_sender_entries (ENOSPC), in place: a thread that uses a shared
 * table sends on the new entries without anything reprogrammed.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <sched.h>

#include "kselftest_harness.h"

/* Whether field key of fd's fdinfo reaches want within 5 s. */
static int fdinfo_becomes(int fd, const char *key, long long want)
{
	for (int i = 0; i < 500; i++) {
		if (uintr_fdinfo_value(fd, key) == want)
			return 1;
		usleep(10000);
	}
	return 0;
}

/*
 * A sender thread (a sender table of its own) that runs the commands it
 * reads: 'r' registers with fd arg ('R': through the process's shared
 * table), 'u' unregisters, 's' sends on index arg, 'q' ends it; it
 * answers each with the call's result (-errno).
 */
struct sender {
	pthread_t thread;
	int cmd[2], ans[2];
};

struct command {
	char op;
	int arg;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	struct command c;
	long ret;

	while (read(s->cmd[0], &c, sizeof(c)) == sizeof(c) && c.op != 'q') {
		if (c.op == 'r') {
			ret = UINTR_RET(uintr_register_sender(c.arg, 0));
		} else if (c.op == 'R') {
			ret = UINTR_RET(uintr_register_sender(c.arg, UINTR_SENDER_SHARED));
		} else if (c.op == 'u') {
			ret = UINTR_RET(uintr_unregister_sender(c.arg, 0));
		} else if (c.op == 's') {
			_senduipi(c.arg);
			ret = 0;
		} else {
			ret = -EINVAL;
		}
		if (write(s->ans[1], &ret, sizeof(ret)) != sizeof(ret))
			break;
	}
	return NULL;
}

static int sender_start(struct sender *s)
{
	if (pipe(s->cmd) || pipe(s->ans))
		return -1;
	return pthread_create(&s->thread, NULL, sender_main, s) ? -1 : 0;
}

/* Has sender s run op(arg); its answer, or -EIO if it did not answer. */
static long sender_do(struct sender *s, char op, int arg)
{
	struct command c = { .op = op, .arg = arg };
	long ret;

	if (write(s->cmd[1], &c, sizeof(c)) != sizeof(c) ||
	    read(s->ans[0], &ret, sizeof(ret)) != sizeof(ret))
		return -EIO;
	return ret;
}

/* Ends sender s; its connections go with its thread. */
static void sender_end(struct sender *s)
{
	struct command c = { .op = 'q' };

	if (write(s->cmd[1], &c, sizeof(c)) == sizeof(c))
		pthread_join(s->thread, NULL);
	close(s->cmd[0]);
	close(s->cmd[1]);
	close(s->ans[0]);
	close(s->ans[1]);
}

#define SENDERS 4

/*
 * The test's thread is a receiver with two fds; four sender threads; the
 * limits as they were, put back at the end.
 */
FIXTURE(limits) {
	int fd[2];
	struct sender senders[SENDERS];
	struct uintr_limits saved;
	struct uintr_stats base;
};

FIXTURE_SETUP(limits)
{
	ASSERT_EQ(0, uintr_limits_save(&self->saved));
	ASSERT_EQ(0, uintr_read_stats(&self->base));
	uintr_recorded = 0;
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	self->fd[0] = uintr_create_fd(1, 0);
	self->fd[1] = uintr_create_fd(2, 0);
	ASSERT_GE(self->fd[0], 0);
	ASSERT_GE(self->fd[1], 0);
	for (int i = 0; i < SENDERS; i++)
		ASSERT_EQ(0, sender_start(&self->senders[i]));
}

FIXTURE_TEARDOWN(limits)
{
	_clui();
	for (int i = 0; i < SENDERS; i++)
		sender_end(&self->senders[i]);
	close(self->fd[0]);
	close(self->fd[1]);
	uintr_unregister_handler(0);
	EXPECT_EQ(0, uintr_limits_restore(&self->saved));
	/* Every charge given back, whichever limit refused what. */
	EXPECT_TRUE(uintr_stats_reach(self->base));
}

static long do_on(struct __test_metadata *_metadata, FIXTURE_DATA(limits) *self,
		  int sender, char op, int arg)
{
	return sender_do(&self->senders[sender], op, arg);
}
#define DO(sender, op, arg)	do_on(_metadata, self, sender, op, arg)

TEST_F(limits, defaults_and_bounds)
{
	EXPECT_EQ(4096, self->saved.fd);
	EXPECT_EQ(16384, self->saved.receiver);
	EXPECT_EQ(65536, self->saved.user);
	EXPECT_NE(0, uintr_write_long(UINTR_FD_LIMIT, -1));
	EXPECT_NE(0, uintr_write_long(UINTR_RECEIVER_LIMIT, 1L << 31));
	EXPECT_NE(0, uintr_write_long(UINTR_USER_LIMIT, -1));
	EXPECT_EQ(self->saved.fd, uintr_read_long(UINTR_FD_LIMIT));
	EXPECT_EQ(self->saved.receiver, uintr_read_long(UINTR_RECEIVER_LIMIT));
	/* 0 is a limit: no new connection. */
	ASSERT_EQ(0, uintr_write_long(UINTR_FD_LIMIT, 0));
	EXPECT_EQ(-ENOSPC, DO(0, 'r', self->fd[0]));
	EXPECT_EQ(0, uintr_fdinfo_value(self->fd[0], "uintr_senders:"));
}

TEST_F(limits, senders_of_one_fd)
{
	struct uintr_stats before;
	long idx;

	ASSERT_EQ(0, uintr_write_long(UINTR_FD_LIMIT, 3));
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, DO(i, 'r', self->fd[0]));
	ASSERT_EQ(0, uintr_read_stats(&before));
	EXPECT_EQ(-ENOSPC, DO(3, 'r', self->fd[0]));
	/* Refused: nothing was made. */
	EXPECT_TRUE(uintr_stats_reach(before));
	EXPECT_EQ(3, uintr_fdinfo_value(self->fd[0], "uintr_senders:"));
	EXPECT_EQ(3, uintr_fdinfo_value(self->fd[0], "uintr_receiver_senders:"));
	/* The fd is full, not the sender nor the receiver. */
	EXPECT_EQ(0, DO(3, 'r', self->fd[1]));
	EXPECT_EQ(4, uintr_fdinfo_value(self->fd[1], "uintr_receiver_senders:"));

	/* Lowered below what is in use: the connections keep working. */
	ASSERT_EQ(0, uintr_write_long(UINTR_FD_LIMIT, 1));
	_stui();
	EXPECT_EQ(0, DO(2, 's', 0));
	EXPECT_TRUE(uintr_wait_recorded(1));
	_clui();
	EXPECT_EQ(1ull, uintr_recorded_vector);

	/* One goes: still over the new limit, then room again. */
	EXPECT_EQ(0, DO(0, 'u', self->fd[0]));
	EXPECT_EQ(-ENOSPC, DO(0, 'r', self->fd[0]));
	ASSERT_EQ(0, uintr_write_long(UINTR_FD_LIMIT, 3));
	idx = DO(0, 'r', self->fd[0]);
	EXPECT_EQ(0, idx);
	EXPECT_EQ(-ENOSPC, DO(3, 'r', self->fd[0]));
}

TEST_F(limits, senders_of_one_receiver)
{
	int other[2], status;
	pid_t pid;

	ASSERT_EQ(0, uintr_write_long(UINTR_RECEIVER_LIMIT, 3));
	/* Sender 0 uses two of the three, on different fds. */
	EXPECT_EQ(0, DO(0, 'r', self->fd[0]));
	EXPECT_EQ(1, DO(0, 'r', self->fd[1]));
	EXPECT_EQ(0, DO(1, 'r', self->fd[0]));
	EXPECT_EQ(-ENOSPC, DO(1, 'r', self->fd[1]));
	EXPECT_EQ(-ENOSPC, DO(2, 'r', self->fd[1]));
	EXPECT_EQ(3, uintr_fdinfo_value(self->fd[1], "uintr_receiver_senders:"));
	EXPECT_EQ(1, uintr_fdinfo_value(self->fd[1], "uintr_senders:"));

	/* Another receiver (another process) has its own count. */
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, other));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd;

		if (uintr_register_handler(uintr_record, 0))
			_exit(1);
		fd = uintr_create_fd(5, 0);
		if (fd < 0 || uintr_send_fd(other[1], fd))
			_exit(2);
		/* Stay a receiver until the parent is done. */
		_exit(read(other[1], &status, 1) == 1 ? 0 : 3);
	}
	{
		int fd = uintr_recv_fd(other[0]);

		ASSERT_GE(fd, 0);
		EXPECT_EQ(1, DO(1, 'r', fd));
		EXPECT_EQ(1, uintr_fdinfo_value(fd, "uintr_receiver_senders:"));
		EXPECT_EQ(0, DO(1, 'u', fd));
		close(fd);
	}
	ASSERT_EQ(1, write(other[0], "q", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	close(other[0]);
	close(other[1]);

	/* A revocation gives room back. */
	EXPECT_EQ(2, uintr_revoke(self->fd[0], 0));
	EXPECT_EQ(1, uintr_fdinfo_value(self->fd[1], "uintr_receiver_senders:"));
	EXPECT_EQ(0, DO(1, 'r', self->fd[1]));
	EXPECT_EQ(0, DO(2, 'r', self->fd[1]));
	EXPECT_EQ(-ENOSPC, DO(3, 'r', self->fd[1]));
	/* And so does a sender's exit. */
	sender_end(&self->senders[0]);
	ASSERT_EQ(0, sender_start(&self->senders[0]));
	EXPECT_TRUE(fdinfo_becomes(self->fd[1], "uintr_receiver_senders:", 2));
	EXPECT_EQ(0, DO(3, 'r', self->fd[1]));
}

/*
 * The current user's count: the guest runs everything as root, so every
 * live connection is root's.
 */
static long user_count(void)
{
	struct uintr_stats s;

	return uintr_read_stats(&s) ? -1 : s.connections;
}

TEST_F(limits, connections_of_one_user)
{
	long base = user_count();

	ASSERT_GE(base, 0);
	ASSERT_EQ(0, uintr_write_long(UINTR_USER_LIMIT, base + 2));
	EXPECT_EQ(0, DO(0, 'r', self->fd[0]));
	EXPECT_EQ(1, DO(0, 'r', self->fd[1]));
	EXPECT_EQ(-EMFILE, DO(1, 'r', self->fd[0]));
	EXPECT_EQ(base + 2, user_count());
	/* The receiver's fds had room: the user had not. */
	EXPECT_EQ(1, uintr_fdinfo_value(self->fd[0], "uintr_senders:"));

	/* Unregistering and the fd's release give it back. */
	EXPECT_EQ(0, DO(0, 'u', self->fd[0]));
	EXPECT_EQ(0, DO(1, 'r', self->fd[0]));
	EXPECT_EQ(-EMFILE, DO(2, 'r', self->fd[0]));
	close(self->fd[1]);
	self->fd[1] = uintr_create_fd(3, 0);
	ASSERT_GE(self->fd[1], 0);
	EXPECT_EQ(0, DO(2, 'r', self->fd[0]));
	EXPECT_EQ(-EMFILE, DO(3, 'r', self->fd[1]));
}

/*
 * In a new user namespace: its own limit holds, and the initial
 * namespace's still does (a new namespace lifts nothing).  Runs in a
 * child; exit code: the first check that failed.
 */
static int child_in_user_namespace(int fd)
{
	struct sender s;
	int ret = 0;

	if (unshare(CLONE_NEWUSER))
		return 10;
	/* A new namespace starts with no limit of its own. */
	if (uintr_read_long(UINTR_USER_LIMIT) != 2147483647)
		return 11;
	if (uintr_write_long(UINTR_USER_LIMIT, 1))
		return 12;
	if (sender_start(&s))
		return 13;
	if (sender_do(&s, 'r', fd) != 0)
		ret = 14;
	else if (sender_do(&s, 'u', fd) != 0)
		ret = 15;
	sender_end(&s);
	if (ret)
		return ret;
	/* Its own limit: the second connection is refused. */
	if (UINTR_RET(uintr_register_sender(fd, 0)) < 0)
		return 16;
	if (sender_start(&s))
		return 17;
	if (sender_do(&s, 'r', fd) != -EMFILE)
		ret = 18;
	/* Room in this namespace, not in the one above. */
	else if (uintr_write_long(UINTR_USER_LIMIT, 100))
		ret = 19;
	else if (sender_do(&s, 'r', fd) != -EMFILE)
		ret = 20;
	sender_end(&s);
	return ret;
}

TEST_F(limits, user_namespaces_lift_nothing)
{
	long base = user_count();
	int status;
	pid_t pid;

	ASSERT_GE(base, 0);
	/* Room for the child's one connection, not for a second. */
	ASSERT_EQ(0, uintr_write_long(UINTR_USER_LIMIT, base + 1));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(child_in_user_namespace(self->fd[0]));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
	/* The child's connections went with it. */
	EXPECT_EQ(base, user_count());
	EXPECT_EQ(0, DO(0, 'r', self->fd[0]));
}

/*
 * Five receiver threads with 64 uintr_fds each (vectors 0-63): fd i is
 * receiver i / 64's vector i % 64.  Each receives with UIF set until told
 * to stop, counting what arrives.
 */
#define RECEIVERS	5
#define TABLE_FDS	(RECEIVERS * 64)

struct table_rx {
	pthread_t thread;
	int me, fds[64], ok;
	pthread_barrier_t *ready;
};

static volatile int table_stop;
static volatile int table_got[RECEIVERS];
static volatile unsigned long long table_vector[RECEIVERS];
static __thread int table_me;

static UINTR_HANDLER(table_handler)
{
	table_vector[table_me] = vector;
	table_got[table_me]++;
}

static void *table_receiver(void *arg)
{
	struct table_rx *rx = arg;

	table_me = rx->me;
	rx->ok = uintr_register_handler(table_handler, 0) == 0;
	for (int v = 0; v < 64; v++) {
		rx->fds[v] = rx->ok ? uintr_create_fd(v, 0) : -1;
		rx->ok = rx->ok && rx->fds[v] >= 0;
	}
	pthread_barrier_wait(rx->ready);
	_stui();
	while (!table_stop)
		usleep(1000);
	_clui();
	for (int v = 0; v < 64; v++)
		close(rx->fds[v]);
	uintr_unregister_handler(0);
	return NULL;
}

/* Whether SENDUIPI on index idx by sender s reaches fd i's receiver and vector. */
static int sent_to(struct sender *s, int idx, int i)
{
	int r = i / 64, before = table_got[r];

	if (sender_do(s, 's', idx))
		return 0;
	for (int n = 0; n < 5000 && table_got[r] == before; n++)
		usleep(1000);
	return table_got[r] == before + 1 && table_vector[r] == (unsigned long long)(i % 64);
}

FIXTURE(table) {
	struct table_rx rx[RECEIVERS];
	pthread_barrier_t ready;
	struct sender senders[2];
	long saved_entries;
	struct uintr_stats base;
	/* The process's shared table stays until the process exits. */
	int shared;
};

FIXTURE_SETUP(table)
{
	self->saved_entries = uintr_read_long(UINTR_ENTRY_LIMIT);
	ASSERT_EQ(4096, self->saved_entries);
	ASSERT_EQ(0, uintr_read_stats(&self->base));
	/* The tables made from now on may grow to 300 entries. */
	ASSERT_EQ(0, uintr_write_long(UINTR_ENTRY_LIMIT, 300));
	table_stop = 0;
	ASSERT_EQ(0, pthread_barrier_init(&self->ready, NULL, RECEIVERS + 1));
	for (int r = 0; r < RECEIVERS; r++) {
		self->rx[r].me = r;
		self->rx[r].ready = &self->ready;
		ASSERT_EQ(0, pthread_create(&self->rx[r].thread, NULL, table_receiver,
					    &self->rx[r]));
	}
	pthread_barrier_wait(&self->ready);
	for (int r = 0; r < RECEIVERS; r++)
		ASSERT_TRUE(self->rx[r].ok);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, sender_start(&self->senders[i]));
}

FIXTURE_TEARDOWN(table)
{
	for (int i = 0; i < 2; i++)
		sender_end(&self->senders[i]);
	table_stop = 1;
	for (int r = 0; r < RECEIVERS; r++)
		pthread_join(self->rx[r].thread, NULL);
	uintr_write_long(UINTR_ENTRY_LIMIT, self->saved_entries);
	EXPECT_TRUE(uintr_stats_reach(uintr_stats_plus(self->base, 0, self->shared, 0,
						       self->shared, 0, 0)));
}

static int table_fd(FIXTURE_DATA(table) *self, int i)
{
	return self->rx[i / 64].fds[i % 64];
}

TEST_F(table, grows_to_its_limit)
{
	struct sender *s = &self->senders[0];
	struct uintr_stats before;

	for (int i = 0; i < 300; i++)
		ASSERT_EQ(i, sender_do(s, 'r', table_fd(self, i)));
	ASSERT_EQ(0, uintr_read_stats(&before));
	EXPECT_EQ(-ENOSPC, sender_do(s, 'r', table_fd(self, 300)));
	EXPECT_TRUE(uintr_stats_reach(before));
	/* Both pages reach their receivers, the first and last entries of each. */
	EXPECT_TRUE(sent_to(s, 0, 0));
	EXPECT_TRUE(sent_to(s, 255, 255));
	EXPECT_TRUE(sent_to(s, 256, 256));
	EXPECT_TRUE(sent_to(s, 299, 299));
	/* A freed entry on the second page is the next one handed out. */
	EXPECT_EQ(0, sender_do(s, 'u', table_fd(self, 270)));
	EXPECT_EQ(270, sender_do(s, 'r', table_fd(self, 310)));
	EXPECT_TRUE(sent_to(s, 270, 310));
	/* The other sender's table is its own, at one page. */
	EXPECT_EQ(0, sender_do(&self->senders[1], 'r', table_fd(self, 5)));
	EXPECT_TRUE(sent_to(&self->senders[1], 0, 5));
	/* The limit is the table's from its making: raising it now changes nothing. */
	ASSERT_EQ(0, uintr_write_long(UINTR_ENTRY_LIMIT, 4096));
	EXPECT_EQ(-ENOSPC, sender_do(s, 'r', table_fd(self, 301)));
}

TEST_F(table, a_shared_table_grows_under_its_users)
{
	struct sender *grower = &self->senders[0], *user = &self->senders[1];

	/* The user joins the shared table on its first SENDUIPI... */
	ASSERT_EQ(0, sender_do(grower, 'R', table_fd(self, 0)));
	self->shared = 1;
	EXPECT_TRUE(sent_to(user, 0, 0));
	/* ...then another thread grows it to a second page... */
	for (int i = 1; i < 300; i++)
		ASSERT_EQ(i, sender_do(grower, 'R', table_fd(self, i)));
	/* ...and the user sends on the new entries as it is. */
	EXPECT_TRUE(sent_to(user, 256, 256));
	EXPECT_TRUE(sent_to(user, 299, 299));
	EXPECT_TRUE(sent_to(grower, 298, 298));
	EXPECT_EQ(-ENOSPC, sender_do(user, 'R', table_fd(self, 300)));
}

TEST_HARNESS_MAIN
