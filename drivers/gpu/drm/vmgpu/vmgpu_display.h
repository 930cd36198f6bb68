/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_DISPLAY_H_
#define _VMGPU_DISPLAY_H_

#include "vmgpu_device.h"

/* The largest mode a head takes, either way. */
#define VMGPU_MAX_MODE		8192

static inline struct vmgpu_head *crtc_to_head(struct drm_crtc *crtc)
{
	return container_of(crtc, struct vmgpu_head, crtc);
}

static inline struct vmgpu_plane_state *to_vmgpu_plane_state(struct drm_plane_state *state)
{
	return container_of(state, struct vmgpu_plane_state, base);
}

/*
 * A head's pending registers keep what was last written, and a reset
 * clears them (contract, *Display controller*), as it clears @shadow: a
 * write that would change nothing is skipped, since a flip mostly changes
 * FB_ADDR alone. One path at a time writes a register: its plane's, or
 * CTRL under &vmgpu_display.lock. Only probe resets the device: a reset
 * or resume path would have to clear @shadow and rewrite the event mask.
 */
static inline void vmgpu_head_write(struct vmgpu_head *head, u32 reg, u32 val)
{
	if (head->shadow[reg / 4] == val)
		return;
	head->shadow[reg / 4] = val;
	vmgpu_write32(head->vdev, VMGPU_REG_HEAD(head->index) + reg, val);
}

/* COMMIT is a command, not a register: never skipped. */
static inline void vmgpu_head_commit_write(struct vmgpu_head *head, u32 when)
{
	vmgpu_write32(head->vdev, VMGPU_REG_HEAD(head->index) + VMGPU_HEAD_COMMIT, when);
}

/* @latched: ENABLE and PRIMARY_OFF bits; CRC follows the CRC source. */
static inline u32 vmgpu_head_ctrl(struct vmgpu_head *head, u32 latched)
{
	return latched | (READ_ONCE(head->crc) ? VMGPU_HEAD_CTRL_CRC : 0);
}

static inline u32 vmgpu_head_read(struct vmgpu_head *head, u32 reg)
{
	return vmgpu_read32(head->vdev, VMGPU_REG_HEAD(head->index) + reg);
}

int vmgpu_connector_init(struct vmgpu_head *head);
int vmgpu_crtc_verify_crc_source(struct drm_crtc *crtc, const char *source,
				 size_t *values_cnt);
const char *const *vmgpu_crtc_get_crc_sources(struct drm_crtc *crtc, size_t *count);
int vmgpu_crtc_set_crc_source(struct drm_crtc *crtc, const char *source);
void vmgpu_head_crc_vblank(struct vmgpu_head *head);
int vmgpu_display_init(struct vmgpu_device *vdev);
void vmgpu_display_unplug(struct vmgpu_device *vdev);
int vmgpu_planes_init(struct vmgpu_device *vdev, struct vmgpu_head *head);
bool vmgpu_plane_shows(struct drm_plane_state *state);

#endif
