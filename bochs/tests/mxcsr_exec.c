// SPDX-License-Identifier: GPL-2.0
// MXCSR after execve: the new program starts with SSE state in its initial
// configuration, MXCSR = 1F80H (the kernel restores init state with a
// compacted XRSTORS whose XSTATE_BV[1] = 0), for bochs/patches 0004.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uint32_t m;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		asm volatile("stmxcsr %0" : "=m"(m));
		printf("# MXCSR after execve %#x\n", m);
		printf("%sok 1 - execve starts with MXCSR = 1F80H\n", m == 0x1f80 ? "" : "not ");
		return m != 0x1f80;
	}
	printf("TAP version 13\n1..1\n");
	fflush(stdout);
	m = 0x7f80;
	asm volatile("ldmxcsr %0" : : "m"(m));
	execl("/proc/self/exe", argv[0], "child", (char *)NULL);
	perror("execl");
	return 1;
}
