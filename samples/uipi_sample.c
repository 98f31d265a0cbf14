// SPDX-License-Identifier: GPL-2.0
/*
 * uipi_sample: the example of uintr(7).  A receiver thread registers a
 * handler and a vector, a sender thread connects to the uintr_fd and sends
 * one user IPI with SENDUIPI, and the receiver's handler runs.
 *
 * Build: gcc -muintr -mgeneral-regs-only -minline-all-stringops \
 *            uipi_sample.c -lpthread -o uipi_sample
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <syscall.h>
#include <unistd.h>
#include <x86gprintrin.h>

#include <linux/uintr.h>

#define uintr_register_handler(handler, flags) \
	syscall(__NR_uintr_register_handler, handler, flags)
#define uintr_unregister_handler(flags) \
	syscall(__NR_uintr_unregister_handler, flags)
#define uintr_create_fd(vector, flags) \
	syscall(__NR_uintr_create_fd, vector, flags)
#define uintr_register_sender(fd, flags) \
	syscall(__NR_uintr_register_sender, fd, flags)
#define uintr_unregister_sender(fd, flags) \
	syscall(__NR_uintr_unregister_sender, fd, flags)

static volatile unsigned int uintr_received;
static int uintr_fd;

static void __attribute__((interrupt))
uintr_handler(struct __uintr_frame *ui_frame, unsigned long long vector)
{
	static const char print[] = "\t-- User Interrupt handler --\n";

	write(STDOUT_FILENO, print, sizeof(print) - 1);
	uintr_received = 1;
}

static void *sender_thread(void *arg)
{
	long uipi_index = uintr_register_sender(uintr_fd, 0);

	if (uipi_index < 0) {
		printf("Sender register error\n");
		exit(EXIT_FAILURE);
	}

	printf("Sending IPI from sender thread\n");
	_senduipi(uipi_index);

	uintr_unregister_sender(uintr_fd, 0);
	return NULL;
}

int main(void)
{
	pthread_t pt;

	if (uintr_register_handler(uintr_handler, 0)) {
		printf("Interrupt handler register error\n");
		exit(EXIT_FAILURE);
	}

	uintr_fd = uintr_create_fd(0, 0);
	if (uintr_fd < 0) {
		printf("Interrupt vector registration error\n");
		exit(EXIT_FAILURE);
	}

	_stui();
	printf("Receiver enabled interrupts\n");

	if (pthread_create(&pt, NULL, &sender_thread, NULL)) {
		printf("Error creating sender thread\n");
		exit(EXIT_FAILURE);
	}

	/* Do some other work */
	while (!uintr_received)
		usleep(1);

	pthread_join(pt, NULL);
	close(uintr_fd);
	uintr_unregister_handler(0);

	printf("Success\n");
	exit(EXIT_SUCCESS);
}
