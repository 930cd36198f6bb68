// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_placement.h>

#include "vmgpu_drm.h"
#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_hap.h"
#include "vmgpu_swizzle.h"

/**
 * DOC: swizzled allocations
 *
 * Seed "Locking swizzled allocations". On vmgpu "swizzled" is the device's
 * one tiled layout, SWIZZLE_X (hw-contract.rst): an allocation created with
 * %DRM_VMGPU_ALLOC_SWIZZLED holds its bytes in that layout in a memory
 * segment, where the GPU works on it; the CPU's view is linear. Other
 * allocations are linear everywhere, so they are stored linear out of
 * memory segments without any conversion (the seed's first rule holds
 * trivially).
 *
 * A swizzled allocation's layout out of a memory segment is tracked
 * (&vmgpu_bo.unswizzled):
 *
 * - Evicted for memory pressure, it keeps the swizzled layout: the copy is
 *   raw, and the GPU may still use it in the aperture segment.
 * - Moved out for the CPU (a lock or a fault that found no host-aperture
 *   room, or any eviction while it is locked, so that the lock does not
 *   notice: the seed's case 3 where its note says case 2, a deviation
 *   that spares a page-in under the pressure that evicted it), it is
 *   unswizzled on the way (TRANSFER_FLAG_UNSWIZZLE); the
 *   CPU then maps its system pages directly, and the GPU cannot use it
 *   there: any GPU use (EXEC, the physical engine's list, MakeResident)
 *   pages it into a memory segment with TRANSFER_FLAG_SWIZZLE.
 *
 * CPU access (vmgpu_swizzle_cpu_reach()): in a memory segment, every page
 * is mapped through the host aperture with DETILE, the BAR being no use
 * for a linear view; evicted swizzled, or in the aperture segment, it is
 * paged into a memory segment first; evicted unswizzled, it is mapped as
 * it is.
 *
 * The CPU and the GPU never use a locked swizzled allocation at once: a
 * lock waits for the GPU, no-overwrite locks (IGNORE_SYNC) are -EINVAL,
 * and GPU work that needs it while it is locked is refused with -EBUSY.
 */

/**
 * vmgpu_swizzle_move_flags() - the layout change of a move
 * @vbo: the allocation, reserved
 * @old_type: the TTM memory type it leaves
 * @new_type: the one it goes to
 *
 * Return: the TRANSFER flags the move's copies take.
 */
u16 vmgpu_swizzle_move_flags(struct vmgpu_bo *vbo, u32 old_type, u32 new_type)
{
	bool from_vram = old_type >= VMGPU_TTM_FIRST_SEGMENT;
	bool to_vram = new_type >= VMGPU_TTM_FIRST_SEGMENT;

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (!(vbo->flags & DRM_VMGPU_ALLOC_SWIZZLED) || from_vram == to_vram)
		return 0;
	if (to_vram)
		return vbo->unswizzled ? VMGPU_TRANSFER_FLAG_SWIZZLE : 0;
	return vbo->locked_by || vbo->unswizzle_next_move ? VMGPU_TRANSFER_FLAG_UNSWIZZLE : 0;
}

/**
 * vmgpu_swizzle_moved() - record the layout a move left
 * @vbo: the allocation, reserved
 * @new_type: the TTM memory type it went to
 * @flags: what vmgpu_swizzle_move_flags() gave for the move
 */
void vmgpu_swizzle_moved(struct vmgpu_bo *vbo, u32 new_type, u16 flags)
{
	dma_resv_assert_held(vbo->tbo.base.resv);
	if (new_type >= VMGPU_TTM_FIRST_SEGMENT)
		vbo->unswizzled = false;
	else if (flags & VMGPU_TRANSFER_FLAG_UNSWIZZLE)
		vbo->unswizzled = true;
}

/* Without TT: where a swizzled allocation is paged in for the GPU or CPU. */
static int vmgpu_swizzle_page_in(struct vmgpu_bo *vbo, struct ttm_operation_ctx *ctx)
{
	struct ttm_place places[ARRAY_SIZE(vbo->places)];
	struct ttm_placement placement = { .placement = places };
	u32 i;

	for (i = 0; i < vbo->placement.num_placement; i++)
		if (vbo->places[i].mem_type >= VMGPU_TTM_FIRST_SEGMENT)
			places[placement.num_placement++] = vbo->places[i];
	if (!placement.num_placement)
		return -ENOSPC;
	return ttm_bo_validate(&vbo->tbo, &placement, ctx);
}

/**
 * vmgpu_swizzle_validate() - make a swizzled allocation usable by the GPU
 * @vbo: the allocation, reserved, with %DRM_VMGPU_ALLOC_SWIZZLED
 * @ctx: TTM's operation context
 *
 * Unswizzled in system memory, it is paged into a memory segment
 * (swizzling on the way); otherwise anywhere in its set.
 *
 * Return: 0 or an error of TTM's.
 */
int vmgpu_swizzle_validate(struct vmgpu_bo *vbo, struct ttm_operation_ctx *ctx)
{
	if (vbo->unswizzled)
		return vmgpu_swizzle_page_in(vbo, ctx);
	return ttm_bo_validate(&vbo->tbo, &vbo->placement, ctx);
}

/*
 * Swizzled bytes in system memory are detiled or unswizzled only from a
 * memory segment: page them in. Unswizzled ones, and those in VRAM, stay.
 */
static int vmgpu_swizzle_cpu_page_in(struct vmgpu_bo *vbo)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (vmgpu_bo_in_memory_segment(vbo) || vbo->unswizzled)
		return 0;
	return vmgpu_swizzle_page_in(vbo, &ctx);
}

/**
 * vmgpu_swizzle_to_system() - place a swizzled allocation in system memory,
 * unswizzled, for the CPU
 * @vbo: the allocation, reserved, swizzled
 *
 * Swizzled bytes in system memory are paged into a memory segment first:
 * only the way out unswizzles.
 *
 * Return: 0 (the moves are queued) or an error of TTM's.
 */
int vmgpu_swizzle_to_system(struct vmgpu_bo *vbo)
{
	int ret;

	ret = vmgpu_swizzle_cpu_page_in(vbo);
	if (ret || !vmgpu_bo_in_memory_segment(vbo))
		return ret;
	vbo->unswizzle_next_move = true;
	ret = vmgpu_bo_move_to_system(vbo);
	vbo->unswizzle_next_move = false;
	return ret;
}

/**
 * vmgpu_swizzle_cpu_reach() - give the CPU a linear view of a swizzled
 * allocation
 * @vbo: the allocation, reserved, CPU-accessible and swizzled
 * @may_move: it may be moved to system memory (unswizzled) if the host
 *	      aperture has no room
 *
 * Return: 0; -ENOSPC if it needs that move and @may_move is false; an
 * error of TTM's.
 */
int vmgpu_swizzle_cpu_reach(struct vmgpu_bo *vbo, bool may_move)
{
	int ret;

	ret = vmgpu_swizzle_cpu_page_in(vbo);
	if (ret || !vmgpu_bo_in_memory_segment(vbo))
		return ret;
	ret = vmgpu_hap_map(vbo);
	if (ret != -ENOSPC || !may_move)
		return ret;
	return vmgpu_swizzle_to_system(vbo);
}
