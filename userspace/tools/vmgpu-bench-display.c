// SPDX-License-Identifier: MIT
/*
 * vmgpu-bench-display: vmgpu's display against QEMU's bochs-display
 * (driver bochs-drm) and virtio-gpu-pci (driver virtio_gpu) in the same
 * guest, through nothing but the generic KMS uapi, so that each driver
 * runs the same code:
 *  - dumb buffer cycles: create, map, fill with the CPU, addfb, rmfb,
 *    destroy, of one full-screen XRGB8888 buffer, per second;
 *  - full-screen page flips per second between two framebuffers with
 *    vsync off (DRM_MODE_PAGE_FLIP_ASYNC where the driver offers it, a
 *    plain flip where it does not) and with vsync on (a plain flip with
 *    an event, waited for before the next one).
 * make bench boots the guest with the three devices (scripts/run-guest.sh)
 * and prints the ratios this program measures in one run: each figure is
 * the median of ROUNDS samples, the displays taking turns, so that a slow
 * moment of the host does not land on one of them alone.
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "vmgpu_card.h"

#define SECONDS		1.0
#define ROUNDS		3
#define WIDTH		1024
#define HEIGHT		768

enum { DUMB_CYCLES, FLIPS_VSYNC_OFF, FLIPS_VSYNC_ON, NUM_FIGURES };

static const char *const figure_names[NUM_FIGURES] = {
	"dumb_cycles", "flips_vsync_off", "flips_vsync_on",
};

static const struct display {
	const char *label, *driver;
} displays[] = {
	{ "vmgpu", "vmgpu" },
	{ "bochs", "bochs-drm" },
	{ "virtio_gpu", "virtio_gpu" },
};

#define NUM_DISPLAYS (sizeof(displays) / sizeof(displays[0]))

struct dumb {
	uint32_t handle, pitch, fb;
	uint64_t size;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void destroy_dumb(int fd, struct dumb *d)
{
	struct drm_mode_destroy_dumb destroy = { .handle = d->handle };

	if (d->fb)
		drmModeRmFB(fd, d->fb);
	drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
}

/* A w x h XRGB8888 dumb buffer filled with byte through a CPU mapping, as a framebuffer. */
static int create_dumb(int fd, uint32_t w, uint32_t h, uint8_t byte, struct dumb *d)
{
	struct drm_mode_create_dumb create = { .width = w, .height = h, .bpp = 32 };
	struct drm_mode_map_dumb map = { 0 };
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	void *ptr;
	int ret = 0;

	if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &create))
		return -errno;
	*d = (struct dumb){ .handle = create.handle, .pitch = create.pitch,
			    .size = create.size };
	map.handle = d->handle;
	if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map)) {
		ret = -errno;
		goto err;
	}
	ptr = mmap(NULL, d->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, map.offset);
	if (ptr == MAP_FAILED) {
		ret = -errno;
		goto err;
	}
	memset(ptr, byte, (size_t)d->pitch * h);
	munmap(ptr, d->size);
	handles[0] = d->handle;
	pitches[0] = d->pitch;
	if (drmModeAddFB2(fd, w, h, DRM_FORMAT_XRGB8888, handles, pitches, offsets, &d->fb, 0)) {
		ret = -errno;
		goto err;
	}
	return 0;
err:
	destroy_dumb(fd, d);
	*d = (struct dumb){ 0 };
	return ret;
}

static double dumb_cycles_per_second(int fd, uint32_t w, uint32_t h, int *err)
{
	double start = now(), t;
	unsigned int n = 0;

	do {
		struct dumb d;

		*err = create_dumb(fd, w, h, 0x40 + (n & 0x3f), &d);
		if (*err)
			return 0;
		destroy_dumb(fd, &d);
		n++;
		t = now();
	} while (t - start < SECONDS);
	return n / (t - start);
}

static int wait_flip(int fd)
{
	drmEventContext ev = { .version = 2 };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, 1000);

	if (ret < 0)
		return -errno;
	if (!ret)
		return -ETIMEDOUT;
	return drmHandleEvent(fd, &ev) ? -EIO : 0;
}

/* Flip between fb[0] and fb[1] for SECONDS, each flip's event waited for. */
static double flips_per_second(int fd, uint32_t crtc, const uint32_t fb[2], uint32_t flags,
			       int *err)
{
	unsigned int n = 0;
	double start, t;

	/* The first flip is not timed: after a modeset it waits for the head to start. */
	start = now();
	do {
		if (drmModePageFlip(fd, crtc, fb[(n + 1) & 1], flags | DRM_MODE_PAGE_FLIP_EVENT,
				    NULL)) {
			*err = -errno;
			return 0;
		}
		*err = wait_flip(fd);
		if (*err)
			return 0;
		if (!n++)
			start = now();
		t = now();
	} while (n < 2 || t - start < SECONDS);
	return (n - 1) / (t - start);
}

struct card {
	const struct display *disp;
	int fd;
	struct vmgpu_card_head head;
	struct dumb fb[2];
	bool async;
	double samples[NUM_FIGURES][ROUNDS];
	double figures[NUM_FIGURES];
};

/* A display shown at WIDTH x HEIGHT (or its smallest mode), or -errno. */
static int card_setup(struct card *c)
{
	uint64_t async = 0;
	const char *what;
	int err;

	c->fd = vmgpu_open_card(c->disp->driver);
	if (c->fd < 0) {
		printf("bench: display_%s skipped (no %s card: %s)\n", c->disp->label,
		       c->disp->driver, strerror(-c->fd));
		return c->fd;
	}
	what = "head 0";
	err = vmgpu_card_head0(c->fd, WIDTH, HEIGHT, &c->head);
	if (err == -ENOENT)
		err = vmgpu_card_head0(c->fd, 0, 0, &c->head);
	if (!err) {
		what = "framebuffers";
		err = create_dumb(c->fd, c->head.mode.hdisplay, c->head.mode.vdisplay, 0x20,
				  &c->fb[0]);
	}
	if (!err)
		err = create_dumb(c->fd, c->head.mode.hdisplay, c->head.mode.vdisplay, 0xc0,
				  &c->fb[1]);
	if (!err) {
		what = "modeset";
		if (drmModeSetCrtc(c->fd, c->head.crtc, c->fb[0].fb, 0, 0, &c->head.connector, 1,
				   &c->head.mode))
			err = -errno;
	}
	if (err) {
		printf("bench: display_%s error %s: %s\n", c->disp->label, what, strerror(-err));
		return err;
	}
	drmGetCap(c->fd, DRM_CAP_ASYNC_PAGE_FLIP, &async);
	c->async = async;
	return 0;
}

static void card_teardown(struct card *c)
{
	if (c->fd < 0)
		return;
	if (c->fb[0].handle)
		destroy_dumb(c->fd, &c->fb[0]);
	if (c->fb[1].handle)
		destroy_dumb(c->fd, &c->fb[1]);
	close(c->fd);
	c->fd = -1;
}

/* One sample of one figure; a failure says why and takes the card out. */
static void sample(struct card *c, int figure, int round)
{
	const uint32_t fb[2] = { c->fb[0].fb, c->fb[1].fb };
	uint32_t w = c->head.mode.hdisplay, h = c->head.mode.vdisplay;
	double *v = &c->samples[figure][round];
	int err = 0;

	switch (figure) {
	case DUMB_CYCLES:
		*v = dumb_cycles_per_second(c->fd, w, h, &err);
		break;
	case FLIPS_VSYNC_OFF:
		*v = flips_per_second(c->fd, c->head.crtc, fb,
				      c->async ? DRM_MODE_PAGE_FLIP_ASYNC : 0, &err);
		break;
	case FLIPS_VSYNC_ON:
		*v = flips_per_second(c->fd, c->head.crtc, fb, 0, &err);
		break;
	}
	if (err) {
		printf("bench: display_%s error %s: %s\n", c->disp->label, figure_names[figure],
		       strerror(-err));
		card_teardown(c);
	}
}

static double median(double *v)
{
	double t;
	int i, j;

	for (i = 1; i < ROUNDS; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[ROUNDS / 2];
}

int main(void)
{
	struct card cards[NUM_DISPLAYS];
	unsigned int i, f, r;

	for (i = 0; i < NUM_DISPLAYS; i++) {
		cards[i] = (struct card){ .disp = &displays[i] };
		if (card_setup(&cards[i]))
			card_teardown(&cards[i]);
	}
	for (f = 0; f < NUM_FIGURES; f++)
		for (r = 0; r < ROUNDS; r++)
			for (i = 0; i < NUM_DISPLAYS; i++)
				if (cards[i].fd >= 0)
					sample(&cards[i], f, r);

	for (i = 0; i < NUM_DISPLAYS; i++) {
		struct card *c = &cards[i];

		if (c->fd < 0)
			continue;
		for (f = 0; f < NUM_FIGURES; f++)
			c->figures[f] = median(c->samples[f]);
		printf("bench: display_%s %ux%u@%uHz dumb_cycles %.1f/s flips_vsync_off %.1f/s (%s) flips_vsync_on %.1f/s\n",
		       c->disp->label, c->head.mode.hdisplay, c->head.mode.vdisplay,
		       c->head.mode.vrefresh, c->figures[DUMB_CYCLES], c->figures[FLIPS_VSYNC_OFF],
		       c->async ? "async flips" : "no async flips: plain flips",
		       c->figures[FLIPS_VSYNC_ON]);
	}
	if (cards[0].fd >= 0)
		printf("ratio: display_vmgpu_flips_vsync_on_vs_refresh %.3f\n",
		       cards[0].figures[FLIPS_VSYNC_ON] / cards[0].head.mode.vrefresh);
	for (i = 1; i < NUM_DISPLAYS; i++)
		for (f = 0; f < NUM_FIGURES; f++)
			if (cards[0].fd >= 0 && cards[i].fd >= 0)
				printf("ratio: display_%s_vmgpu_vs_%s %.3f\n", figure_names[f],
				       displays[i].label,
				       cards[0].figures[f] / cards[i].figures[f]);
	for (i = 0; i < NUM_DISPLAYS; i++)
		card_teardown(&cards[i]);
	return 0;
}
