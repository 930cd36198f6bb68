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
 * seconds is a stall, unless hardware flow control holds it (CTS low). It
 * then logs the stall in the kernel log, with how many interrupts the
 * line took (the driver's TIOCSERGETLSR cannot tell: it reports a busy
 * transmitter whenever bytes are queued), and restarts the transmitter
 * through the driver: output stopped and started again (TCOOFF, TCOON),
 * which turns THRI off and on under the driver's port lock, so that the
 * UART signals a new edge. A second line says whether bytes move again.
 * TCOON also ends an XOFF or another process's TCOOFF, which interactive
 * use would look like: the guest's init runs this only where nobody types.
 *
 * usage: vmgpu-console-watch [TTY [SECONDS]]   (default: /dev/ttyS0 5)
 * Runs until killed; needs nothing but the tty.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

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

/* Output held by hardware flow control is not a stall. */
static int held_by_cts(int fd)
{
	struct termios t;
	int lines;

	return !tcgetattr(fd, &t) && (t.c_cflag & CRTSCTS) &&
	       !ioctl(fd, TIOCMGET, &lines) && !(lines & TIOCM_CTS);
}

/* Transmitted bytes so far, or -1. */
static int sent(int fd)
{
	struct serial_icounter_struct count;

	return ioctl(fd, TIOCGICOUNT, &count) ? -1 : count.tx;
}

static void report_stall(const char *tty, const struct serial_struct *info,
			 int period, int queued, int tx)
{
	char msg[512];

	snprintf(msg, sizeof(msg),
		 "vmgpu-console-watch: %s stalled %d s with %d bytes queued (tx %d, irq %d taken %lld times): restarting its transmitter\n",
		 tty, period, queued, tx, info->irq, irq_count(info->irq));
	log_kmsg(msg);
}

int main(int argc, char **argv)
{
	const char *tty = argc > 1 ? argv[1] : "/dev/ttyS0";
	int period = argc > 2 ? atoi(argv[2]) : 5, stalled = 0, kicked = 0;
	int fd, last_tx;
	struct serial_struct info;
	char msg[256];

	if (period <= 0) {
		fprintf(stderr, "usage: vmgpu-console-watch [TTY [SECONDS]]\n");
		return 2;
	}
	/* Non-blocking, not our controlling terminal: we only look at it. */
	fd = open(tty, O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || ioctl(fd, TIOCGSERIAL, &info) || (last_tx = sent(fd)) < 0) {
		fprintf(stderr, "vmgpu-console-watch: %s: %s\n", tty, strerror(errno));
		return 1;
	}
	for (;;) {
		int queued = 0, tx;

		sleep(1);
		tx = sent(fd);
		if (tx < 0 || ioctl(fd, TIOCOUTQ, &queued))
			continue;
		if (kicked) {
			kicked = 0;
			snprintf(msg, sizeof(msg), "vmgpu-console-watch: %s %s (tx %d)\n", tty,
				 tx != last_tx || !queued ? "moving again" : "still stalled", tx);
			log_kmsg(msg);
		}
		stalled = queued > 0 && tx == last_tx && !held_by_cts(fd) ? stalled + 1 : 0;
		last_tx = tx;
		if (stalled < period)
			continue;
		stalled = 0;
		report_stall(tty, &info, period, queued, tx);
		if (tcflow(fd, TCOOFF) || tcflow(fd, TCOON)) {
			snprintf(msg, sizeof(msg), "vmgpu-console-watch: %s: no restart: %s\n",
				 tty, strerror(errno));
			log_kmsg(msg);
			continue;
		}
		kicked = 1;
	}
}
