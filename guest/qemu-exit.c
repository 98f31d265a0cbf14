// SPDX-License-Identifier: GPL-2.0
/*
 * Powers the QEMU guest off with a status the host can read: writes it to
 * the isa-debug-exit device (port 0xf4); QEMU exits with (status << 1) | 1.
 * Without that device (Bochs) it returns once the console has drained.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>
#include <termios.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned int status = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;

	/*
	 * Everything written to the console reaches the host first: a
	 * paced serial port (Bochs) may still hold /init's last lines.
	 */
	tcdrain(STDOUT_FILENO);
	tcdrain(STDERR_FILENO);
	if (ioperm(0xf4, 4, 1)) {
		perror("ioperm");
		return 1;
	}
	outl(status, 0xf4);
	perror("isa-debug-exit did not stop the guest");
	return 1;
}
