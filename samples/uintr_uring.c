// SPDX-License-Identifier: GPL-2.0
/*
 * uintr_uring: io_uring completions delivered as user interrupts.
 *
 * The thread watches its ring's file descriptor on a user vector
 * (UINTR_FD_WATCH): each time the kernel posts completions to the ring,
 * the ring's poll queue is woken and the kernel posts the vector.  The
 * thread submits its I/O once (reads of a pipe that another thread fills
 * a record at a time, and timeouts of 1 to TIMEOUTS ms) and then only
 * computes: it never calls io_uring_enter() to wait, never polls the
 * completion queue, never sleeps.  The handler reaps what the ring holds
 * (io_uring_for_each_cqe(), inline code that touches only memory) and
 * counts it; the computation ends when everything has completed.
 *
 * Several completions that land before the handler runs coalesce into
 * one interrupt, and one run of the handler reaps them all.
 *
 * Build: gcc -muintr -mgeneral-regs-only -static -pthread uintr_uring.c \
 *            $(pkg-config --cflags --libs libuintr) -luring
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <libuintr.h>

#define READS		32		/* records read from the pipe */
#define TIMEOUTS	32		/* timeouts of 1 .. TIMEOUTS ms */
#define RECORD		8		/* bytes per record */
#define VECTOR		12

/* user_data of a request: its kind in the top byte, its number below. */
#define KIND_READ	(1ull << 56)
#define KIND_TIMEOUT	(2ull << 56)

static struct io_uring ring;
static char records[READS][RECORD];
static struct __kernel_timespec deadlines[TIMEOUTS];
static int pipe_fd[2];

/* Written by the handler, read by the computation. */
static volatile unsigned long reads_done, timeouts_done, bad, interrupts;

/* A completion is posted: reap everything the ring holds. */
static LIBUINTR_HANDLER(on_completion)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	interrupts++;
	io_uring_for_each_cqe(&ring, head, cqe) {
		uint64_t kind = cqe->user_data & (0xffull << 56);

		if (kind == KIND_READ && cqe->res == RECORD)
			reads_done++;
		else if (kind == KIND_TIMEOUT && cqe->res == -ETIME)
			timeouts_done++;
		else
			bad++;
		seen++;
	}
	io_uring_cq_advance(&ring, seen);
}

/* The pipe's writer: a record every 500 us. */
static void *writer(void *arg)
{
	char record[RECORD];

	for (int i = 0; i < READS; i++) {
		memset(record, 'a' + i % 26, sizeof(record));
		usleep(500);
		if (write(pipe_fd[1], record, sizeof(record)) != sizeof(record))
			return NULL;
	}
	return NULL;
}

static int submit_all(void)
{
	struct io_uring_sqe *sqe;

	for (int i = 0; i < READS; i++) {
		sqe = io_uring_get_sqe(&ring);
		if (!sqe)
			return -1;
		/* Linked in order: each read takes the next record. */
		io_uring_prep_read(sqe, pipe_fd[0], records[i], RECORD, 0);
		sqe->flags |= i + 1 < READS ? IOSQE_IO_LINK : 0;
		io_uring_sqe_set_data64(sqe, KIND_READ | i);
	}
	for (int i = 0; i < TIMEOUTS; i++) {
		sqe = io_uring_get_sqe(&ring);
		if (!sqe)
			return -1;
		deadlines[i].tv_nsec = (i + 1) * 1000000ll;
		io_uring_prep_timeout(sqe, &deadlines[i], 0, 0);
		io_uring_sqe_set_data64(sqe, KIND_TIMEOUT | i);
	}
	return io_uring_submit(&ring) == READS + TIMEOUTS ? 0 : -1;
}

int main(void)
{
	unsigned long computed = 0;
	pthread_t thread;
	int fd, ret;

	if (!libuintr_available()) {
		fprintf(stderr, "uintr_uring: user interrupts not available\n");
		return 1;
	}
	ret = io_uring_queue_init(2 * (READS + TIMEOUTS), &ring, 0);
	if (ret < 0 || pipe(pipe_fd)) {
		fprintf(stderr, "uintr_uring: io_uring_queue_init: %d\n", ret);
		return 1;
	}
	ret = libuintr_register_handler(on_completion, 0);
	fd = ret ? ret : libuintr_create_fd(VECTOR, 0);
	if (fd < 0) {
		fprintf(stderr, "uintr_uring: setup: %d\n", fd);
		return 1;
	}
	ret = libuintr_watch(fd, ring.ring_fd, EPOLLIN);
	if (ret) {
		fprintf(stderr, "uintr_uring: watch: %d\n", ret);
		return 1;
	}
	_stui();
	if (submit_all() || pthread_create(&thread, NULL, writer, NULL)) {
		fprintf(stderr, "uintr_uring: submit failed\n");
		return 1;
	}
	/* Compute; the completions arrive in the handler. */
	while (reads_done + timeouts_done + bad < READS + TIMEOUTS)
		computed++;
	_clui();
	pthread_join(thread, NULL);
	printf("uintr_uring: %lu reads and %lu timeouts completed in %lu interrupts, %lu iterations of work meanwhile\n",
	       reads_done, timeouts_done, interrupts, computed);
	for (int i = 0; i < READS; i++) {
		if (records[i][0] != 'a' + i % 26)
			bad++;
	}
	if (bad || reads_done != READS || timeouts_done != TIMEOUTS) {
		fprintf(stderr, "uintr_uring: FAILED: %lu bad completions\n", bad);
		return 1;
	}
	printf("uintr_uring: success: io_uring completions reaped in a user interrupt handler\n");
	io_uring_queue_exit(&ring);
	return 0;
}
