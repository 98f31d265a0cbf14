// SPDX-License-Identifier: GPL-2.0
/*
 * uintr_pending(): a receiver that runs with user interrupts disabled
 * (UIF = 0), an event loop say, reads the set of its pending vectors at
 * once, recognized (UIRR) or still posted in its UPID, without anything
 * being delivered, and takes them all (UINTR_PENDING_TAKE), after which
 * no handler runs for them and the next post notifies again.  Errors,
 * and an EFAULT that must not lose what it took.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <sys/mman.h>

#include "kselftest_harness.h"

static const unsigned long long vectors[] = { 0, 3, 17, 63 };
#define ALL ((1ull << 0) | (1ull << 3) | (1ull << 17) | (1ull << 63))

static long index_of[64];

/* Connects the receiver to its own vectors and posts each once, UIF = 0. */
static int post_all(void)
{
	_clui();
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		long idx = uintr_register_self(vectors[i], 0);

		if (idx < 0)
			return -1;
		index_of[vectors[i]] = idx;
		_senduipi(idx);
	}
	return 0;
}

/* Waits 50 ms with UIF set; returns what was delivered meanwhile. */
static int delivered_with_uif(void)
{
	_stui();
	usleep(50000);
	_clui();
	return uintr_recorded;
}

TEST(errors)
{
	unsigned long long set;

	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_pending(&set, 0)));
	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_pending(&set, UINTR_PENDING_TAKE)));
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_pending(&set, 2)));
	EXPECT_EQ(-EINVAL, UINTR_RET(uintr_pending(&set, ~0u)));
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_pending(NULL, 0)));
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_pending((void *)0xffffffff81000000ull, 0)));
	EXPECT_EQ(0, uintr_pending(&set, 0));
	EXPECT_EQ(0ull, set);
	EXPECT_EQ(0, uintr_unregister_handler(0));
	EXPECT_EQ(-EOPNOTSUPP, UINTR_RET(uintr_pending(&set, 0)));
}

TEST(reads_every_pending_vector_without_delivering)
{
	unsigned long long set = 0;

	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	ASSERT_EQ(0, post_all());
	EXPECT_EQ(0, uintr_pending(&set, 0));
	EXPECT_EQ(ALL, set);
	/* Reading changes nothing. */
	EXPECT_EQ(0, uintr_pending(&set, 0));
	EXPECT_EQ(ALL, set);
	EXPECT_EQ(0, uintr_recorded);
	/* They are delivered once UIF is set, highest first. */
	_stui();
	EXPECT_TRUE(uintr_wait_recorded(4));
	EXPECT_EQ(0ull, uintr_recorded_vector);
	EXPECT_EQ(0, uintr_pending(&set, 0));
	EXPECT_EQ(0ull, set);
}

TEST(take_clears_them_all_and_the_next_post_notifies)
{
	unsigned long long set = 0;

	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	ASSERT_EQ(0, post_all());
	EXPECT_EQ(0, uintr_pending(&set, UINTR_PENDING_TAKE));
	EXPECT_EQ(ALL, set);
	EXPECT_EQ(0, uintr_pending(&set, 0));
	EXPECT_EQ(0ull, set);
	EXPECT_EQ(0, delivered_with_uif());
	/* Taking nothing is no error. */
	EXPECT_EQ(0, uintr_pending(&set, UINTR_PENDING_TAKE));
	EXPECT_EQ(0ull, set);
	/* A new post notifies and is delivered. */
	_senduipi(index_of[17]);
	_stui();
	EXPECT_TRUE(uintr_wait_recorded(1));
	EXPECT_EQ(17ull, uintr_recorded_vector);
}

TEST(take_into_a_bad_buffer_loses_nothing)
{
	unsigned long long set = 0;
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	ASSERT_EQ(0, post_all());
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_pending(NULL, UINTR_PENDING_TAKE)));
	EXPECT_EQ(-EFAULT, UINTR_RET(uintr_pending(ro, UINTR_PENDING_TAKE)));
	EXPECT_EQ(0, uintr_pending(&set, 0));
	EXPECT_EQ(ALL, set);
	_stui();
	EXPECT_TRUE(uintr_wait_recorded(4));
	munmap(ro, 4096);
}

/* Another thread's posts, possibly still in the UPID (not recognized). */
static int other_fd[2];

static void *post_from_another_thread(void *arg)
{
	for (int i = 0; i < 2; i++) {
		long idx = uintr_register_sender(other_fd[i], 0);

		if (idx < 0)
			return (void *)1;
		_senduipi(idx);
	}
	return NULL;
}

TEST(sees_the_posts_of_other_threads)
{
	unsigned long long set = 0;
	void *ret;
	pthread_t t;

	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	_clui();
	other_fd[0] = uintr_create_fd(5, 0);
	other_fd[1] = uintr_create_fd(40, 0);
	ASSERT_GE(other_fd[0], 0);
	ASSERT_GE(other_fd[1], 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, post_from_another_thread, NULL));
	ASSERT_EQ(0, pthread_join(t, &ret));
	ASSERT_EQ(NULL, ret);
	EXPECT_EQ(0, uintr_pending(&set, 0));
	EXPECT_EQ((1ull << 5) | (1ull << 40), set);
	EXPECT_EQ(0, uintr_pending(&set, UINTR_PENDING_TAKE));
	EXPECT_EQ((1ull << 5) | (1ull << 40), set);
	EXPECT_EQ(0, delivered_with_uif());
}

TEST_HARNESS_MAIN
