// SPDX-License-Identifier: MIT
/*
 * KMS on the display controller: connectors and modes from the EDID, dumb
 * buffers, a modeset whose scanout the device's frame CRC proves pixel for
 * pixel, flips latched at vblank with their event, the cursor plane, and
 * the seed's rules for primaries: only primaries are framebuffers, and a
 * displayed one is pinned (its Evict fails) until the flip away from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "kselftest_harness.h"
#include "libvmgpu.h"
#include "vmgpu_drm.h"
#include "vmgpu_testlib.h"


/* The device's frame CRC: lines of little-endian XRGB words, X = 0. */
static uint32_t frame_crc(const struct vmgpu_test_fb *fb, uint32_t w, uint32_t h, const uint32_t *cursor,
			  int cx, int cy)
{
	uint32_t *line = malloc(w * 4), crc = 0;

	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++)
			line[x] = fb->map[y * (fb->pitch / 4) + x] & 0xffffff;
		for (int i = 0; cursor && i < 64; i++) {
			int dx = cx + i, dy = (int)y - cy;
			uint32_t s, a, out = 0;

			if (dy < 0 || dy >= 64 || dx < 0 || dx >= (int)w)
				continue;
			s = cursor[dy * 64 + i];
			a = s >> 24;
			for (int sh = 0; sh < 24; sh += 8)
				out |= (((s >> sh & 255) * a + (line[dx] >> sh & 255) * (255 - a) +
					 127) / 255) << sh;
			line[dx] = out;
		}
		crc = vmgpu_test_crc32(crc, line, w * 4);
	}
	free(line);
	return crc;
}

FIXTURE(kms) {
	int fd;
	vmgpu_device *dev;
	uint32_t crtc, connector, crtc_index;
	drmModeModeInfo mode;
	struct vmgpu_test_fb a, b;
	int crc_fd;
};

/* The top byte is X: garbage the display must not show. */
static uint32_t pixel(uint32_t x, uint32_t y, uint32_t key)
{
	return (0xab000000u ^ (key << 24)) | ((x * 7 + y * 131 + key * 977) & 0xffffff);
}

static void fill_fb(struct vmgpu_test_fb *fb, uint32_t w, uint32_t h, uint32_t key)
{
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			fb->map[y * (fb->pitch / 4) + x] = pixel(x, y, key);
}

static int evict(vmgpu_device *dev, uint32_t handle)
{
	struct drm_vmgpu_gem_make_resident args = { .handle = handle };

	return vmgpu_test_ioctl(dev, DRM_IOCTL_VMGPU_GEM_EVICT, &args);
}

FIXTURE_SETUP(kms)
{
	struct vmgpu_card_head head;

	self->fd = vmgpu_open_card("vmgpu");
	ASSERT_LE(0, self->fd) TH_LOG("no vmgpu card node");
	ASSERT_EQ(0, vmgpu_device_create(self->fd, &self->dev));
	ASSERT_EQ(0, drmSetClientCap(self->fd, DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1));
	/* The smallest mode: CRCs read every pixel of every frame. */
	ASSERT_EQ(0, vmgpu_card_head0(self->fd, 0, 0, &head));
	self->crtc = head.crtc;
	self->crtc_index = 0;
	self->connector = head.connector;
	self->mode = head.mode;
	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, self->mode.hdisplay, self->mode.vdisplay,
			       DRM_FORMAT_XRGB8888, &self->a));
	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, self->mode.hdisplay, self->mode.vdisplay,
			       DRM_FORMAT_XRGB8888, &self->b));
	fill_fb(&self->a, self->mode.hdisplay, self->mode.vdisplay, 1);
	fill_fb(&self->b, self->mode.hdisplay, self->mode.vdisplay, 2);
	self->crc_fd = -1;
}

FIXTURE_TEARDOWN(kms)
{
	if (self->crc_fd >= 0)
		close(self->crc_fd);
	drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL);
	vmgpu_device_unref(self->dev);
	close(self->fd);
}

static int set_crtc(FIXTURE_DATA(kms) *self, uint32_t fb)
{
	return drmModeSetCrtc(self->fd, self->crtc, fb, 0, 0, &self->connector, 1, &self->mode);
}

TEST_F(kms, connector_modes_come_from_the_edid)
{
	drmModeConnector *conn = drmModeGetConnector(self->fd, self->connector);
	int i, preferred = -1;

	ASSERT_NE(NULL, conn);
	ASSERT_EQ(DRM_MODE_CONNECTOR_VIRTUAL, conn->connector_type);
	for (i = 0; i < conn->count_modes; i++)
		if (conn->modes[i].type & DRM_MODE_TYPE_PREFERRED)
			preferred = i;
	ASSERT_LE(0, preferred);
	/* The device's xres and yres, 1024x768 unless configured. */
	EXPECT_EQ(1024, conn->modes[preferred].hdisplay);
	EXPECT_EQ(768, conn->modes[preferred].vdisplay);
	drmModeFreeConnector(conn);
}

TEST_F(kms, one_crtc_and_connector_per_head)
{
	const char *env = getenv("VMGPU_HEADS");
	drmModeRes *res = drmModeGetResources(self->fd);
	int i;

	ASSERT_NE(NULL, env) TH_LOG("VMGPU_HEADS not set by the configuration");
	ASSERT_NE(NULL, res);
	EXPECT_EQ(atoi(env), res->count_crtcs);
	EXPECT_EQ(atoi(env), res->count_connectors);
	for (i = 0; i < res->count_connectors; i++) {
		drmModeConnector *conn = drmModeGetConnector(self->fd, res->connectors[i]);

		ASSERT_NE(NULL, conn);
		EXPECT_EQ(DRM_MODE_CONNECTED, conn->connection) TH_LOG("connector %d", i);
		EXPECT_LT(0, conn->count_modes);
		drmModeFreeConnector(conn);
	}
	drmModeFreeResources(res);
}

TEST_F(kms, dumb_buffers_are_mappable_primaries)
{
	struct drm_vmgpu_gem_info info = { .handle = self->a.handle };

	EXPECT_LE(self->mode.hdisplay * 4, self->a.pitch);
	EXPECT_EQ(0, self->a.pitch % 4);
	ASSERT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_INFO, &info));
	EXPECT_EQ(DRM_VMGPU_ALLOC_PRIMARY | DRM_VMGPU_ALLOC_CPU_ACCESS, info.flags);
	EXPECT_EQ(0x12345678u, (self->a.map[7] = 0x12345678u));
}

TEST_F(kms, modeset_scans_out_the_framebuffer)
{
	uint32_t want = frame_crc(&self->a, self->mode.hdisplay, self->mode.vdisplay, NULL, 0, 0);
	uint32_t seen;

	ASSERT_EQ(0, set_crtc(self, self->a.id));
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd) TH_LOG("no crtc-0/crc in debugfs");
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, want, &seen))
		TH_LOG("head shows CRC 0x%08x, framebuffer A is 0x%08x", seen, want);
	/* The negative: B's pixels are not what the head shows. */
	EXPECT_NE(want, frame_crc(&self->b, self->mode.hdisplay, self->mode.vdisplay, NULL, 0, 0));
}

/*
 * A framebuffer that memory pressure moved before it is shown keeps its
 * contents: the pin brings them back from system memory, or from out of
 * the GPU's reach.
 */
static void shows_evicted_fb(FIXTURE_DATA(kms) *self, struct __test_metadata *_metadata,
			     uint32_t flags)
{
	struct drm_vmgpu_gem_make_resident args = { .handle = self->a.handle, .flags = flags };
	uint32_t want = frame_crc(&self->a, self->mode.hdisplay, self->mode.vdisplay, NULL, 0, 0);
	uint32_t seen;

	ASSERT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_EVICT, &args));
	ASSERT_EQ(0, set_crtc(self, self->a.id));
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd) TH_LOG("no crtc-0/crc in debugfs");
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, want, &seen))
		TH_LOG("head shows CRC 0x%08x, framebuffer A is 0x%08x", seen, want);
}

TEST_F(kms, evicted_framebuffer_is_shown_with_its_contents)
{
	shows_evicted_fb(self, _metadata, 0);
}

TEST_F(kms, nonresident_framebuffer_is_shown_with_its_contents)
{
	shows_evicted_fb(self, _metadata, DRM_VMGPU_EVICT_NONRESIDENT);
}

/*
 * A primary whose clear failed is shown black, never with what its memory
 * held before: the commit sees the clear's outcome and shows no primary.
 */
TEST_F(kms, primary_whose_clear_failed_is_shown_black)
{
	uint32_t w = self->mode.hdisplay, h = self->mode.vdisplay, seen;
	struct vmgpu_test_fb black = { .pitch = w * 4 }, fb;
	char left[16];
	int ret;

	black.map = calloc(w, h * 4);
	ASSERT_NE(NULL, black.map);
	/*
	 * Its own clear, on memory full of garbage, and it fails; behind a
	 * busy paging ring, so that nothing sees the failure before the pin
	 * (MAP_DUMB would clear it again).
	 */
	ASSERT_EQ(0, vmgpu_test_vram_scrub(0));
	ASSERT_EQ(0, vmgpu_test_dirty_segment(self->dev, 1, vmgpu_test_aperture(self->dev),
					      16 << 20));
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_fault", "1"));
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "1500"));
	ret = vmgpu_test_dumb_fb(self->fd, w, h, DRM_FORMAT_XRGB8888, &fb);
	vmgpu_test_vram_scrub(1);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, vmgpu_test_debugfs_read("inject_paging_fault", left, sizeof(left)));
	ASSERT_STREQ("0\n", left) TH_LOG("the injected fault was not used by the clear");

	/* Shown before anything reads it through the CPU. */
	ASSERT_EQ(0, set_crtc(self, fb.id));
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd) TH_LOG("no crtc-0/crc in debugfs");
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&black, w, h, NULL, 0, 0), &seen))
		TH_LOG("head shows CRC 0x%08x, not black", seen);
	free(black.map);
}

/*
 * A nonblocking flip to a primary whose clear is still queued returns at
 * once: the commit tail, not the ioctl, waits for the clear, and the flip
 * completes only after it.
 */
TEST_F(kms, nonblocking_flip_waits_for_the_clear_in_the_commit)
{
	uint32_t w = self->mode.hdisplay, h = self->mode.vdisplay, seen;
	struct vmgpu_test_fb black = { .pitch = w * 4 }, fb;
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	drmEventContext ev = { .version = 2 };
	int64_t held, flipped, ioctl_ms;
	int ret;

	black.map = calloc(w, h * 4);
	ASSERT_NE(NULL, black.map);
	ASSERT_EQ(0, set_crtc(self, self->a.id));
	/* Its own clear, on memory full of garbage, behind a held paging ring. */
	ASSERT_EQ(0, vmgpu_test_vram_scrub(0));
	ASSERT_EQ(0, vmgpu_test_dirty_segment(self->dev, 1, vmgpu_test_aperture(self->dev),
					      16 << 20));
	held = now_ms();
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "3000"));
	ret = vmgpu_test_dumb_fb(self->fd, w, h, DRM_FORMAT_XRGB8888, &fb);
	vmgpu_test_vram_scrub(1);
	ASSERT_EQ(0, ret);

	flipped = now_ms();
	ASSERT_EQ(0, drmModePageFlip(self->fd, self->crtc, fb.id, DRM_MODE_PAGE_FLIP_EVENT, NULL));
	ioctl_ms = now_ms() - flipped;
	EXPECT_GT(1500, ioctl_ms) TH_LOG("the flip ioctl took %lld ms: it waited for the clear",
					 (long long)ioctl_ms);
	ASSERT_EQ(1, poll(&p, 1, 10000)) TH_LOG("no flip event");
	ASSERT_EQ(0, drmHandleEvent(self->fd, &ev));
	EXPECT_LE(2500, now_ms() - held) TH_LOG("the flip completed before the clear");
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd) TH_LOG("no crtc-0/crc in debugfs");
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&black, w, h, NULL, 0, 0), &seen))
		TH_LOG("head shows CRC 0x%08x, not the cleared buffer", seen);
	free(black.map);
}

TEST_F(kms, flip_completes_at_vblank_with_its_event)
{
	uint32_t want_b = frame_crc(&self->b, self->mode.hdisplay, self->mode.vdisplay, NULL, 0, 0);
	drmVBlank vbl = { .request = { .type = DRM_VBLANK_RELATIVE, .sequence = 0 } };
	drmEventContext ev = { .version = 2 };
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	struct timespec t0, t1;
	uint32_t seq0, seen, vblanks;
	double ms, frame_ms;

	ASSERT_EQ(0, set_crtc(self, self->a.id));
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd);
	ASSERT_EQ(0, drmModePageFlip(self->fd, self->crtc, self->b.id,
				     DRM_MODE_PAGE_FLIP_EVENT, NULL));
	/* Until the flip completes, the old framebuffer stays pinned. */
	ASSERT_EQ(1, poll(&p, 1, 10000)) TH_LOG("no flip event");
	ASSERT_EQ(0, drmHandleEvent(self->fd, &ev));
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, want_b, &seen))
		TH_LOG("after the flip the head shows 0x%08x, B is 0x%08x", seen, want_b);
	/*
	 * Vblanks come at the mode's rate, never faster: 30 of them, timed by
	 * the kernel's vblank timestamps (interrupt time: one late interrupt
	 * may shorten the span by a frame or two, hence 27).
	 */
	ASSERT_EQ(0, drmWaitVBlank(self->fd, &vbl));
	seq0 = vbl.reply.sequence;
	t0.tv_sec = vbl.reply.tval_sec;
	t0.tv_nsec = vbl.reply.tval_usec * 1000;
	vbl.request.type = DRM_VBLANK_ABSOLUTE;
	vbl.request.sequence = seq0 + 30;
	ASSERT_EQ(0, drmWaitVBlank(self->fd, &vbl));
	t1.tv_sec = vbl.reply.tval_sec;
	t1.tv_nsec = vbl.reply.tval_usec * 1000;
	/* A waiter woken late (a loaded host) is told the vblank it saw. */
	vblanks = vbl.reply.sequence - seq0;
	EXPECT_LE(30, vblanks);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	frame_ms = 1e3 * self->mode.htotal * self->mode.vtotal / (self->mode.clock * 1e3);
	EXPECT_LE((vblanks - 3) * frame_ms, ms)
		TH_LOG("%u vblanks in %.1f ms, a frame is %.1f ms", vblanks, ms, frame_ms);
}

static uint32_t flip_sequence;

static void flip_handler(int fd, unsigned int sequence, unsigned int sec, unsigned int usec,
			 void *data)
{
	flip_sequence = sequence;
}

/* A flip to fb with its event: the vblank count it completed at, or 0. */
static uint32_t flip(FIXTURE_DATA(kms) *self, uint32_t fb, uint32_t flags)
{
	drmEventContext ev = { .version = 2, .page_flip_handler = flip_handler };
	struct pollfd p = { .fd = self->fd, .events = POLLIN };

	flip_sequence = 0;
	if (drmModePageFlip(self->fd, self->crtc, fb, flags | DRM_MODE_PAGE_FLIP_EVENT, NULL) ||
	    poll(&p, 1, 10000) != 1 || drmHandleEvent(self->fd, &ev))
		return 0;
	return flip_sequence;
}

/* Flips A <-> B, each waited for: the vblanks between the first and last. */
static uint32_t vblanks_for_flips(FIXTURE_DATA(kms) *self, struct __test_metadata *_metadata,
				  int flips, uint32_t flags)
{
	uint32_t first = 0, last = 0;

	for (int i = 0; i < flips; i++) {
		last = flip(self, i % 2 ? self->a.id : self->b.id, flags);
		EXPECT_NE(0, last) TH_LOG("flip %d: no event", i);
		if (!i)
			first = last;
	}
	return last - first;
}

TEST_F(kms, async_flips_do_not_wait_for_vblanks)
{
	drmModeModeInfo slow = self->mode;
	uint32_t want_a = frame_crc(&self->a, slow.hdisplay, slow.vdisplay, NULL, 0, 0), seen;
	uint32_t vblanks;

	/* 45 ms frames: room for many flips, however loaded the host. */
	slow.clock = (uint64_t)slow.htotal * slow.vtotal * 1000 / 45000;
	slow.vrefresh = 22;
	ASSERT_EQ(0, drmModeSetCrtc(self->fd, self->crtc, self->a.id, 0, 0, &self->connector, 1,
				    &slow));
	vblanks = vblanks_for_flips(self, _metadata, 20, DRM_MODE_PAGE_FLIP_ASYNC);
	EXPECT_GT(10, vblanks) TH_LOG("20 async flips took %u vblanks", vblanks);
	/* The last one showed A, and the head shows it. */
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd);
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, want_a, &seen));
	/* The negative: vsynced flips take a vblank each. */
	vblanks = vblanks_for_flips(self, _metadata, 6, 0);
	EXPECT_LE(5, vblanks) TH_LOG("6 vsynced flips took %u vblanks", vblanks);
}

TEST_F(kms, displayed_primary_is_pinned_until_flipped_away)
{
	drmEventContext ev = { .version = 2 };
	struct pollfd p = { .fd = self->fd, .events = POLLIN };

	ASSERT_EQ(0, set_crtc(self, self->a.id));
	EXPECT_EQ(-EBUSY, evict(self->dev, self->a.handle));
	EXPECT_EQ(0, evict(self->dev, self->b.handle)) TH_LOG("B is not on screen");
	/* B comes back into a memory segment to be shown, A is let go. */
	ASSERT_EQ(0, drmModePageFlip(self->fd, self->crtc, self->b.id,
				     DRM_MODE_PAGE_FLIP_EVENT, NULL));
	ASSERT_EQ(1, poll(&p, 1, 10000));
	ASSERT_EQ(0, drmHandleEvent(self->fd, &ev));
	EXPECT_EQ(-EBUSY, evict(self->dev, self->b.handle));
	/* Cleanup of the old plane state runs after the flip's vblank. */
	for (int i = 0; i < 100 && evict(self->dev, self->a.handle) == -EBUSY; i++)
		usleep(10000);
	EXPECT_EQ(0, evict(self->dev, self->a.handle));
}

static uint32_t segment_of(vmgpu_device *dev, uint32_t handle)
{
	struct drm_vmgpu_gem_info info = { .handle = handle, .info_flags = DRM_VMGPU_GEM_INFO_WAIT };

	return vmgpu_test_ioctl(dev, DRM_IOCTL_VMGPU_GEM_INFO, &info) ? ~0u : info.segment_id;
}

/*
 * Seed: a primary without AccessedPhysically is "mapped into the aperture
 * only when being displayed. This approach helps to remove pressure on
 * the aperture segment."
 */
TEST_F(kms, undisplayed_primaries_take_no_aperture_space)
{
	uint32_t aperture = vmgpu_test_aperture(self->dev), w = self->mode.hdisplay;
	uint32_t h = self->mode.vdisplay, handles[4] = { 0 }, offsets[4] = { 0 };
	uint32_t pitches[4] = { self->a.pitch }, ids[6], crtc_seen;
	drmEventContext ev = { .version = 2 };
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	struct vmgpu_test_fb prim[6];
	uint64_t used0, used;
	int i;

	/* Head 0 shows nothing of anyone's (fbdev's console may be in the aperture). */
	ASSERT_EQ(0, drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL));
	ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, aperture, &used0));
	for (i = 0; i < 6; i++) {
		struct drm_vmgpu_gem_create create = {
			.size = (uint64_t)self->a.pitch * h,
			.flags = DRM_VMGPU_ALLOC_PRIMARY | DRM_VMGPU_ALLOC_CPU_ACCESS,
			.segments = 1u << aperture,
			.preferred_segment = aperture,
		};
		struct drm_vmgpu_gem_mmap_offset mo = { 0 };
		struct drm_vmgpu_gem_make_resident mr = { 0 };

		ASSERT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CREATE, &create));
		mo.handle = mr.handle = prim[i].handle = create.handle;
		prim[i].pitch = self->a.pitch;
		prim[i].size = create.size;
		ASSERT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, &mr));
		ASSERT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, &mo));
		prim[i].map = mmap(NULL, create.size, PROT_READ | PROT_WRITE, MAP_SHARED,
				   self->fd, mo.offset);
		ASSERT_NE(MAP_FAILED, prim[i].map);
		fill_fb(&prim[i], w, h, 10 + i);
		handles[0] = prim[i].handle;
		ASSERT_EQ(0, drmModeAddFB2(self->fd, w, h, DRM_FORMAT_XRGB8888, handles, pitches,
					   offsets, &ids[i], 0));
		EXPECT_EQ(0, segment_of(self->dev, prim[i].handle)) TH_LOG("primary %d", i);
	}
	ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, aperture, &used));
	EXPECT_EQ(used0, used) TH_LOG("six undisplayed primaries took aperture space");

	/* Shown: mapped into the aperture, and what the head shows. */
	ASSERT_EQ(0, set_crtc(self, ids[0]));
	EXPECT_EQ(aperture, segment_of(self->dev, prim[0].handle));
	ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, aperture, &used));
	EXPECT_EQ(used0 + prim[0].size, used);
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd);
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&prim[0], w, h, NULL, 0, 0), &crtc_seen))
		TH_LOG("scanout through the aperture shows 0x%08x", crtc_seen);
	EXPECT_EQ(-EBUSY, evict(self->dev, prim[0].handle));

	/* Flipped away: the entries come back once the flip is done. */
	ASSERT_EQ(0, drmModePageFlip(self->fd, self->crtc, ids[1], DRM_MODE_PAGE_FLIP_EVENT,
				     NULL));
	ASSERT_EQ(1, poll(&p, 1, 10000));
	ASSERT_EQ(0, drmHandleEvent(self->fd, &ev));
	for (i = 0; i < 100 && segment_of(self->dev, prim[0].handle) != 0; i++)
		usleep(10000);
	EXPECT_EQ(0, segment_of(self->dev, prim[0].handle));
	EXPECT_EQ(aperture, segment_of(self->dev, prim[1].handle));
	ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, aperture, &used));
	EXPECT_EQ(used0 + prim[1].size, used) TH_LOG("only the shown primary holds entries");
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&prim[1], w, h, NULL, 0, 0), &crtc_seen));
	/* Its bytes stayed: the move only dropped entries. */
	for (uint32_t y = 0; y < h; y += 37)
		for (uint32_t x = 0; x < w; x += 53)
			ASSERT_EQ(pixel(x, y, 10), prim[0].map[y * (prim[0].pitch / 4) + x]);
	for (i = 0; i < 6; i++)
		munmap(prim[i].map, prim[i].size);
}

/*
 * A framebuffer of a vgem buffer imported through PRIME: not in the
 * aperture until shown; shown, it is mapped into the aperture, pinned, and
 * the head shows vgem's pixels; flipped away, its entries go again.
 */
TEST_F(kms, imported_framebuffer_is_shown_through_the_aperture)
{
	uint32_t aperture = vmgpu_test_aperture(self->dev), w = self->mode.hdisplay;
	uint32_t h = self->mode.vdisplay, handles[4] = { 0 }, pitches[4] = { 0 };
	uint32_t offsets[4] = { 0 }, fb_id, seen;
	struct vmgpu_test_fb vgem_fb;
	int vgem, dmabuf, i;

	vgem = vmgpu_test_open_vgem();
	ASSERT_LE(0, vgem) TH_LOG("no vgem device");
	ASSERT_EQ(0, vmgpu_test_vgem_buffer(vgem, w, h, &vgem_fb, &dmabuf));
	fill_fb(&vgem_fb, w, h, 7);
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, dmabuf, &handles[0]));
	close(dmabuf);
	pitches[0] = vgem_fb.pitch;
	ASSERT_EQ(0, drmModeAddFB2(self->fd, w, h, DRM_FORMAT_XRGB8888, handles, pitches,
				   offsets, &fb_id, 0));
	EXPECT_EQ(0, segment_of(self->dev, handles[0]));

	ASSERT_EQ(0, set_crtc(self, fb_id));
	EXPECT_EQ(aperture, segment_of(self->dev, handles[0]));
	EXPECT_EQ(-EBUSY, evict(self->dev, handles[0]));
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd) TH_LOG("no crtc-0/crc in debugfs");
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&vgem_fb, w, h, NULL, 0, 0),
					 &seen))
		TH_LOG("head shows CRC 0x%08x, not the vgem buffer's", seen);

	ASSERT_EQ(0, set_crtc(self, self->a.id));
	for (i = 0; i < 100 && segment_of(self->dev, handles[0]) != 0; i++)
		usleep(10000);
	EXPECT_EQ(0, segment_of(self->dev, handles[0]));
	drmModeRmFB(self->fd, fb_id);
	drmCloseBufferHandle(self->fd, handles[0]);
	munmap(vgem_fb.map, vgem_fb.size);
	close(vgem);
}

/* A framebuffer of head 0's size whose allocation is not PRIMARY, or 0. */
static uint32_t non_primary_fb(FIXTURE_DATA(kms) *self)
{
	struct drm_vmgpu_gem_create create = {
		.size = (uint64_t)self->a.pitch * self->mode.vdisplay,
		.flags = DRM_VMGPU_ALLOC_CPU_ACCESS,
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
		return 0;
	return fb_id;
}

TEST_F(kms, only_primaries_are_framebuffers)
{
	uint32_t fb_id;

	fb_id = non_primary_fb(self);
	ASSERT_NE(0, fb_id);
	EXPECT_EQ(-EINVAL, set_crtc(self, fb_id) ? -errno : 0);
	/* The negative: the same commit with a primary works. */
	EXPECT_EQ(0, set_crtc(self, self->a.id));
	drmModeRmFB(self->fd, fb_id);
}

TEST_F(kms, modes_the_device_cannot_run_are_refused)
{
	drmModeModeInfo slow = self->mode, fast = self->mode;

	/* Under 20 Hz the helpers' vblank waits would time out; over 1 kHz the device refuses. */
	slow.clock = slow.htotal * slow.vtotal * 10 / 1000;
	fast.clock = fast.htotal * fast.vtotal * 2000 / 1000;
	EXPECT_EQ(-EINVAL, drmModeSetCrtc(self->fd, self->crtc, self->a.id, 0, 0,
					  &self->connector, 1, &slow) ? -errno : 0);
	EXPECT_EQ(-EINVAL, drmModeSetCrtc(self->fd, self->crtc, self->a.id, 0, 0,
					  &self->connector, 1, &fast) ? -errno : 0);
	EXPECT_EQ(0, set_crtc(self, self->a.id));
}

TEST_F(kms, cursor_is_composed_over_the_primary)
{
	uint32_t w = self->mode.hdisplay, h = self->mode.vdisplay, seen;
	struct vmgpu_test_fb cursor;
	uint32_t *image = malloc(64 * 64 * 4);

	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, 64, 64, DRM_FORMAT_ARGB8888, &cursor));
	for (int i = 0; i < 64 * 64; i++)
		image[i] = (uint32_t)(i * 37 & 0xff) << 24 | ((i * 2654435761u) & 0xffffff);
	for (int y = 0; y < 64; y++)
		memcpy(&cursor.map[y * (cursor.pitch / 4)], &image[y * 64], 64 * 4);
	ASSERT_EQ(0, set_crtc(self, self->a.id));
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd);
	ASSERT_EQ(0, drmModeSetCursor(self->fd, self->crtc, cursor.handle, 64, 64));
	ASSERT_EQ(0, drmModeMoveCursor(self->fd, self->crtc, -10, 20));
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&self->a, w, h, image, -10, 20), &seen))
		TH_LOG("cursor at (-10, 20): head shows 0x%08x", seen);
	ASSERT_EQ(0, drmModeMoveCursor(self->fd, self->crtc, 100, 50));
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&self->a, w, h, image, 100, 50), &seen));
	ASSERT_EQ(0, drmModeSetCursor(self->fd, self->crtc, 0, 0, 0));
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&self->a, w, h, NULL, 0, 0), &seen));
	/*
	 * A cursor removed while the CRTC is off must not come back with the
	 * next mode set (its buffer may be gone by then).
	 */
	ASSERT_EQ(0, drmModeSetCursor(self->fd, self->crtc, cursor.handle, 64, 64));
	ASSERT_EQ(0, drmModeSetCrtc(self->fd, self->crtc, 0, 0, 0, NULL, 0, NULL));
	ASSERT_EQ(0, drmModeSetCursor(self->fd, self->crtc, 0, 0, 0));
	ASSERT_EQ(0, set_crtc(self, self->a.id));
	/* Frames of before the mode set may still be queued: start afresh. */
	close(self->crc_fd);
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd);
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&self->a, w, h, NULL, 0, 0), &seen))
		TH_LOG("the head shows 0x%08x: a stale cursor?", seen);
	free(image);
}

TEST_F(kms, cursor_moves_do_not_wait_for_vblanks)
{
	uint32_t w = self->mode.hdisplay, h = self->mode.vdisplay, seen, seq0, seq1;
	drmModeModeInfo slow = self->mode;
	struct vmgpu_test_fb cursor;
	uint32_t *image = malloc(64 * 64 * 4);

	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, 64, 64, DRM_FORMAT_ARGB8888, &cursor));
	for (int i = 0; i < 64 * 64; i++)
		image[i] = 0xff000000u | (i * 2654435761u & 0xffffff);
	for (int y = 0; y < 64; y++)
		memcpy(&cursor.map[y * (cursor.pitch / 4)], &image[y * 64], 64 * 4);
	/* 45 ms frames: room for many moves, however loaded the host. */
	slow.clock = (uint64_t)slow.htotal * slow.vtotal * 1000 / 45000;
	slow.vrefresh = 22;
	ASSERT_EQ(0, drmModeSetCrtc(self->fd, self->crtc, self->a.id, 0, 0, &self->connector, 1,
				    &slow));
	ASSERT_EQ(0, drmModeSetCursor(self->fd, self->crtc, cursor.handle, 64, 64));
	/* Async flips (same picture) date the span by their events. */
	seq0 = flip(self, self->a.id, DRM_MODE_PAGE_FLIP_ASYNC);
	ASSERT_NE(0, seq0);
	/* Each latched alone, at once (COMMIT_CURSOR), not at a vblank. */
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(0, drmModeMoveCursor(self->fd, self->crtc, 10 + i, 30));
	seq1 = flip(self, self->a.id, DRM_MODE_PAGE_FLIP_ASYNC);
	ASSERT_NE(0, seq1);
	EXPECT_GT(seq0 + 10, seq1) TH_LOG("20 cursor moves took %u vblanks", seq1 - seq0);
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd);
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&self->a, w, h, image, 29, 30),
					 &seen)) TH_LOG("head shows 0x%08x", seen);
	free(image);
}

static uint32_t primary_plane(int fd, uint32_t crtc_index)
{
	drmModePlaneRes *res = drmModeGetPlaneResources(fd);
	uint32_t id = 0;

	for (uint32_t i = 0; res && !id && i < res->count_planes; i++) {
		drmModePlane *plane = drmModeGetPlane(fd, res->planes[i]);
		drmModeObjectProperties *props;

		if (!plane)
			continue;
		props = drmModeObjectGetProperties(fd, plane->plane_id, DRM_MODE_OBJECT_PLANE);
		for (uint32_t j = 0; props && j < props->count_props; j++) {
			drmModePropertyRes *prop = drmModeGetProperty(fd, props->props[j]);

			if (prop && !strcmp(prop->name, "type") &&
			    props->prop_values[j] == DRM_PLANE_TYPE_PRIMARY &&
			    plane->possible_crtcs & (1u << crtc_index))
				id = plane->plane_id;
			drmModeFreeProperty(prop);
		}
		drmModeFreeObjectProperties(props);
		drmModeFreePlane(plane);
	}
	drmModeFreePlaneResources(res);
	return id;
}

/* 0, or -errno of an atomic TEST_ONLY commit of fb on plane. */
static int test_only_flip(int fd, uint32_t plane, uint32_t fb)
{
	uint32_t fb_prop = vmgpu_test_prop_id(fd, plane, DRM_MODE_OBJECT_PLANE, "FB_ID");
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	int ret;

	if (!req)
		return -ENOMEM;
	ret = drmModeAtomicAddProperty(req, plane, fb_prop, fb);
	if (ret >= 0)
		ret = drmModeAtomicCommit(fd, req, DRM_MODE_ATOMIC_TEST_ONLY, NULL) ? -errno : 0;
	drmModeAtomicFree(req);
	return ret;
}

TEST_F(kms, test_only_commits_refuse_non_primaries)
{
	uint32_t fb_id, plane;

	fb_id = non_primary_fb(self);
	ASSERT_NE(0, fb_id);
	ASSERT_EQ(0, set_crtc(self, self->a.id));
	ASSERT_EQ(0, drmSetClientCap(self->fd, DRM_CLIENT_CAP_ATOMIC, 1));
	plane = primary_plane(self->fd, self->crtc_index);
	ASSERT_NE(0, plane);
	/* TEST_ONLY runs no prepare_fb: the check itself must refuse it. */
	EXPECT_EQ(-EINVAL, test_only_flip(self->fd, plane, fb_id));
	/* The negative: the same test with a primary passes. */
	EXPECT_EQ(0, test_only_flip(self->fd, plane, self->b.id));
	drmModeRmFB(self->fd, fb_id);
}

TEST_F(kms, crtc_runs_without_its_primary)
{
	uint32_t w = self->mode.hdisplay, h = self->mode.vdisplay, seen, plane;
	struct vmgpu_test_fb cursor, black = { .pitch = w * 4 };
	uint32_t *image = malloc(64 * 64 * 4);

	black.map = calloc(w, h * 4);
	ASSERT_NE(NULL, black.map);
	ASSERT_EQ(0, vmgpu_test_dumb_fb(self->fd, 64, 64, DRM_FORMAT_ARGB8888, &cursor));
	for (int i = 0; i < 64 * 64; i++)
		image[i] = 0xff000000u | (i * 2654435761u & 0xffffff);
	for (int y = 0; y < 64; y++)
		memcpy(&cursor.map[y * (cursor.pitch / 4)], &image[y * 64], 64 * 4);
	ASSERT_EQ(0, set_crtc(self, self->a.id));
	ASSERT_EQ(0, drmModeSetCursor(self->fd, self->crtc, cursor.handle, 64, 64));
	ASSERT_EQ(0, drmModeMoveCursor(self->fd, self->crtc, 5, 6));
	plane = primary_plane(self->fd, self->crtc_index);
	ASSERT_NE(0, plane);
	/* The primary goes, the CRTC stays on: black under the cursor. */
	ASSERT_EQ(0, drmModeSetPlane(self->fd, plane, self->crtc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd) TH_LOG("the CRTC went off with its primary");
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, frame_crc(&black, w, h, image, 5, 6), &seen))
		TH_LOG("head shows 0x%08x", seen);
	/* And A is evictable again: nothing shows it. */
	for (int i = 0; i < 100 && evict(self->dev, self->a.handle) == -EBUSY; i++)
		usleep(10000);
	EXPECT_EQ(0, evict(self->dev, self->a.handle));
	free(black.map);
	free(image);
}

TEST_HARNESS_MAIN
