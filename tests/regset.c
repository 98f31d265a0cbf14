// SPDX-License-Identifier: GPL-2.0
/*
 * NT_X86_UINTR: a debugger's PTRACE_GETREGSET of a stopped receiver, and
 * the note in a core dump, show the thread's handler, stack adjustment,
 * UIRR (a request it recognized with UIF clear), what is posted to it and
 * not yet recognized, UIF and its roles; a thread without User Interrupts
 * state shows none, and its core dump has no such note.  UIF survives a
 * signal handler.
 */
#include "uintr_test.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include "kselftest_harness.h"

#ifndef NT_X86_UINTR
#define NT_X86_UINTR	0x206	/* until the system's <elf.h> has it */
#endif

#define SELF_VECTOR	9
#define PEER_VECTOR	17

static char alt_stack[4096] __attribute__((aligned(64)));

/*
 * In a child: a receiver and sender with an alternate stack that sends
 * itself SELF_VECTOR with UIF clear (recognized, not delivered), tells the
 * parent through sock its uintr_fd for PEER_VECTOR, and stops.  Once the
 * parent has posted PEER_VECTOR and looked, it either exits or (abort)
 * dumps core.
 */
static void pending_receiver(int sock, int abort_after)
{
	int fd;
	long idx;
	char go;

	if (ptrace(PTRACE_TRACEME, 0, 0, 0))
		_exit(30);
	if (uintr_register_handler(uintr_record, 0) ||
	    uintr_alt_stack(alt_stack, sizeof(alt_stack), 0))
		_exit(31);
	idx = uintr_register_self(SELF_VECTOR, 0);
	fd = uintr_create_fd(PEER_VECTOR, 0);
	if (idx < 0 || fd < 0 || uintr_send_fd(sock, fd))
		_exit(32);
	_clui();
	_senduipi(idx);
	if (read(sock, &go, 1) != 1)	/* the parent has connected */
		_exit(33);
	raise(SIGSTOP);
	if (abort_after)
		abort();
	_exit(uintr_recorded == 0 ? 0 : 34);
}

static int connect_and_post(int sock)
{
	int fd = uintr_recv_fd(sock);
	long idx = fd < 0 ? -1 : uintr_register_sender(fd, 0);

	if (idx < 0)
		return -1;
	/* Posted to a thread that will not run again before we look. */
	if (write(sock, "g", 1) != 1)
		return -1;
	return idx;
}

static void expect_state(struct __test_metadata *_metadata,
			 const struct uintr_regset *s, unsigned long long uirr,
			 unsigned long long posted)
{
	EXPECT_EQ((uintptr_t)uintr_record, s->handler);
	EXPECT_EQ((uintptr_t)(alt_stack + sizeof(alt_stack)) | 1, s->stack_adjust);
	EXPECT_EQ(uirr, s->uirr);
	EXPECT_EQ(posted, s->posted);
	EXPECT_EQ(0u, s->uif);
	EXPECT_EQ(UINTR_REGSET_RECEIVER | UINTR_REGSET_SENDER,
		  s->flags & ~UINTR_REGSET_HARDWARE);
	TH_LOG("handler %#llx stack_adjust %#llx uirr %#llx posted %#llx uif %u flags %#x",
	       s->handler, s->stack_adjust, s->uirr, s->posted, s->uif, s->flags);
}

TEST(ptrace_shows_a_stopped_receivers_state)
{
	struct uintr_regset s;
	struct iovec iov = { &s, sizeof(s) };
	int sv[2], status;
	long idx;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		pending_receiver(sv[1], 0);
	idx = connect_and_post(sv[0]);
	ASSERT_GE(idx, 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status)) TH_LOG("child status %#x", status);
	/* Stopped: this post stays in its UPID, not yet recognized. */
	_senduipi(idx);
	memset(&s, 0xa5, sizeof(s));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGSET, pid, NT_X86_UINTR, &iov));
	EXPECT_EQ(sizeof(s), iov.iov_len);
	expect_state(_metadata, &s, 1ull << SELF_VECTOR, 1ull << PEER_VECTOR);
	/* Looking changed nothing: the child still has not handled them. */
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
}

/* A thread that has not used User Interrupts: all zero. */
TEST(ptrace_shows_no_state_for_other_threads)
{
	struct uintr_regset s;
	struct iovec iov = { &s, sizeof(s) };
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	memset(&s, 0xa5, sizeof(s));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGSET, pid, NT_X86_UINTR, &iov));
	EXPECT_EQ(sizeof(s), iov.iov_len);
	EXPECT_EQ(0ull, s.handler);
	EXPECT_EQ(0ull, s.uirr);
	EXPECT_EQ(0ull, s.posted);
	EXPECT_EQ(0u, s.flags & ~UINTR_REGSET_HARDWARE);
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
}

/*
 * Finds the NT_X86_UINTR note in the core file at path; returns 1 and
 * fills s, 0 if there is none, -1 if the file is not a readable core.
 */
static int core_note(const char *path, struct uintr_regset *s)
{
	static char core[1 << 20];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)core;
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, core, sizeof(core));

	if (fd >= 0)
		close(fd);
	if (n < (ssize_t)sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_type != ET_CORE ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > (size_t)n)
		return -1;
	for (int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(core + eh->e_phoff) + i;
		size_t off = ph->p_offset, end = off + ph->p_filesz;

		if (ph->p_type != PT_NOTE)
			continue;
		if (end > (size_t)n)
			return -1;
		while (off + sizeof(Elf64_Nhdr) <= end) {
			Elf64_Nhdr *nh = (Elf64_Nhdr *)(core + off);
			size_t desc = off + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				return -1;
			if (nh->n_type == NT_X86_UINTR) {
				if (nh->n_descsz != sizeof(*s))
					return -1;
				memcpy(s, core + desc, sizeof(*s));
				return 1;
			}
			off = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

FIXTURE(core)
{
	char pattern[256];
	char path[64];
};

FIXTURE_SETUP(core)
{
	static const char ours[] = "/tmp/uintr-core.%p";
	int fd = open("/proc/sys/kernel/core_pattern", O_RDONLY);
	ssize_t n;

	ASSERT_GE(fd, 0);
	n = read(fd, self->pattern, sizeof(self->pattern) - 1);
	close(fd);
	ASSERT_GT(n, 0);
	self->pattern[n] = 0;
	fd = open("/proc/sys/kernel/core_pattern", O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ((ssize_t)strlen(ours), write(fd, ours, strlen(ours)));
	close(fd);
}

FIXTURE_TEARDOWN(core)
{
	int fd = open("/proc/sys/kernel/core_pattern", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, self->pattern, strlen(self->pattern)) < 0)
			TH_LOG("cannot restore core_pattern");
		close(fd);
	}
	if (self->path[0])
		unlink(self->path);
}

/* Dumps core at its stop once resumed; returns its pid, stopped. */
static pid_t dump_after_stop(struct __test_metadata *_metadata, int uses_uintr,
			     long *idx)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	int sv[2], status;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return -1;
	pid = fork();
	ASSERT_GE(pid, 0) return -1;
	if (pid == 0) {
		if (setrlimit(RLIMIT_CORE, &unlimited) ||
		    prctl(PR_SET_DUMPABLE, 1))
			_exit(40);
		if (uses_uintr)
			pending_receiver(sv[1], 1);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		abort();
	}
	if (uses_uintr) {
		*idx = connect_and_post(sv[0]);
		ASSERT_GE(*idx, 0) return -1;
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0)) return -1;
	ASSERT_TRUE(WIFSTOPPED(status)) return -1;
	return pid;
}

static void resume_until_dumped(struct __test_metadata *_metadata, pid_t pid)
{
	int status;

	/* The SIGABRT stop first, then the dump. */
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGABRT)
		TH_LOG("child status %#x", status);
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, SIGABRT));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status) && WCOREDUMP(status))
		TH_LOG("child status %#x", status);
}

TEST_F(core, dump_carries_the_receivers_state)
{
	struct uintr_regset s;
	long idx;
	pid_t pid;

	pid = dump_after_stop(_metadata, 1, &idx);
	ASSERT_GT(pid, 0);
	_senduipi(idx);
	snprintf(self->path, sizeof(self->path), "/tmp/uintr-core.%d", pid);
	resume_until_dumped(_metadata, pid);
	memset(&s, 0xa5, sizeof(s));
	ASSERT_EQ(1, core_note(self->path, &s));
	/* It ran again before the dump: both are recognized, none delivered. */
	expect_state(_metadata, &s, 1ull << SELF_VECTOR | 1ull << PEER_VECTOR, 0);
}

TEST_F(core, dump_of_other_programs_has_no_note)
{
	struct uintr_regset s;
	pid_t pid;

	pid = dump_after_stop(_metadata, 0, NULL);
	ASSERT_GT(pid, 0);
	snprintf(self->path, sizeof(self->path), "/tmp/uintr-core.%d", pid);
	resume_until_dumped(_metadata, pid);
	EXPECT_EQ(0, core_note(self->path, &s));
}

static volatile int uif_in_signal_handler = -1;

static void on_usr1(int sig)
{
	uif_in_signal_handler = _testui();
}

/* UIF is the thread's: a signal handler runs with it and returns to it. */
TEST(signal_delivery_keeps_uif)
{
	ASSERT_EQ(0, uintr_register_handler(uintr_record, 0));
	ASSERT_NE(SIG_ERR, signal(SIGUSR1, on_usr1));
	_stui();
	raise(SIGUSR1);
	EXPECT_EQ(1, uif_in_signal_handler);
	EXPECT_EQ(1, _testui());
	_clui();
	raise(SIGUSR1);
	EXPECT_EQ(0, uif_in_signal_handler);
	EXPECT_EQ(0, _testui());
}

TEST_HARNESS_MAIN
