// SPDX-License-Identifier: GPL-2.0
/*
 * A device's interrupt as a user interrupt: QEMU's "edu" PCI device,
 * bound to uio_pci_generic, raises its legacy (INTx) interrupt when a
 * bit is written to its interrupt-raise register.  uio_pci_generic's
 * hard-IRQ handler masks the line and wakes /dev/uioN's wait queue; a
 * uintr_fd watching /dev/uioN turns that wakeup into the receiver's
 * vector.  The program acknowledges the device and unmasks the line
 * (in the device's PCI command register), as any uio_pci_generic
 * driver does, and the next
 * raise interrupts again: N raises are N deliveries.  Raises while the
 * line is masked coalesce in the device, and nothing is lost or
 * invented when it is unmasked.
 *
 * The device exists in QEMU only (run-guest.sh adds it): on the Bochs
 * model the tests are skipped.
 */
#include "uintr_test.h"

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <time.h>

#include <linux/pci_regs.h>

#include "kselftest_harness.h"

#define VECTOR	12

/* QEMU's docs/specs/edu.rst: PCI 1234:11e8, registers in BAR 0. */
#define EDU_IDS		"1234 11e8"
#define EDU_IDENT	0x00	/* 0xRRrr00ed: major, minor, "ed" */
#define EDU_LIVENESS	0x04	/* reads back the inverse of what was written */
#define EDU_IRQ_STATUS	0x24	/* raised interrupt bits */
#define EDU_IRQ_RAISE	0x60	/* ORs the bits into the status, raises the line */
#define EDU_IRQ_ACK	0x64	/* clears bits; the line drops with the last */

#define PCI_DEVICES	"/sys/bus/pci/devices"
#define UIO_GENERIC	"/sys/bus/pci/drivers/uio_pci_generic"

/* The PCI address ("0000:00:04.0") of the edu device; 0 if there is none. */
static int find_edu(char *addr, size_t size)
{
	DIR *d = opendir(PCI_DEVICES);
	struct dirent *e;
	char path[512], vendor[16], device[16];
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PCI_DEVICES "/%s/vendor", e->d_name);
		if (uintr_read_file(path, vendor, sizeof(vendor)))
			continue;
		snprintf(path, sizeof(path), PCI_DEVICES "/%s/device", e->d_name);
		if (uintr_read_file(path, device, sizeof(device)))
			continue;
		if (!strcmp(vendor, "0x1234\n") && !strcmp(device, "0x11e8\n")) {
			snprintf(addr, size, "%s", e->d_name);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

/* The N of the device's /dev/uioN, binding uio_pci_generic first; -1 on error. */
static int bind_uio(const char *addr)
{
	char path[512];
	struct dirent *e;
	DIR *d;
	int n = -1;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/uio", addr);
	d = opendir(path);
	if (!d) {
		/* new_id binds every device with these IDs at once. */
		if (uintr_write_file(UIO_GENERIC "/new_id", EDU_IDS))
			return -1;
		d = opendir(path);
		if (!d)
			return -1;
	}
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "uio%d", &n) == 1)
			break;
	closedir(d);
	return n;
}

/*
 * Unmasks the device's line again: uio_pci_generic masked it in its
 * handler (PCI_COMMAND_INTX_DISABLE) and has no irqcontrol, so a program
 * clears the bit through the device's config space, as its
 * documentation says.
 */

static int uio_unmask(int config)
{
	uint16_t cmd;

	if (pread(config, &cmd, sizeof(cmd), PCI_COMMAND) != sizeof(cmd))
		return -1;
	cmd &= ~PCI_COMMAND_INTX_DISABLE;
	return pwrite(config, &cmd, sizeof(cmd), PCI_COMMAND) == sizeof(cmd) ? 0 : -1;
}

FIXTURE(edu) {
	volatile uint32_t *regs;	/* BAR 0 */
	int uio;			/* /dev/uioN */
	int config;			/* the device's PCI config space */
	int uio_nr;
	int fd;				/* the receiver's uintr_fd */
	struct uintr_stats base;
};

FIXTURE_SETUP(edu)
{
	char addr[256], path[512];
	int bar;

	self->regs = MAP_FAILED;
	self->uio = self->config = self->fd = -1;
	if (!find_edu(addr, sizeof(addr)))
		SKIP(return, "no edu PCI device (QEMU only; the Bochs model has none)");
	self->uio_nr = bind_uio(addr);
	ASSERT_LE(0, self->uio_nr) TH_LOG("binding uio_pci_generic to %s failed", addr);
	snprintf(path, sizeof(path), "/dev/uio%d", self->uio_nr);
	self->uio = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->uio) TH_LOG("%s: %s", path, strerror(errno));

	snprintf(path, sizeof(path), PCI_DEVICES "/%.200s/config", addr);
	self->config = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->config) TH_LOG("%s: %s", path, strerror(errno));

	snprintf(path, sizeof(path), PCI_DEVICES "/%.200s/resource0", addr);
	bar = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	ASSERT_LE(0, bar) TH_LOG("%s: %s", path, strerror(errno));
	self->regs = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, bar, 0);
	close(bar);
	ASSERT_NE(MAP_FAILED, self->regs);
	ASSERT_EQ(0xedu, self->regs[EDU_IDENT / 4] & 0xff);
	self->regs[EDU_LIVENESS / 4] = 0x12345678;
	ASSERT_EQ(~0x12345678u, self->regs[EDU_LIVENESS / 4]);
	/* Nothing left raised, nor the line masked, by an earlier test. */
	self->regs[EDU_IRQ_ACK / 4] = ~0u;
	ASSERT_EQ(0, uio_unmask(self->config));

	ASSERT_EQ(0, uintr_read_stats(&self->base));
	uintr_recorded = 0;
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	self->fd = uintr_create_fd(VECTOR, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, uintr_watch(self->fd, self->uio, EPOLLIN));
}

FIXTURE_TEARDOWN(edu)
{
	if (self->fd < 0)
		return;
	_clui();
	close(self->fd);
	close(self->uio);
	close(self->config);
	uintr_unregister_handler(0);
	munmap((void *)self->regs, 4096);
	EXPECT_TRUE(uintr_stats_become(&self->base));
}

/* The interrupts uio has counted for the device (/sys/class/uio/uioN/event). */
static long uio_events(int nr)
{
	char path[64], buf[32];

	snprintf(path, sizeof(path), "/sys/class/uio/uio%d/event", nr);
	return uintr_read_file(path, buf, sizeof(buf)) ? -1 : atol(buf);
}

/* Spins with UIF as it is for up to 5 s until the handler has counted n. */
static int spin_for_recorded(int n)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (uintr_recorded >= n)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 5);
	return uintr_recorded >= n;
}

#define RAISES	500

TEST_F(edu, each_device_interrupt_reaches_the_running_receiver)
{
	long before = uio_events(self->uio_nr);

	ASSERT_LE(0, before);
	_stui();
	for (int i = 0; i < RAISES; i++) {
		self->regs[EDU_IRQ_RAISE / 4] = 1;
		ASSERT_TRUE(spin_for_recorded(i + 1))
			TH_LOG("raise %d: no delivery (status %#x)", i,
			       self->regs[EDU_IRQ_STATUS / 4]);
		ASSERT_EQ((unsigned long long)VECTOR, uintr_recorded_vector);
		self->regs[EDU_IRQ_ACK / 4] = 1;
		ASSERT_EQ(0, uio_unmask(self->config));
	}
	_clui();
	EXPECT_EQ(RAISES, uintr_recorded);
	EXPECT_EQ(before + RAISES, uio_events(self->uio_nr));
	EXPECT_EQ(RAISES, uintr_fdinfo_value(self->fd, "posts:"));
}

/* Raises the device's interrupt 5 ms after it starts: the receiver sleeps by then. */
static void *raise_later(void *regs)
{
	usleep(5000);
	((volatile uint32_t *)regs)[EDU_IRQ_RAISE / 4] = 1;
	return NULL;
}

TEST_F(edu, a_device_interrupt_wakes_a_receiver_in_uintr_wait)
{
	for (int i = 0; i < 20; i++) {
		pthread_t t;

		/* UIF = 0 from the start to the sleep: no raise is missed. */
		_clui();
		ASSERT_EQ(0, pthread_create(&t, NULL, raise_later, (void *)self->regs));
		EXPECT_EQ(-EINTR, UINTR_RET(uintr_wait(0, NULL)));
		ASSERT_EQ(0, pthread_join(t, NULL));
		_stui();
		ASSERT_TRUE(spin_for_recorded(i + 1)) TH_LOG("raise %d: no delivery", i);
		self->regs[EDU_IRQ_ACK / 4] = 1;
		ASSERT_EQ(0, uio_unmask(self->config));
	}
	_clui();
	EXPECT_EQ(20, uintr_recorded);
}

/*
 * The line stays masked from the first interrupt until the program
 * unmasks it: raises in between only set bits in the device's status,
 * and an acknowledged device interrupts no more when unmasked.
 */
TEST_F(edu, raises_while_the_line_is_masked_coalesce)
{
	long before = uio_events(self->uio_nr);

	_stui();
	self->regs[EDU_IRQ_RAISE / 4] = 1;
	ASSERT_TRUE(spin_for_recorded(1));
	self->regs[EDU_IRQ_RAISE / 4] = 2;
	self->regs[EDU_IRQ_RAISE / 4] = 4;
	usleep(50000);
	EXPECT_EQ(1, uintr_recorded);
	EXPECT_EQ(7u, self->regs[EDU_IRQ_STATUS / 4]);
	self->regs[EDU_IRQ_ACK / 4] = 7;
	ASSERT_EQ(0, uio_unmask(self->config));
	usleep(50000);
	_clui();
	EXPECT_EQ(1, uintr_recorded);
	EXPECT_EQ(before + 1, uio_events(self->uio_nr));
}

/* Unmasked while still raised, the level-triggered line interrupts again. */
TEST_F(edu, an_unacknowledged_device_interrupts_again_when_unmasked)
{
	_stui();
	self->regs[EDU_IRQ_RAISE / 4] = 1;
	ASSERT_TRUE(spin_for_recorded(1));
	ASSERT_EQ(0, uio_unmask(self->config));
	ASSERT_TRUE(spin_for_recorded(2));
	self->regs[EDU_IRQ_ACK / 4] = 1;
	ASSERT_EQ(0, uio_unmask(self->config));
	usleep(50000);
	_clui();
	EXPECT_EQ(2, uintr_recorded);
}

/* Closing the uintr_fd while the device interrupts ends the watch cleanly. */
TEST_F(edu, closing_the_uintr_fd_while_the_device_interrupts)
{
	_stui();
	self->regs[EDU_IRQ_RAISE / 4] = 1;
	ASSERT_TRUE(spin_for_recorded(1));
	_clui();
	ASSERT_EQ(0, uio_unmask(self->config));	/* fires again at once */
	close(self->fd);
	self->fd = uintr_create_fd(VECTOR, 0);
	ASSERT_LE(0, self->fd);
	self->regs[EDU_IRQ_ACK / 4] = 1;
	ASSERT_EQ(0, uio_unmask(self->config));
}

TEST_HARNESS_MAIN
