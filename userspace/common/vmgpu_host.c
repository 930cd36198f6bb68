// SPDX-License-Identifier: MIT
/*
 * Asking the host agent (scripts/vmgpu_host_agent.py) from the guest:
 * requests on the serial console, answers on ttyS1.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "vmgpu_host.h"

int vmgpu_host_ask(const char *request, int timeout_ms)
{
	static int tty = -1;
	struct pollfd p = { .events = POLLIN };
	char line[256];
	size_t len = 0;

	if (tty < 0) {
		struct termios raw;

		int fd = open("/dev/ttyS1", O_RDWR | O_NOCTTY | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		/* Answers are read byte by byte, never echoed back. */
		if (tcgetattr(fd, &raw) || (cfmakeraw(&raw), tcsetattr(fd, TCSANOW, &raw))) {
			int ret = -errno;

			close(fd);
			return ret;
		}
		tty = fd;
	}
	printf("vmgpu-host: %s\n", request);
	fflush(stdout);
	p.fd = tty;
	/* Answers come in the order of the requests: the first is ours. */
	while (poll(&p, 1, timeout_ms) == 1) {
		char c;

		if (read(tty, &c, 1) != 1)
			return -EIO;
		if (c != '\n') {
			if (len < sizeof(line) - 1)
				line[len++] = c;
			continue;
		}
		line[len] = 0;
		if (!strncmp(line, "done ", 5))
			return strcmp(line + 5, request) ? -EIO : 0;
		return -EIO;
	}
	return -ETIMEDOUT;
}
