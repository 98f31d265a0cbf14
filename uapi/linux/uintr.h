/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * x86 User Interrupts (UINTR): user-space interface.
 *
 * See uintr(7).  The system call numbers (__NR_uintr_*) are in the
 * architecture's <asm/unistd.h>, as for every other call; glibc has no
 * wrappers, so call them with syscall(2).
 */
#ifndef _UAPI_LINUX_UINTR_H
#define _UAPI_LINUX_UINTR_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Vectors per receiving thread: 0 (lowest priority) .. 63 (highest). */
#define UINTR_MAX_VECTORS		64

/*
 * Sender connections (UITT entries) that a sender table starts with; it
 * grows as they fill, up to /proc/sys/kernel/uintr/max_sender_entries.
 */
#define UINTR_UITT_INITIAL_ENTRIES	256

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
 * uintr_wait(flags, timeout, word, expected) flags.  UINTR_WAIT_TIMEOUT:
 * the second argument points to a relative timeout, a struct
 * __kernel_timespec (<linux/time_types.h>); the call fails with ETIMEDOUT
 * when it expires.  Without it the second argument is ignored, as in the
 * one-argument call.  UINTR_WAIT_VALUE: the third argument points to an
 * aligned __u64 that the call reads as it begins; if it differs from the
 * fourth, the call fails with EAGAIN instead of sleeping.  A handler that
 * counts into that word lets a thread wait with UIF set and lose no
 * interrupt, without CLUI and STUI around the call.  Without the flag the
 * last two arguments are ignored.
 */
#define UINTR_WAIT_TIMEOUT		0x1U
#define UINTR_WAIT_VALUE		0x2U

/*
 * uintr_pending(set, flags) flags.  UINTR_PENDING_TAKE: also take the
 * pending requests (clear them), as if their handler had run for each.
 */
#define UINTR_PENDING_TAKE		0x1U

/*
 * uintr_register_sender() and uintr_register_self() flags.
 *
 * UINTR_SENDER_SHARED: connect in the sender table that the process's
 * threads share (made by the first such call) instead of the calling
 * thread's own.  A UITT index in it means the same in every thread of the
 * process, present and future; a thread that never registered uses it
 * from its first SENDUIPI on.  Fails with EBUSY for a thread that has a
 * table of its own already.  A child of fork() starts without the table,
 * as after execve().
 */
#define UINTR_SENDER_SHARED		0x1U

/*
 * A thread's User Interrupts state, read-only: PTRACE_GETREGSET with
 * NT_X86_UINTR (<linux/elf.h>) and a note of that type in core dumps
 * (for each thread that is a receiver or a sender).  The same on UINTR
 * hardware, where the CPU holds UIRR and UIF, and in emulation.
 *
 * handler:	  the handler's address; 0 if the thread is not a receiver
 * stack_adjust:  as uintr_alt_stack() left it: bit 0 clear, RSP is
 *		  lowered by it; set, RSP is loaded with it (bit 0 cleared)
 * uirr:	  requests recognized and not yet delivered, bit n = vector n
 * posted:	  requests posted to the thread's UPID and not yet
 *		  recognized (the thread has not run since)
 * uif:		  1 after STUI or UIRET (delivery enabled), 0 after CLUI or
 *		  while a handler runs.  Signal delivery, sigreturn and
 *		  longjmp() leave it as it is.
 * flags:	  UINTR_REGSET_RECEIVER, UINTR_REGSET_SENDER (the thread
 *		  uses a sender table), UINTR_REGSET_HARDWARE (read from
 *		  the CPU's state, not the emulation's)
 */
struct uintr_regset {
	__u64 handler;
	__u64 stack_adjust;
	__u64 uirr;
	__u64 posted;
	__u32 uif;
	__u32 flags;
};

#define UINTR_REGSET_RECEIVER		0x1U
#define UINTR_REGSET_SENDER		0x2U
#define UINTR_REGSET_HARDWARE		0x4U

/*
 * ioctl() of the file uintr_ipi_fd() returns.  UIPI_SET_TARGET_TABLE:
 * the calling process shares the fd's sender table from now on, as if it
 * had made it; EBUSY if it shares another table already.
 */
#define UIPI_SET_TARGET_TABLE		_IO('u', 0)

/*
 * ioctl()s of a uintr_fd, for the receiver's process (any of its threads;
 * EPERM for every other holder of the fd, its senders included).
 *
 * UINTR_FD_MASK: once the call returns, SENDUIPI by any sender connected
 * through the fd (in any process, through a shared table too, and by a
 * sender that connects later) neither posts the fd's vector nor notifies
 * the receiver; the sender sees no error.  Requests posted before stay
 * pending.  UINTR_FD_UNMASK: SENDUIPI posts again; what was sent while
 * the vector was masked is dropped, not replayed.  The argument is 0.
 */
#define UINTR_FD_MASK			_IO('u', 1)
#define UINTR_FD_UNMASK			_IO('u', 2)

/*
 * UINTR_FD_REVOKE: disconnects the senders that threads of process <arg>
 * (a PID in the caller's PID namespace; 0: every process) connected
 * through the fd, as uintr_unregister_sender() would: their next SENDUIPI
 * on the index faults.  Returns how many connections it cut.  A process
 * that still holds the fd may connect again (a mask stays in force for
 * it).
 */
#define UINTR_FD_REVOKE			_IO('u', 3)

/*
 * UINTR_FD_WATCH: the kernel posts the fd's vector on the wakeups of a
 * file.  From the call on, every wakeup of the file's wait queues with one
 * of @events (or one that names no events) posts the vector to the
 * receiver as a SENDUIPI through a connection to the fd would: it
 * coalesces with other posts, a masked vector posts nothing, a receiver in
 * uintr_wait() wakes.  A file ready for @events when it is watched posts
 * once at once.  The watch holds a reference to the file and counts as a
 * connection of the fd (its limits apply); it ends with
 * UINTR_FD_UNWATCH (the argument: a descriptor of the watched file), with
 * the release of the fd, or when the receiver unregisters or exits.
 */
struct uintr_watch {
	__s32	fd;		/* the file to watch */
	__u32	events;		/* EPOLL{IN,PRI,OUT,ERR,HUP,RDHUP} */
	__u64	flags;		/* 0 */
};

#define UINTR_FD_WATCH			_IOW('u', 4, struct uintr_watch)
#define UINTR_FD_UNWATCH		_IO('u', 5)

#endif /* _UAPI_LINUX_UINTR_H */
