// SPDX-License-Identifier: GPL-2.0
/*
 * uintr_event_loop: one receiver thread serving several event sources,
 * one user interrupt vector each, with libuintr.
 *
 * Three sender threads and one sender process each produce EVENTS events.
 * An event is a counter in shared memory (the "queue") that the sender
 * increments before ringing the doorbell: SENDUIPI on its vector.  The
 * receiver's handler only notes which vectors rang; its event loop, with
 * user interrupts disabled, collects what each queue holds.  Interrupts
 * of one vector that arrive before the handler runs coalesce into one,
 * which costs nothing here: the counter says how many events there are.
 *
 * When it has nothing to do the loop sleeps in uintr_wait(), with the
 * pattern of uintr_wait(2): CLUI, look, wait, STUI.  Enabled (STUI)
 * during the look, an interrupt could run the handler between the look
 * and the call, and the call would then sleep with work pending.
 *
 * The loop ends when every queue has delivered its EVENTS events; then
 * the senders are joined and reaped and a summary is printed.
 *
 * Build: gcc -muintr -static -pthread uintr_event_loop.c \
 *            $(pkg-config --cflags --libs libuintr)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libuintr.h>

#define THREADS		3			/* sender threads */
#define SOURCES		(THREADS + 1)		/* and one process */
#define EVENTS		2000			/* per source */
#define BURST		50			/* events between pauses */

/* Source i rings vector VECTOR(i); the process is the last source. */
#define VECTOR(i)	(10 + (i))

struct queue {
	unsigned long posted;			/* written by the sender */
	unsigned long taken;			/* by the event loop */
} __attribute__((aligned(64)));

/* MAP_SHARED: the sender process writes its queue too. */
static struct queue *queues;
static int ufd[SOURCES];

/*
 * Bit v: vector v rang since the loop last looked.  Set by the handler,
 * which runs on the loop's thread: the loop's single exchange instruction
 * cannot be split by it, so no lock prefix is needed on either side.
 */
static volatile unsigned long long rang;
/* Interrupts delivered, per vector. */
static volatile unsigned long delivered[UINTR_MAX_VECTORS];

static LIBUINTR_HANDLER(doorbell)
{
	rang |= 1ull << vector;
	delivered[vector]++;
}

/* Produces EVENTS events into queue i, ringing over uintr_fd fd. */
static int produce(int i, int fd)
{
	int idx = libuintr_register_sender(fd, 0);
	int n;

	if (idx < 0)
		return idx;
	for (n = 1; n <= EVENTS; n++) {
		__atomic_fetch_add(&queues[i].posted, 1, __ATOMIC_RELEASE);
		_senduipi(idx);
		if (n % BURST == 0)
			usleep(100 * (i + 1));
	}
	return libuintr_unregister_sender(fd, 0);
}

static void *sender_thread(void *arg)
{
	long i = (long)arg;

	return (void *)(long)produce(i, ufd[i]);
}

static int sender_process(int sock)
{
	int fd = libuintr_recv_fd(sock);

	if (fd < 0)
		return 1;
	return produce(SOURCES - 1, fd) ? 1 : 0;
}

/* Takes what the queues of the rung vectors hold; the number of events. */
static unsigned long collect(unsigned long long mask)
{
	unsigned long got = 0, n;
	int i;

	for (i = 0; i < SOURCES; i++) {
		if (!(mask & (1ull << VECTOR(i))))
			continue;
		n = __atomic_load_n(&queues[i].posted, __ATOMIC_ACQUIRE) -
		    queues[i].taken;
		queues[i].taken += n;
		got += n;
	}
	return got;
}

static int event_loop(unsigned long *sleeps)
{
	struct __kernel_timespec timeout = { .tv_sec = 10 };
	unsigned long left = (unsigned long)SOURCES * EVENTS;
	unsigned long long mask;
	int ret;

	while (left) {
		_clui();
		mask = __atomic_exchange_n(&rang, 0, __ATOMIC_RELAXED);
		if (!mask) {
			(*sleeps)++;
			ret = libuintr_wait(UINTR_WAIT_TIMEOUT, &timeout);
			_stui();	/* the handler runs here */
			if (ret != -EINTR) {
				fprintf(stderr, "event loop: uintr_wait: %s\n",
					strerror(-ret));
				return 1;
			}
			continue;
		}
		_stui();
		left -= collect(mask);
	}
	return 0;
}

int main(void)
{
	unsigned long sleeps = 0, interrupts = 0;
	pthread_t threads[THREADS];
	int sv[2], ret, status, failed = 0;
	void *res;
	pid_t pid;
	long i;

	if (!libuintr_available()) {
		fprintf(stderr, "uintr_event_loop: user interrupts not available\n");
		return 1;
	}
	queues = mmap(NULL, SOURCES * sizeof(*queues), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (queues == MAP_FAILED || socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("uintr_event_loop: setup");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(sv[0]);
		_exit(sender_process(sv[1]));
	}
	close(sv[1]);

	ret = libuintr_register_handler((void *)doorbell, 0);
	if (ret < 0) {
		fprintf(stderr, "register_handler: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < SOURCES; i++) {
		ufd[i] = libuintr_create_fd(VECTOR(i), 0);
		if (ufd[i] < 0) {
			fprintf(stderr, "create_fd: %s\n", strerror(-ufd[i]));
			return 1;
		}
	}
	_stui();
	ret = libuintr_send_fd(sv[0], ufd[SOURCES - 1]);
	if (ret < 0) {
		fprintf(stderr, "send_fd: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < THREADS; i++) {
		if (pthread_create(&threads[i], NULL, sender_thread, (void *)i)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	printf("event loop: %d sources (%d threads, process %d), %d events each, vectors %d..%d\n",
	       SOURCES, THREADS, pid, EVENTS, VECTOR(0), VECTOR(SOURCES - 1));
	fflush(stdout);

	if (event_loop(&sleeps)) {
		kill(pid, SIGKILL);
		return 1;
	}

	for (i = 0; i < THREADS; i++) {
		if (pthread_join(threads[i], &res) || res) {
			fprintf(stderr, "sender thread %ld failed\n", i);
			failed = 1;
		}
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "sender process failed\n");
		failed = 1;
	}
	_clui();
	for (i = 0; i < SOURCES; i++) {
		printf("vector %ld (%s): %lu events in %lu interrupts\n",
		       VECTOR(i), i < THREADS ? "thread" : "process",
		       queues[i].taken, delivered[VECTOR(i)]);
		interrupts += delivered[VECTOR(i)];
		if (queues[i].taken != EVENTS)
			failed = 1;
		close(ufd[i]);
	}
	libuintr_unregister_handler(0);
	if (failed) {
		fprintf(stderr, "uintr_event_loop: FAILED\n");
		return 1;
	}
	printf("uintr_event_loop: success: %d events from %d senders, %lu interrupts, %lu sleeps in uintr_wait()\n",
	       SOURCES * EVENTS, SOURCES, interrupts, sleeps);
	return 0;
}
