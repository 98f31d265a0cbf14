/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libuintr: a small C library for x86 User Interrupts (see uintr(7)).
 *
 * - wrappers for the system calls, which glibc does not provide;
 *   unlike syscall(2) they return -errno on failure and never touch errno
 *   (nor does any function here), so that they can be called from any
 *   context without saving it;
 * - libuintr_available(): whether this kernel delivers user interrupts;
 * - LIBUINTR_HANDLER(): declares a handler that is compiled correctly by
 *   GCC and Clang;
 * - libuintr_send_fd()/libuintr_recv_fd(): pass a uintr_fd to another
 *   process over a UNIX domain socket (SCM_RIGHTS).
 *
 * Programs that execute the instructions (_senduipi(), _stui(), _clui(),
 * _testui()) are compiled with -muintr; the library itself is not.
 */
#ifndef LIBUINTR_H
#define LIBUINTR_H

#include <stddef.h>		/* size_t */
#include <x86gprintrin.h>	/* struct __uintr_frame, _senduipi() ... */

#include <linux/time_types.h>	/* struct __kernel_timespec */
#include <linux/uintr.h>	/* UINTR_* flags and limits */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Declares (or defines) the user interrupt handler `name':
 *
 *	static LIBUINTR_HANDLER(on_uintr)
 *	{
 *		hits[vector]++;
 *	}
 *
 * The interrupt attribute makes the compiler save every register the
 * handler uses and return with UIRET (the "uintr" target, even in a file
 * compiled without -muintr); "general-regs-only" keeps it off the SSE/AVX
 * and x87 registers, which it could not save.  Call only functions that are
 * safe there: ones that use no vector or floating-point registers.
 * `frame' points to the interrupted RIP, RFLAGS and RSP; `vector' is the
 * vector being delivered (0..63).
 */
#define LIBUINTR_HANDLER(name)						\
	void __attribute__((interrupt,					\
			    target("general-regs-only,uintr")))		\
	name(struct __uintr_frame *frame __attribute__((unused)),	\
	     unsigned long long vector __attribute__((unused)))

/*
 * A system call with up to three arguments as a handler may make one:
 * general registers only, errno untouched (the result, or -errno).  A
 * tick handler re-arms its periodic timerfd so, for instance:
 * libuintr_syscall3(__NR_read, timer_fd, (long)&expirations, 8).
 */
static inline long libuintr_syscall3(long nr, long a1, long a2, long a3)
{
	long ret;

	__asm__ volatile ("syscall"
			  : "=a" (ret)
			  : "0" (nr), "D" (a1), "S" (a2), "d" (a3)
			  : "rcx", "r11", "memory");
	return ret;
}

/*
 * The system calls: the result of the call (0, a file descriptor, a UITT
 * index) or -errno on failure, with the errors of the man pages
 * (uintr_register_handler(2) ...).  errno is left alone.
 */
int libuintr_register_handler(void *handler, unsigned int flags);
int libuintr_unregister_handler(unsigned int flags);
int libuintr_create_fd(unsigned long long vector, unsigned int flags);
int libuintr_register_sender(int uintr_fd, unsigned int flags);
int libuintr_unregister_sender(int uintr_fd, unsigned int flags);
/*
 * Never return 0: -EINTR is the normal way out (see uintr_wait(2)).
 * libuintr_wait() passes no word (UINTR_WAIT_VALUE in its flags fails with
 * -EFAULT); libuintr_wait_value() adds UINTR_WAIT_VALUE to `flags' and
 * returns -EAGAIN at once if `*word' no longer holds `expected'.
 */
int libuintr_wait(unsigned int flags, const struct __kernel_timespec *timeout);
int libuintr_wait_value(const volatile unsigned long long *word,
			unsigned long long expected, unsigned int flags,
			const struct __kernel_timespec *timeout);
int libuintr_register_self(unsigned long long vector, unsigned int flags);
int libuintr_alt_stack(void *sp, size_t size, unsigned int flags);
int libuintr_ipi_fd(unsigned int flags);
/* ioctl(ipi_fd, UIPI_SET_TARGET_TABLE): share the fd's sender table. */
int libuintr_set_target_table(int ipi_fd);
int libuintr_pending(unsigned long long *set, unsigned int flags);
/*
 * The receiver's ioctls on its uintr_fd (uintr_create_fd(2)): mask and
 * unmask the vector at its source; cut off the senders of process `pid'
 * (0: all), returning how many connections were cut.
 */
int libuintr_mask(int uintr_fd);
int libuintr_unmask(int uintr_fd);
int libuintr_revoke(int uintr_fd, int pid);
/*
 * Have the kernel post the uintr_fd's vector on the wakeups of file fd
 * that carry one of events (EPOLLIN, EPOLLOUT, ...), until
 * libuintr_unwatch() of that file (UINTR_FD_WATCH, UINTR_FD_UNWATCH).
 */
int libuintr_watch(int uintr_fd, int fd, unsigned int events);
int libuintr_unwatch(int uintr_fd, int fd);

/*
 * 1 if user interrupts work for the calling thread, 0 if not: the kernel
 * lacks them (ENOSYS), they are off on this boot (EOPNOTSUPP), or the
 * probe could not tell (ENOMEM ...).  The probe registers a handler and
 * unregisters it at once; a thread that already has a handler (EBUSY) is
 * left untouched.  Either way nothing of the probe remains.
 */
int libuintr_available(void);

/*
 * Sends fd (any file descriptor, typically a uintr_fd) with one data byte
 * over the connected UNIX domain socket sock.  0 or -errno.
 */
int libuintr_send_fd(int sock, int fd);

/*
 * Receives a file descriptor sent by libuintr_send_fd() on sock; the new
 * descriptor is close-on-exec, as uintr_create_fd() makes its own.
 * Returns it, or -errno: -EPIPE when the peer has closed the socket,
 * -EBADMSG when the message carried no file descriptor (or more than one).
 */
int libuintr_recv_fd(int sock);

#ifdef __cplusplus
}
#endif

#endif /* LIBUINTR_H */
