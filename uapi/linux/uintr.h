/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * x86 User Interrupts (UINTR): user-space interface.
 *
 * See uintr(7).  System call numbers are given here so that programs do not
 * hard-code them; glibc has no wrappers.
 */
#ifndef _UAPI_LINUX_UINTR_H
#define _UAPI_LINUX_UINTR_H

#ifndef __NR_uintr_register_handler
#define __NR_uintr_register_handler	471
#define __NR_uintr_unregister_handler	472
#define __NR_uintr_create_fd		473
#define __NR_uintr_register_sender	474
#define __NR_uintr_unregister_sender	475
#define __NR_uintr_wait			476
#endif

/* Vectors per receiving thread: 0 (lowest priority) .. 63 (highest). */
#define UINTR_MAX_VECTORS		64

/* Sender connections (UITT entries) per sending thread. */
#define UINTR_MAX_UITT_ENTRIES		256

/*
 * uintr_register_handler() flags.
 *
 * UINTR_HANDLER_FLAG_INTERRUPT_SLEEP: a user interrupt for this thread
 * interrupts its interruptible sleeps in other system calls (read(2) on a
 * pipe, nanosleep(2), poll(2), epoll_wait(2), futex(2) waits, ...) the way
 * a signal with a handler does: the call fails with EINTR after the user
 * interrupt handler ran.  Only while user interrupts are enabled (UIF
 * set), as a blocked signal does not interrupt either.  Without it (the
 * default), the interrupt is delivered when the blocking call returns.
 *
 * UINTR_HANDLER_FLAG_RESTART: with INTERRUPT_SLEEP, restart the calls that
 * SA_RESTART restarts for a signal handler (see signal(7)) instead of
 * failing them with EINTR.
 */
#define UINTR_HANDLER_FLAG_INTERRUPT_SLEEP	0x1U
#define UINTR_HANDLER_FLAG_RESTART		0x2U

/*
 * uintr_wait(flags, timeout) flags.  UINTR_WAIT_TIMEOUT: the second
 * argument points to a relative timeout, a struct __kernel_timespec
 * (<linux/time_types.h>); the call fails with ETIMEDOUT when it expires.
 * Without it the second argument is ignored, as in the one-argument call.
 */
#define UINTR_WAIT_TIMEOUT		0x1U

#endif /* _UAPI_LINUX_UINTR_H */
