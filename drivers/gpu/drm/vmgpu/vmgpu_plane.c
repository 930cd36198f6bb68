// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_drv.h>
#include <drm/drm_fourcc.h>
#include <drm/drm_framebuffer.h>
#include <drm/drm_gem_atomic_helper.h>
#include <drm/drm_modeset_helper_vtables.h>
#include <drm/drm_print.h>

#include "vmgpu_bo.h"
#include "vmgpu_display.h"
#include "vmgpu_mmap.h"
#include "vmgpu_prime.h"
#include "vmgpu_drm.h"

/**
 * DOC: planes
 *
 * A head's primary and cursor planes. Their framebuffers are primary
 * surfaces (seed: "Primary surfaces ... implicitly physically accessed by
 * the display controller"): atomic_check refuses an allocation created
 * without PRIMARY, and prepare_fb pins a shown one where the display
 * controller reaches it, contiguous in a memory segment or mapped into the aperture
 * segment (vmgpu_display_placement()); the head's registers get its
 * physical reference. cleanup_fb unpins it once the device has latched
 * the next one (see DOC: display); a primary without AccessedPhysically
 * then gives its aperture entries back, so undisplayed primaries in
 * system memory take no aperture space.
 */

static const u32 vmgpu_primary_formats[] = {
	DRM_FORMAT_XRGB8888,
	DRM_FORMAT_ARGB8888,
	DRM_FORMAT_RGB565,
};

static const u32 vmgpu_cursor_formats[] = {
	DRM_FORMAT_ARGB8888,
};

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

/* The helpers' checks, unscaled; the new state in *out. */
static int vmgpu_plane_check(struct drm_plane *plane, struct drm_atomic_state *state,
			     bool cursor, struct drm_plane_state **out)
{
	struct drm_plane_state *new = drm_atomic_get_new_plane_state(state, plane);
	struct drm_crtc_state *crtc_state = NULL;

	*out = new;
	/*
	 * Only linear primaries, shown or not: checked here, so TEST_ONLY
	 * says so too. The display reads lines linear; a swizzled primary in
	 * a memory segment would be shown scrambled.
	 */
	if (new->fb && (gem_to_vmgpu_bo(new->fb->obj[0])->flags &
			(DRM_VMGPU_ALLOC_PRIMARY | DRM_VMGPU_ALLOC_SWIZZLED)) !=
		       DRM_VMGPU_ALLOC_PRIMARY) {
		drm_dbg_kms(plane->dev, "[PLANE:%d] framebuffer not a linear primary\n",
			    plane->base.id);
		return -EINVAL;
	}
	if (new->crtc)
		crtc_state = drm_atomic_get_new_crtc_state(state, new->crtc);
	/*
	 * A primary covers its CRTC, a cursor moves; either may stay on a
	 * CRTC that is off (not visible then, and not pinned).
	 */
	return drm_atomic_helper_check_plane_state(new, crtc_state, DRM_PLANE_NO_SCALING,
						   DRM_PLANE_NO_SCALING, cursor, true);
}

static int vmgpu_primary_atomic_check(struct drm_plane *plane, struct drm_atomic_state *state)
{
	struct drm_framebuffer *fb;
	struct drm_plane_state *new;
	int ret = vmgpu_plane_check(plane, state, false, &new);

	if (ret || !new->visible)
		return ret;
	fb = new->fb;
	/* The device reads whole 4-byte words from a 4-byte aligned start. */
	if (fb->pitches[0] % 4 ||
	    (fb->offsets[0] + (new->src.x1 >> 16) * fb->format->cpp[0]) % 4)
		return -EINVAL;
	/* Nor lines that an int cannot index (contract: stride times height). */
	if ((u64)fb->pitches[0] * drm_rect_height(&new->dst) > INT_MAX)
		return -EINVAL;
	return 0;
}

static int vmgpu_cursor_atomic_check(struct drm_plane *plane, struct drm_atomic_state *state)
{
	struct drm_plane_state *new;
	int ret = vmgpu_plane_check(plane, state, true, &new);

	if (ret || !new->fb)
		return ret;
	if (new->fb->width != VMGPU_CURSOR_SIZE || new->fb->height != VMGPU_CURSOR_SIZE ||
	    new->fb->pitches[0] != VMGPU_CURSOR_SIZE * 4 || new->fb->offsets[0] % 4 ||
	    new->src_x || new->src_y ||
	    new->src_w != VMGPU_CURSOR_SIZE << 16 || new->src_h != VMGPU_CURSOR_SIZE << 16)
		return -EINVAL;
	return 0;
}

/*
 * Where a primary is shown from (seed: "allocated contiguously in a memory
 * segment or mapped into the aperture segment when displayed"): one in
 * system memory, or whose set has no memory segment, is mapped into the
 * aperture segment where it is; any other goes contiguous into a memory
 * segment of its set, or, if none has room, into the aperture segment.
 */
static void vmgpu_display_placement(struct vmgpu_bo *vbo, struct ttm_placement *placement,
				    struct ttm_place *places)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	bool aperture = vbo->segments & BIT(vmgpu_aperture_segment(vdev));
	struct ttm_resource *res = vbo->tbo.resource;
	u32 i;

	placement->num_placement = 0;
	if (!aperture || !res || res->mem_type != TTM_PL_TT) {
		for (i = 0; i < vbo->placement.num_placement; i++) {
			if (vbo->places[i].mem_type < VMGPU_TTM_FIRST_SEGMENT)
				continue;
			/* Every place counts, so that TTM takes what it finds. */
			places[placement->num_placement] = vbo->places[i];
			places[placement->num_placement++].flags &=
				~(TTM_PL_FLAG_FALLBACK | TTM_PL_FLAG_DESIRED);
		}
	}
	if (aperture)
		places[placement->num_placement++] = (struct ttm_place){
			.mem_type = TTM_PL_TT,
			.lpfn = vdev->gart_pages,
		};
}

/*
 * @contents: NULL to wait for the kernel's work on the framebuffer here
 * (a cursor: async updates wait for no fence), else where to put its
 * unfinished last paging operation (vmgpu_bo_settle_queued()).
 */
static int vmgpu_display_pin(struct vmgpu_bo *vbo, u32 *space, u64 *addr,
			     struct dma_fence **contents)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct ttm_place places[ARRAY_SIZE(vbo->places) + 1];
	struct ttm_placement placement = { .placement = places };
	int ret;

	ret = ttm_bo_reserve(&vbo->tbo, true, false, NULL);
	if (ret)
		return ret;
	/* A Lock keeps it where the CPU has it (Lock2 rules). */
	if (vbo->locked_by || vbo->unswizzled) {
		ret = -EBUSY;
		goto unreserve;
	}
	/* A dynamic exporter must not move an import on screen. */
	if (!vbo->display_pins && vmgpu_bo_is_import(vbo)) {
		ret = vmgpu_prime_pin(vbo);
		if (ret)
			goto unreserve;
	}
	/* Shown already (another plane, the same flip): it stays put. */
	if (vbo->display_pins) {
		ret = vmgpu_bo_physical_address(vbo, space, addr);
	} else {
		/* Its aperture placement maps now (vmgpu_bo_needs_aperture()). */
		WRITE_ONCE(vbo->display_pins, 1);
		vmgpu_display_placement(vbo, &placement, places);
		ret = placement.num_placement ?
		      ttm_bo_validate(&vbo->tbo, &placement, &ctx) : -EINVAL;
		if (!ret)
			ret = vmgpu_bo_physical_address(vbo, space, addr);
		WRITE_ONCE(vbo->display_pins, 0);
	}
	/*
	 * The head shows what the last clear or move wrote, a scrub if it
	 * failed, or no primary: never what the memory held for an earlier
	 * owner.
	 */
	if (!ret)
		ret = contents ? vmgpu_bo_settle_queued(vbo, contents) : vmgpu_bo_settle(vbo, true);
	if (!ret) {
		ttm_bo_pin(&vbo->tbo);
		WRITE_ONCE(vbo->display_pins, vbo->display_pins + 1);
	} else if (!vbo->display_pins && vmgpu_bo_is_import(vbo)) {
		vmgpu_prime_unpin(vbo);
	}
unreserve:
	ttm_bo_unreserve(&vbo->tbo);
	return ret;
}

/*
 * The last plane let the primary go: a primary without AccessedPhysically
 * gives its aperture entries back (seed: "mapped into the aperture only
 * when being displayed ... removes pressure on the aperture segment").
 */
static void vmgpu_display_unpin(struct vmgpu_bo *vbo)
{
	struct ttm_operation_ctx ctx = { .interruptible = false };
	struct ttm_place unmapped = { .mem_type = TTM_PL_TT };
	struct ttm_placement placement = { .num_placement = 1, .placement = &unmapped };
	struct ttm_resource *res;
	int ret;

	ttm_bo_reserve(&vbo->tbo, false, false, NULL);
	ttm_bo_unpin(&vbo->tbo);
	WRITE_ONCE(vbo->display_pins, vbo->display_pins - 1);
	if (!vbo->display_pins && vmgpu_bo_is_import(vbo))
		vmgpu_prime_unpin(vbo);
	res = vbo->tbo.resource;
	if (!vbo->display_pins && !vbo->tbo.pin_count && res && res->mem_type == TTM_PL_TT &&
	    !(vbo->flags & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY)) {
		ret = ttm_bo_validate(&vbo->tbo, &placement, &ctx);
		if (ret)
			drm_dbg_kms(vbo->tbo.base.dev,
				    "primary keeps its aperture entries: %d\n", ret);
	}
	ttm_bo_unreserve(&vbo->tbo);
}

static int vmgpu_plane_prepare_fb(struct drm_plane *plane, struct drm_plane_state *new)
{
	struct vmgpu_plane_state *vstate = to_vmgpu_plane_state(new);
	struct vmgpu_bo *vbo;
	int idx, ret;

	if (!new->fb)
		return 0;
	if (!new->visible)
		return 0;
	/*
	 * A commit is not an ioctl of ours: the pin may move or clear the
	 * buffer, which needs the paging ring and its staging memory.
	 */
	if (!drm_dev_enter(plane->dev, &idx))
		return -ENODEV;
	vbo = gem_to_vmgpu_bo(new->fb->obj[0]);
	ret = vmgpu_display_pin(vbo, &vstate->space, &vstate->addr,
				plane->type == DRM_PLANE_TYPE_PRIMARY ? &vstate->contents : NULL);
	if (ret) {
		drm_dbg_kms(plane->dev, "[PLANE:%d] cannot pin its framebuffer: %d\n",
			    plane->base.id, ret);
		goto exit;
	}
	/* Moves and clears queued on it finish before the flip. */
	ret = drm_gem_plane_helper_prepare_fb(plane, new);
	if (ret)
		vmgpu_display_unpin(vbo);
	else
		vstate->pinned = true;
exit:
	drm_dev_exit(idx);
	return ret;
}

/**
 * vmgpu_plane_shows() - whether a committed plane's framebuffer may be shown
 * @state: the plane's state, its fences waited for
 *
 * Return: false if the framebuffer's last clear or move, unfinished when
 * it was pinned, failed or has still not finished: its memory may hold
 * anything, another process's bytes included. True otherwise.
 */
bool vmgpu_plane_shows(struct drm_plane_state *state)
{
	struct dma_fence *contents = to_vmgpu_plane_state(state)->contents;

	return !contents || dma_fence_get_status(contents) == 1;
}

static void vmgpu_plane_cleanup_fb(struct drm_plane *plane, struct drm_plane_state *old)
{
	struct vmgpu_plane_state *vstate = to_vmgpu_plane_state(old);

	if (!vstate->pinned)
		return;
	vmgpu_display_unpin(gem_to_vmgpu_bo(old->fb->obj[0]));
	vstate->pinned = false;
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

/* The cursor registers for @state, pending until a COMMIT. */
static void vmgpu_cursor_write(struct vmgpu_head *head, struct drm_plane_state *state)
{
	struct vmgpu_plane_state *vstate = to_vmgpu_plane_state(state);
	u64 addr;

	if (!state->fb || !state->visible) {
		vmgpu_head_write(head, VMGPU_HEAD_CURSOR_CTRL, 0);
		return;
	}
	addr = vstate->addr + state->fb->offsets[0];
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_ADDR_LO, lower_32_bits(addr));
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_ADDR_HI, upper_32_bits(addr));
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_SPACE, vstate->space);
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_X, state->crtc_x);
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_Y, state->crtc_y);
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_HOT,
			 (u16)state->hotspot_x | (u32)(u16)state->hotspot_y << 16);
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_CTRL, 1);
}

static void vmgpu_cursor_atomic_update(struct drm_plane *plane, struct drm_atomic_state *state)
{
	struct drm_plane_state *old = drm_atomic_get_old_plane_state(state, plane);
	struct drm_plane_state *new = drm_atomic_get_new_plane_state(state, plane);
	struct drm_crtc *crtc = new->crtc ?: old->crtc;
	int idx;

	if (!crtc || !drm_dev_enter(plane->dev, &idx))
		return;
	vmgpu_cursor_write(crtc_to_head(crtc), new);
	drm_dev_exit(idx);
}

/*
 * A cursor that moves or changes image on a shown CRTC needs no vblank:
 * COMMIT_CURSOR latches the cursor registers alone, at once, without
 * completing or hurrying a flip in flight (legacy cursor ioctls, as
 * compositors use them). Turning it on or off goes through a commit.
 * A flip waiting for its vblank latches the registers of its own COMMIT
 * (contract 1.8), with the cursor of the last COMMIT_CURSOR, and no
 * COMMIT comes between this update's writes (&vmgpu_display.lock): never
 * a cursor half-written by it.
 */
static int vmgpu_cursor_atomic_async_check(struct drm_plane *plane,
					   struct drm_atomic_state *state)
{
	struct drm_plane_state *new = drm_atomic_get_new_plane_state(state, plane);
	struct drm_crtc_state *crtc_state;
	int ret;

	crtc_state = drm_atomic_get_new_crtc_state(state, new->crtc);
	if (!crtc_state || !crtc_state->active || !new->fb || !plane->state->fb ||
	    !plane->state->visible)
		return -EINVAL;
	ret = vmgpu_cursor_atomic_check(plane, state);
	if (!ret && !new->visible)
		ret = -EINVAL;
	return ret;
}

/*
 * In place on the plane's state, as the helpers want: the new framebuffer
 * and where it is go in, the old ones go out with @state, whose cleanup
 * unpins them. The device reads the cursor only at a vblank, and
 * COMMIT_CURSOR has latched the new one when the write returns.
 */
static void vmgpu_cursor_atomic_async_update(struct drm_plane *plane,
					     struct drm_atomic_state *state)
{
	struct drm_plane_state *new = drm_atomic_get_new_plane_state(state, plane);
	struct vmgpu_plane_state *cur = to_vmgpu_plane_state(plane->state);
	struct vmgpu_plane_state *next = to_vmgpu_plane_state(new);
	struct drm_plane_state *pstate = plane->state;
	struct vmgpu_head *head = crtc_to_head(pstate->crtc);
	unsigned long flags;
	int idx;

	swap(pstate->fb, new->fb);
	swap(cur->addr, next->addr);
	swap(cur->space, next->space);
	swap(cur->pinned, next->pinned);
	pstate->crtc_x = new->crtc_x;
	pstate->crtc_y = new->crtc_y;
	pstate->crtc_w = new->crtc_w;
	pstate->crtc_h = new->crtc_h;
	pstate->src_x = new->src_x;
	pstate->src_y = new->src_y;
	pstate->src_w = new->src_w;
	pstate->src_h = new->src_h;
	pstate->hotspot_x = new->hotspot_x;
	pstate->hotspot_y = new->hotspot_y;
	pstate->src = new->src;
	pstate->dst = new->dst;
	/*
	 * The helpers' async path does not wait for the fences prepare_fb
	 * took: the pin's move or clear, and the last write, land first.
	 */
	if (new->fence)
		dma_fence_wait(new->fence, false);
	if (!drm_dev_enter(plane->dev, &idx))
		return;
	/* A flip's COMMIT in between would latch half of this cursor. */
	spin_lock_irqsave(&head->vdev->display.lock, flags);
	vmgpu_cursor_write(head, pstate);
	vmgpu_head_commit_write(head, VMGPU_HEAD_COMMIT_CURSOR);
	spin_unlock_irqrestore(&head->vdev->display.lock, flags);
	/* Latched once a read flushes the COMMIT: the old cursor may go then. */
	vmgpu_head_read(head, VMGPU_HEAD_STATUS);
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
	.atomic_async_check = vmgpu_cursor_atomic_async_check,
	.atomic_async_update = vmgpu_cursor_atomic_async_update,
};

static struct drm_plane_state *vmgpu_plane_duplicate_state(struct drm_plane *plane)
{
	struct vmgpu_plane_state *vstate, *old = to_vmgpu_plane_state(plane->state);

	vstate = kmemdup(old, sizeof(*vstate), GFP_KERNEL);
	if (!vstate)
		return NULL;
	/* Its own prepare_fb pins, if it shows something. */
	vstate->pinned = false;
	vstate->contents = NULL;
	__drm_atomic_helper_plane_duplicate_state(plane, &vstate->base);
	return &vstate->base;
}

static void vmgpu_plane_destroy_state(struct drm_plane *plane, struct drm_plane_state *state)
{
	dma_fence_put(to_vmgpu_plane_state(state)->contents);
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

/**
 * vmgpu_planes_init() - a head's primary and cursor planes
 * @vdev: the device
 * @head: the head, its index set
 *
 * Return: 0 or a negative errno; the planes are cleaned up with the mode
 * config.
 */
int vmgpu_planes_init(struct vmgpu_device *vdev, struct vmgpu_head *head)
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
	return 0;
}
