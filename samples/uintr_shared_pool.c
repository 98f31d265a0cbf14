// SPDX-License-Identifier: GPL-2.0
/*
 * uintr_shared_pool: a pool of processes that interrupt each other
 * through one shared sender table, with no connection per pair.
 *
 * The coordinator forks WORKERS processes.  Each worker registers a
 * handler, creates a uintr_fd for vector 0 and sends it to the
 * coordinator, which connects every fd in its process's shared table
 * (UINTR_SENDER_SHARED): worker i's index is i.  The coordinator then
 * exports the table (uintr_ipi_fd()) and sends it to every worker, which
 * installs it (UIPI_SET_TARGET_TABLE): from then on any worker can
 * interrupt any other with SENDUIPI <index>, and the N workers need N
 * connections, not N * (N - 1).
 *
 * The workers pass a token around the ring ROUNDS times: worker 0 starts,
 * each worker forwards what it receives to the next.  The handler only
 * counts; the loop waits in uintr_wait() with the pattern of
 * uintr_wait(2) (CLUI, look, wait, STUI).
 *
 * Build: gcc -muintr -static -pthread uintr_shared_pool.c \
 *            $(pkg-config --cflags --libs libuintr)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libuintr.h>

#define WORKERS	4
#define ROUNDS	1000

static volatile unsigned long tokens;

static LIBUINTR_HANDLER(on_token)
{
	tokens++;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "uintr_shared_pool: %s: %s\n", what, strerror(-err));
	return 1;
}

/* One worker: receiver on vector 0, sender through the shared table. */
static int worker(int id, int sock)
{
	unsigned long seen = 0, sent = 0;
	long next = (id + 1) % WORKERS;
	int fd, table, ret;
	char go;

	ret = libuintr_register_handler(on_token, 0);
	if (ret)
		return fail("uintr_register_handler", ret);
	fd = libuintr_create_fd(0, 0);
	if (fd < 0)
		return fail("uintr_create_fd", fd);
	/*
	 * The worker keeps its uintr_fd open: closing the last descriptor of
	 * it would remove its connections, here the coordinator's.
	 */
	ret = libuintr_send_fd(sock, fd);
	if (ret)
		return fail("send the uintr_fd", ret);
	table = libuintr_recv_fd(sock);
	if (table < 0)
		return fail("receive the table", table);
	ret = libuintr_set_target_table(table);
	if (ret)
		return fail("UIPI_SET_TARGET_TABLE", ret);
	close(table);
	if (read(sock, &go, 1) != 1)
		return fail("wait for the start", -EPIPE);

	if (id == 0) {
		_senduipi(next);
		sent++;
	}
	while (seen < ROUNDS) {
		_clui();
		if (tokens == seen)
			libuintr_wait(0, NULL);
		_stui();
		for (; seen < tokens; seen++) {
			/* Worker 0 lets the last token end the game. */
			if (id == 0 && sent == ROUNDS)
				continue;
			_senduipi(next);
			sent++;
		}
	}
	printf("worker %d: %lu tokens in, %lu out\n", id, seen, sent);
	return 0;
}

int main(void)
{
	int socks[WORKERS][2], status, failed = 0;
	pid_t pids[WORKERS];
	int table;

	if (!libuintr_available()) {
		printf("uintr_shared_pool: no user interrupts here, skipped\n");
		return 0;
	}
	for (int i = 0; i < WORKERS; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, socks[i]))
			return fail("socketpair", -errno);
		pids[i] = fork();
		if (pids[i] < 0)
			return fail("fork", -errno);
		if (pids[i] == 0) {
			close(socks[i][0]);
			_exit(worker(i, socks[i][1]));
		}
		close(socks[i][1]);
	}
	/* Worker i's fd becomes index i of this process's shared table. */
	for (int i = 0; i < WORKERS; i++) {
		int fd = libuintr_recv_fd(socks[i][0]);
		int index = fd < 0 ? fd : libuintr_register_sender(fd, UINTR_SENDER_SHARED);

		if (index != i)
			return fail("connect a worker", index < 0 ? index : -EPROTO);
		close(fd);
	}
	table = libuintr_ipi_fd(0);
	if (table < 0)
		return fail("uintr_ipi_fd", table);
	for (int i = 0; i < WORKERS; i++)
		if (libuintr_send_fd(socks[i][0], table))
			return fail("send the table", -EPIPE);
	close(table);
	for (int i = 0; i < WORKERS; i++)
		if (write(socks[i][0], "g", 1) != 1)
			return fail("start", -EPIPE);
	for (int i = 0; i < WORKERS; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			failed++;
	}
	printf("uintr_shared_pool: %d workers, %d rounds through one table: %s\n",
	       WORKERS, ROUNDS, failed ? "FAILED" : "ok");
	return failed != 0;
}
