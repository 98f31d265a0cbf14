// SPDX-License-Identifier: GPL-2.0
// MXCSR across context switches (kernel XSAVES/XRSTORS), a regression check
// next to bochs/patches/0004 (Bochs 3.0 passes it too): two processes on one
// CPU with different MXCSR; this one keeps its XMM registers clear, so only
// MXCSR makes its SSE state non-initial.
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	printf("TAP version 13\n1..1\n");
	fflush(stdout);

	pid_t child = fork();
	if (child == 0) {
		uint32_t m = 0x3f80;
		asm volatile("ldmxcsr %0" : : "m"(m));
		for (;;)
			sched_yield();
	}

	uint32_t want = 0x7f80, got = 0, bad = 0;
	long i, loops = 2000;
	/* No libc in the loop: raw sched_yield, XMM0-15 stay zero. */
	asm volatile(
		"vzeroall\n\t"
		"ldmxcsr %[want]\n\t"
		"1:\n\t"
		"mov $24, %%eax\n\t"
		"syscall\n\t"
		"stmxcsr %[got]\n\t"
		"mov %[got], %%eax\n\t"
		"cmp %[wantr], %%eax\n\t"
		"je 2f\n\t"
		"incl %[bad]\n\t"
		"2:\n\t"
		"dec %[i]\n\t"
		"jnz 1b\n\t"
		: [got] "=m"(got), [bad] "+m"(bad), [i] "=r"(i)
		: [want] "m"(want), [wantr] "r"(want), "[i]"(loops)
		: "rax", "rcx", "r11", "memory", "cc");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("# %u of %ld yields came back with a wrong MXCSR (last %#x)\n", bad, loops, got);
	printf("%sok 1 - MXCSR with clear XMM registers survives context switches\n", bad ? "not " : "");
	return bad != 0;
}
