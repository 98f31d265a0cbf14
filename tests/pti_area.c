// SPDX-License-Identifier: GPL-2.0
/*
 * The User Interrupts area, read through the kernel's page table dump
 * (debugfs page_tables/, CONFIG_PTDUMP_DEBUGFS).
 *
 * On UINTR hardware the CPU reads the UITT and the UPIDs while user code
 * runs, so with page table isolation the kernel keeps them in an area
 * that every user page table maps (P4D entry -3, "User Interrupts Area"
 * in the dump).  Checked here:
 * - the area holds exactly the UPIDs and UITTs of the live receivers and
 *   senders, packed as the kernel documents it (64 UPIDs to a page, one
 *   page for the sink of masked entries, each UITT its reservation: one
 *   page of its own, the rest the zero page read-only), and nothing once
 *   they are gone; with the emulation it holds nothing at all;
 * - every mapping there is supervisor-only and not executable;
 * - with PTI on, the user page tables show the area exactly as the kernel's
 *   do, receivers and senders add nothing to them elsewhere, and nothing
 *   outside the area and the regions PTI itself maps (entry text, CPU
 *   entry area, ESPFIX stacks, vsyscall page, each CPU's TSS) is in them.
 */
#include "uintr_test.h"

#include <pthread.h>

#include "kselftest_harness.h"

#define PTDUMP_KERNEL	"/sys/kernel/debug/page_tables/current_kernel"
#define PTDUMP_USER	"/sys/kernel/debug/page_tables/current_user"
#define AREA		"User Interrupts Area"
#define KERNEL_HALF	0xffff800000000000ul
#define PAGE		4096ul
#define UPIDS_PER_PAGE	64
#define UITT_ENTRY	16ul

/* What a dump shows of the kernel half. */
struct view {
	long rw_pages, ro_pages;	/* present 4 KiB pages in the area */
	long low_pages;			/* present pages in the direct map */
	int user, exec;			/* area mappings with USR, without NX */
	char area[16384];		/* the area's present lines */
	char outside[65536];		/* present kernel lines elsewhere */
	char sections[1024];		/* sections with present kernel lines */
};

static void append(char *buf, size_t size, const char *text)
{
	size_t len = strlen(buf);

	snprintf(buf + len, size - len, "%s", text);
}

/* Parses one dump into v; 0, or -1 if it cannot be read. */
static int read_view(const char *path, struct view *v)
{
	char line[512], section[128] = "", marked[128] = "";
	FILE *f = fopen(path, "r");

	memset(v, 0, sizeof(*v));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		int present, in_area;

		if (sscanf(line, "---[ %127[^]] ]---", section) == 1) {
			/* "---[ name ]---": drop the blank before "]". */
			while (section[0] && section[strlen(section) - 1] == ' ')
				section[strlen(section) - 1] = '\0';
			continue;
		}
		if (sscanf(line, "0x%lx-0x%lx", &start, &end) != 2 ||
		    start < KERNEL_HALF)
			continue;
		present = strstr(line, " RW ") || strstr(line, " ro ");
		if (!present)
			continue;
		in_area = !strcmp(section, AREA);
		if (strcmp(marked, section)) {
			append(v->sections, sizeof(v->sections), section);
			append(v->sections, sizeof(v->sections), "; ");
			snprintf(marked, sizeof(marked), "%s", section);
		}
		if (!in_area) {
			append(v->outside, sizeof(v->outside), line);
			if (!strcmp(section, "Low Kernel Mapping"))
				v->low_pages += (end - start) / PAGE;
			continue;
		}
		append(v->area, sizeof(v->area), line);
		if (strstr(line, " RW "))
			v->rw_pages += (end - start) / PAGE;
		else
			v->ro_pages += (end - start) / PAGE;
		v->user += strstr(line, "USR") != NULL;
		v->exec += strstr(line, " NX ") == NULL;
	}
	fclose(f);
	return 0;
}

static int pti_on(void)
{
	static char buf[65536];

	return !uintr_read_file("/proc/cpuinfo", buf, sizeof(buf)) &&
	       (strstr(buf, " pti ") || strstr(buf, " pti\n"));
}

/*
 * Waits up to 10 s (UPID pages are unmapped after a deferral, exiting
 * threads release theirs late) for the area in the kernel's dump to hold
 * rw and ro pages; fills v with the last reading.
 */
static int area_becomes(struct view *v, long rw, long ro)
{
	for (int i = 0; i < 1000; i++) {
		if (read_view(PTDUMP_KERNEL, v))
			return 0;
		if (v->rw_pages == rw && v->ro_pages == ro)
			return 1;
		usleep(10000);
	}
	printf("# area: %ld RW and %ld ro pages, expected %ld and %ld:\n%s",
	       v->rw_pages, v->ro_pages, rw, ro, v->area);
	return 0;
}

#define RECEIVERS	100
#define SENDERS		3

static pthread_barrier_t ready, done;
static int shared_fd = -1;
static int thread_errors;

static void *receiver_thread(void *arg)
{
	if (uintr_register_handler(uintr_test_handler(), 0))
		__atomic_add_fetch(&thread_errors, 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);
	return NULL;
}

static void *sender_thread(void *arg)
{
	if (uintr_register_sender(shared_fd, 0) < 0)
		__atomic_add_fetch(&thread_errors, 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);
	return NULL;
}

FIXTURE(area) {
	struct view base_kernel, base_user;
	int hardware, pti;
	long uitt_pages;
};

FIXTURE_SETUP(area)
{
	struct uintr_stats none = { 0 };
	long entries = uintr_read_long(UINTR_ENTRY_LIMIT);

	if (access(PTDUMP_KERNEL, R_OK))
		SKIP(return, "no page table dump (CONFIG_PTDUMP_DEBUGFS)");
	self->hardware = uintr_hardware_mode();
	self->pti = pti_on();
	ASSERT_GT(entries, 0);
	self->uitt_pages = (entries * UITT_ENTRY + PAGE - 1) / PAGE;
	/* No receiver or sender is left from an earlier test. */
	ASSERT_TRUE(uintr_stats_become(&none));
	/* Only the sink's page, on the hardware. */
	ASSERT_TRUE(area_becomes(&self->base_kernel, self->hardware, 0));
	if (self->pti)
		ASSERT_EQ(0, read_view(PTDUMP_USER, &self->base_user));
}

FIXTURE_TEARDOWN(area)
{
}

/*
 * RECEIVERS receivers (this thread and 99 more) and SENDERS senders: the
 * area holds their UPIDs and UITTs, in both views, and nothing else
 * changes; then they go, and so do their pages.
 */
TEST_F(area, holds_exactly_the_upids_and_uitts)
{
	pthread_t threads[RECEIVERS - 1 + SENDERS];
	long rw = 0, ro = 0;
	struct view kernel, user;
	int i;

	ASSERT_EQ(0, pthread_barrier_init(&ready, NULL, RECEIVERS + SENDERS));
	ASSERT_EQ(0, pthread_barrier_init(&done, NULL, RECEIVERS + SENDERS));
	ASSERT_EQ(0, uintr_register_handler(uintr_test_handler(), 0));
	shared_fd = uintr_create_fd(3, 0);
	ASSERT_GE(shared_fd, 0);
	for (i = 0; i < RECEIVERS - 1; i++)
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, receiver_thread, NULL));
	for (; i < RECEIVERS - 1 + SENDERS; i++)
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, sender_thread, NULL));
	pthread_barrier_wait(&ready);
	EXPECT_EQ(0, thread_errors);

	if (self->hardware) {
		/* The sink and RECEIVERS UPIDs, packed; one reservation per UITT. */
		rw = (RECEIVERS + 1 + UPIDS_PER_PAGE - 1) / UPIDS_PER_PAGE + SENDERS;
		ro = SENDERS * (self->uitt_pages - 1);
	}
	EXPECT_TRUE(area_becomes(&kernel, rw, ro));
	EXPECT_EQ(0, kernel.user) TH_LOG("user-accessible pages in the area:\n%s", kernel.area);
	EXPECT_EQ(0, kernel.exec) TH_LOG("executable pages in the area:\n%s", kernel.area);
	if (self->pti) {
		ASSERT_EQ(0, read_view(PTDUMP_USER, &user));
		/* The user page tables share the area's page tables. */
		EXPECT_STREQ(kernel.area, user.area);
		/* Receivers and senders add nothing else to them. */
		EXPECT_STREQ(self->base_user.outside, user.outside);
	}

	pthread_barrier_wait(&done);
	for (i = 0; i < RECEIVERS - 1 + SENDERS; i++)
		pthread_join(threads[i], NULL);
	EXPECT_EQ(0, close(shared_fd));
	EXPECT_EQ(0, uintr_unregister_handler(0));
	EXPECT_TRUE(area_becomes(&kernel, self->hardware, 0));
	pthread_barrier_destroy(&ready);
	pthread_barrier_destroy(&done);
}

/*
 * With PTI on, the kernel half of the user page tables maps only what PTI
 * itself maps there (the entry text, the CPU entry area, the ESPFIX
 * stacks, the vsyscall page, and in the direct map one page per CPU: the
 * TSS, whose sp2 slot the SYSCALL entry uses as scratch), and the area.
 */
TEST_F(area, user_page_tables_map_nothing_else)
{
	static const char *const allowed[] = {
		"Low Kernel Mapping", "CPU entry Area", "ESPfix Area",
		"High Kernel Mapping", "Fixmap Area", AREA,
	};
	char sections[sizeof(self->base_user.sections)], *s, *save;

	if (!self->pti)
		SKIP(return, "page table isolation is off");
	printf("# kernel sections in the user page tables: %s\n",
	       self->base_user.sections);
	/* With the hardware, the sink's page at least is there. */
	EXPECT_EQ(self->hardware, strstr(self->base_user.sections, AREA ";") != NULL);
	EXPECT_LE(self->base_user.low_pages, sysconf(_SC_NPROCESSORS_CONF))
		TH_LOG("direct-map pages in the user page tables:\n%s",
		       self->base_user.outside);
	snprintf(sections, sizeof(sections), "%s", self->base_user.sections);
	for (s = strtok_r(sections, ";", &save); s; s = strtok_r(NULL, ";", &save)) {
		size_t i;
		int ok = 0;

		while (*s == ' ')
			s++;
		if (!*s)
			continue;
		for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
			ok |= !strcmp(s, allowed[i]);
		EXPECT_TRUE(ok) TH_LOG("user page tables map kernel memory in '%s'", s);
	}
}

TEST_HARNESS_MAIN
