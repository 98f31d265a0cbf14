// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libuintr: system call wrappers and helpers for x86 User Interrupts.
 *
 * The system calls are made with the syscall instruction directly rather
 * than through syscall(2): the kernel's -errno comes back as it is and
 * errno is never written, so the wrappers are usable where errno must not
 * change (a user interrupt handler, a signal handler) and cost nothing
 * more than the call.  The numbers come from the kernel's <asm/unistd.h>;
 * built against older kernel headers, the library falls back on the
 * x86-64 numbers the series assigns, which never change once released.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <asm/unistd.h>

#include "libuintr.h"

#ifndef __x86_64__
#error "libuintr: user interrupts exist on x86-64 only"
#endif

#ifndef __NR_uintr_register_handler
#define __NR_uintr_register_handler	471
#define __NR_uintr_unregister_handler	472
#define __NR_uintr_create_fd		473
#define __NR_uintr_register_sender	474
#define __NR_uintr_unregister_sender	475
#define __NR_uintr_wait			476
#endif
#ifndef __NR_uintr_register_self
#define __NR_uintr_register_self	477
#define __NR_uintr_alt_stack		478
#define __NR_uintr_ipi_fd		479
#endif
#ifndef __NR_uintr_pending
#define __NR_uintr_pending		480
#endif

#define LIBUINTR_API __attribute__((visibility("default")))

static long uintr_syscall2(long nr, long a1, long a2)
{
	long ret;

	asm volatile ("syscall"
		      : "=a" (ret)
		      : "0" (nr), "D" (a1), "S" (a2)
		      : "rcx", "r11", "memory");
	return ret;
}

static long uintr_syscall4(long nr, long a1, long a2, long a3, long a4)
{
	register long r10 asm("r10") = a4;
	long ret;

	asm volatile ("syscall"
		      : "=a" (ret)
		      : "0" (nr), "D" (a1), "S" (a2), "d" (a3), "r" (r10)
		      : "rcx", "r11", "memory");
	return ret;
}

LIBUINTR_API int libuintr_register_handler(void *handler, unsigned int flags)
{
	return uintr_syscall2(__NR_uintr_register_handler, (long)handler, flags);
}

LIBUINTR_API int libuintr_unregister_handler(unsigned int flags)
{
	return uintr_syscall2(__NR_uintr_unregister_handler, flags, 0);
}

LIBUINTR_API int libuintr_create_fd(unsigned long long vector,
				    unsigned int flags)
{
	return uintr_syscall2(__NR_uintr_create_fd, vector, flags);
}

LIBUINTR_API int libuintr_register_sender(int uintr_fd, unsigned int flags)
{
	return uintr_syscall2(__NR_uintr_register_sender, uintr_fd, flags);
}

LIBUINTR_API int libuintr_unregister_sender(int uintr_fd, unsigned int flags)
{
	return uintr_syscall2(__NR_uintr_unregister_sender, uintr_fd, flags);
}

LIBUINTR_API int libuintr_wait(unsigned int flags,
			       const struct __kernel_timespec *timeout)
{
	return uintr_syscall4(__NR_uintr_wait, flags, (long)timeout, 0, 0);
}

LIBUINTR_API int libuintr_wait_value(const volatile unsigned long long *word,
				     unsigned long long expected,
				     unsigned int flags,
				     const struct __kernel_timespec *timeout)
{
	return uintr_syscall4(__NR_uintr_wait, flags | UINTR_WAIT_VALUE,
			      (long)timeout, (long)word, (long)expected);
}

LIBUINTR_API int libuintr_register_self(unsigned long long vector,
				       unsigned int flags)
{
	return uintr_syscall2(__NR_uintr_register_self, vector, flags);
}

LIBUINTR_API int libuintr_alt_stack(void *sp, size_t size, unsigned int flags)
{
	return libuintr_syscall3(__NR_uintr_alt_stack, (long)sp, size, flags);
}

LIBUINTR_API int libuintr_ipi_fd(unsigned int flags)
{
	return uintr_syscall2(__NR_uintr_ipi_fd, flags, 0);
}

LIBUINTR_API int libuintr_set_target_table(int ipi_fd)
{
	return libuintr_syscall3(__NR_ioctl, ipi_fd, UIPI_SET_TARGET_TABLE, 0);
}

LIBUINTR_API int libuintr_pending(unsigned long long *set, unsigned int flags)
{
	return uintr_syscall2(__NR_uintr_pending, (long)set, flags);
}

LIBUINTR_API int libuintr_mask(int uintr_fd)
{
	return libuintr_syscall3(__NR_ioctl, uintr_fd, UINTR_FD_MASK, 0);
}

LIBUINTR_API int libuintr_unmask(int uintr_fd)
{
	return libuintr_syscall3(__NR_ioctl, uintr_fd, UINTR_FD_UNMASK, 0);
}

LIBUINTR_API int libuintr_revoke(int uintr_fd, int pid)
{
	return libuintr_syscall3(__NR_ioctl, uintr_fd, UINTR_FD_REVOKE, pid);
}

LIBUINTR_API int libuintr_watch(int uintr_fd, int fd, unsigned int events)
{
	struct uintr_watch watch = { .fd = fd, .events = events, .flags = 0 };

	return libuintr_syscall3(__NR_ioctl, uintr_fd, UINTR_FD_WATCH,
			      (long)&watch);
}

LIBUINTR_API int libuintr_unwatch(int uintr_fd, int fd)
{
	return libuintr_syscall3(__NR_ioctl, uintr_fd, UINTR_FD_UNWATCH,
			      (unsigned int)fd);
}

/*
 * The probe's handler: never runs.  UIF is clear after registration and
 * the handler is unregistered before anything could set it; anything
 * pending by then is discarded (uintr_unregister_handler(2)).
 */
static LIBUINTR_HANDLER(probe_handler)
{
}

LIBUINTR_API int libuintr_available(void)
{
	int ret = libuintr_register_handler((void *)probe_handler, 0);

	if (ret == -EBUSY)		/* this thread is a receiver already */
		return 1;
	if (ret < 0)			/* ENOSYS, EOPNOTSUPP, ENOMEM */
		return 0;
	return libuintr_unregister_handler(0) == 0;
}

/* The message both fd helpers use: one byte, and room for one fd. */
struct fd_message {
	char byte;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct msghdr msg;
};

static void fd_message_init(struct fd_message *m)
{
	memset(m, 0, sizeof(*m));
	m->byte = 'u';
	m->iov.iov_base = &m->byte;
	m->iov.iov_len = 1;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->control.buf;
	m->msg.msg_controllen = sizeof(m->control.buf);
}

static int send_fd(int sock, int fd)
{
	struct fd_message m;
	struct cmsghdr *c;
	ssize_t n;

	fd_message_init(&m);
	c = CMSG_FIRSTHDR(&m.msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	n = sendmsg(sock, &m.msg, MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return n == 1 ? 0 : -EIO;
}

static int recv_fd(int sock)
{
	struct fd_message m;
	struct cmsghdr *c;
	ssize_t n;
	int fd = -1;

	fd_message_init(&m);
	n = recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	c = CMSG_FIRSTHDR(&m.msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (m.msg.msg_flags & MSG_CTRUNC) {
		/* More than one descriptor came: take none of them. */
		if (fd >= 0)
			close(fd);
		return -EBADMSG;
	}
	return fd >= 0 ? fd : -EBADMSG;
}

/* Like the system call wrappers, the fd helpers leave errno alone. */
LIBUINTR_API int libuintr_send_fd(int sock, int fd)
{
	int saved = errno;
	int ret = send_fd(sock, fd);

	errno = saved;
	return ret;
}

LIBUINTR_API int libuintr_recv_fd(int sock)
{
	int saved = errno;
	int ret = recv_fd(sock);

	errno = saved;
	return ret;
}
