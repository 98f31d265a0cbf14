// SPDX-License-Identifier: GPL-2.0
/*
 * uintr_fd_passing: user interrupts between two processes with libuintr.
 *
 * The receiver (the parent) registers a handler, creates a uintr_fd for
 * one vector and passes it to the sender (a child process) over a UNIX
 * domain socket with SCM_RIGHTS.  The sender connects to it and sends
 * ROUNDS user IPIs with SENDUIPI, each after the receiver acknowledged
 * the previous one (so that none coalesce); the receiver sleeps in
 * uintr_wait() between them and prints what its handler received.
 *
 * Build: gcc -muintr -static uintr_fd_passing.c \
 *            $(pkg-config --cflags --libs libuintr)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libuintr.h>

#define VECTOR	5
#define ROUNDS	3

static volatile unsigned long received;
static volatile unsigned long long last_vector;

static LIBUINTR_HANDLER(receiver_handler)
{
	last_vector = vector;
	received++;
}

static int die(const char *who, const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", who, what, strerror(-err));
	return 1;
}

/* The child: connects to the uintr_fd it is given and interrupts. */
static int sender(int sock)
{
	int fd, idx, i;
	char ack;

	fd = libuintr_recv_fd(sock);
	if (fd < 0)
		return die("sender", "libuintr_recv_fd", fd);
	idx = libuintr_register_sender(fd, 0);
	if (idx < 0)
		return die("sender", "libuintr_register_sender", idx);
	printf("sender (pid %d): got uintr_fd %d, connected as UITT index %d\n",
	       getpid(), fd, idx);
	fflush(stdout);
	for (i = 0; i < ROUNDS; i++) {
		_senduipi(idx);
		if (read(sock, &ack, 1) != 1) {
			fprintf(stderr, "sender: no acknowledgement\n");
			return 1;
		}
	}
	libuintr_unregister_sender(fd, 0);
	close(fd);
	return 0;
}

/* Sleeps until the handler has run `want' times (see uintr_wait(2)). */
static int await(unsigned long want)
{
	struct __kernel_timespec timeout = { .tv_sec = 10 };
	int ret;

	while (received < want) {
		_clui();
		ret = received < want ?
			libuintr_wait(UINTR_WAIT_TIMEOUT, &timeout) : -EINTR;
		_stui();
		if (ret != -EINTR)
			return ret;
	}
	return 0;
}

static int receiver(int sock, pid_t child)
{
	int fd, ret, status, i;

	ret = libuintr_register_handler((void *)receiver_handler, 0);
	if (ret < 0)
		return die("receiver", "libuintr_register_handler", ret);
	fd = libuintr_create_fd(VECTOR, 0);
	if (fd < 0)
		return die("receiver", "libuintr_create_fd", fd);
	printf("receiver (pid %d): uintr_fd %d for vector %d, passing it to pid %d\n",
	       getpid(), fd, VECTOR, child);
	fflush(stdout);
	ret = libuintr_send_fd(sock, fd);
	if (ret < 0)
		return die("receiver", "libuintr_send_fd", ret);
	_stui();

	for (i = 1; i <= ROUNDS; i++) {
		ret = await(i);
		if (ret < 0)
			return die("receiver", "libuintr_wait", ret);
		printf("receiver: user interrupt %d of %d, vector %llu\n",
		       i, ROUNDS, last_vector);
		fflush(stdout);
		if (write(sock, "a", 1) != 1)
			return die("receiver", "acknowledge", -errno);
	}

	if (waitpid(child, &status, 0) != child ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "receiver: the sender failed\n");
		return 1;
	}
	_clui();
	close(fd);
	libuintr_unregister_handler(0);
	if (received != ROUNDS || last_vector != VECTOR) {
		fprintf(stderr, "receiver: %lu interrupts, last vector %llu\n",
			received, last_vector);
		return 1;
	}
	printf("uintr_fd_passing: success: %d user interrupts from process %d on vector %d\n",
	       ROUNDS, child, VECTOR);
	return 0;
}

int main(void)
{
	int sv[2];
	pid_t pid;

	if (!libuintr_available()) {
		fprintf(stderr, "uintr_fd_passing: user interrupts not available\n");
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(sv[0]);
		_exit(sender(sv[1]));
	}
	close(sv[1]);
	if (receiver(sv[0], pid)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	return 0;
}
