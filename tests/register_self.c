// SPDX-License-Identifier: GPL-2.0
/*
 * uintr_register_self(2): a UITT index that interrupts the caller itself,
 * without a uintr_fd.  Every error of the man page, delivery and
 * coalescing, the vector shared with uintr_create_fd(), and the entry's
 * end with the handler (unregistered, thread exit), counters included.
 */
#include "uintr_test.h"

#include <pthread.h>

#include "kselftest_harness.h"

TEST(needs_a_handler)
{
	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_register_self(0, 0)));
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	ASSERT_EQ(0, uintr_unregister_handler(0));
	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_register_self(0, 0)));
}

TEST(rejects_bad_vectors_and_flags)
{
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_self(64, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_self(-1ull, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_self(1ull << 32, 0)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_self(0, 2)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_register_self(0, 1u << 31)));
	/* Nothing was claimed by the failed calls. */
	EXPECT_EQ(0, uintr_register_self(0, 0));
}

TEST(vector_taken_is_ebusy_either_way)
{
	int fd;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	fd = uintr_create_fd(4, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EBUSY, UINTR_RET(uintr_register_self(4, 0)));
	ASSERT_GE(uintr_register_self(5, 0), 0);
	EXPECT_EQ(-EBUSY, UINTR_RET(uintr_register_self(5, 0)));
	EXPECT_EQ(-EBUSY, UINTR_RET(uintr_create_fd(5, 0)));
	/* Closing the fd frees its vector for a self entry. */
	close(fd);
	EXPECT_GE(uintr_register_self(4, 0), 0);
}

TEST(indexes_share_the_table_with_senders)
{
	int fd;

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	EXPECT_EQ(0, uintr_register_self(10, 0));
	fd = uintr_create_fd(11, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(1, uintr_register_sender(fd, 0));
	EXPECT_EQ(2, uintr_register_self(12, 0));
	/* The fd's index is free again, and the next entry takes it. */
	ASSERT_EQ(0, uintr_unregister_sender(fd, 0));
	EXPECT_EQ(1, uintr_register_self(13, 0));
}

TEST(delivered_to_the_caller)
{
	long idx;

	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	idx = uintr_register_self(9, 0);
	ASSERT_GE(idx, 0);
	_senduipi(idx);
	usleep(10000);
	EXPECT_EQ(0, uintr_recorded) TH_LOG("delivered while UIF = 0");
	_stui();
	ASSERT_TRUE(uintr_wait_recorded(1));
	EXPECT_EQ(9ull, uintr_recorded_vector);
	/* Again, with UIF set: delivered at once. */
	_senduipi(idx);
	EXPECT_TRUE(uintr_wait_recorded(2));
}

TEST(repeats_coalesce)
{
	long idx;

	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	idx = uintr_register_self(63, 0);
	ASSERT_GE(idx, 0);
	for (int i = 0; i < 10; i++)
		_senduipi(idx);
	_stui();
	ASSERT_TRUE(uintr_wait_recorded(1));
	usleep(20000);
	EXPECT_EQ(1, uintr_recorded);
	EXPECT_EQ(63ull, uintr_recorded_vector);
}

static long stale_index;

static void send_on_stale_index(void)
{
	if (uintr_register_handler(uintr_test_handler(), 0))
		_exit(10);
	stale_index = uintr_register_self(3, 0);
	if (stale_index < 0)
		_exit(11);
	if (uintr_unregister_handler(0))
		_exit(12);
	/* The entry went with the handler: #GP, SIGSEGV. */
	_senduipi(stale_index);
	_exit(13);
}

TEST(entry_goes_with_the_handler)
{
	EXPECT_EQ(SIGSEGV, uintr_child_signal(send_on_stale_index));
}

TEST(reregistered_handler_starts_afresh)
{
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	ASSERT_EQ(0, uintr_register_self(7, 0));
	ASSERT_EQ(0, uintr_unregister_handler(0));
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	/* Vector 7 is free in the new receiver; index 0 was freed. */
	EXPECT_EQ(0, uintr_register_self(7, 0));
	_senduipi(0);
	_stui();
	EXPECT_TRUE(uintr_wait_recorded(1));
}

static void *self_entries_then_exit(void *arg)
{
	long *ok = arg;

	*ok = !uintr_register_handler(uintr_test_handler(), 0) &&
	      uintr_register_self(1, 0) == 0 &&
	      uintr_register_self(2, 0) == 1 &&
	      uintr_register_self(3, 0) == 2;
	return NULL;
}

TEST(counted_and_freed_at_exit)
{
	struct uintr_stats base, now;
	pthread_t t;
	long ok = 0;

	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_EQ(0, pthread_create(&t, NULL, self_entries_then_exit, &ok));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_TRUE(ok);
	EXPECT_TRUE(uintr_stats_become(&base));

	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	ASSERT_EQ(0, uintr_register_self(1, 0));
	ASSERT_EQ(1, uintr_register_self(2, 0));
	ASSERT_EQ(0, uintr_read_stats(&now));
	/* One receiver, UPID, sender and UITT; two objects and entries. */
	base.receivers++, base.upids++, base.senders++, base.uitts++;
	base.fds += 2, base.connections += 2;
	EXPECT_TRUE(uintr_stats_equal(&base, &now)) {
		uintr_stats_print("expected", &base);
		uintr_stats_print("found   ", &now);
	}
	/* Unregistering ends the entries; the sender stays. */
	ASSERT_EQ(0, uintr_unregister_handler(0));
	base.receivers--, base.upids--;
	base.fds -= 2, base.connections -= 2;
	EXPECT_TRUE(uintr_stats_become(&base));
}

static pthread_barrier_t filled;

/* A receiver with an fd per vector that lives until the table is full. */
static void *receiver_with_all_vectors(void *arg)
{
	int *fds = arg;

	for (int v = 0; v < UINTR_MAX_VECTORS; v++)
		fds[v] = -1;
	if (!uintr_register_handler(uintr_test_handler(), 0))
		for (int v = 0; v < UINTR_MAX_VECTORS; v++)
			fds[v] = uintr_create_fd(v, 0);
	pthread_barrier_wait(&filled);	/* fds made */
	pthread_barrier_wait(&filled);	/* table checked */
	return NULL;
}

/* A table that may not grow past its first 256 entries. */
TEST(full_table_is_enospc_and_claims_nothing)
{
	enum { RECEIVERS = UINTR_UITT_INITIAL_ENTRIES / UINTR_MAX_VECTORS };
	static int fds[UINTR_UITT_INITIAL_ENTRIES];
	struct uintr_stats base;
	pthread_t t[RECEIVERS];
	char saved[32];
	int fd;

	ASSERT_EQ(0, uintr_read_file(UINTR_ENTRY_LIMIT, saved, sizeof(saved)));
	ASSERT_EQ(0, uintr_write_file(UINTR_ENTRY_LIMIT, "256"));
	ASSERT_EQ(0, uintr_read_stats(&base));
	ASSERT_EQ(0, pthread_barrier_init(&filled, NULL, RECEIVERS + 1));
	for (int r = 0; r < RECEIVERS; r++)
		ASSERT_EQ(0, pthread_create(&t[r], NULL, receiver_with_all_vectors,
					    fds + r * UINTR_MAX_VECTORS));
	pthread_barrier_wait(&filled);
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	for (int i = 0; i < UINTR_UITT_INITIAL_ENTRIES; i++)
		ASSERT_EQ(i, uintr_register_sender(fds[i], 0));
	/* The table took the limit when it was made. */
	EXPECT_EQ(0, uintr_write_file(UINTR_ENTRY_LIMIT, saved));
	EXPECT_EQ(-ENOSPC, UINTR_RET(uintr_register_self(5, 0)));
	/* The failed call left vector 5 free. */
	fd = uintr_create_fd(5, 0);
	EXPECT_GE(fd, 0);
	close(fd);
	pthread_barrier_wait(&filled);
	for (int r = 0; r < RECEIVERS; r++)
		pthread_join(t[r], NULL);
	for (int i = 0; i < UINTR_UITT_INITIAL_ENTRIES; i++)
		close(fds[i]);
	ASSERT_EQ(0, uintr_unregister_handler(0));
	/* The sender (this thread) stays until exit: one sender, one UITT. */
	base.senders++, base.uitts++;
	EXPECT_TRUE(uintr_stats_become(&base));
}

TEST_HARNESS_MAIN
