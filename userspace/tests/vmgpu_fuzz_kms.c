// SPDX-License-Identifier: MIT
/*
 * The uapi fuzzer's KMS operations on the primary node: dumb buffers,
 * ADDFB2/RMFB, SETCRTC, PAGE_FLIP with events and the cursor, valid and
 * random. One process is master; the others' mode setting is refused.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include <drm_fourcc.h>
#include <poll.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "vmgpu_fuzz.h"
#include "vmgpu_testlib.h"

static int kms_ret(int ret)
{
	return ret ? -errno : 0;
}

static uint32_t random_dumb(struct fuzz_thread *t)
{
	uint32_t h = t->dumbs[below(t, POOL)];

	return below(t, 8) == 0 || !h ? (uint32_t)below(t, 64) : h;
}

static uint32_t random_fb(struct fuzz_thread *t)
{
	uint32_t fb = t->fbs[below(t, POOL)];

	return below(t, 8) == 0 || !fb ? (uint32_t)below(t, 128) : fb;
}

void kms_drain_events(struct fuzz_thread *t)
{
	drmEventContext ev = { .version = 2 };
	struct pollfd p = { .fd = t->proc->card_fd, .events = POLLIN };

	while (poll(&p, 1, 0) == 1)
		drmHandleEvent(t->proc->card_fd, &ev);
}

void op_kms(struct fuzz_thread *t)
{
	static const uint32_t bpps[] = { 0, 8, 16, 24, 32, 33 };
	static const uint32_t formats[] = { DRM_FORMAT_XRGB8888, DRM_FORMAT_ARGB8888,
					    DRM_FORMAT_RGB565, DRM_FORMAT_NV12 };
	struct fuzz_proc *p = t->proc;
	unsigned int slot = below(t, POOL);
	int fd = p->card_fd;

	switch (below(t, 8)) {
	case 0: {
		/*
		 * The mode's size, a random one of at most 16 MiB, or one
		 * larger than all system memory may hold (refused): eight
		 * slots of near-limit buffers per thread would only measure
		 * the guest's RAM (the OOM killer), not the uapi.
		 */
		uint32_t kind = below(t, 8);
		struct drm_mode_create_dumb c = {
			.width = kind < 5 ? p->mode.hdisplay :
				 kind < 7 ? below(t, 2048) : 40000 + below(t, 20000),
			.height = kind < 5 ? p->mode.vdisplay :
				  kind < 7 ? below(t, 2048) : 40000 + below(t, 20000),
			.bpp = below(t, 4) ? 32 : bpps[below(t, 6)],
		};
		struct drm_mode_destroy_dumb d = { .handle = t->dumbs[slot] };

		if (expect(t, "CREATE_DUMB", kms_ret(drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB,
							       &c)), 1))
			return;
		if (d.handle)
			expect(t, "DESTROY_DUMB",
			       kms_ret(drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d)), 1);
		t->dumbs[slot] = c.handle;
		return;
	}
	case 1: {
		struct drm_mode_map_dumb m = { .handle = random_dumb(t) };
		uint32_t *cpu;

		if (expect(t, "MAP_DUMB", kms_ret(drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m)), 1))
			return;
		cpu = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, m.offset);
		if (cpu != MAP_FAILED) {
			cpu[below(t, 1024)] = (uint32_t)rnd(t);
			munmap(cpu, 4096);
		}
		return;
	}
	case 2: {
		struct drm_mode_destroy_dumb d = { .handle = random_dumb(t) };

		if (!expect(t, "DESTROY_DUMB", kms_ret(drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB,
								 &d)), 1) &&
		    d.handle == t->dumbs[slot])
			t->dumbs[slot] = 0;
		return;
	}
	case 3: {
		uint32_t w = below(t, 4) ? p->mode.hdisplay : below(t, 3000);
		uint32_t h = below(t, 4) ? p->mode.vdisplay : below(t, 3000);
		uint32_t handles[4] = { random_dumb(t) }, offsets[4] = { 0 };
		uint32_t pitches[4] = { below(t, 4) ? (w * 4 + 63) & ~63u : (uint32_t)below(t, 20000) };
		uint32_t id;

		if (!expect(t, "ADDFB2", kms_ret(drmModeAddFB2(fd, w, h, formats[below(t, 4)],
							       handles, pitches, offsets, &id, 0)),
			    1)) {
			if (t->fbs[slot])
				expect(t, "RMFB", kms_ret(drmModeRmFB(fd, t->fbs[slot])), 1);
			t->fbs[slot] = id;
		}
		return;
	}
	case 4: {
		uint32_t fb = random_fb(t);

		if (!expect(t, "RMFB", kms_ret(drmModeRmFB(fd, fb)), 1) && fb == t->fbs[slot])
			t->fbs[slot] = 0;
		return;
	}
	case 5: {
		drmModeModeInfo mode = p->mode;

		if (below(t, 8) == 0)
			mode.clock = (uint32_t)rnd(t);
		expect(t, "SETCRTC",
		       kms_ret(drmModeSetCrtc(fd, p->crtc, below(t, 8) ? random_fb(t) : 0,
					      below(t, 4), below(t, 4), &p->connector, 1, &mode)),
		       1);
		return;
	}
	case 6:
		expect(t, "PAGE_FLIP",
		       kms_ret(drmModePageFlip(fd, p->crtc, random_fb(t),
					       below(t, 2) ? DRM_MODE_PAGE_FLIP_EVENT : 0, NULL)),
		       1);
		kms_drain_events(t);
		return;
	default:
		if (below(t, 2))
			expect(t, "CURSOR", kms_ret(drmModeSetCursor(fd, p->crtc, random_dumb(t),
								      below(t, 4) ? 64 : below(t, 100),
								      64)), 1);
		else
			expect(t, "CURSOR_MOVE",
			       kms_ret(drmModeMoveCursor(fd, p->crtc, (int)below(t, 2000) - 100,
							 (int)below(t, 2000) - 100)), 1);
	}
}

/* The primary node and the first CRTC, connector and mode. */
int kms_setup(struct fuzz_proc *p)
{
	drmModeRes *res;
	drmModeConnector *conn;

	p->card_fd = vmgpu_open_card("vmgpu");
	if (p->card_fd < 0)
		return -1;
	res = drmModeGetResources(p->card_fd);
	if (!res || !res->count_crtcs || !res->count_connectors)
		return -1;
	p->crtc = res->crtcs[0];
	p->connector = res->connectors[0];
	drmModeFreeResources(res);
	conn = drmModeGetConnector(p->card_fd, p->connector);
	if (!conn)
		return -1;
	/*
	 * The last mode is the smallest: cheap frames. A process that is not
	 * master sees modes only once the master probed: it gets VGA's, and
	 * its mode setting is refused anyway (EACCES).
	 */
	if (conn->count_modes)
		p->mode = conn->modes[conn->count_modes - 1];
	else
		p->mode = (drmModeModeInfo){ .clock = 25175, .hdisplay = 640,
			.hsync_start = 656, .hsync_end = 752, .htotal = 800, .vdisplay = 480,
			.vsync_start = 490, .vsync_end = 492, .vtotal = 525, .vrefresh = 60,
			.name = "640x480" };
	drmModeFreeConnector(conn);
	return 0;
}
