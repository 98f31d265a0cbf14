// SPDX-License-Identifier: GPL-2.0
/*
 * The guest we test on: the uintr kernel, both vCPUs online, the Rust
 * component linked in and initialized.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kselftest_harness.h"

TEST(kernel_release_is_uintr)
{
	struct utsname u;

	ASSERT_EQ(0, uname(&u));
	TH_LOG("release %s", u.release);
	EXPECT_NE(NULL, strstr(u.release, "-uintr"));
}

TEST(two_cpus_online_and_usable)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	ASSERT_GE(n, 2);
	for (int cpu = 0; cpu < 2; cpu++) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
		ASSERT_EQ(cpu, sched_getcpu());
	}
}

TEST(rust_component_initialized)
{
	static char log[1 << 20];
	int len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);

	ASSERT_GT(len, 0);
	log[len] = '\0';
	EXPECT_NE(NULL, strstr(log, "uintr: Rust component initialized"));
}

TEST_HARNESS_MAIN
