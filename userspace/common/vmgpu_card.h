/* SPDX-License-Identifier: MIT */
#ifndef VMGPU_CARD_H
#define VMGPU_CARD_H

#include <stdint.h>

#include <xf86drmMode.h>

/*
 * Open the primary node of the first DRM device whose driver is called
 * driver ("vmgpu", "bochs-drm", "virtio_gpu"): its fd, or -errno
 * (-ENODEV if there is none).
 */
int vmgpu_open_card(const char *driver);

/* A display head: a CRTC, the connector it drives and the mode to set. */
struct vmgpu_card_head {
	uint32_t crtc;
	uint32_t connector;
	drmModeModeInfo mode;
};

/*
 * Head 0 of card fd: the first CRTC and connector, with every cursor
 * turned off first (a legacy cursor outlives the client that set it, so a
 * display server starts from none), and the connector's smallest mode, or
 * its first width x height mode when width is not 0. 0, or -errno:
 * -ENOLINK if the connector is not connected, -ENOENT if no mode fits.
 */
int vmgpu_card_head0(int fd, uint32_t width, uint32_t height, struct vmgpu_card_head *head);

#endif
