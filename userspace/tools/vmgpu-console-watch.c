// SPDX-License-Identifier: MIT
/*
 * vmgpu-console-watch: the test guests' console must not stall silently.
 *
 * Everything the guest tests print leaves through the 16550 UART on
 * ttyS0, whose driver sends a FIFO's worth per transmitter-empty (THRE)
 * interrupt. That interrupt reaches the vCPUs as an edge through the
 * emulated (and, behind the IOMMU, remapped) IO-APIC: if an edge is lost,
 * the line stays raised, no other edge follows, and the driver waits for
 * an interrupt that never comes. A test writing its output then sleeps
 * in the tty layer for good, the vCPUs halt, and the kernel log has
 * nothing to say until the host's boot timeout.
 *
 * This watches the port instead: bytes queued for it (TIOCOUTQ) while its
 * transmit count (TIOCGICOUNT) stands still for the given number of
 * seconds is a stall. It then logs the port's state in the kernel log
 * (interrupt enable and line status registers, and how many interrupts
 * its line has taken: THRI set with THRE and no new interrupt is a lost
 * edge) and raises the interrupt again by turning THRI off and on, which
 * makes the UART signal a new edge. A stall that this does not end is
 * reported again, with the same state, at each period.
 *
 * usage: vmgpu-console-watch [TTY [SECONDS]]   (default: /dev/ttyS0 5)
 * Runs until killed; needs CAP_SYS_RAWIO for the registers.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define UART_IER	1
#define UART_IER_THRI	0x02
#define UART_LSR	5

/* Interrupts taken on line irq, summed over the CPUs; -1 if unknown. */
static long long irq_count(int irq)
{
	char line[1024], *p, *end;
	long long sum = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strtol(line, &end, 10) != irq || end == line || *end != ':')
			continue;
		sum = 0;
		for (p = end + 1;;) {
			long long n = strtoll(p, &end, 10);

			if (end == p)
				break;
			sum += n;
			p = end;
		}
		break;
	}
	fclose(f);
	return sum;
}

static void log_kmsg(const char *text)
{
	int fd = open("/dev/kmsg", O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, text, strlen(text)) < 0)
		perror("vmgpu-console-watch: /dev/kmsg");
	close(fd);
}

int main(int argc, char **argv)
{
	const char *tty = argc > 1 ? argv[1] : "/dev/ttyS0";
	int period = argc > 2 ? atoi(argv[2]) : 5, stalled = 0, fd;
	struct serial_icounter_struct count;
	struct serial_struct info;
	int last_tx;
	char msg[512];

	if (period <= 0) {
		fprintf(stderr, "usage: vmgpu-console-watch [TTY [SECONDS]]\n");
		return 2;
	}
	/* Non-blocking, not our controlling terminal: we only look at it. */
	fd = open(tty, O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || ioctl(fd, TIOCGSERIAL, &info) || ioctl(fd, TIOCGICOUNT, &count)) {
		fprintf(stderr, "vmgpu-console-watch: %s: %s\n", tty, strerror(errno));
		return 1;
	}
	if (info.port == 0 || ioperm(info.port, 8, 1)) {
		fprintf(stderr, "vmgpu-console-watch: %s: no I/O port access (port 0x%x): %s\n",
			tty, info.port, strerror(errno));
		return 1;
	}
	last_tx = count.tx;
	for (;;) {
		unsigned char ier, lsr;
		int queued = 0;

		sleep(1);
		if (ioctl(fd, TIOCOUTQ, &queued) || ioctl(fd, TIOCGICOUNT, &count))
			continue;
		stalled = queued > 0 && count.tx == last_tx ? stalled + 1 : 0;
		last_tx = count.tx;
		if (stalled < period)
			continue;
		stalled = 0;
		ier = inb(info.port + UART_IER);
		lsr = inb(info.port + UART_LSR);
		snprintf(msg, sizeof(msg),
			 "vmgpu-console-watch: %s stalled %d s with %d bytes queued (tx %d, IER 0x%02x, LSR 0x%02x, irq %d taken %lld times): raising its interrupt again\n",
			 tty, period, queued, count.tx, ier, lsr, info.irq, irq_count(info.irq));
		/* The kernel prints this itself, without the interrupt. */
		log_kmsg(msg);
		outb(ier & ~UART_IER_THRI, info.port + UART_IER);
		outb(ier | UART_IER_THRI, info.port + UART_IER);
	}
}
