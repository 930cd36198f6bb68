// SPDX-License-Identifier: MIT
/*
 * vmgpu-display-demo: the segment table vmgpu-info prints, as a picture
 * the GPU draws. A few allocations fill the segments; a primary allocation
 * becomes a framebuffer; user jobs on the GPU-VA engine draw a bar per
 * segment (its occupancy) and its label into it with FILL commands; a
 * page flip shows it on head 0. Under make run, the host agent then saves
 * a PNG screenshot of the head (scripts/vmgpu_host_agent.py).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "libvmgpu.h"
#include "vmgpu_card.h"
#include "vmgpu_host.h"

#define FB_VA		(1ull << 32)
#define SCALE		3		/* font pixels are SCALE x SCALE */
#define BAR_HEIGHT	36
#define MAX_FILLERS	8

/* 5x7 glyphs, one byte per row, bit 4 leftmost. */
static const struct glyph {
	char c;
	unsigned char rows[7];
} font[] = {
	{ '0', { 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e } },
	{ '1', { 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e } },
	{ '2', { 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f } },
	{ '3', { 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e } },
	{ '4', { 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02 } },
	{ '5', { 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e } },
	{ '6', { 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e } },
	{ '7', { 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 } },
	{ '8', { 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e } },
	{ '9', { 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c } },
	{ 'A', { 0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11 } },
	{ 'B', { 0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e } },
	{ 'C', { 0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e } },
	{ 'D', { 0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c } },
	{ 'E', { 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f } },
	{ 'F', { 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10 } },
	{ 'G', { 0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f } },
	{ 'H', { 0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11 } },
	{ 'I', { 0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e } },
	{ 'J', { 0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c } },
	{ 'K', { 0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11 } },
	{ 'L', { 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f } },
	{ 'M', { 0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11 } },
	{ 'N', { 0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11 } },
	{ 'O', { 0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e } },
	{ 'P', { 0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10 } },
	{ 'R', { 0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11 } },
	{ 'S', { 0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e } },
	{ 'T', { 0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04 } },
	{ 'U', { 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e } },
	{ 'V', { 0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04 } },
	{ 'W', { 0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a } },
	{ 'Y', { 0x11, 0x11, 0x11, 0x0a, 0x04, 0x04, 0x04 } },
	{ '/', { 0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10 } },
	{ '%', { 0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03 } },
	{ '.', { 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c } },
	{ '-', { 0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00 } },
	{ ',', { 0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08 } },
};

/* Commands for the GPU, submitted a job at a time. */
struct painter {
	vmgpu_context *ctx;
	uint32_t pitch, width, height;
	union vmgpu_cmd cmds[DRM_VMGPU_EXEC_MAX_CMDS];
	uint32_t num_cmds, jobs, fills;
	uint32_t syncobj;
};

static void fail(const char *what, int ret)
{
	fprintf(stderr, "vmgpu-display-demo: %s: %s\n", what, strerror(-ret));
	exit(1);
}

static void flush(struct painter *p)
{
	struct vmgpu_sync out = { .syncobj = p->syncobj };
	int ret;

	if (!p->num_cmds)
		return;
	/* Jobs of one context run in order: the last one's fence is enough. */
	ret = vmgpu_context_submit(p->ctx, p->cmds, p->num_cmds, NULL, 0, &out, 1, NULL);
	if (ret)
		fail("submit", ret);
	p->jobs++;
	p->num_cmds = 0;
}

/* One FILL per line of the rectangle, clipped to the framebuffer. */
static void rect(struct painter *p, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
		 uint32_t xrgb)
{
	if (x >= p->width || y >= p->height)
		return;
	w = x + w > p->width ? p->width - x : w;
	h = y + h > p->height ? p->height - y : h;
	for (uint32_t row = y; w && row < y + h; row++) {
		union vmgpu_cmd *c = &p->cmds[p->num_cmds++];

		memset(c, 0, sizeof(*c));
		c->fill.hdr.opcode = VMGPU_OP_FILL;
		c->fill.dst.addr = FB_VA + (uint64_t)row * p->pitch + x * 4;
		c->fill.dst.space = VMGPU_SPACE_VIRTUAL;
		c->fill.size = w * 4;
		c->fill.pattern = xrgb;
		p->fills++;
		if (p->num_cmds == DRM_VMGPU_EXEC_MAX_CMDS)
			flush(p);
	}
}

/* Text in the 5x7 font, runs of lit pixels as one rectangle each. */
static void text(struct painter *p, uint32_t x, uint32_t y, const char *s, uint32_t xrgb)
{
	for (; *s; s++, x += 6 * SCALE) {
		const struct glyph *g = NULL;

		for (size_t i = 0; i < sizeof(font) / sizeof(font[0]); i++)
			if (font[i].c == *s)
				g = &font[i];
		for (int row = 0; g && row < 7; row++) {
			for (int col = 0; col < 5;) {
				int run = 0;

				while (col + run < 5 && g->rows[row] & (0x10 >> (col + run)))
					run++;
				if (run)
					rect(p, x + col * SCALE, y + row * SCALE, run * SCALE, SCALE,
					     xrgb);
				col += run ? run : 1;
			}
		}
	}
}

static uint32_t kind_color(uint32_t kind)
{
	switch (kind) {
	case DRM_VMGPU_SEGMENT_MEMORY:
		return 0x3cb371;
	case DRM_VMGPU_SEGMENT_APERTURE:
		return 0xf0a030;
	}
	return 0x5a8fd8;
}

static void draw_segments(struct painter *p, const struct drm_vmgpu_query_segments *s)
{
	uint32_t margin = 40, bar_w = p->width - 2 * margin, y = 32;
	char line[96];

	rect(p, 0, 0, p->width, p->height, 0x101820);
	text(p, margin, y, "VMGPU SEGMENTS, DRAWN BY GPU JOBS", 0xffffff);
	y += 7 * SCALE + 28;
	for (uint32_t i = 0; i < s->num_segments && y + BAR_HEIGHT < p->height; i++) {
		const struct drm_vmgpu_segment *seg = &s->segments[i];
		uint64_t used = seg->used > seg->size ? seg->size : seg->used;
		uint32_t fill = seg->size ? (uint32_t)(used * (bar_w - 4) / seg->size) : 0;
		const char *kind = vmgpu_segment_kind_name(seg->kind);

		snprintf(line, sizeof(line), "%u %s", seg->id, kind);
		for (char *c = line; *c; c++)
			*c = *c >= 'a' && *c <= 'z' ? *c - 32 : *c;
		text(p, margin, y, line, kind_color(seg->kind));
		snprintf(line, sizeof(line), "%llu/%llu MIB USED",
			 (unsigned long long)(seg->used >> 20), (unsigned long long)(seg->size >> 20));
		text(p, margin + bar_w - strlen(line) * 6 * SCALE, y, line, 0xd0d0d0);
		y += 7 * SCALE + 8;
		rect(p, margin, y, bar_w, BAR_HEIGHT, 0x606870);
		rect(p, margin + 2, y + 2, bar_w - 4, BAR_HEIGHT - 4, 0x202830);
		/* At least a sliver for a segment in use, however big it is. */
		if (used && fill < 2)
			fill = 2;
		rect(p, margin + 2, y + 2, fill, BAR_HEIGHT - 4, kind_color(seg->kind));
		y += BAR_HEIGHT + 24;
	}
	flush(p);
}

static void wait_flip(int fd)
{
	drmEventContext ev = { .version = 2 };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, 5000) != 1)
		fail("flip event", -ETIMEDOUT);
	drmHandleEvent(fd, &ev);
}

int main(void)
{
	struct vmgpu_bo_create_info fb_info = { .flags = DRM_VMGPU_ALLOC_PRIMARY };
	struct drm_vmgpu_query_segments *s;
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	struct painter p = { 0 };
	drmModeConnector *conn;
	drmModeRes *res;
	vmgpu_bo *fb_bo, *black_bo, *fill[MAX_FILLERS] = { NULL };
	vmgpu_device *dev;
	uint32_t fb, black, crtc, connector, aperture, i;
	drmModeModeInfo mode;
	int fd, ret;

	fd = vmgpu_open_card("vmgpu");
	if (fd < 0)
		fail("no vmgpu card", fd);
	ret = vmgpu_device_create(fd, &dev);
	if (ret)
		fail("device", ret);
	res = drmModeGetResources(fd);
	if (!res || !res->count_crtcs || !res->count_connectors)
		fail("no CRTC", -ENODEV);
	crtc = res->crtcs[0];
	connector = res->connectors[0];
	drmModeFreeResources(res);
	conn = drmModeGetConnector(fd, connector);
	if (!conn || !conn->count_modes)
		fail("no mode", -ENODEV);
	mode = conn->modes[0];
	for (i = 0; i < (uint32_t)conn->count_modes; i++)
		if (conn->modes[i].type & DRM_MODE_TYPE_PREFERRED)
			mode = conn->modes[i];
	drmModeFreeConnector(conn);

	/*
	 * Something in each segment, so that the bars show it: a sixth of
	 * each memory segment, 8 MiB AccessedPhysically in the aperture
	 * segment, 16 MiB of cached staging in system memory.
	 */
	ret = vmgpu_query_segments(dev, &s);
	if (ret)
		fail("query", ret);
	aperture = vmgpu_aperture_segment_id(s);
	for (i = 0; i <= aperture && i < s->num_segments && i < MAX_FILLERS; i++) {
		struct vmgpu_bo_create_info info = {
			.size = (s->segments[i].size / 6) & ~((1ull << 21) - 1),
			.segments = 1u << i, .preferred_segment = i,
		};

		if (i == aperture) {
			info.size = 8 << 20;
			info.flags = DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY;
		} else if (!i) {
			info.size = 16 << 20;
			info.flags = DRM_VMGPU_ALLOC_CACHED;
			info.segments = 1u << aperture;
			info.preferred_segment = aperture;
		}
		ret = vmgpu_bo_create(dev, &info, &fill[i]);
		if (!ret)
			ret = vmgpu_bo_make_resident(fill[i]);
		if (ret)
			fail("allocation", ret);
	}
	free(s);

	/* The framebuffer: a primary, drawn through the GPU VA engine. */
	p.width = mode.hdisplay;
	p.height = mode.vdisplay;
	p.pitch = p.width * 4;
	fb_info.size = ((uint64_t)p.pitch * p.height + (2u << 20) - 1) & ~((2ull << 20) - 1);
	fb_info.segments = ~1u & ((1u << 8) - 1);
	fb_info.preferred_segment = 1;
	ret = vmgpu_query_segments(dev, &s);
	if (ret)
		fail("query", ret);
	fb_info.segments &= (1u << s->num_segments) - 1;
	free(s);
	ret = vmgpu_bo_create(dev, &fb_info, &fb_bo);
	if (!ret)
		ret = vmgpu_bo_create(dev, &fb_info, &black_bo);
	if (!ret)
		ret = vmgpu_vm_map(fb_bo, 0, FB_VA, fb_info.size, 0);
	if (!ret)
		ret = vmgpu_context_create(dev, DRM_VMGPU_ENGINE_GPU_VA0, &p.ctx);
	if (ret)
		fail("framebuffer", ret);
	handles[0] = vmgpu_bo_handle(fb_bo);
	pitches[0] = p.pitch;
	if (drmModeAddFB2(fd, p.width, p.height, DRM_FORMAT_XRGB8888, handles, pitches, offsets,
			  &fb, 0))
		fail("addfb", -errno);
	/* A black screen first (a new allocation is clear), then the flip. */
	handles[0] = vmgpu_bo_handle(black_bo);
	if (drmModeAddFB2(fd, p.width, p.height, DRM_FORMAT_XRGB8888, handles, pitches, offsets,
			  &black, 0) ||
	    drmModeSetCrtc(fd, crtc, black, 0, 0, &connector, 1, &mode))
		fail("modeset", -errno);

	if (drmSyncobjCreate(fd, 0, &p.syncobj))
		fail("syncobj", -errno);
	ret = vmgpu_query_segments(dev, &s);
	if (ret)
		fail("query", ret);
	draw_segments(&p, s);
	free(s);
	/*
	 * GPU-VA jobs fence the file's VM, not the allocation: the flip would
	 * not wait for them (a compositor passes IN_FENCE_FD), so wait here.
	 */
	if (drmSyncobjWait(fd, &p.syncobj, 1, INT64_MAX, 0, NULL))
		fail("jobs", -errno);
	if (drmModePageFlip(fd, crtc, fb, DRM_MODE_PAGE_FLIP_EVENT, NULL))
		fail("flip", -errno);
	wait_flip(fd);
	printf("vmgpu-display-demo: %ux%u on head 0, drawn by %u GPU jobs of %u FILLs, flipped to\n",
	       p.width, p.height, p.jobs, p.fills);
	fflush(stdout);

	ret = vmgpu_host_ask("screenshot head=0", 20000);
	if (ret)
		printf("vmgpu-display-demo: no screenshot (%s)\n",
		       ret == -ETIMEDOUT ? "no host agent" : strerror(-ret));

	drmModeRmFB(fd, fb);
	drmModeRmFB(fd, black);
	vmgpu_context_unref(p.ctx);
	vmgpu_bo_unref(fb_bo);
	vmgpu_bo_unref(black_bo);
	for (i = 0; i < MAX_FILLERS; i++)
		if (fill[i])
			vmgpu_bo_unref(fill[i]);
	vmgpu_device_unref(dev);
	close(fd);
	return 0;
}
