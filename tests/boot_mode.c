// SPDX-License-Identifier: GPL-2.0
/*
 * The uintr= boot parameter: the mode logged at boot matches the command
 * line and the CPU, with User Interrupts off (uintr=off, or uintr=hw on a
 * CPU without UINTR) every system call fails with EOPNOTSUPP, and on a
 * kernel built without CONFIG_X86_USER_INTERRUPTS with ENOSYS.
 * `make check` boots once as usual and once more each with uintr=off and
 * uintr=hw (on the UINTR model: uintr=off, uintr=emulate, and the whole
 * suite with pti=on);
 * `make check FLAVOR=disabled` boots the kernel built without the option
 * (and says so with uintr_test_config=n).
 */
#include "uintr_test.h"

#include <cpuid.h>
#include <signal.h>
#include <sys/klog.h>

#include "kselftest_harness.h"

static int cmdline_has(const char *word)
{
	static char buf[4096];

	return !uintr_read_file("/proc/cmdline", buf, sizeof(buf)) &&
	       strstr(buf, word) != NULL;
}

/* CPUID.(EAX=7,ECX=0):EDX[5], whatever the kernel makes of it. */
static int cpu_has_uintr(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 5));
}

/* Whether page table isolation is on ("pti" in the flags of /proc/cpuinfo). */
static int pti_on(void)
{
	static char buf[65536];

	return !uintr_read_file("/proc/cpuinfo", buf, sizeof(buf)) &&
	       (strstr(buf, " pti ") || strstr(buf, " pti\n"));
}

/*
 * The uintr= request on the command line: the kernel calls its handler for
 * each uintr= and nouintr in turn, so the last one wins (run-bochs.sh puts
 * uintr=hw first, the extra boots of make check add theirs behind it).
 */
static const char *requested(void)
{
	static const char *const values[] = { "auto", "hw", "emulate", "off" };
	static char buf[4096];
	const char *req = "auto";
	char *word, *save;
	size_t i;

	if (uintr_read_file("/proc/cmdline", buf, sizeof(buf)))
		return req;
	for (word = strtok_r(buf, " \n", &save); word;
	     word = strtok_r(NULL, " \n", &save)) {
		if (!strcmp(word, "nouintr"))
			req = "off";
		for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
			if (!strncmp(word, "uintr=", 6) &&
			    !strcmp(word + 6, values[i]))
				req = values[i];
	}
	return req;
}

/* The mode the kernel should have chosen, as it logs it. */
static const char *expected_mode(void)
{
	const char *req = requested();
	int usable = cpu_has_uintr();

	if (!strcmp(req, "off") || (!strcmp(req, "hw") && !usable))
		return "off";
	if (!strcmp(req, "emulate") || !usable)
		return "emulated";
	return "hardware";
}

static int uintr_off(void)
{
	return !strcmp(expected_mode(), "off");
}

static int configured_out(void)
{
	return cmdline_has("uintr_test_config=n");
}

TEST(boot_log_names_the_mode)
{
	static char log[1 << 20];
	int len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);
	char want[128];

	snprintf(want, sizeof(want), "mode %s (uintr=%s, CPU %s UINTR)",
		 expected_mode(), requested(), cpu_has_uintr() ? "has" : "lacks");
	ASSERT_GT(len, 0);
	log[len] = '\0';
	if (configured_out()) {
		EXPECT_EQ(NULL, strstr(log, "uintr: "));
		return;
	}
	EXPECT_NE(NULL, strstr(log, want)) TH_LOG("no '%s' in the boot log", want);
}

/* "uintr" in /proc/cpuinfo exactly when the hardware runs the feature. */
TEST(cpuinfo_has_uintr_flag_only_in_hardware_mode)
{
	static char buf[65536];
	int hardware = !configured_out() && !strcmp(expected_mode(), "hardware");

	ASSERT_EQ(0, uintr_read_file("/proc/cpuinfo", buf, sizeof(buf)));
	EXPECT_EQ(hardware, strstr(buf, " uintr") != NULL);
}

/* The kernel log of this boot, NUL-terminated. */
static const char *boot_log(void)
{
	static char log[1 << 20];
	int len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);

	log[len > 0 ? len : 0] = '\0';
	return log;
}

/*
 * XSAVE state component 14 (IA32_XSS bit 14) is enabled exactly when the
 * hardware runs the feature: the FPU code logs each component it uses.
 */
TEST(xsave_component_only_in_hardware_mode)
{
	int hardware = !configured_out() && !strcmp(expected_mode(), "hardware");
	const char *log = boot_log();

	ASSERT_NE('\0', log[0]);
	EXPECT_EQ(hardware, strstr(log, "'User Interrupts registers'") != NULL);
}

/*
 * With PTI on, the hardware runs as without it: PTI maps the User
 * Interrupts area in the user page tables, and the log says so.
 */
TEST(page_table_isolation_keeps_the_hardware)
{
	int hardware = !configured_out() && !strcmp(expected_mode(), "hardware");
	const char *log = boot_log();

	if (!pti_on())
		SKIP(return, "page table isolation is off");
	EXPECT_EQ(hardware, strstr(log, "Kernel/User page tables isolation: "
				 "User Interrupts area shared with user page tables") != NULL);
	EXPECT_EQ(NULL, strstr(log, "UINTR hardware unused"));
}

TEST(syscalls_follow_the_mode)
{
	long off = configured_out() ? -ENOSYS : -EOPNOTSUPP;
	long want = uintr_off() || configured_out() ? off : 0;

	EXPECT_EQ(want, UINTR_RET(uintr_register_handler(uintr_test_handler(), 0)));
	if (want) {
		EXPECT_EQ(off, UINTR_RET(uintr_unregister_handler(0)));
		EXPECT_EQ(off, UINTR_RET(uintr_create_fd(0, 0)));
		EXPECT_EQ(off, UINTR_RET(uintr_register_sender(0, 0)));
		EXPECT_EQ(off, UINTR_RET(uintr_unregister_sender(0, 0)));
		EXPECT_EQ(off, UINTR_RET(uintr_wait(0, NULL)));
		EXPECT_EQ(off, UINTR_RET(uintr_register_self(0, 0)));
		EXPECT_EQ(off, UINTR_RET(uintr_alt_stack(NULL, 0, 0)));
		EXPECT_EQ(off, UINTR_RET(uintr_ipi_fd(0)));
		EXPECT_EQ(off, UINTR_RET(uintr_pending(NULL, 0)));
	} else {
		EXPECT_EQ(0, uintr_unregister_handler(0));
	}
}

static void do_stui(void) { _stui(); }
static void do_clui(void) { _clui(); }
static void do_testui(void) { if (_testui()) _exit(1); }
static void do_senduipi(void) { _senduipi(0); }

static void do_uiret(void)
{
	/* A frame that returns right behind the UIRET: RIP, RFLAGS, RSP. */
	__asm__ volatile(
		"mov %%rsp, %%rax\n\t"
		"pushq %%rax\n\t"
		"pushfq\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"uiret\n"
		"1:\n\t"
		::: "rax", "memory", "cc");
}

TEST(instructions_follow_the_mode)
{
	int off = uintr_off() || configured_out() ? SIGILL : 0;

	EXPECT_EQ(off, uintr_child_signal(do_stui));
	EXPECT_EQ(off, uintr_child_signal(do_clui));
	EXPECT_EQ(off, uintr_child_signal(do_testui));
	EXPECT_EQ(off, uintr_child_signal(do_uiret));
	/* Without a UITT, SENDUIPI is a #UD in every mode. */
	EXPECT_EQ(SIGILL, uintr_child_signal(do_senduipi));
}

TEST(proc_interrupts_counts_notifications)
{
	static char buf[65536];

	ASSERT_EQ(0, uintr_read_file("/proc/interrupts", buf, sizeof(buf)));
	if (configured_out()) {
		EXPECT_EQ(NULL, strstr(buf, "UIN:"));
		EXPECT_EQ(NULL, strstr(buf, "UIK:"));
	} else {
		EXPECT_NE(NULL, strstr(buf, "UIN:"));
		EXPECT_NE(NULL, strstr(buf, "UIS:"));
		EXPECT_NE(NULL, strstr(buf, "UIK:"));
	}
}

TEST_HARNESS_MAIN
