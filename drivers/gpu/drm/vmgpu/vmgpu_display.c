// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/interrupt.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_drv.h>
#include <drm/drm_edid.h>
#include <drm/drm_fourcc.h>
#include <drm/drm_framebuffer.h>
#include <drm/drm_gem_atomic_helper.h>
#include <drm/drm_gem_framebuffer_helper.h>
#include <drm/drm_managed.h>
#include <drm/drm_modeset_helper_vtables.h>
#include <drm/drm_print.h>
#include <drm/drm_probe_helper.h>
#include <drm/drm_simple_kms_helper.h>
#include <drm/drm_vblank.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_display.h"
#include "vmgpu_drm.h"

/**
 * DOC: display
 *
 * KMS on the device's display controller (hardware contract, *Display
 * controller*): each head is a CRTC with a primary and a cursor plane, a
 * virtual encoder and a connector whose modes come from the head's EDID.
 *
 * Framebuffers are primary surfaces (seed: "Primary surfaces"): their
 * allocation must have been created PRIMARY, as dumb buffers are. The
 * display controller reads them by physical reference, so while a plane
 * shows one it is pinned contiguous in a memory segment; an allocation
 * that cannot be placed there is refused at the commit. A pinned
 * allocation is never evicted, and an Evict of it fails with -EBUSY.
 *
 * The device latches a head's registers at the vblank after a COMMIT; its
 * FLIP_DONE event completes the commit's flip event, and the old
 * framebuffer is unpinned only after that vblank (the commit helpers wait
 * for it). Vblank interrupts are on only while DRM wants them. With CRCs
 * on (debugfs crtc-N/crc, source "auto") each vblank adds the CRC of the
 * frame the device composed.
 */

#define VMGPU_MAX_MODE		8192
/* The device refuses frames shorter than 1 ms. */
#define VMGPU_MAX_REFRESH_HZ	1000
/* The commit helpers give a vblank 100 ms before they complain. */
#define VMGPU_MIN_REFRESH_HZ	20

static const u32 vmgpu_primary_formats[] = {
	DRM_FORMAT_XRGB8888,
	DRM_FORMAT_ARGB8888,
	DRM_FORMAT_RGB565,
};

static const u32 vmgpu_cursor_formats[] = {
	DRM_FORMAT_ARGB8888,
};

static const char * const vmgpu_crc_sources[] = { "auto" };

static inline struct vmgpu_head *crtc_to_head(struct drm_crtc *crtc)
{
	return container_of(crtc, struct vmgpu_head, crtc);
}

static inline struct vmgpu_plane_state *to_vmgpu_plane_state(struct drm_plane_state *state)
{
	return container_of(state, struct vmgpu_plane_state, base);
}

static u32 vmgpu_head_reg(struct vmgpu_head *head, u32 reg)
{
	return VMGPU_REG_HEAD(head->index) + reg;
}

static void vmgpu_head_write(struct vmgpu_head *head, u32 reg, u32 val)
{
	vmgpu_write32(head->vdev, vmgpu_head_reg(head, reg), val);
}

static u32 vmgpu_head_read(struct vmgpu_head *head, u32 reg)
{
	return vmgpu_read32(head->vdev, vmgpu_head_reg(head, reg));
}

static void vmgpu_display_mask(struct vmgpu_device *vdev, u32 set, u32 clear)
{
	struct vmgpu_display *display = &vdev->display;
	unsigned long flags;

	spin_lock_irqsave(&display->lock, flags);
	display->event_mask = (display->event_mask & ~clear) | set;
	vmgpu_write32(vdev, VMGPU_REG_DISPLAY_EVENT_MASK, display->event_mask);
	spin_unlock_irqrestore(&display->lock, flags);
}

static u32 vmgpu_format(u32 fourcc)
{
	switch (fourcc) {
	case DRM_FORMAT_ARGB8888:
		return VMGPU_FORMAT_ARGB8888;
	case DRM_FORMAT_RGB565:
		return VMGPU_FORMAT_RGB565;
	}
	return VMGPU_FORMAT_XRGB8888;
}

/*
 * CTRL with the CRC bit as debugfs wants it; the caller COMMITs. The
 * display lock keeps a CRC switch from latching half a plane update.
 */
static void vmgpu_head_commit(struct vmgpu_head *head, bool enable, u32 when)
{
	struct vmgpu_display *display = &head->vdev->display;
	unsigned long flags;
	u32 ctrl = 0;

	if (enable)
		ctrl = VMGPU_HEAD_CTRL_ENABLE | (head->crc ? VMGPU_HEAD_CTRL_CRC : 0);
	spin_lock_irqsave(&display->lock, flags);
	vmgpu_head_write(head, VMGPU_HEAD_CTRL, ctrl);
	vmgpu_head_write(head, VMGPU_HEAD_COMMIT, when);
	spin_unlock_irqrestore(&display->lock, flags);
}

/* Planes */

static int vmgpu_primary_atomic_check(struct drm_plane *plane, struct drm_atomic_state *state)
{
	struct drm_plane_state *new = drm_atomic_get_new_plane_state(state, plane);
	struct drm_crtc_state *crtc_state = NULL;
	int ret;

	if (new->crtc)
		crtc_state = drm_atomic_get_new_crtc_state(state, new->crtc);
	ret = drm_atomic_helper_check_plane_state(new, crtc_state, DRM_PLANE_NO_SCALING,
						  DRM_PLANE_NO_SCALING, false, false);
	if (ret || !new->visible)
		return ret;
	/* The device reads whole 4-byte words from a 4-byte aligned start. */
	if (new->fb->pitches[0] % 4 || new->fb->offsets[0] % 4)
		return -EINVAL;
	return 0;
}

static int vmgpu_cursor_atomic_check(struct drm_plane *plane, struct drm_atomic_state *state)
{
	struct drm_plane_state *new = drm_atomic_get_new_plane_state(state, plane);
	struct drm_crtc_state *crtc_state = NULL;
	int ret;

	if (new->crtc)
		crtc_state = drm_atomic_get_new_crtc_state(state, new->crtc);
	ret = drm_atomic_helper_check_plane_state(new, crtc_state, DRM_PLANE_NO_SCALING,
						  DRM_PLANE_NO_SCALING, true, true);
	if (ret || !new->fb)
		return ret;
	if (new->fb->width != VMGPU_CURSOR_SIZE || new->fb->height != VMGPU_CURSOR_SIZE ||
	    new->fb->pitches[0] != VMGPU_CURSOR_SIZE * 4 || new->fb->offsets[0] % 4 ||
	    new->src_x || new->src_y ||
	    new->src_w != VMGPU_CURSOR_SIZE << 16 || new->src_h != VMGPU_CURSOR_SIZE << 16)
		return -EINVAL;
	return 0;
}

/* Only the memory segments of the allocation's set: contiguous there. */
static int vmgpu_display_pin(struct vmgpu_bo *vbo, u32 *space, u64 *addr)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct ttm_place places[ARRAY_SIZE(vbo->places)];
	struct ttm_placement placement = { .placement = places };
	u32 i;
	int ret;

	if (!(vbo->flags & DRM_VMGPU_ALLOC_PRIMARY))
		return -EINVAL;
	ret = ttm_bo_reserve(&vbo->tbo, true, false, NULL);
	if (ret)
		return ret;
	/* A Lock keeps it where the CPU has it (Lock2 rules). */
	if (vbo->locked_by || vbo->unswizzled) {
		ret = -EBUSY;
		goto unreserve;
	}
	for (i = 0; i < vbo->placement.num_placement; i++)
		if (vbo->places[i].mem_type >= VMGPU_TTM_FIRST_SEGMENT)
			places[placement.num_placement++] = vbo->places[i];
	ret = placement.num_placement ? ttm_bo_validate(&vbo->tbo, &placement, &ctx) :
	      -EINVAL;
	if (!ret)
		ret = vmgpu_bo_physical_address(vbo, space, addr);
	if (!ret)
		ttm_bo_pin(&vbo->tbo);
unreserve:
	ttm_bo_unreserve(&vbo->tbo);
	return ret;
}

static int vmgpu_plane_prepare_fb(struct drm_plane *plane, struct drm_plane_state *new)
{
	struct vmgpu_plane_state *vstate = to_vmgpu_plane_state(new);
	struct vmgpu_bo *vbo;
	int ret;

	if (!new->fb)
		return 0;
	vbo = gem_to_vmgpu_bo(new->fb->obj[0]);
	ret = vmgpu_display_pin(vbo, &vstate->space, &vstate->addr);
	if (ret) {
		drm_dbg_kms(plane->dev, "[PLANE:%d] cannot pin its framebuffer: %d\n",
			    plane->base.id, ret);
		return ret;
	}
	/* Moves and clears queued on it finish before the flip. */
	ret = drm_gem_plane_helper_prepare_fb(plane, new);
	if (ret) {
		ttm_bo_reserve(&vbo->tbo, false, false, NULL);
		ttm_bo_unpin(&vbo->tbo);
		ttm_bo_unreserve(&vbo->tbo);
	}
	return ret;
}

static void vmgpu_plane_cleanup_fb(struct drm_plane *plane, struct drm_plane_state *old)
{
	struct vmgpu_bo *vbo;

	if (!old->fb)
		return;
	vbo = gem_to_vmgpu_bo(old->fb->obj[0]);
	ttm_bo_reserve(&vbo->tbo, false, false, NULL);
	ttm_bo_unpin(&vbo->tbo);
	ttm_bo_unreserve(&vbo->tbo);
}

static void vmgpu_primary_atomic_update(struct drm_plane *plane, struct drm_atomic_state *state)
{
	struct drm_plane_state *new = drm_atomic_get_new_plane_state(state, plane);
	struct vmgpu_plane_state *vstate = to_vmgpu_plane_state(new);
	struct drm_framebuffer *fb = new->fb;
	struct vmgpu_head *head;
	u64 addr;
	int idx;

	if (!new->crtc || !fb || !new->visible)
		return;
	head = crtc_to_head(new->crtc);
	if (!drm_dev_enter(plane->dev, &idx))
		return;
	addr = vstate->addr + fb->offsets[0] + (u64)(new->src.y1 >> 16) * fb->pitches[0] +
	       (u64)(new->src.x1 >> 16) * fb->format->cpp[0];
	vmgpu_head_write(head, VMGPU_HEAD_FB_ADDR_LO, lower_32_bits(addr));
	vmgpu_head_write(head, VMGPU_HEAD_FB_ADDR_HI, upper_32_bits(addr));
	vmgpu_head_write(head, VMGPU_HEAD_FB_SPACE, vstate->space);
	vmgpu_head_write(head, VMGPU_HEAD_FB_STRIDE, fb->pitches[0]);
	vmgpu_head_write(head, VMGPU_HEAD_FB_FORMAT, vmgpu_format(fb->format->format));
	drm_dev_exit(idx);
}

static void vmgpu_cursor_atomic_update(struct drm_plane *plane, struct drm_atomic_state *state)
{
	struct drm_plane_state *old = drm_atomic_get_old_plane_state(state, plane);
	struct drm_plane_state *new = drm_atomic_get_new_plane_state(state, plane);
	struct vmgpu_plane_state *vstate = to_vmgpu_plane_state(new);
	struct drm_crtc *crtc = new->crtc ?: old->crtc;
	struct vmgpu_head *head;
	u64 addr;
	int idx;

	if (!crtc || !drm_dev_enter(plane->dev, &idx))
		return;
	head = crtc_to_head(crtc);
	if (!new->fb || !new->visible) {
		vmgpu_head_write(head, VMGPU_HEAD_CURSOR_CTRL, 0);
		drm_dev_exit(idx);
		return;
	}
	addr = vstate->addr + new->fb->offsets[0];
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_ADDR_LO, lower_32_bits(addr));
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_ADDR_HI, upper_32_bits(addr));
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_SPACE, vstate->space);
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_X, new->crtc_x);
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_Y, new->crtc_y);
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_HOT,
			 (u16)new->hotspot_x | (u32)(u16)new->hotspot_y << 16);
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_CTRL, 1);
	drm_dev_exit(idx);
}

static void vmgpu_cursor_atomic_disable(struct drm_plane *plane, struct drm_atomic_state *state)
{
	struct drm_plane_state *old = drm_atomic_get_old_plane_state(state, plane);
	int idx;

	if (!old->crtc || !drm_dev_enter(plane->dev, &idx))
		return;
	vmgpu_head_write(crtc_to_head(old->crtc), VMGPU_HEAD_CURSOR_CTRL, 0);
	drm_dev_exit(idx);
}

static const struct drm_plane_helper_funcs vmgpu_primary_helper_funcs = {
	.prepare_fb = vmgpu_plane_prepare_fb,
	.cleanup_fb = vmgpu_plane_cleanup_fb,
	.atomic_check = vmgpu_primary_atomic_check,
	.atomic_update = vmgpu_primary_atomic_update,
};

static const struct drm_plane_helper_funcs vmgpu_cursor_helper_funcs = {
	.prepare_fb = vmgpu_plane_prepare_fb,
	.cleanup_fb = vmgpu_plane_cleanup_fb,
	.atomic_check = vmgpu_cursor_atomic_check,
	.atomic_update = vmgpu_cursor_atomic_update,
	.atomic_disable = vmgpu_cursor_atomic_disable,
};

static struct drm_plane_state *vmgpu_plane_duplicate_state(struct drm_plane *plane)
{
	struct vmgpu_plane_state *vstate, *old = to_vmgpu_plane_state(plane->state);

	vstate = kmemdup(old, sizeof(*vstate), GFP_KERNEL);
	if (!vstate)
		return NULL;
	__drm_atomic_helper_plane_duplicate_state(plane, &vstate->base);
	return &vstate->base;
}

static void vmgpu_plane_destroy_state(struct drm_plane *plane, struct drm_plane_state *state)
{
	__drm_atomic_helper_plane_destroy_state(state);
	kfree(to_vmgpu_plane_state(state));
}

static void vmgpu_plane_reset(struct drm_plane *plane)
{
	struct vmgpu_plane_state *vstate;

	if (plane->state)
		vmgpu_plane_destroy_state(plane, plane->state);
	vstate = kzalloc(sizeof(*vstate), GFP_KERNEL);
	if (vstate)
		__drm_atomic_helper_plane_reset(plane, &vstate->base);
	else
		plane->state = NULL;
}

static const struct drm_plane_funcs vmgpu_plane_funcs = {
	.update_plane = drm_atomic_helper_update_plane,
	.disable_plane = drm_atomic_helper_disable_plane,
	.destroy = drm_plane_cleanup,
	.reset = vmgpu_plane_reset,
	.atomic_duplicate_state = vmgpu_plane_duplicate_state,
	.atomic_destroy_state = vmgpu_plane_destroy_state,
};

/* CRTC */

static enum drm_mode_status vmgpu_crtc_mode_valid(struct drm_crtc *crtc,
						  const struct drm_display_mode *mode)
{
	if (mode->hdisplay > VMGPU_MAX_MODE || mode->vdisplay > VMGPU_MAX_MODE)
		return MODE_BAD;
	if (mode->htotal > 16384 || mode->vtotal > 16384)
		return MODE_BAD;
	if (!mode->clock || drm_mode_vrefresh(mode) > VMGPU_MAX_REFRESH_HZ)
		return MODE_BAD;
	if (drm_mode_vrefresh(mode) < VMGPU_MIN_REFRESH_HZ)
		return MODE_BAD;
	if (mode->flags & DRM_MODE_FLAG_INTERLACE)
		return MODE_NO_INTERLACE;
	return MODE_OK;
}

static int vmgpu_crtc_atomic_check(struct drm_crtc *crtc, struct drm_atomic_state *state)
{
	struct drm_crtc_state *crtc_state = drm_atomic_get_new_crtc_state(state, crtc);

	/* The helper does not look at enable: a CRTC going off has none. */
	if (!crtc_state->enable)
		return 0;
	return drm_atomic_helper_check_crtc_primary_plane(crtc_state);
}

static void vmgpu_crtc_atomic_enable(struct drm_crtc *crtc, struct drm_atomic_state *state)
{
	struct drm_display_mode *mode = &crtc->state->adjusted_mode;
	struct vmgpu_head *head = crtc_to_head(crtc);
	int idx;

	if (drm_dev_enter(crtc->dev, &idx)) {
		/* Latched with the planes by the COMMIT of atomic_flush. */
		vmgpu_head_write(head, VMGPU_HEAD_HDISPLAY, mode->hdisplay);
		vmgpu_head_write(head, VMGPU_HEAD_VDISPLAY, mode->vdisplay);
		vmgpu_head_write(head, VMGPU_HEAD_HTOTAL, mode->htotal);
		vmgpu_head_write(head, VMGPU_HEAD_VTOTAL, mode->vtotal);
		vmgpu_head_write(head, VMGPU_HEAD_CLOCK_KHZ, mode->clock);
		drm_dev_exit(idx);
	}
	drm_crtc_vblank_on(crtc);
}

static void vmgpu_crtc_atomic_disable(struct drm_crtc *crtc, struct drm_atomic_state *state)
{
	struct vmgpu_head *head = crtc_to_head(crtc);
	int idx;

	if (drm_dev_enter(crtc->dev, &idx)) {
		vmgpu_head_commit(head, false, VMGPU_HEAD_COMMIT_NOW);
		drm_dev_exit(idx);
	}
	drm_crtc_vblank_off(crtc);
	spin_lock_irq(&crtc->dev->event_lock);
	if (crtc->state->event) {
		drm_crtc_send_vblank_event(crtc, crtc->state->event);
		crtc->state->event = NULL;
	}
	spin_unlock_irq(&crtc->dev->event_lock);
}

/*
 * Latch what the commit wrote at the next vblank (at once on a head that
 * was off); the device's FLIP_DONE sends the event.
 */
static void vmgpu_crtc_atomic_flush(struct drm_crtc *crtc, struct drm_atomic_state *state)
{
	struct drm_crtc_state *crtc_state = drm_atomic_get_new_crtc_state(state, crtc);
	struct vmgpu_head *head = crtc_to_head(crtc);
	struct drm_pending_vblank_event *event = crtc_state->event;
	int idx;

	if (!crtc_state->active)
		return;
	crtc_state->event = NULL;
	spin_lock_irq(&crtc->dev->event_lock);
	if (event && !drm_crtc_vblank_get(crtc)) {
		/* Commits on a CRTC are serialized: the last event went out. */
		drm_WARN_ON(crtc->dev, head->event);
		head->event = event;
	} else if (event) {
		drm_crtc_send_vblank_event(crtc, event);
	}
	spin_unlock_irq(&crtc->dev->event_lock);
	if (!drm_dev_enter(crtc->dev, &idx))
		return;
	vmgpu_head_commit(head, true, VMGPU_HEAD_COMMIT_VBLANK);
	drm_dev_exit(idx);
}

static const struct drm_crtc_helper_funcs vmgpu_crtc_helper_funcs = {
	.mode_valid = vmgpu_crtc_mode_valid,
	.atomic_check = vmgpu_crtc_atomic_check,
	.atomic_enable = vmgpu_crtc_atomic_enable,
	.atomic_disable = vmgpu_crtc_atomic_disable,
	.atomic_flush = vmgpu_crtc_atomic_flush,
};

static int vmgpu_crtc_enable_vblank(struct drm_crtc *crtc)
{
	struct vmgpu_head *head = crtc_to_head(crtc);

	vmgpu_display_mask(head->vdev, VMGPU_DISPLAY_EVENT_VBLANK(head->index), 0);
	return 0;
}

static void vmgpu_crtc_disable_vblank(struct drm_crtc *crtc)
{
	struct vmgpu_head *head = crtc_to_head(crtc);

	vmgpu_display_mask(head->vdev, 0, VMGPU_DISPLAY_EVENT_VBLANK(head->index));
}

static int vmgpu_crtc_verify_crc_source(struct drm_crtc *crtc, const char *source,
					size_t *values_cnt)
{
	if (source && strcmp(source, "auto"))
		return -EINVAL;
	*values_cnt = 1;
	return 0;
}

static const char *const *vmgpu_crtc_get_crc_sources(struct drm_crtc *crtc, size_t *count)
{
	*count = ARRAY_SIZE(vmgpu_crc_sources);
	return vmgpu_crc_sources;
}

/* The device computes CRCs of a head's frames while CTRL.CRC is latched. */
static int vmgpu_crtc_set_crc_source(struct drm_crtc *crtc, const char *source)
{
	struct vmgpu_head *head = crtc_to_head(crtc);
	int idx;

	head->crc = source && !strcmp(source, "auto");
	if (!drm_dev_enter(crtc->dev, &idx))
		return -ENODEV;
	if (crtc->state->active)
		vmgpu_head_commit(head, true, VMGPU_HEAD_COMMIT_VBLANK);
	drm_dev_exit(idx);
	return 0;
}

static const struct drm_crtc_funcs vmgpu_crtc_funcs = {
	.reset = drm_atomic_helper_crtc_reset,
	.destroy = drm_crtc_cleanup,
	.set_config = drm_atomic_helper_set_config,
	.page_flip = drm_atomic_helper_page_flip,
	.atomic_duplicate_state = drm_atomic_helper_crtc_duplicate_state,
	.atomic_destroy_state = drm_atomic_helper_crtc_destroy_state,
	.enable_vblank = vmgpu_crtc_enable_vblank,
	.disable_vblank = vmgpu_crtc_disable_vblank,
	.set_crc_source = vmgpu_crtc_set_crc_source,
	.verify_crc_source = vmgpu_crtc_verify_crc_source,
	.get_crc_sources = vmgpu_crtc_get_crc_sources,
};

/* Connector */

static int vmgpu_connector_get_modes(struct drm_connector *connector)
{
	struct vmgpu_head *head = container_of(connector, struct vmgpu_head, connector);
	const struct drm_edid *drm_edid;
	__le32 edid[VMGPU_EDID_SIZE / 4];
	int i, count, idx;

	if (!drm_dev_enter(connector->dev, &idx))
		return 0;
	for (i = 0; i < ARRAY_SIZE(edid); i++)
		edid[i] = cpu_to_le32(vmgpu_read32(head->vdev,
						   VMGPU_REG_EDID(head->index) + 4 * i));
	drm_dev_exit(idx);
	drm_edid = drm_edid_alloc(edid, sizeof(edid));
	drm_edid_connector_update(connector, drm_edid);
	count = drm_edid_connector_add_modes(connector);
	drm_edid_free(drm_edid);
	if (!count) {
		count = drm_add_modes_noedid(connector, VMGPU_MAX_MODE, VMGPU_MAX_MODE);
		drm_set_preferred_mode(connector, 1024, 768);
	}
	return count;
}

static int vmgpu_connector_detect(struct drm_connector *connector,
				  struct drm_modeset_acquire_ctx *ctx, bool force)
{
	struct vmgpu_head *head = container_of(connector, struct vmgpu_head, connector);
	u32 status;
	int idx;

	if (!drm_dev_enter(connector->dev, &idx))
		return connector_status_disconnected;
	status = vmgpu_head_read(head, VMGPU_HEAD_STATUS);
	drm_dev_exit(idx);
	return status & VMGPU_HEAD_STATUS_CONNECTED ? connector_status_connected :
						      connector_status_disconnected;
}

static const struct drm_connector_helper_funcs vmgpu_connector_helper_funcs = {
	.get_modes = vmgpu_connector_get_modes,
	.detect_ctx = vmgpu_connector_detect,
};

static const struct drm_connector_funcs vmgpu_connector_funcs = {
	.fill_modes = drm_helper_probe_single_connector_modes,
	.destroy = drm_connector_cleanup,
	.reset = drm_atomic_helper_connector_reset,
	.atomic_duplicate_state = drm_atomic_helper_connector_duplicate_state,
	.atomic_destroy_state = drm_atomic_helper_connector_destroy_state,
};

/* Interrupts */

static void vmgpu_head_flip_done(struct vmgpu_head *head)
{
	struct drm_crtc *crtc = &head->crtc;
	unsigned long flags;

	spin_lock_irqsave(&crtc->dev->event_lock, flags);
	if (head->event) {
		drm_crtc_send_vblank_event(crtc, head->event);
		drm_crtc_vblank_put(crtc);
		head->event = NULL;
	}
	spin_unlock_irqrestore(&crtc->dev->event_lock, flags);
}

static void vmgpu_head_vblank(struct vmgpu_head *head)
{
	struct drm_crtc *crtc = &head->crtc;
	u32 crc;

	drm_crtc_handle_vblank(crtc);
	if (!head->crc)
		return;
	crc = vmgpu_head_read(head, VMGPU_HEAD_CRC);
	drm_crtc_add_crc_entry(crtc, true, drm_crtc_vblank_count(crtc), &crc);
}

static irqreturn_t vmgpu_display_irq(int irq, void *arg)
{
	struct vmgpu_device *vdev = arg;
	u32 events, i;

	vmgpu_write32(vdev, VMGPU_REG_INT_STATUS, VMGPU_INT_DISPLAY);
	events = vmgpu_read32(vdev, VMGPU_REG_DISPLAY_EVENTS);
	vmgpu_write32(vdev, VMGPU_REG_DISPLAY_EVENTS, events);
	for (i = 0; i < vdev->display.num_heads; i++) {
		struct vmgpu_head *head = &vdev->display.heads[i];

		if (events & VMGPU_DISPLAY_EVENT_VBLANK(i))
			vmgpu_head_vblank(head);
		if (events & VMGPU_DISPLAY_EVENT_FLIP_DONE(i))
			vmgpu_head_flip_done(head);
	}
	if (events & (VMGPU_DISPLAY_EVENTS_ALL & GENMASK(23, 16)))
		schedule_work(&vdev->display.hotplug_work);
	return IRQ_HANDLED;
}

static void vmgpu_display_hotplug_work(struct work_struct *work)
{
	struct vmgpu_display *display = container_of(work, struct vmgpu_display, hotplug_work);
	struct vmgpu_device *vdev = container_of(display, struct vmgpu_device, display);

	drm_helper_hpd_irq_event(&vdev->drm);
}

/* Setup */

static const struct drm_mode_config_funcs vmgpu_mode_config_funcs = {
	.fb_create = drm_gem_fb_create,
	.atomic_check = drm_atomic_helper_check,
	.atomic_commit = drm_atomic_helper_commit,
};

/*
 * Enables before planes: a head's mode registers are written before the
 * COMMIT of atomic_flush latches them with the planes, and its vblanks
 * are on for the flip event.
 */
static const struct drm_mode_config_helper_funcs vmgpu_mode_config_helpers = {
	.atomic_commit_tail = drm_atomic_helper_commit_tail_rpm,
};

static int vmgpu_head_init(struct vmgpu_device *vdev, struct vmgpu_head *head)
{
	struct drm_device *drm = &vdev->drm;
	int ret;

	ret = drm_universal_plane_init(drm, &head->primary, 0, &vmgpu_plane_funcs,
				       vmgpu_primary_formats, ARRAY_SIZE(vmgpu_primary_formats),
				       NULL, DRM_PLANE_TYPE_PRIMARY, NULL);
	if (ret)
		return ret;
	drm_plane_helper_add(&head->primary, &vmgpu_primary_helper_funcs);
	ret = drm_universal_plane_init(drm, &head->cursor, 0, &vmgpu_plane_funcs,
				       vmgpu_cursor_formats, ARRAY_SIZE(vmgpu_cursor_formats),
				       NULL, DRM_PLANE_TYPE_CURSOR, NULL);
	if (ret)
		return ret;
	drm_plane_helper_add(&head->cursor, &vmgpu_cursor_helper_funcs);
	ret = drm_crtc_init_with_planes(drm, &head->crtc, &head->primary, &head->cursor,
					&vmgpu_crtc_funcs, NULL);
	if (ret)
		return ret;
	drm_crtc_helper_add(&head->crtc, &vmgpu_crtc_helper_funcs);
	ret = drm_simple_encoder_init(drm, &head->encoder, DRM_MODE_ENCODER_VIRTUAL);
	if (ret)
		return ret;
	head->encoder.possible_crtcs = drm_crtc_mask(&head->crtc);
	ret = drm_connector_init(drm, &head->connector, &vmgpu_connector_funcs,
				 DRM_MODE_CONNECTOR_VIRTUAL);
	if (ret)
		return ret;
	drm_connector_helper_add(&head->connector, &vmgpu_connector_helper_funcs);
	head->connector.polled = DRM_CONNECTOR_POLL_HPD;
	return drm_connector_attach_encoder(&head->connector, &head->encoder);
}

/**
 * vmgpu_display_init() - KMS for the device's display controller
 * @vdev: the device, its interrupts allocated (vmgpu_irq_init())
 *
 * Mode config, vblank and poll helpers are drm-managed; the interrupt
 * handler device-managed.
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_display_init(struct vmgpu_device *vdev)
{
	struct vmgpu_display *display = &vdev->display;
	struct drm_device *drm = &vdev->drm;
	u32 i;
	int ret;

	spin_lock_init(&display->lock);
	INIT_WORK(&display->hotplug_work, vmgpu_display_hotplug_work);
	display->num_heads = min_t(u32, vmgpu_read32(vdev, VMGPU_REG_DISPLAY_HEADS),
				   VMGPU_MAX_HEADS);
	if (!display->num_heads)
		return -ENODEV;

	ret = drmm_mode_config_init(drm);
	if (ret)
		return ret;
	drm->mode_config.min_width = 1;
	drm->mode_config.min_height = 1;
	drm->mode_config.max_width = VMGPU_MAX_MODE;
	drm->mode_config.max_height = VMGPU_MAX_MODE;
	drm->mode_config.cursor_width = VMGPU_CURSOR_SIZE;
	drm->mode_config.cursor_height = VMGPU_CURSOR_SIZE;
	drm->mode_config.preferred_depth = 24;
	drm->mode_config.funcs = &vmgpu_mode_config_funcs;
	drm->mode_config.helper_private = &vmgpu_mode_config_helpers;

	for (i = 0; i < display->num_heads; i++) {
		struct vmgpu_head *head = &display->heads[i];

		head->vdev = vdev;
		head->index = i;
		ret = vmgpu_head_init(vdev, head);
		if (ret)
			return ret;
	}
	ret = drm_vblank_init(drm, display->num_heads);
	if (ret)
		return ret;
	drm_mode_config_reset(drm);
	ret = drmm_kms_helper_poll_init(drm);
	if (ret)
		return ret;

	ret = devm_request_irq(drm->dev, vdev->irq[VMGPU_MSIX_VEC_DISPLAY], vmgpu_display_irq,
			       0, "vmgpu-display", vdev);
	if (ret)
		return ret;
	vmgpu_display_mask(vdev, VMGPU_DISPLAY_EVENTS_ALL & ~GENMASK(7, 0), 0);
	vmgpu_write32(vdev, VMGPU_REG_INT_MASK,
		      vmgpu_read32(vdev, VMGPU_REG_INT_MASK) | VMGPU_INT_DISPLAY);
	return 0;
}

/**
 * vmgpu_display_unplug() - turn the heads off before the device goes
 * @vdev: the device, being removed, after drm_dev_unplug()
 *
 * Runs while the registers are still mapped: afterwards no head scans out
 * and no allocation stays pinned, and no hotplug work is left.
 */
void vmgpu_display_unplug(struct vmgpu_device *vdev)
{
	struct vmgpu_display *display = &vdev->display;
	u32 i;

	/* Unplugged: the helpers no longer touch the device, only state. */
	drm_atomic_helper_shutdown(&vdev->drm);
	for (i = 0; i < display->num_heads; i++)
		vmgpu_head_commit(&display->heads[i], false, VMGPU_HEAD_COMMIT_NOW);
	vmgpu_display_mask(vdev, 0, ~0u);
	cancel_work_sync(&display->hotplug_work);
}
