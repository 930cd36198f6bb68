// SPDX-License-Identifier: MIT
/*
 * What a KMS commit may ask of the display controller, and what it is
 * told back: atomic check refuses what the device would blank the head
 * for (a misaligned RGB565 source, a swizzled primary), the event of a
 * modeset on a lit CRTC comes with the new mode's first frame, CRC
 * capture reports only CRCs the device computed for the frame just shown,
 * and a flip whose interrupts are lost, or that the device never latched,
 * still completes, showing its framebuffer. An import whose exporter
 * moves it as the display pins it stays usable on screen.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "kselftest_harness.h"
#include "libvmgpu.h"
#include "vmgpu_drm.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"
#include "../../tests/exporter/vmgpu_test_exporter.h"

#define IMPORT_VA		0x400000000ull

/* The device's CRC budget (contract: display CRCs), in pixels a second. */
#define CRC_PIXELS_PER_S	64000000u

FIXTURE(commit) {
	int fd;
	vmgpu_device *dev;
	uint32_t crtc, connector;
	drmModeModeInfo mode;
	struct vmgpu_test_fb a;
};

FIXTURE_SETUP(commit)
{
	struct vmgpu_card_head head;

	self->fd = vmgpu_open_card("vmgpu");
	ASSERT_LE(0, self->fd) TH_LOG("no vmgpu card node");
	ASSERT_EQ(0, vmgpu_device_create(self->fd, &self->dev));
	ASSERT_EQ(0, vmgpu_card_head0(self->fd, 0, 0, &head));
	self->crtc = head.crtc;
	self->connector = head.connector;
	self->mode = head.mode;
	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, self->mode.hdisplay, self->mode.vdisplay,
					DRM_FORMAT_XRGB8888, &self->a));
}

FIXTURE_TEARDOWN(commit)
{
	drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL);
	vmgpu_device_unref(self->dev);
	close(self->fd);
}

/* A legacy modeset of fb at (x, y) with mode: 0 or -errno. */
static int set_crtc(FIXTURE_DATA(commit) *self, uint32_t fb, uint32_t x,
		    drmModeModeInfo *mode)
{
	return drmModeSetCrtc(self->fd, self->crtc, fb, x, 0, &self->connector, 1, mode) ?
	       -errno : 0;
}

/* mode at about hz frames a second; the clock rounds up, the frame down. */
static drmModeModeInfo at_refresh(const drmModeModeInfo *mode, uint32_t hz)
{
	drmModeModeInfo m = *mode;

	m.clock = ((uint64_t)m.htotal * m.vtotal * hz + 999) / 1000;
	m.vrefresh = hz;
	snprintf(m.name, sizeof(m.name), "%ux%u@%u", m.hdisplay, m.vdisplay, hz);
	return m;
}

static uint64_t frame_us(const drmModeModeInfo *mode)
{
	return (uint64_t)mode->htotal * mode->vtotal * 1000 / mode->clock;
}

TEST_F(commit, rgb565_source_at_an_odd_pixel_is_refused)
{
	struct vmgpu_test_fb fb;

	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, self->mode.hdisplay + 2, self->mode.vdisplay,
					DRM_FORMAT_RGB565, &fb));
	/* Pixel 1 starts at byte 2: the device reads lines from 4-byte words. */
	EXPECT_EQ(-EINVAL, set_crtc(self, fb.id, 1, &self->mode));
	/* The negative: pixel 2 is 4-byte aligned. */
	EXPECT_EQ(0, set_crtc(self, fb.id, 2, &self->mode));
	drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL);
	drmModeRmFB(self->fd, fb.id);
}

/* A primary allocation of the fixture's size as a framebuffer, or 0. */
static uint32_t primary_fb(FIXTURE_DATA(commit) *self, uint32_t flags)
{
	struct drm_vmgpu_gem_create create = {
		.size = (uint64_t)self->a.pitch * self->mode.vdisplay,
		.flags = DRM_VMGPU_ALLOC_PRIMARY | DRM_VMGPU_ALLOC_CPU_ACCESS | flags,
		.segments = 1u << 1 | 1u << vmgpu_test_aperture(self->dev),
		.preferred_segment = 1,
	};
	uint32_t handles[4] = { 0 }, pitches[4] = { self->a.pitch }, offsets[4] = { 0 };
	uint32_t fb_id = 0;

	if (vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CREATE, &create))
		return 0;
	handles[0] = create.handle;
	if (drmModeAddFB2(self->fd, self->mode.hdisplay, self->mode.vdisplay,
			  DRM_FORMAT_XRGB8888, handles, pitches, offsets, &fb_id, 0))
		fb_id = 0;
	drmCloseBufferHandle(self->fd, create.handle);
	return fb_id;
}

TEST_F(commit, swizzled_primary_is_refused)
{
	uint32_t swizzled = primary_fb(self, DRM_VMGPU_ALLOC_SWIZZLED);
	uint32_t linear = primary_fb(self, 0);

	ASSERT_NE(0, swizzled);
	ASSERT_NE(0, linear);
	/* The display reads lines linear: it would show the swizzle. */
	EXPECT_EQ(-EINVAL, set_crtc(self, swizzled, 0, &self->mode));
	EXPECT_EQ(0, set_crtc(self, linear, 0, &self->mode));
	drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL);
	drmModeRmFB(self->fd, swizzled);
	drmModeRmFB(self->fd, linear);
}

static uint64_t event_us;

static void event_handler(int fd, unsigned int sequence, unsigned int sec, unsigned int usec,
			  void *data)
{
	event_us = sec * 1000000ull + usec;
}

TEST_F(commit, modeset_event_comes_with_the_new_modes_first_frame)
{
	drmModeModeInfo slow = at_refresh(&self->mode, 20);
	drmEventContext ev = { .version = 2, .page_flip_handler = event_handler };
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	drmModeAtomicReq *req;
	uint32_t blob, mode_id;
	int64_t start;
	int ret;

	ASSERT_EQ(0, set_crtc(self, self->a.id, 0, &self->mode));
	ASSERT_EQ(0, drmSetClientCap(self->fd, DRM_CLIENT_CAP_ATOMIC, 1));
	ASSERT_EQ(0, drmModeCreatePropertyBlob(self->fd, &slow, sizeof(slow), &blob));
	req = drmModeAtomicAlloc();
	ASSERT_NE(NULL, req);
	mode_id = vmgpu_test_prop_id(self->fd, self->crtc, DRM_MODE_OBJECT_CRTC, "MODE_ID");
	ASSERT_LE(0, drmModeAtomicAddProperty(req, self->crtc, mode_id, blob));
	event_us = 0;
	start = now_us();
	ret = drmModeAtomicCommit(self->fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET |
				  DRM_MODE_PAGE_FLIP_EVENT, NULL) ? -errno : 0;
	drmModeAtomicFree(req);
	drmModeDestroyPropertyBlob(self->fd, blob);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(1, poll(&p, 1, 10000)) TH_LOG("no event");
	ASSERT_EQ(0, drmHandleEvent(self->fd, &ev));
	ASSERT_NE(0, event_us);
	/*
	 * The new mode starts after the commit did and its first frame takes
	 * a whole frame (less a fifth, for the clocks): an event sent as the
	 * head went off, before the new mode was latched, is earlier.
	 */
	EXPECT_LE(start + frame_us(&slow) * 4 / 5, event_us)
		TH_LOG("event %lld us after the commit began; a %ux%u frame at 20 Hz is %llu us",
		       (long long)(event_us - start), slow.hdisplay, slow.vdisplay,
		       (unsigned long long)frame_us(&slow));
}

TEST_F(commit, crcs_come_only_from_frames_the_device_computed)
{
	uint32_t hz = CRC_PIXELS_PER_S / (self->mode.hdisplay * self->mode.vdisplay) * 5 / 4;
	drmModeModeInfo fast = at_refresh(&self->mode, hz);
	struct pollfd p = { .events = POLLIN };
	uint32_t frame, crc;
	int crc_fd;

	ASSERT_GE(1000, hz) TH_LOG("mode %ux%u: no refresh rate over the CRC budget",
				   self->mode.hdisplay, self->mode.vdisplay);
	/* Over the device's pixel rate: its CRC registers keep the last frame's. */
	ASSERT_EQ(0, set_crtc(self, self->a.id, 0, &self->mode));
	crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, crc_fd) TH_LOG("no crtc-0/crc in debugfs");
	p.fd = crc_fd;
	ASSERT_EQ(0, vmgpu_test_crc_next(crc_fd, &frame, &crc));
	ASSERT_EQ(0, set_crtc(self, self->a.id, 0, &fast));
	/* The CRCs of the old mode's last frames may still be queued. */
	while (poll(&p, 1, 0) == 1)
		ASSERT_EQ(0, vmgpu_test_crc_next(crc_fd, &frame, &crc));
	EXPECT_EQ(0, poll(&p, 1, 500))
		TH_LOG("a CRC at %u Hz, over the device's budget: it is a stale one", hz);
	/* The negative: back at the old mode, CRCs come again. */
	ASSERT_EQ(0, set_crtc(self, self->a.id, 0, &self->mode));
	EXPECT_EQ(0, vmgpu_test_crc_next(crc_fd, &frame, &crc));
	close(crc_fd);
}

/*
 * Flip to fb with the debugfs injection inject on, and wait up to 20 s
 * for the event: how long it took in us, -ETIMEDOUT, or -errno.
 */
static int64_t flip_injected(FIXTURE_DATA(commit) *self, uint32_t fb, const char *inject)
{
	drmEventContext ev = { .version = 2, .page_flip_handler = event_handler };
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	int64_t start = now_us(), ret;

	ret = vmgpu_test_debugfs_write(inject, "1");
	if (!ret)
		ret = drmModePageFlip(self->fd, self->crtc, fb, DRM_MODE_PAGE_FLIP_EVENT, NULL) ?
		      -errno : 0;
	if (!ret)
		ret = poll(&p, 1, 20000) == 1 ? 0 : -ETIMEDOUT;
	vmgpu_test_debugfs_write(inject, "0");
	if (!ret)
		ret = drmHandleEvent(self->fd, &ev) ? -errno : now_us() - start;
	return ret;
}

/*
 * A flip whose FLIP_DONE and vblank interrupts are lost is latched at
 * once after its timeout, and its event sent: not left armed for the next
 * commit to find while its old framebuffer is unpinned.
 */
TEST_F_TIMEOUT(commit, flip_with_lost_interrupts_completes_at_its_timeout, 90)
{
	drmEventContext ev = { .version = 2, .page_flip_handler = event_handler };
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	int late = vmgpu_test_dmesg_count("latched at once");
	struct vmgpu_test_fb b;
	int64_t start, took;

	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, self->mode.hdisplay, self->mode.vdisplay,
					DRM_FORMAT_XRGB8888, &b));
	ASSERT_EQ(0, set_crtc(self, self->a.id, 0, &self->mode));
	took = flip_injected(self, b.id, "inject_display_events_lost");
	ASSERT_NE(-ETIMEDOUT, took) TH_LOG("no event 20 s after a flip whose interrupts were lost");
	ASSERT_LE(0, took);
	/* The driver's 3 s, less a tenth for the clocks. */
	EXPECT_LE(2700000, took) TH_LOG("the event came after %lld us", (long long)took);
	EXPECT_EQ(late + 1, vmgpu_test_dmesg_count("latched at once"));
	/* The negative: with interrupts back, a flip completes at its vblank. */
	start = now_us();
	ASSERT_EQ(0, drmModePageFlip(self->fd, self->crtc, self->a.id,
				     DRM_MODE_PAGE_FLIP_EVENT, NULL));
	ASSERT_EQ(1, poll(&p, 1, 5000)) TH_LOG("no event for a flip with interrupts");
	ASSERT_EQ(0, drmHandleEvent(self->fd, &ev));
	EXPECT_GT(5000000, now_us() - start);
	EXPECT_EQ(late + 1, vmgpu_test_dmesg_count("latched at once"));
	drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL);
	drmModeRmFB(self->fd, b.id);
}

/* The CRC of a frame of one XRGB colour. */
static uint32_t uniform_crc(uint32_t color, uint32_t w, uint32_t h)
{
	uint32_t *line = malloc(w * 4), crc = 0;

	for (uint32_t x = 0; line && x < w; x++)
		line[x] = color;
	for (uint32_t y = 0; line && y < h; y++)
		crc = vmgpu_test_crc32(crc, line, w * 4);
	free(line);
	return crc;
}

/*
 * A flip whose COMMIT the device never saw: at the timeout the driver's
 * own latch shows the new framebuffer before the event goes out.
 */
TEST_F_TIMEOUT(commit, flip_never_latched_is_latched_at_its_timeout, 90)
{
	struct vmgpu_test_fb b;
	uint32_t want, seen = 0;
	int64_t took;
	int crc_fd;

	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, self->mode.hdisplay, self->mode.vdisplay,
					DRM_FORMAT_XRGB8888, &b));
	for (uint64_t i = 0; i < b.size / 4; i++)
		b.map[i] = 0x336699;
	want = uniform_crc(0x336699, self->mode.hdisplay, self->mode.vdisplay);
	ASSERT_EQ(0, set_crtc(self, self->a.id, 0, &self->mode));
	took = flip_injected(self, b.id, "inject_display_commit_lost");
	ASSERT_NE(-ETIMEDOUT, took) TH_LOG("no event 20 s after a flip the device never latched");
	ASSERT_LE(0, took);
	EXPECT_LE(2700000, took) TH_LOG("the event came after %lld us", (long long)took);
	/* Opened now: three seconds of the old frames would overflow its queue. */
	crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, crc_fd) TH_LOG("no crtc-0/crc in debugfs");
	EXPECT_EQ(0, vmgpu_test_crc_wait(crc_fd, want, &seen))
		TH_LOG("head shows CRC 0x%08x, the flip's framebuffer is 0x%08x", seen, want);
	close(crc_fd);
	drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL);
	drmModeRmFB(self->fd, b.id);
}

/*
 * An import shown by a head, whose exporter moves it when the display
 * pins it (as one migrating a buffer to where it can stay pinned would),
 * while the eviction move_notify asks for fails: the pin settles the
 * import after the exporter's move, so the head shows the pages the
 * import maps now, and a job can still write them while they are shown.
 */
TEST_F(commit, import_moved_by_its_pin_stays_usable_on_screen)
{
	const char *kernel = getenv("VMGPU_KERNEL");
	struct vmgpu_test_exporter_create create = {
		.flags = VMGPU_TEST_EXPORTER_MOVE_ON_PIN,
	};
	uint32_t w = self->mode.hdisplay, h = self->mode.vdisplay, fb_id, seen = 0;
	uint32_t handles[4] = { 0 }, pitches[4] = { w * 4 }, offsets[4] = { 0 };
	int exporter, crc_fd, fd = vmgpu_device_fd(self->dev);
	union vmgpu_cmd fill;
	vmgpu_context *ctx;
	char left[16];
	vmgpu_bo *bo;

	ASSERT_NE(NULL, kernel) TH_LOG("VMGPU_KERNEL not set by the configuration");
	if (strcmp(kernel, "debug"))
		SKIP(return, "Debian's kernel pins dynamic mappings (no CONFIG_DMABUF_MOVE_NOTIFY)");
	exporter = vmgpu_test_open_exporter();
	ASSERT_LE(0, exporter) TH_LOG("no /dev/vmgpu-test-exporter");
	create.size = ((uint64_t)w * h * 4 + 4095) & ~4095ull;
	ASSERT_EQ(0, ioctl(exporter, VMGPU_TEST_EXPORTER_CREATE, &create));
	ASSERT_EQ(0, vmgpu_bo_import(self->dev, create.fd, 0, &bo));
	/* A job makes it resident, its attachment mapped. */
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, IMPORT_VA, create.size, 0));
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &ctx));
	fill = cmd_fill(IMPORT_VA, create.size, 0x112233);
	ASSERT_EQ(0, run(ctx, fd, &fill, 1));

	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_import_evict_fault", "1"));
	handles[0] = vmgpu_bo_handle(bo);
	ASSERT_EQ(0, drmModeAddFB2(self->fd, w, h, DRM_FORMAT_XRGB8888, handles, pitches,
				   offsets, &fb_id, 0));
	ASSERT_EQ(0, set_crtc(self, fb_id, 0, &self->mode));
	ASSERT_EQ(0, vmgpu_test_debugfs_read("inject_import_evict_fault", left, sizeof(left)));
	ASSERT_EQ(0, atoi(left)) TH_LOG("the pin's move did not ask for an eviction");

	fill = cmd_fill(IMPORT_VA, create.size, 0x445566);
	EXPECT_EQ(0, run(ctx, fd, &fill, 1)) TH_LOG("a job on the shown import failed");
	crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, crc_fd) TH_LOG("no crtc-0/crc in debugfs");
	EXPECT_EQ(0, vmgpu_test_crc_wait(crc_fd, uniform_crc(0x445566, w, h), &seen))
		TH_LOG("head shows CRC 0x%08x, not the job's write", seen);
	close(crc_fd);
	drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL);
	drmModeRmFB(self->fd, fb_id);
	vmgpu_context_unref(ctx);
	vmgpu_bo_unref(bo);
	close(create.fd);
	close(exporter);
}

TEST_HARNESS_MAIN
