// SPDX-License-Identifier: GPL-2.0
/*
 * User IPIs end to end: SENDUIPI, notification, delivery, UIRET, and
 * CLUI/STUI/TESTUI, checked against the architecture's rules (priority,
 * coalescing, masking, nesting, the interrupted code's state intact) and
 * under migration and across processes.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>

#include "kselftest_harness.h"

/* Tests that need more than the harness's default 30 s under TCG. */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

static volatile long order[16];
static volatile int deliveries;

static UINTR_HANDLER(record)
{
	if (deliveries < 16)
		order[deliveries] = vector;
	deliveries++;
}

/* Waits up to 2 s for at least n deliveries. */
static int wait_deliveries(int n)
{
	for (long i = 0; i < 2000 && deliveries < n; i++)
		usleep(1000);
	return deliveries >= n;
}

/* Registers `handler`, one fd per vector and this thread as sender. */
static void setup(struct __test_metadata *_metadata, void *handler,
		  const int *vectors, int n, long *index)
{
	deliveries = 0;
	ASSERT_EQ(0, uintr_register_handler(handler, 0));
	for (int i = 0; i < n; i++) {
		int fd = uintr_create_fd(vectors[i], 0);

		ASSERT_GE(fd, 0);
		index[i] = uintr_register_sender(fd, 0);
		ASSERT_EQ(i, index[i]);
	}
}

TEST(uif_starts_clear_and_testui_follows_stui_clui)
{
	EXPECT_EQ(0, _testui());
	_stui();
	EXPECT_EQ(1, _testui());
	_clui();
	EXPECT_EQ(0, _testui());
}

TEST(send_to_self_waits_for_stui)
{
	int v = 7;
	long idx;

	setup(_metadata, record, &v, 1, &idx);
	_senduipi(idx);
	usleep(10000);
	EXPECT_EQ(0, deliveries) TH_LOG("delivered while UIF = 0");
	_stui();
	ASSERT_TRUE(wait_deliveries(1));
	EXPECT_EQ(7, order[0]);
	/* UIRET set UIF again. */
	EXPECT_EQ(1, _testui());
}

TEST(highest_vector_first)
{
	int v[] = { 5, 17, 63 };
	long idx[3];

	setup(_metadata, record, v, 3, idx);
	for (int i = 0; i < 3; i++)
		_senduipi(idx[i]);
	usleep(10000);
	_stui();
	ASSERT_TRUE(wait_deliveries(3));
	EXPECT_EQ(63, order[0]);
	EXPECT_EQ(17, order[1]);
	EXPECT_EQ(5, order[2]);
	usleep(10000);
	EXPECT_EQ(3, deliveries);
}

TEST(repeats_coalesce_while_masked)
{
	int v = 3;
	long idx;

	setup(_metadata, record, &v, 1, &idx);
	for (int i = 0; i < 5; i++)
		_senduipi(idx);
	usleep(10000);
	_stui();
	ASSERT_TRUE(wait_deliveries(1));
	usleep(20000);
	EXPECT_EQ(1, deliveries);
}

TEST(clui_masks_and_stui_delivers)
{
	int v = 12;
	long idx;

	setup(_metadata, record, &v, 1, &idx);
	_stui();
	_clui();
	_senduipi(idx);
	for (int i = 0; i < 20; i++)
		usleep(1000);
	EXPECT_EQ(0, deliveries);
	_stui();
	EXPECT_TRUE(wait_deliveries(1));
}

static long nested_index;
static volatile int depth, max_depth;

static UINTR_HANDLER(nesting)
{
	depth++;
	if (depth > max_depth)
		max_depth = depth;
	order[deliveries < 16 ? deliveries : 15] = vector;
	deliveries++;
	if (vector == 10) {
		/* Re-enable and send to ourselves: vector 20 nests here. */
		_stui();
		_senduipi(nested_index);
		for (long i = 0; i < 2000000000L && deliveries < 2; i++)
			__asm__ volatile("pause");
		_clui();
	}
	depth--;
}

TEST(stui_in_handler_allows_nesting)
{
	int v[] = { 10, 20 };
	long idx[2];

	setup(_metadata, nesting, v, 2, idx);
	nested_index = idx[1];
	_senduipi(idx[0]);
	_stui();
	ASSERT_TRUE(wait_deliveries(2));
	EXPECT_EQ(10, order[0]);
	EXPECT_EQ(20, order[1]);
	EXPECT_EQ(2, max_depth);
}

/* A computation that keeps its state in registers and flags. */
static unsigned long long churn(unsigned long n)
{
	unsigned long long a = 1, b = 0x9e3779b97f4a7c15ull, c = 3, d = 5;

	for (unsigned long i = 0; i < n; i++) {
		a = a * 6364136223846793005ull + b;
		b ^= a >> 7;
		c += (b < a) ? b : a;
		d ^= c << 3;
		__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
	}
	return a ^ b ^ c ^ d;
}

struct flood {
	long index;
	atomic_int stop;
	atomic_long sent;
};

static void *flood_sender(void *arg)
{
	struct flood *f = arg;
	int fd = (int)f->index;
	long idx = uintr_register_sender(fd, 0);

	if (idx < 0)
		return (void *)1;
	while (!atomic_load(&f->stop)) {
		_senduipi(idx);
		f->sent++;
		for (int i = 0; i < 2000; i++)
			__asm__ volatile("pause");
	}
	return NULL;
}

TEST_F_TIMEOUT(slow, interrupted_code_keeps_registers_flags_and_stack, 600)
{
	struct flood f = { 0 };
	unsigned long long quiet, busy;
	pthread_t t;
	void *ret;
	int fd;

	deliveries = 0;
	ASSERT_EQ(0, uintr_register_handler(record, 0));
	fd = uintr_create_fd(1, 0);
	ASSERT_GE(fd, 0);
	quiet = churn(20000000);
	f.index = fd;
	ASSERT_EQ(0, pthread_create(&t, NULL, flood_sender, &f));
	/*
	 * The flood first: on the model, whose CPUs share one host thread,
	 * the computation could otherwise end before the sender ever ran.
	 */
	for (int i = 0; i < 100000 && !atomic_load(&f.sent); i++)
		usleep(100);
	_stui();
	busy = churn(20000000);
	_clui();
	atomic_store(&f.stop, 1);
	pthread_join(t, &ret);
	ASSERT_EQ(NULL, ret);
	TH_LOG("%d deliveries during the computation, %ld sent", deliveries,
	       atomic_load(&f.sent));
	EXPECT_GT(deliveries, 0);
	EXPECT_EQ(quiet, busy);
}

TEST(sender_in_another_process)
{
	int sv[2], fd, status;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	deliveries = 0;
	ASSERT_EQ(0, uintr_register_handler(record, 0));
	fd = uintr_create_fd(33, 0);
	ASSERT_GE(fd, 0);
	_stui();
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int got = uintr_recv_fd(sv[1]);
		long idx = got < 0 ? -1 : uintr_register_sender(got, 0);

		if (idx < 0)
			_exit(1);
		_senduipi(idx);
		_exit(0);
	}
	ASSERT_EQ(0, uintr_send_fd(sv[0], fd));
	ASSERT_TRUE(wait_deliveries(1));
	EXPECT_EQ(33, order[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

static void send_without_uitt(void)
{
	_senduipi(0);
}

static void send_beyond_table(void)
{
	if (uintr_register_handler(uintr_test_handler(), 0) < 0)
		_exit(2);
	if (uintr_register_sender(uintr_create_fd(0, 0), 0) != 0)
		_exit(3);
	_senduipi(256);
}

static void send_to_invalid_entry(void)
{
	if (uintr_register_handler(uintr_test_handler(), 0) < 0)
		_exit(2);
	if (uintr_register_sender(uintr_create_fd(0, 0), 0) != 0)
		_exit(3);
	_senduipi(1);
}

static void send_after_unregister_sender(void)
{
	int fd;

	if (uintr_register_handler(uintr_test_handler(), 0) < 0)
		_exit(2);
	fd = uintr_create_fd(0, 0);
	if (uintr_register_sender(fd, 0) != 0 || uintr_unregister_sender(fd, 0))
		_exit(3);
	_senduipi(0);
}

TEST(senduipi_faults)
{
	EXPECT_EQ(SIGILL, uintr_child_signal(send_without_uitt));
	EXPECT_EQ(SIGSEGV, uintr_child_signal(send_beyond_table));
	EXPECT_EQ(SIGSEGV, uintr_child_signal(send_to_invalid_entry));
	EXPECT_EQ(SIGSEGV, uintr_child_signal(send_after_unregister_sender));
}

/*
 * The five instructions exist in 64-bit mode only.  Run CLUI in a
 * compatibility mode code segment (the GDT's 32-bit user CS, there even
 * without IA32 emulation): its #UD must stay a SIGILL.  HLT follows it, so
 * an emulated CLUI would end in SIGSEGV instead.
 */
#define USER32_CS	0x23

static void clui_in_compat_mode(void)
{
	static const unsigned char code[] = {
		0xf3, 0x0f, 0x01, 0xee,		/* clui */
		0xf4,				/* hlt */
	};
	struct {
		unsigned int ip;
		unsigned short cs;
	} __attribute__((packed)) target;
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	if (page == MAP_FAILED)
		_exit(10);
	memcpy(page, code, sizeof(code));
	target.ip = (unsigned int)(unsigned long)page;
	target.cs = USER32_CS;
	__asm__ volatile("ljmpl *%0" : : "m"(target) : "memory");
	_exit(11);
}

TEST(instructions_need_64bit_mode)
{
	EXPECT_EQ(SIGILL, uintr_child_signal(clui_in_compat_mode));
}

/* Receiver hopping between the two CPUs while a sender floods it. */
#define MIGRATION_SENDS 100000

static atomic_long sent_seq, seen_seq;
static atomic_long migration_deliveries;

static UINTR_HANDLER(count_seq)
{
	migration_deliveries++;
	seen_seq = sent_seq;
}

static void *seq_sender(void *arg)
{
	long idx = uintr_register_sender(*(int *)arg, 0);

	if (idx < 0)
		return (void *)1;
	for (long i = 1; i <= MIGRATION_SENDS; i++) {
		atomic_store(&sent_seq, i);
		_senduipi(idx);
	}
	return NULL;
}

TEST_F_TIMEOUT(slow, migrating_receiver_loses_nothing, 600)
{
	struct timespec start, now;
	cpu_set_t set;
	pthread_t t;
	void *ret;
	int fd;

	ASSERT_EQ(0, uintr_register_handler(count_seq, 0));
	fd = uintr_create_fd(40, 0);
	ASSERT_GE(fd, 0);
	_stui();
	ASSERT_EQ(0, pthread_create(&t, NULL, seq_sender, &fd));
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long hop = 0; atomic_load(&seen_seq) < MIGRATION_SENDS; hop++) {
		CPU_ZERO(&set);
		CPU_SET(hop & 1, &set);
		sched_setaffinity(0, sizeof(set), &set);
		for (int i = 0; i < 100000; i++)
			__asm__ volatile("pause");
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 300)
			break;
	}
	pthread_join(t, &ret);
	ASSERT_EQ(NULL, ret);
	TH_LOG("%ld sends, %ld deliveries, last seen %ld", (long)MIGRATION_SENDS,
	       (long)migration_deliveries, (long)seen_seq);
	EXPECT_EQ(MIGRATION_SENDS, atomic_load(&seen_seq));
	EXPECT_GE(migration_deliveries, 1);
	EXPECT_LE(migration_deliveries, MIGRATION_SENDS);
}

TEST_HARNESS_MAIN
