/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_DISPLAY_TYPES_H_
#define _VMGPU_DISPLAY_TYPES_H_

#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include <drm/drm_connector.h>
#include <drm/drm_crtc.h>
#include <drm/drm_encoder.h>
#include <drm/drm_plane.h>

#include "hw/vmgpu_hw.h"

struct vmgpu_device;

/**
 * struct vmgpu_plane_state - a plane's state with its source's physical
 * reference, found when its framebuffer was pinned (prepare_fb)
 */
struct vmgpu_plane_state {
	/** @base: DRM's plane state. */
	struct drm_plane_state base;
	/** @space: VMGPU_SPACE_VRAM or VMGPU_SPACE_GART. */
	u32 space;
	/** @addr: device address of the framebuffer's first byte. */
	u64 addr;
	/**
	 * @pinned: prepare_fb pinned the framebuffer (only a visible plane's
	 * is: a plane of a CRTC that is off shows nothing).
	 */
	bool pinned;
	/**
	 * @contents: a primary's last paging operation (clear or move), not
	 * finished when the framebuffer was pinned; the commit waits for it,
	 * and the head shows no primary if it failed (vmgpu_plane_shows()).
	 */
	struct dma_fence *contents;
};

/**
 * struct vmgpu_head - one scanout head of the display controller: a CRTC
 * with its primary and cursor planes, an encoder and a connector
 */
struct vmgpu_head {
	/** @vdev: the device. */
	struct vmgpu_device *vdev;
	/** @index: the head's number in the device. */
	u32 index;
	/** @crtc: DRM's CRTC. */
	struct drm_crtc crtc;
	/** @primary: the primary plane. */
	struct drm_plane primary;
	/** @cursor: the 64x64 cursor plane. */
	struct drm_plane cursor;
	/** @encoder: a virtual encoder. */
	struct drm_encoder encoder;
	/** @connector: the head's connector, EDID from the device. */
	struct drm_connector connector;
	/**
	 * @event: the flip event sent when the device reports FLIP_DONE.
	 * Under &drm_device.event_lock.
	 */
	struct drm_pending_vblank_event *event;
	/**
	 * @event_at_vblank: @event waits for the first vblank of a head
	 * just turned on (its COMMIT latched at once). Under
	 * &drm_device.event_lock.
	 */
	bool event_at_vblank;
	/**
	 * @crc: frame CRCs are on (debugfs crtc-N/crc); written under
	 * &vmgpu_display.lock, read under it or once (vmgpu_head_ctrl()).
	 */
	bool crc;
	/**
	 * @crc_frame: the device's CRC_FRAME last reported, or found stale
	 * when capture began or the head went on; under &vmgpu_display.lock.
	 */
	u32 crc_frame;
	/** @crc_vblank: CRC capture holds a vblank reference. */
	bool crc_vblank;
	/**
	 * @shadow: the pending registers as last written, by offset / 4
	 * (vmgpu_head_write()).
	 */
	u32 shadow[VMGPU_HEAD_BANK_SIZE / 4];
};

/**
 * struct vmgpu_display - the display controller
 */
struct vmgpu_display {
	/** @heads: the heads, @num_heads of them. */
	struct vmgpu_head heads[VMGPU_MAX_HEADS];
	/** @num_heads: VMGPU_REG_DISPLAY_HEADS. */
	u32 num_heads;
	/** @lock: protects @event_mask and the register writes of a COMMIT. */
	spinlock_t lock;
	/** @event_mask: VMGPU_REG_DISPLAY_EVENT_MASK as written. */
	u32 event_mask;
	/** @hotplug_work: tells userspace a connector changed. */
	struct work_struct hotplug_work;
};

#endif
