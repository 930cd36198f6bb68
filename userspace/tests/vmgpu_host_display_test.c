// SPDX-License-Identifier: MIT
/*
 * The display as the host sees it, with the host's help (run-guest.sh's
 * scripts/vmgpu_host_agent.py, asked on the serial console): the host's
 * screendump of head 0 is the framebuffer this test drew, pixel for pixel
 * (the host judges that, as host_display/...), and a connector unplugged
 * and plugged back from QMP reaches this client as hotplug uevents and
 * connector states.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "kselftest_harness.h"
#include "vmgpu_host.h"
#include "vmgpu_testlib.h"

/* The host's pattern() in scripts/vmgpu_host_agent.py; X is garbage. */
static uint32_t pixel(uint32_t x, uint32_t y, uint32_t key)
{
	return (0x5a000000u ^ (x << 24)) | ((x * 7 + y * 131 + key * 977) & 0xffffff);
}

FIXTURE(host) {
	int fd, uevent;
	uint32_t crtc, connector;
	drmModeModeInfo mode;
	struct vmgpu_test_fb fb;
};

FIXTURE_SETUP(host)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	struct vmgpu_card_head head;

	self->fd = vmgpu_open_card("vmgpu");
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vmgpu_card_head0(self->fd, 0, 0, &head));
	self->crtc = head.crtc;
	self->connector = head.connector;
	self->mode = head.mode;
	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, self->mode.hdisplay, self->mode.vdisplay,
					DRM_FORMAT_XRGB8888, &self->fb));
	self->uevent = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
	ASSERT_LE(0, self->uevent);
	ASSERT_EQ(0, bind(self->uevent, (struct sockaddr *)&addr, sizeof(addr)));
}

FIXTURE_TEARDOWN(host)
{
	close(self->uevent);
	drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL);
	close(self->fd);
}

/* A DRM hotplug uevent within timeout_ms: 0, or -ETIMEDOUT. */
static int hotplug_uevent(int sock, int timeout_ms)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	char buf[4096];

	while (poll(&p, 1, timeout_ms) == 1) {
		ssize_t n = recv(sock, buf, sizeof(buf) - 1, 0);
		bool drm = false, hotplug = false;

		if (n <= 0)
			continue;
		buf[n] = 0;
		/* NUL-separated KEY=value fields after the header. */
		for (char *f = buf; f < buf + n; f += strlen(f) + 1) {
			drm |= !strcmp(f, "SUBSYSTEM=drm");
			hotplug |= !strcmp(f, "HOTPLUG=1");
		}
		if (drm && hotplug)
			return 0;
	}
	return -ETIMEDOUT;
}

static drmModeConnection connection(int fd, uint32_t connector, int *modes)
{
	drmModeConnector *conn = drmModeGetConnector(fd, connector);
	drmModeConnection state;

	if (!conn)
		return 0;
	state = conn->connection;
	*modes = conn->count_modes;
	drmModeFreeConnector(conn);
	return state;
}

TEST_F(host, screendump_then_hotplug_from_the_host)
{
	uint32_t w = self->mode.hdisplay, h = self->mode.vdisplay, crc = 0, seen;
	uint32_t *line = malloc(w * 4);
	char request[128];
	int crc_fd, modes;

	ASSERT_NE(NULL, line);
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++) {
			self->fb.map[y * (self->fb.pitch / 4) + x] = pixel(x, y, 5);
			line[x] = pixel(x, y, 5) & 0xffffff;
		}
		crc = vmgpu_test_crc32(crc, line, w * 4);
	}
	free(line);
	ASSERT_EQ(0, drmModeSetCrtc(self->fd, self->crtc, self->fb.id, 0, 0, &self->connector, 1,
				    &self->mode));
	crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, crc_fd);
	/* On the head before the host looks. */
	ASSERT_EQ(0, vmgpu_test_crc_wait(crc_fd, crc, &seen));
	close(crc_fd);
	/* The host judges the picture: host_display/screendump_of_head_0_... */
	snprintf(request, sizeof(request), "screendump head=0 key=5 width=%u height=%u", w, h);
	ASSERT_EQ(0, vmgpu_host_ask(request, 60000)) TH_LOG("no host agent");

	/* The host unplugs head 0's monitor. */
	ASSERT_EQ(0, vmgpu_host_ask("connect head=0 value=0", 60000));
	EXPECT_EQ(0, hotplug_uevent(self->uevent, 60000)) TH_LOG("no hotplug uevent");
	EXPECT_EQ(DRM_MODE_DISCONNECTED, connection(self->fd, self->connector, &modes));
	EXPECT_EQ(0, modes);

	ASSERT_EQ(0, vmgpu_host_ask("connect head=0 value=1", 60000));
	EXPECT_EQ(0, hotplug_uevent(self->uevent, 60000)) TH_LOG("no hotplug uevent");
	EXPECT_EQ(DRM_MODE_CONNECTED, connection(self->fd, self->connector, &modes));
	EXPECT_LT(0, modes);
}

TEST_HARNESS_MAIN
