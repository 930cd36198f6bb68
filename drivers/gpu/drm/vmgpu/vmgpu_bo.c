// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/mm.h>
#include <linux/slab.h>

#include <drm/drm_gem_ttm_helper.h>
#include <drm/ttm/ttm_placement.h>

#include "vmgpu_drm.h"
#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_gart.h"
#include "vmgpu_swizzle.h"
#include "vmgpu_lock.h"
#include "vmgpu_mmap.h"
#include "vmgpu_prime.h"
#include "vmgpu_stats.h"
#include "vmgpu_vram.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: allocations
 *
 * An allocation (seed "GPU segments") is a TTM buffer object with WDDM's
 * allocation flags, a supported segment set and a preferred segment. Its
 * placement lists the preferred segment first; the others are fallbacks
 * TTM only uses when the preferred one cannot be made to fit, so under
 * pressure TTM evicts from the preferred segment before spilling. Memory
 * segments become TTM memory types, the aperture segment becomes TT.
 *
 * Placement rules: AccessedPhysically and primary allocations are
 * contiguous in a memory segment. CPU-accessible allocations go where the
 * VRAM BAR reaches if there is room there, else beyond it, where the CPU
 * reaches them through the CPU host aperture (vmgpu_hap.c) or, failing
 * that, after a move to system memory; the others go top-down, leaving the
 * visible part free. Eviction sends an allocation to system memory (TT) if
 * the aperture segment is in its set, else out of the GPU's reach (TTM
 * system), where it is not resident.
 *
 * What the paging operations on an allocation's backing came to: DOC:
 * outcome of paging operations.
 */

static const struct drm_gem_object_funcs vmgpu_gem_funcs;

/**
 * vmgpu_bo_is_vmgpu() - whether a TTM object is an allocation
 * @tbo: a TTM object on one of our managers
 *
 * TTM's ghost objects, which hold the old backing of a pipelined move until
 * its fence signals, copy the whole object but not its destroy callback.
 *
 * Return: true for a &struct vmgpu_bo, false for a ghost.
 */
bool vmgpu_bo_is_vmgpu(struct ttm_buffer_object *tbo)
{
	return tbo->destroy == vmgpu_bo_destroy;
}

static const struct vmgpu_segment *vmgpu_bo_mem_segment(struct vmgpu_device *vdev,
							u32 mem_type)
{
	u32 index = mem_type - VMGPU_TTM_FIRST_SEGMENT;

	return mem_type >= VMGPU_TTM_FIRST_SEGMENT && index < vdev->num_segments ?
	       &vdev->segments[index] : NULL;
}

/**
 * vmgpu_bo_needs_aperture() - whether a TT placement must map the aperture
 * @tbo: the allocation
 * @place: the TT place being allocated
 *
 * Return: true for AccessedPhysically allocations and for primaries a
 * plane shows, except for the temporary hop of a multi-step move, which
 * the device reaches by bus address.
 */
bool vmgpu_bo_needs_aperture(struct ttm_buffer_object *tbo,
			     const struct ttm_place *place)
{
	struct vmgpu_bo *vbo;

	if (!vmgpu_bo_is_vmgpu(tbo) || (place->flags & TTM_PL_FLAG_TEMPORARY))
		return false;
	vbo = to_vmgpu_bo(tbo);
	return (vbo->flags & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY) ||
	       ((vbo->flags & DRM_VMGPU_ALLOC_PRIMARY) && READ_ONCE(vbo->display_pins));
}

/**
 * vmgpu_bo_gives_back_aperture() - whether aperture entries an allocation
 * holds are only borrowed
 * @tbo: the allocation
 *
 * Return: true for a primary without AccessedPhysically that no plane
 * shows: a TT placement that maps it is not what it needs.
 */
bool vmgpu_bo_gives_back_aperture(struct ttm_buffer_object *tbo)
{
	struct vmgpu_bo *vbo;

	if (!vmgpu_bo_is_vmgpu(tbo))
		return false;
	vbo = to_vmgpu_bo(tbo);
	return (vbo->flags & (DRM_VMGPU_ALLOC_PRIMARY | DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY)) ==
	       DRM_VMGPU_ALLOC_PRIMARY && !READ_ONCE(vbo->display_pins);
}

/*
 * Resident in system memory, it would exceed the limit on such memory
 * (vmgpu_gart.c), or, physically accessed, which means mapped into the
 * aperture, the aperture.
 */
static bool vmgpu_bo_too_big_for_system(struct vmgpu_bo *vbo)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	u64 size = vbo->tbo.base.size;

	return size > vmgpu_gart_system_limit(vdev) ||
	       ((vbo->flags & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY) &&
		size > (u64)vdev->gart_pages << PAGE_SHIFT);
}

/*
 * System memory the device reaches (TT): an AccessedPhysically allocation
 * needs aperture entries, which the range says (vmgpu_gart_intersects()),
 * the others only room under the limit on resident system memory.
 */
static struct ttm_place vmgpu_bo_tt_place(struct vmgpu_bo *vbo, u32 flags)
{
	struct ttm_place place = { .mem_type = TTM_PL_TT, .flags = flags };

	if (vbo->flags & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY)
		place.lpfn = vmgpu_bo_device(vbo)->gart_pages;
	return place;
}

static struct ttm_place *vmgpu_bo_next_place(struct vmgpu_bo *vbo, u32 mem_type,
					     u32 flags)
{
	struct ttm_place *place = &vbo->places[vbo->placement.num_placement++];

	*place = (struct ttm_place){ .mem_type = mem_type, .flags = flags };
	return place;
}

/**
 * vmgpu_bo_cpu_fits_beyond_bar() - whether the CPU could map an allocation
 * of @size wholly beyond the VRAM BAR in place
 * @vdev: the device
 * @size: bytes
 *
 * Return: true if the host aperture could hold all of it.
 */
bool vmgpu_bo_cpu_fits_beyond_bar(struct vmgpu_device *vdev, u64 size)
{
	return size <= (u64)vdev->hap.num_pages << PAGE_SHIFT;
}

static void vmgpu_bo_add_place(struct vmgpu_bo *vbo, u32 segment_id, u32 flags)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	u64 size = vbo->tbo.base.size;
	const struct vmgpu_segment *seg;
	struct ttm_place *place;
	u64 visible;

	if (segment_id == vmgpu_aperture_segment(vdev)) {
		if (!vmgpu_bo_too_big_for_system(vbo))
			vbo->places[vbo->placement.num_placement++] =
				vmgpu_bo_tt_place(vbo, flags);
		return;
	}

	seg = &vdev->segments[segment_id - 1];
	if (vbo->flags & (DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY | DRM_VMGPU_ALLOC_PRIMARY))
		flags |= TTM_PL_FLAG_CONTIGUOUS;
	visible = vmgpu_segment_cpu_visible_size(vdev, seg);
	if (visible == seg->size) {
		vmgpu_bo_next_place(vbo, seg->mem_type, flags);
	} else if (!(vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS)) {
		vmgpu_bo_next_place(vbo, seg->mem_type,
				    visible ? flags | TTM_PL_FLAG_TOPDOWN : flags);
	} else if (!vmgpu_bo_cpu_fits_beyond_bar(vdev, size)) {
		/* Beyond the BAR, the CPU could not map it in place. */
		if (visible < size)
			return;
		place = vmgpu_bo_next_place(vbo, seg->mem_type, flags);
		place->lpfn = visible >> PAGE_SHIFT;
	} else {
		/*
		 * The visible part if it has room, else anywhere: TTM's
		 * first pass tries both without evicting, the second, which
		 * evicts, skips the desired place.
		 */
		if (!(flags & TTM_PL_FLAG_FALLBACK) && visible >= size) {
			place = vmgpu_bo_next_place(vbo, seg->mem_type,
						    flags | TTM_PL_FLAG_DESIRED);
			place->lpfn = visible >> PAGE_SHIFT;
		}
		vmgpu_bo_next_place(vbo, seg->mem_type, flags);
	}
}

/*
 * Preferred segment first; the rest of the set are fallbacks, in id order.
 * If the preferred segment can never hold the allocation, the first of the
 * others takes its role: TTM's first pass, which does not evict, skips
 * fallbacks.
 */
static void vmgpu_bo_build_placement(struct vmgpu_bo *vbo)
{
	u32 id;

	vbo->placement.placement = vbo->places;
	vbo->placement.num_placement = 0;
	vmgpu_bo_add_place(vbo, vbo->preferred, 0);
	vbo->num_preferred = vbo->placement.num_placement;
	for (id = 1; id < BITS_PER_TYPE(vbo->segments); id++)
		if ((vbo->segments & BIT(id)) && id != vbo->preferred)
			vmgpu_bo_add_place(vbo, id, vbo->placement.num_placement ?
					   TTM_PL_FLAG_FALLBACK : 0);
}

/**
 * vmgpu_bo_add_flags() - an import gains allocation flags
 * @vbo: the import, reserved
 * @flags: DRM_VMGPU_ALLOC_* flags its placement follows from
 *
 * Its placement is rebuilt; the caller validates it again if resident.
 */
void vmgpu_bo_add_flags(struct vmgpu_bo *vbo, u32 flags)
{
	dma_resv_assert_held(vbo->tbo.base.resv);
	WRITE_ONCE(vbo->flags, vbo->flags | flags);
	vmgpu_bo_build_placement(vbo);
}

/**
 * vmgpu_bo_evict_placement() - where TTM sends an allocation it evicts
 * @tbo: the allocation
 * @placement: out
 *
 * System memory (TT) when the aperture segment is in the set, else TTM
 * system, out of the GPU's reach. An AccessedPhysically allocation that
 * finds the aperture full, or is larger than all of it, goes to TTM system
 * as well: it is then not resident, which the seed allows; so does one
 * larger than the limit on resident system memory. So does one
 * evicted from TT, for aperture space or for the limit on resident system
 * memory (vmgpu_gart.c).
 *
 * Context: @tbo reserved.
 */
void vmgpu_bo_evict_placement(struct ttm_buffer_object *tbo,
			      struct ttm_placement *placement)
{
	static const struct ttm_place system = { .mem_type = TTM_PL_SYSTEM };
	struct vmgpu_bo *vbo;

	placement->placement = &system;
	placement->num_placement = 1;
	if (!vmgpu_bo_is_vmgpu(tbo) || tbo->resource->mem_type == TTM_PL_TT)
		return;
	vbo = to_vmgpu_bo(tbo);
	if ((vbo->segments & BIT(vmgpu_aperture_segment(vmgpu_bo_device(vbo)))) &&
	    !vmgpu_bo_too_big_for_system(vbo)) {
		vbo->evict_places[0] = vmgpu_bo_tt_place(vbo, 0);
		vbo->evict_places[1] = system;
		vbo->evict_places[1].flags = TTM_PL_FLAG_FALLBACK;
		placement->placement = vbo->evict_places;
		placement->num_placement = ARRAY_SIZE(vbo->evict_places);
	}
}

/**
 * vmgpu_bo_residency() - the segment an allocation is resident in
 * @vbo: the allocation, reserved
 * @offset: out, its physical reference offset, if it has one
 *
 * Only AccessedPhysically and primary allocations have physical references:
 * another allocation may happen to be contiguous, but nothing keeps it so
 * across moves, and engines may not reference it physically (seed "GPU
 * segments").
 *
 * Return: the segment id, with DRM_VMGPU_RESIDENCY_PHYSICAL in the upper
 * half when (segment id, *offset) is a physical reference.
 */
u64 vmgpu_bo_residency(struct vmgpu_bo *vbo, u64 *offset)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	struct ttm_resource *res = vbo->tbo.resource;
	const struct vmgpu_segment *seg;

	dma_resv_assert_held(vbo->tbo.base.resv);
	*offset = 0;
	if (!res)
		return 0;
	if (res->mem_type == TTM_PL_TT)
		return vmgpu_gart_res_offset(res, offset) ?
		       (u64)DRM_VMGPU_RESIDENCY_PHYSICAL << 32 | vmgpu_aperture_segment(vdev) : 0;
	seg = vmgpu_bo_mem_segment(vdev, res->mem_type);
	if (!seg)
		return 0;
	if (!(vbo->flags & (DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY | DRM_VMGPU_ALLOC_PRIMARY)) ||
	    !vmgpu_vram_res_is_contiguous(vdev, res))
		return seg->id;
	*offset = (u64)res->start << PAGE_SHIFT;
	return (u64)DRM_VMGPU_RESIDENCY_PHYSICAL << 32 | seg->id;
}

/**
 * vmgpu_bo_wait_idle() - wait until no queued work uses an allocation
 * @vbo: the allocation, not reserved (waiting under the reservation would
 *	 hold up the moves that work may wait for)
 * @timeout: jiffies; 0 only looks, MAX_SCHEDULE_TIMEOUT waits for ever
 *
 * Queued work is every fence on the reservation: the kernel's clears and
 * moves, and the user jobs that had it mapped or listed. Sleeps
 * interruptibly, without polling.
 *
 * Return: 0 when idle; -EBUSY if @timeout is 0 and it is not; -ETIME
 * when @timeout ran out; -ERESTARTSYS if interrupted.
 */
int vmgpu_bo_wait_idle(struct vmgpu_bo *vbo, long timeout)
{
	struct dma_resv *resv = vbo->tbo.base.resv;
	long ret;

	if (!timeout)
		return dma_resv_test_signaled(resv, DMA_RESV_USAGE_BOOKKEEP) ? 0 : -EBUSY;
	ret = dma_resv_wait_timeout(resv, DMA_RESV_USAGE_BOOKKEEP, true, timeout);
	if (ret < 0)
		return ret;
	return ret ? 0 : -ETIME;
}

/**
 * vmgpu_bo_physical_address() - where an engine in physical addressing
 * mode reaches an allocation
 * @vbo: the allocation, reserved
 * @space: out, VMGPU_SPACE_VRAM or VMGPU_SPACE_GART
 * @addr: out, the device address of its first byte
 *
 * The physical reference (segment id, offset) as the device addresses it:
 * a memory segment by VRAM offset, the aperture segment by aperture offset.
 *
 * Return: 0, or -ENOSPC if the allocation has no physical reference now.
 */
int vmgpu_bo_physical_address(struct vmgpu_bo *vbo, u32 *space, u64 *addr)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	u64 offset, residency = vmgpu_bo_residency(vbo, &offset);
	u32 id = lower_32_bits(residency);

	if (!(upper_32_bits(residency) & DRM_VMGPU_RESIDENCY_PHYSICAL))
		return -ENOSPC;
	if (id == vmgpu_aperture_segment(vdev)) {
		*space = VMGPU_SPACE_GART;
		*addr = offset;
	} else {
		*space = VMGPU_SPACE_VRAM;
		*addr = vdev->segments[id - 1].vram_base + offset;
	}
	return 0;
}

/**
 * vmgpu_bo_is_resident() - whether the device can reach an allocation
 * @tbo: the allocation, reserved
 *
 * Return: true in a memory segment or in system memory the device reaches
 * (TT, mapped into the aperture or not); false out of its reach (TTM
 * system) or without backing.
 */
bool vmgpu_bo_is_resident(struct ttm_buffer_object *tbo)
{
	return tbo->resource && tbo->resource->mem_type != TTM_PL_SYSTEM;
}

/**
 * vmgpu_bo_segment_id() - the segment an allocation is resident in
 * @vbo: the allocation, reserved
 *
 * Return: its segment id (0 for system memory not mapped into the aperture).
 */
u32 vmgpu_bo_segment_id(struct vmgpu_bo *vbo)
{
	u64 offset;

	return lower_32_bits(vmgpu_bo_residency(vbo, &offset));
}

/**
 * vmgpu_bo_destroy() - TTM's destroy callback of an allocation
 * @tbo: the allocation, unreferenced
 *
 * Also what tells allocations from TTM's ghost objects
 * (vmgpu_bo_is_vmgpu()).
 */
void vmgpu_bo_destroy(struct ttm_buffer_object *tbo)
{
	struct vmgpu_bo *vbo = to_vmgpu_bo(tbo);
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);

	mutex_lock(&vdev->bos_lock);
	list_del(&vbo->link);
	mutex_unlock(&vdev->bos_lock);
	dma_fence_put(vbo->paging_fence);
	vmgpu_stats_put(vbo->stats);
	if (vmgpu_bo_is_import(vbo)) {
		vmgpu_prime_release(vbo);
		return;
	}
	drm_gem_object_release(&tbo->base);
	kfree(vbo);
}

static void vmgpu_gem_free(struct drm_gem_object *obj)
{
	struct vmgpu_bo *vbo = to_vmgpu_bo(container_of(obj, struct ttm_buffer_object, base));
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);

	/* Not while unplug walks TTM's LRUs (&vmgpu_device.unplug_sem). */
	down_read(&vdev->unplug_sem);
	ttm_bo_put(&vbo->tbo);
	up_read(&vdev->unplug_sem);
}

/* An allocation evicted out of the device's reach is not resident. */
static enum drm_gem_object_status vmgpu_gem_status(struct drm_gem_object *obj)
{
	struct ttm_buffer_object *tbo = container_of(obj, struct ttm_buffer_object, base);
	enum drm_gem_object_status status = 0;

	if (dma_resv_trylock(obj->resv)) {
		if (vmgpu_bo_is_resident(tbo))
			status = DRM_GEM_OBJECT_RESIDENT;
		dma_resv_unlock(obj->resv);
	}
	return status;
}

static const struct drm_gem_object_funcs vmgpu_gem_funcs = {
	.free = vmgpu_gem_free,
	.close = vmgpu_lock_gem_close,
	.mmap = vmgpu_gem_mmap,
	.vmap = vmgpu_gem_vmap,
	.vunmap = vmgpu_gem_vunmap,
	.export = vmgpu_gem_prime_export,
	.print_info = drm_gem_ttm_print_info,
	.status = vmgpu_gem_status,
};

/**
 * vmgpu_bo_alloc() - a new allocation, not yet placed
 * @vdev: the device
 * @size: bytes, already rounded up to the set's largest page size
 * @flags: DRM_VMGPU_ALLOC_* flags, already validated
 * @segments: supported set, already validated
 * @preferred: preferred segment id, in @segments
 *
 * Free it with vmgpu_bo_free_unplaced(), or place it with vmgpu_bo_place().
 *
 * Return: the allocation, or an ERR_PTR: -E2BIG if no segment of the set
 * could ever hold it, -ENOMEM.
 */
struct vmgpu_bo *vmgpu_bo_alloc(struct vmgpu_device *vdev, u64 size, u32 flags,
				u32 segments, u32 preferred)
{
	struct vmgpu_bo *vbo;

	vbo = kzalloc(sizeof(*vbo), GFP_KERNEL);
	if (!vbo)
		return ERR_PTR(-ENOMEM);
	vbo->flags = flags;
	vbo->segments = segments;
	vbo->preferred = preferred;
	INIT_LIST_HEAD(&vbo->link);
	INIT_LIST_HEAD(&vbo->hap_link);

	drm_gem_private_object_init(&vdev->drm, &vbo->tbo.base, size);
	vbo->tbo.base.funcs = &vmgpu_gem_funcs;
	vmgpu_bo_build_placement(vbo);
	if (!vbo->placement.num_placement) {
		vmgpu_bo_free_unplaced(vbo);
		return ERR_PTR(-E2BIG);
	}
	return vbo;
}

/**
 * vmgpu_bo_free_unplaced() - free an allocation vmgpu_bo_place() never saw
 * @vbo: from vmgpu_bo_alloc()
 */
void vmgpu_bo_free_unplaced(struct vmgpu_bo *vbo)
{
	drm_gem_object_release(&vbo->tbo.base);
	kfree(vbo);
}

/**
 * vmgpu_bo_place() - give an allocation its first backing
 * @vbo: from vmgpu_bo_alloc()
 * @type: ttm_bo_type_device, or ttm_bo_type_sg for an import
 * @stats: the creating file's statistics, or NULL
 *
 * The first backing is clear before anyone can map it: VRAM cleared by
 * the device, system pages zeroed (see the move callback). An import's
 * pages are the exporter's, with their contents.
 *
 * Context: an import's reservation (the dma-buf's) held.
 * Return: 0, with the allocation reserved unless it is an import; or a
 * negative errno, after which @vbo is gone (its last reference dropped).
 */
int vmgpu_bo_place(struct vmgpu_bo *vbo, enum ttm_bo_type type, struct vmgpu_stats *stats)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct dma_resv *resv = type == ttm_bo_type_sg ? vbo->tbo.base.resv : NULL;
	int ret;

	vbo->stats = vmgpu_stats_get(stats);
	/* On failure TTM drops the object through vmgpu_bo_destroy(). */
	ret = ttm_bo_init_reserved(&vdev->ttm, &vbo->tbo, type, &vbo->placement, 0,
				   &ctx, NULL, resv, vmgpu_bo_destroy);
	if (ret)
		return ret;
	/* Listed for debugfs only once TTM has set it up. */
	mutex_lock(&vdev->bos_lock);
	list_add_tail(&vbo->link, &vdev->bos);
	mutex_unlock(&vdev->bos_lock);
	return 0;
}

/**
 * vmgpu_bo_create() - create an allocation and place it
 * @vdev: the device
 * @size: bytes, already rounded up to the set's largest page size
 * @flags: DRM_VMGPU_ALLOC_* flags, already validated
 * @segments: supported set, already validated
 * @preferred: preferred segment id, in @segments
 * @stats: the creating file's statistics, or NULL
 *
 * Return: the allocation with one GEM reference, or an ERR_PTR.
 */
struct vmgpu_bo *vmgpu_bo_create(struct vmgpu_device *vdev, u64 size, u32 flags,
				 u32 segments, u32 preferred, struct vmgpu_stats *stats)
{
	struct vmgpu_bo *vbo;
	int ret;

	vbo = vmgpu_bo_alloc(vdev, size, flags, segments, preferred);
	if (IS_ERR(vbo))
		return vbo;
	ret = vmgpu_bo_place(vbo, ttm_bo_type_device, stats);
	if (ret)
		return ERR_PTR(ret);
	ttm_bo_unreserve(&vbo->tbo);
	return vbo;
}

/* Out of the device's reach: the allocation is made non-resident. */
static int vmgpu_bo_make_nonresident(struct vmgpu_bo *vbo)
{
	static const struct ttm_place system = { .mem_type = TTM_PL_SYSTEM };
	struct ttm_placement placement = { .num_placement = 1, .placement = &system };
	struct ttm_operation_ctx ctx = { .interruptible = true };

	return ttm_bo_validate(&vbo->tbo, &placement, &ctx);
}

/**
 * vmgpu_bo_evict() - WDDM Evict for one allocation
 * @vbo: the allocation
 * @flags: 0, or %DRM_VMGPU_EVICT_NONRESIDENT to take it out of the
 *	   device's reach from any segment
 *
 * Moves it where memory pressure would; a move by the device is queued,
 * not waited for. Leaving the aperture or system segment waits for its
 * users; the device's NotifyEviction, if it asked for one, is queued
 * before the move (vmgpu_notify_eviction()).
 *
 * Return: 0; -EBUSY for an allocation a display shows (pinned); an error of
 * TTM's (-EINTR, -ERESTARTSYS, -ENOMEM, -EBUSY when its users do not
 * finish); or of building the notification (-ENOMEM), after which the
 * allocation stays where it was.
 */
int vmgpu_bo_evict(struct vmgpu_bo *vbo, u32 flags)
{
	int ret;

	ret = ttm_bo_reserve(&vbo->tbo, true, false, NULL);
	if (ret)
		return ret;
	/* A primary on screen stays where the display controller reads it. */
	if (vbo->tbo.pin_count)
		ret = -EBUSY;
	else if (flags & DRM_VMGPU_EVICT_NONRESIDENT)
		ret = vmgpu_bo_make_nonresident(vbo);
	else if (vmgpu_bo_in_memory_segment(vbo))
		ret = vmgpu_bo_move_to_system(vbo);
	ttm_bo_unreserve(&vbo->tbo);
	return ret;
}

/**
 * vmgpu_bo_in_memory_segment() - whether an allocation lives in VRAM
 * @vbo: the allocation, reserved
 *
 * Return: true if its backing is in a memory segment.
 */
bool vmgpu_bo_in_memory_segment(struct vmgpu_bo *vbo)
{
	struct ttm_resource *res = vbo->tbo.resource;

	dma_resv_assert_held(vbo->tbo.base.resv);
	return res && res->mem_type >= VMGPU_TTM_FIRST_SEGMENT;
}

/**
 * vmgpu_bo_move_to_system() - evict an allocation from its memory segment
 * @vbo: the allocation, reserved, in a memory segment
 *
 * Where memory pressure would send it (vmgpu_bo_evict_placement()); the
 * move is queued, not waited for.
 *
 * Return: 0 or an error of TTM's (-EINTR, -ERESTARTSYS, -ENOMEM, -ENOSPC).
 */
int vmgpu_bo_move_to_system(struct vmgpu_bo *vbo)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct ttm_placement placement;

	vmgpu_bo_evict_placement(&vbo->tbo, &placement);
	return ttm_bo_validate(&vbo->tbo, &placement, &ctx);
}

/*
 * A lock on an allocation without CPU access holds it in system memory
 * (seed "Lock2"): it may become resident there, in the aperture segment,
 * if that is in its set, and not at all otherwise.
 */
static bool vmgpu_bo_held_in_system(struct vmgpu_bo *vbo)
{
	return vbo->locked_by && !(vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS);
}

static int vmgpu_bo_validate_in_system(struct vmgpu_bo *vbo,
				       struct ttm_operation_ctx *ctx)
{
	struct ttm_place tt = vmgpu_bo_tt_place(vbo, 0);
	struct ttm_placement placement = { .num_placement = 1, .placement = &tt };

	/* Nor does the GPU get a swizzled one the CPU sees unswizzled. */
	if (!(vbo->segments & BIT(vmgpu_aperture_segment(vmgpu_bo_device(vbo)))) ||
	    vmgpu_bo_too_big_for_system(vbo) || vbo->unswizzled)
		return -EBUSY;
	return ttm_bo_validate(&vbo->tbo, &placement, ctx);
}

/**
 * vmgpu_bo_validate() - make an allocation resident for GPU work
 * @vbo: the allocation, reserved
 * @ctx: TTM's operation context
 *
 * Anywhere in its supported set, unless a lock holds it in system memory
 * (then only in the aperture segment) or it is swizzled and its system
 * pages hold it unswizzled (then only in a memory segment).
 *
 * Return: 0; -EBUSY if a lock keeps it out of the device's reach; an
 * error of TTM's.
 */
int vmgpu_bo_validate(struct vmgpu_bo *vbo, struct ttm_operation_ctx *ctx)
{
	int ret;

	dma_resv_assert_held(vbo->tbo.base.resv);
	ret = vmgpu_prime_settle(vbo);
	if (ret)
		return ret;
	if (vmgpu_bo_held_in_system(vbo))
		return vmgpu_bo_validate_in_system(vbo, ctx);
	return vmgpu_swizzle_validate(vbo, ctx);
}

/**
 * vmgpu_bo_make_resident() - WDDM MakeResident for one allocation
 * @vbo: the allocation
 *
 * Tries the preferred segment alone first, evicting what is needed, then
 * the whole supported set (which starts with the preferred segment, or if
 * that can never hold the allocation, with the next of the set). The moves
 * are queued, not waited for.
 *
 * A lock holding an allocation without CPU access in system memory
 * limits it to the aperture segment (vmgpu_bo_validate()).
 *
 * Return: 0, -ENOSPC if no segment of the set can take it, -EBUSY if a
 * lock keeps it out of the device's reach, or an error of TTM's (-EINTR,
 * -ERESTARTSYS, -ENOMEM).
 */
int vmgpu_bo_make_resident(struct vmgpu_bo *vbo)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct ttm_placement preferred = {
		.num_placement = vbo->num_preferred,
		.placement = vbo->places,
	};
	int ret;

	ret = ttm_bo_reserve(&vbo->tbo, true, false, NULL);
	if (ret)
		return ret;
	if (vmgpu_bo_held_in_system(vbo) || vbo->unswizzled) {
		/* It settles a moved import itself. */
		ret = vmgpu_bo_validate(vbo, &ctx);
		goto unreserve;
	}
	/* Not bound again to the pages an exporter moved: mapped anew. */
	ret = vmgpu_prime_settle(vbo);
	if (ret)
		goto unreserve;
	ret = vbo->num_preferred ? ttm_bo_validate(&vbo->tbo, &preferred, &ctx) : -ENOSPC;
	if (ret == -ENOSPC || ret == -ENOMEM)
		ret = ttm_bo_validate(&vbo->tbo, &vbo->placement, &ctx);
unreserve:
	ttm_bo_unreserve(&vbo->tbo);
	return ret;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_bo_test.c"
#endif
