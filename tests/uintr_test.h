/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the guest tests: system call wrappers in the style of
 * syscall(2) on top of libuintr, the live-object counters, fd passing.
 */
#ifndef UINTR_TEST_H
#define UINTR_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <x86gprintrin.h>

#include <linux/time_types.h>
#include <linux/uintr.h>

#include "libuintr.h"

/*
 * The system calls as syscall(2) makes them, -1 and errno on failure,
 * which is what the tests check against the man pages; libuintr returns
 * -errno instead.
 */
static inline long uintr_errno(long ret)
{
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

static inline long uintr_register_handler(void *handler, unsigned int flags)
{
	return uintr_errno(libuintr_register_handler(handler, flags));
}

static inline long uintr_unregister_handler(unsigned int flags)
{
	return uintr_errno(libuintr_unregister_handler(flags));
}

static inline long uintr_create_fd(unsigned long long vector, unsigned int flags)
{
	return uintr_errno(libuintr_create_fd(vector, flags));
}

static inline long uintr_register_sender(int fd, unsigned int flags)
{
	return uintr_errno(libuintr_register_sender(fd, flags));
}

static inline long uintr_unregister_sender(int fd, unsigned int flags)
{
	return uintr_errno(libuintr_unregister_sender(fd, flags));
}

static inline long uintr_wait(unsigned int flags,
			      const struct __kernel_timespec *timeout)
{
	return uintr_errno(libuintr_wait(flags, timeout));
}

static inline long uintr_register_self(unsigned long long vector,
				       unsigned int flags)
{
	return uintr_errno(libuintr_register_self(vector, flags));
}

static inline long uintr_alt_stack(void *sp, size_t size, unsigned int flags)
{
	return uintr_errno(libuintr_alt_stack(sp, size, flags));
}

static inline long uintr_ipi_fd(unsigned int flags)
{
	return uintr_errno(libuintr_ipi_fd(flags));
}

static inline long uintr_set_target_table(int ipi_fd)
{
	return uintr_errno(libuintr_set_target_table(ipi_fd));
}

static inline long uintr_pending(unsigned long long *set, unsigned int flags)
{
	return uintr_errno(libuintr_pending(set, flags));
}

/* What is pending for the calling receiver now (UIRR and UPID); ~0 on error. */
static inline unsigned long long uintr_pending_now(void)
{
	unsigned long long set = ~0ull;

	if (uintr_pending(&set, 0))
		return ~0ull;
	return set;
}

static inline long uintr_mask(int uintr_fd)
{
	return uintr_errno(libuintr_mask(uintr_fd));
}

static inline long uintr_unmask(int uintr_fd)
{
	return uintr_errno(libuintr_unmask(uintr_fd));
}

static inline long uintr_revoke(int uintr_fd, int pid)
{
	return uintr_errno(libuintr_revoke(uintr_fd, pid));
}

static inline long uintr_watch(int uintr_fd, int fd, unsigned int events)
{
	return uintr_errno(libuintr_watch(uintr_fd, fd, events));
}

static inline long uintr_unwatch(int uintr_fd, int fd)
{
	return uintr_errno(libuintr_unwatch(uintr_fd, fd));
}

/* A user interrupt handler (see libuintr.h). */
#define UINTR_HANDLER(name)	LIBUINTR_HANDLER(name)

/*
 * A handler that records what it got: how many deliveries, and the last
 * vector; uintr_wait_recorded(n) waits up to 5 s for n of them, with UIF
 * as the caller left it.  (Unused in most tests.)
 */
static volatile int uintr_recorded __attribute__((unused));
static volatile unsigned long long uintr_recorded_vector __attribute__((unused));

static __attribute__((unused)) UINTR_HANDLER(uintr_record)
{
	uintr_recorded_vector = vector;
	uintr_recorded++;
}

static inline int uintr_wait_recorded(int n)
{
	for (long i = 0; i < 5000 && uintr_recorded < n; i++)
		usleep(1000);
	return uintr_recorded >= n;
}

/* The result of a call as -errno (or its value), for EXPECT_EQ. */
#define UINTR_RET(call) ({ long __r = (call); __r < 0 ? -errno : __r; })

/* A handler for registration tests; never called before delivery works. */
static inline void *uintr_test_handler(void)
{
	return (void *)&uintr_test_handler;
}

/* Runs fn in a child; returns the signal that ended it (0: none). */
static inline int uintr_child_signal(void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		fn();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/* Reads a whole (small) file into buf as a string; -1 on error. */
static inline int uintr_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* Writes text to a (sysfs, cgroup, debugfs) file in one write; 0 or -1. */
static inline int uintr_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The number in a (sysctl) file; -1 if it cannot be read. */
static inline long uintr_read_long(const char *path)
{
	char text[32];

	return uintr_read_file(path, text, sizeof(text)) ? -1 : strtol(text, NULL, 10);
}

/* Writes a number to a (sysctl) file; 0 or -1. */
static inline int uintr_write_long(const char *path, long value)
{
	char text[32];

	snprintf(text, sizeof(text), "%ld\n", value);
	return uintr_write_file(path, text);
}

/* The connection limits (Documentation: "Limits"). */
#define UINTR_FD_LIMIT		"/proc/sys/kernel/uintr/max_fd_connections"
#define UINTR_RECEIVER_LIMIT	"/proc/sys/kernel/uintr/max_receiver_connections"
#define UINTR_USER_LIMIT	"/proc/sys/user/max_uintr_connections"
#define UINTR_ENTRY_LIMIT	"/proc/sys/kernel/uintr/max_sender_entries"

/* The three connection limits, saved to be put back after a test. */
struct uintr_limits {
	long fd, receiver, user;
};

/* Reads the limits; 0, or -1 if one cannot be read. */
static inline int uintr_limits_save(struct uintr_limits *l)
{
	l->fd = uintr_read_long(UINTR_FD_LIMIT);
	l->receiver = uintr_read_long(UINTR_RECEIVER_LIMIT);
	l->user = uintr_read_long(UINTR_USER_LIMIT);
	return l->fd > 0 && l->receiver > 0 && l->user > 0 ? 0 : -1;
}

/* Puts saved limits back; 0, or -1 if one cannot be written. */
static inline int uintr_limits_restore(const struct uintr_limits *l)
{
	int ret = uintr_write_long(UINTR_FD_LIMIT, l->fd);

	ret |= uintr_write_long(UINTR_RECEIVER_LIMIT, l->receiver);
	ret |= uintr_write_long(UINTR_USER_LIMIT, l->user);
	return ret;
}

/* The value of field key ("uintr_masked:") in fd's fdinfo; -1 if none. */
static inline long long uintr_fdinfo_value(int fd, const char *key)
{
	char path[64], text[2048], *at;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (uintr_read_file(path, text, sizeof(text)))
		return -1;
	at = strstr(text, key);
	return at ? strtoll(at + strlen(key), NULL, 0) : -1;
}

/*
 * Whether the CPU itself runs user interrupts on this boot: the kernel
 * shows the "uintr" flag in /proc/cpuinfo in hardware mode only.
 */
/*
 * A debug kernel (make check DEBUG=1: KASAN, lockdep, kmemleak) runs
 * system calls and forks several times slower; the long tests do fewer
 * rounds there (kmemleak's file exists only in that flavor).
 */
static inline int uintr_debug_kernel(void)
{
	return access("/sys/kernel/debug/kmemleak", F_OK) == 0;
}

static inline int uintr_hardware_mode(void)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "flags", 5) &&
			(strstr(line, " uintr ") || strstr(line, " uintr\n"));
	if (f)
		fclose(f);
	return found;
}

/*
 * CPU cpu's count in the /proc/interrupts row name ("UIN"), or with cpu
 * -1 the sum over all CPUs; -1 if there is no such row or CPU.
 */
static inline long long uintr_irq_count_on(const char *name, int cpu)
{
	char line[1024], *p, *end;
	long long sum = -1;
	size_t len = strlen(name);
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && sum < 0 && fgets(line, sizeof(line), f)) {
		for (p = line; *p == ' '; p++)
			;
		if (strncmp(p, name, len) || p[len] != ':')
			continue;
		sum = 0;
		p += len + 1;
		for (int i = 0;; i++, p = end) {
			long long n = strtoll(p, &end, 10);

			if (end == p) {
				if (cpu >= i)
					sum = -1;	/* no such CPU */
				break;
			}
			if (cpu < 0 || cpu == i)
				sum += n;
			if (cpu == i)
				break;
		}
	}
	if (f)
		fclose(f);
	return sum;
}

/* The sum over all CPUs of the /proc/interrupts row name, or -1. */
static inline long long uintr_irq_count(const char *name)
{
	return uintr_irq_count_on(name, -1);
}

/* Moves the calling thread to CPU cpu (and keeps it there). */
static inline void uintr_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* /sys/kernel/debug/x86/uintr_stats */
struct uintr_stats {
	long receivers, senders, upids, uitts, fds, connections, ipi_fds, watches;
};

/*
 * For a stall report: the fdinfo of uintr_fd (receiver state, UPID) under
 * the label who, and the notification counters of /proc/interrupts.
 */
static inline void uintr_dump_fd(const char *who, int uintr_fd)
{
	char path[64], text[1024];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", uintr_fd);
	if (!uintr_read_file(path, text, sizeof(text)))
		fprintf(stderr, "# fdinfo of %s:\n%s", who, text);
}

static inline void uintr_dump_interrupts(void)
{
	char line[256];
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "UIN:") || strstr(line, "UIK:") || strstr(line, "UIS:"))
			fprintf(stderr, "# %s", line);
	if (f)
		fclose(f);
}

static inline int uintr_read_stats(struct uintr_stats *s)
{
	FILE *f = fopen("/sys/kernel/debug/x86/uintr_stats", "r");
	char name[32];
	long value;
	int n = 0;

	if (!f)
		return -1;
	memset(s, 0, sizeof(*s));
	while (fscanf(f, "%31[^:]:%ld\n", name, &value) == 2) {
		n++;
		if (!strcmp(name, "receivers"))
			s->receivers = value;
		else if (!strcmp(name, "senders"))
			s->senders = value;
		else if (!strcmp(name, "upids"))
			s->upids = value;
		else if (!strcmp(name, "uitts"))
			s->uitts = value;
		else if (!strcmp(name, "fds"))
			s->fds = value;
		else if (!strcmp(name, "connections"))
			s->connections = value;
		else if (!strcmp(name, "ipi_fds"))
			s->ipi_fds = value;
		else if (!strcmp(name, "watches"))
			s->watches = value;
		else
			n--;
	}
	fclose(f);
	return n == 8 ? 0 : -1;
}

static inline int uintr_stats_equal(const struct uintr_stats *a,
				    const struct uintr_stats *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static inline void uintr_stats_print(const char *what, const struct uintr_stats *s)
{
	printf("# %s: receivers %ld senders %ld upids %ld uitts %ld fds %ld connections %ld ipi_fds %ld watches %ld\n",
	       what, s->receivers, s->senders, s->upids, s->uitts, s->fds,
	       s->connections, s->ipi_fds, s->watches);
}

/*
 * Waits up to 10 s for the counters to read `want` (an exiting thread's
 * release, or an fput, may lag behind); prints both readings if they
 * never do.
 */
static inline int uintr_stats_become(const struct uintr_stats *want)
{
	struct uintr_stats now;

	for (int i = 0; i < 1000; i++) {
		if (uintr_read_stats(&now) == 0 && uintr_stats_equal(&now, want))
			return 1;
		usleep(10000);
	}
	uintr_stats_print("expected", want);
	uintr_stats_print("found   ", &now);
	return 0;
}

/* base plus the given counts, in the order of struct uintr_stats. */
static inline struct uintr_stats uintr_stats_plus(struct uintr_stats base,
						  long receivers, long senders,
						  long upids, long uitts,
						  long fds, long connections)
{
	base.receivers += receivers;
	base.senders += senders;
	base.upids += upids;
	base.uitts += uitts;
	base.fds += fds;
	base.connections += connections;
	return base;
}

/* uintr_stats_become() for a computed value. */
static inline int uintr_stats_reach(struct uintr_stats want)
{
	return uintr_stats_become(&want);
}

/* Whether the code at ip is SENDUIPI: F3 [REX] 0F C7 /6, register form. */
static inline int uintr_is_senduipi(const unsigned char *ip)
{
	if (*ip++ != 0xf3)
		return 0;
	if ((*ip & 0xf0) == 0x40)
		ip++;
	return ip[0] == 0x0f && ip[1] == 0xc7 && (ip[2] & 0xf8) == 0xf0;
}

/* fork() for a child that dies with its parent (a test failing midway). */
static inline pid_t uintr_spawn(void)
{
	pid_t pid = fork();

	if (pid == 0)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	return pid;
}

/* Sends fd over a Unix socket (SCM_RIGHTS); 0 or -1. */
static inline int uintr_send_fd(int sock, int fd)
{
	return uintr_errno(libuintr_send_fd(sock, fd));
}

/* Receives an fd sent by uintr_send_fd; -1 on error. */
static inline int uintr_recv_fd(int sock)
{
	return uintr_errno(libuintr_recv_fd(sock));
}

#endif /* UINTR_TEST_H */
