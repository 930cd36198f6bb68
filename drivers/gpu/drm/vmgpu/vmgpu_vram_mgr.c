// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>
#include <linux/slab.h>

#include <drm/drm_buddy.h>
#include <drm/drm_print.h>
#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_placement.h>

#include "vmgpu_device.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_vram.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: memory segment manager
 *
 * Seed "GPU segments": VidMm manages a memory segment as a pool of 4 KiB or
 * 64 KiB physical pages. Each memory segment is one TTM memory type on a
 * buddy allocator whose chunk is the segment's page size, so an allocation
 * is a set of pages, in no particular order. AccessedPhysically and primary
 * allocations ask for TTM_PL_FLAG_CONTIGUOUS and get one range, which is
 * their physical reference (segment id, offset). CPU-accessible allocations
 * are limited to the part of the segment the VRAM BAR reaches (lpfn); the
 * others are placed top-down to leave that part free.
 */

static struct vmgpu_vram_resource *to_vram_res(struct ttm_resource *res)
{
	return container_of(res, struct vmgpu_vram_resource, base);
}

static struct vmgpu_vram_mgr *to_vram_mgr(struct ttm_resource_manager *man)
{
	return container_of(man, struct vmgpu_vram_mgr, manager);
}

/* The byte range of the segment a place allows, [*start, *end). */
static void vmgpu_place_range(const struct vmgpu_vram_mgr *mgr,
			      const struct ttm_place *place, u64 *start, u64 *end)
{
	*start = (u64)place->fpfn << PAGE_SHIFT;
	*end = place->lpfn ? (u64)place->lpfn << PAGE_SHIFT : mgr->segment->size;
}

/*
 * A top-down allocation keeps out of the CPU-visible part. The buddy
 * allocator's own top-down looks among cleared or among dirty blocks, not
 * among both, and a range of it prefers cleared blocks only among whole
 * free ones (DOC: scrubbing freed VRAM). So the highest cleared blocks
 * first, kept if they all lie beyond the BAR; else they go back as they
 * were (gpu_buddy_free_block() keeps each one's clear state) and the part
 * beyond the BAR is asked for, lowest blocks first. Not for a contiguous
 * one: a failed search over the whole segment merges cleared blocks of
 * the CPU-visible part with dirty ones (and tries harder there) before
 * it gives up.
 */
static int vmgpu_vram_mgr_take_beyond_bar(struct vmgpu_vram_mgr *mgr, u64 size,
					  struct list_head *blocks, unsigned long flags)
{
	u64 page = mgr->segment->page_size, end = mgr->segment->size;
	struct gpu_buddy_block *block, *next;
	LIST_HEAD(highest);

	if ((flags & GPU_BUDDY_CLEAR_ALLOCATION) && !(flags & GPU_BUDDY_CONTIGUOUS_ALLOCATION) &&
	    !gpu_buddy_alloc_blocks(&mgr->mm, 0, end, size, page, &highest,
				    flags | GPU_BUDDY_TOPDOWN_ALLOCATION)) {
		list_for_each_entry(block, &highest, link)
			if (gpu_buddy_block_offset(block) < mgr->cpu_visible)
				break;
		if (list_entry_is_head(block, &highest, link)) {
			list_splice_tail(&highest, blocks);
			return 0;
		}
		list_for_each_entry_safe(block, next, &highest, link) {
			list_del(&block->link);
			gpu_buddy_free_block(&mgr->mm, block);
		}
	}
	return gpu_buddy_alloc_blocks(&mgr->mm, mgr->cpu_visible, end, size, page, blocks,
				      flags | GPU_BUDDY_RANGE_ALLOCATION);
}

/**
 * vmgpu_vram_mgr_alloc_blocks() - take pages of a memory segment
 * @mgr: the segment's manager
 * @place: where in the segment, and how (contiguous, top-down)
 * @size: bytes, a multiple of the segment's page size
 * @blocks: the buddy blocks are added here
 * @clear_fence: NULL, or ask for cleared pages first (DOC: scrubbing freed
 *		 VRAM); then set to the fence of the scrubs that cleared them
 *		 if only cleared pages came, else to NULL
 *
 * The allocator alone, without TTM state, so that KUnit can test it.
 *
 * Return: 0, -ENOSPC if @place cannot hold @size now or ever (TTM then
 * evicts or tries its next place), -EINVAL for a malformed request.
 */
int vmgpu_vram_mgr_alloc_blocks(struct vmgpu_vram_mgr *mgr,
				const struct ttm_place *place, u64 size,
				struct list_head *blocks, struct dma_fence **clear_fence)
{
	struct gpu_buddy_block *block;
	unsigned long flags = 0;
	u64 start, end;
	int ret;

	vmgpu_place_range(mgr, place, &start, &end);
	if (end > mgr->segment->size || start >= end ||
	    !IS_ALIGNED(size, mgr->segment->page_size))
		return -EINVAL;
	/* Never fits this place: -ENOSPC so that TTM tries the next one. */
	if (size > end - start)
		return -ENOSPC;

	if (place->flags & TTM_PL_FLAG_CONTIGUOUS)
		flags |= GPU_BUDDY_CONTIGUOUS_ALLOCATION;
	if (clear_fence)
		flags |= GPU_BUDDY_CLEAR_ALLOCATION;

	mutex_lock(&mgr->lock);
	if (clear_fence)
		vmgpu_vram_scrub_check(vmgpu_vram_mgr_device(mgr), mgr);
	ret = -ENOSPC;
	if ((place->flags & TTM_PL_FLAG_TOPDOWN) && !start && end == mgr->segment->size &&
	    mgr->cpu_visible && mgr->cpu_visible < end && end - mgr->cpu_visible >= size)
		ret = vmgpu_vram_mgr_take_beyond_bar(mgr, size, blocks, flags);
	if (ret) {
		if (place->flags & TTM_PL_FLAG_TOPDOWN)
			flags |= GPU_BUDDY_TOPDOWN_ALLOCATION;
		if (start || end != mgr->segment->size)
			flags |= GPU_BUDDY_RANGE_ALLOCATION;
		ret = gpu_buddy_alloc_blocks(&mgr->mm, start, end, size,
					     mgr->segment->page_size, blocks, flags);
	}
	if (!ret && clear_fence) {
		*clear_fence = NULL;
		list_for_each_entry(block, blocks, link)
			if (!gpu_buddy_block_is_clear(block))
				break;
		/* Cleared blocks come only from scrubs of the current chain. */
		if (list_entry_is_head(block, blocks, link) && mgr->scrub_fence)
			*clear_fence = dma_fence_get(mgr->scrub_fence);
	}
	mutex_unlock(&mgr->lock);
	/* TTM evicts on -ENOSPC; anything else from the buddy is the same. */
	return ret ? -ENOSPC : 0;
}

/* start is the lowest page: the physical reference when contiguous. */
static void vmgpu_vram_res_set_start(struct vmgpu_vram_resource *vres)
{
	struct gpu_buddy_block *block;

	vres->base.start = ULONG_MAX;
	list_for_each_entry(block, &vres->blocks, link)
		vres->base.start = min_t(unsigned long, vres->base.start,
					 gpu_buddy_block_offset(block) >> PAGE_SHIFT);
}

static int vmgpu_vram_mgr_alloc(struct ttm_resource_manager *man,
				struct ttm_buffer_object *tbo,
				const struct ttm_place *place,
				struct ttm_resource **res)
{
	struct vmgpu_vram_mgr *mgr = to_vram_mgr(man);
	struct vmgpu_vram_resource *vres;
	int ret;

	vres = kzalloc(sizeof(*vres), GFP_KERNEL);
	if (!vres)
		return -ENOMEM;
	INIT_LIST_HEAD(&vres->blocks);
	ret = vmgpu_vram_mgr_alloc_blocks(mgr, place, tbo->base.size, &vres->blocks,
					  READ_ONCE(vmgpu_vram_mgr_device(mgr)->vram_scrub_on) ?
					  &vres->clear_fence : NULL);
	if (ret) {
		kfree(vres);
		return ret;
	}
	ttm_resource_init(tbo, place, &vres->base);

	vmgpu_vram_res_set_start(vres);
	*res = &vres->base;
	return 0;
}

static void vmgpu_vram_mgr_free(struct ttm_resource_manager *man,
				struct ttm_resource *res)
{
	struct vmgpu_vram_resource *vres = to_vram_res(res);
	struct vmgpu_vram_mgr *mgr = to_vram_mgr(man);

	mutex_lock(&mgr->lock);
	gpu_buddy_free_list(&mgr->mm, &vres->blocks, 0);
	mutex_unlock(&mgr->lock);
	dma_fence_put(vres->clear_fence);
	ttm_resource_fini(man, res);
	kfree(vres);
	vmgpu_vram_scrub_queue(vmgpu_vram_mgr_device(mgr));
}

/**
 * vmgpu_vram_res_clear_fence() - whether a new backing was scrubbed
 * @res: a resource of a memory segment
 *
 * Return: the fence of the scrubs that cleared every page of @res (DOC:
 * scrubbing freed VRAM), or NULL if it needs a clear of its own.
 */
struct dma_fence *vmgpu_vram_res_clear_fence(struct ttm_resource *res)
{
	return to_vram_res(res)->clear_fence;
}

static bool vmgpu_vram_mgr_intersects(struct ttm_resource_manager *man,
				      struct ttm_resource *res,
				      const struct ttm_place *place, size_t size)
{
	struct vmgpu_vram_mgr *mgr = to_vram_mgr(man);
	struct gpu_buddy_block *block;
	u64 start, end;

	vmgpu_place_range(mgr, place, &start, &end);
	list_for_each_entry(block, &to_vram_res(res)->blocks, link) {
		u64 offset = gpu_buddy_block_offset(block);

		if (offset < end && offset + gpu_buddy_block_size(&mgr->mm, block) > start)
			return true;
	}
	return false;
}

static bool vmgpu_vram_mgr_compatible(struct ttm_resource_manager *man,
				      struct ttm_resource *res,
				      const struct ttm_place *place, size_t size)
{
	struct vmgpu_vram_mgr *mgr = to_vram_mgr(man);
	u64 next = (u64)res->start << PAGE_SHIFT;
	struct gpu_buddy_block *block;
	u64 start, end;

	vmgpu_place_range(mgr, place, &start, &end);
	list_for_each_entry(block, &to_vram_res(res)->blocks, link) {
		u64 offset = gpu_buddy_block_offset(block);
		u64 len = gpu_buddy_block_size(&mgr->mm, block);

		if (offset < start || offset + len > end)
			return false;
		if ((place->flags & TTM_PL_FLAG_CONTIGUOUS) && offset != next)
			return false;
		next = offset + len;
	}
	return true;
}

static void vmgpu_vram_mgr_debug(struct ttm_resource_manager *man,
				 struct drm_printer *printer)
{
	struct vmgpu_vram_mgr *mgr = to_vram_mgr(man);

	drm_printf(printer, "segment %u: %llu of %llu bytes free, page %u\n",
		   mgr->segment->id, mgr->mm.avail, mgr->segment->size,
		   mgr->segment->page_size);
	mutex_lock(&mgr->lock);
	drm_buddy_print(&mgr->mm, printer);
	mutex_unlock(&mgr->lock);
	vmgpu_vram_scrub_print(mgr, printer);
}

static const struct ttm_resource_manager_func vmgpu_vram_mgr_func = {
	.alloc = vmgpu_vram_mgr_alloc,
	.free = vmgpu_vram_mgr_free,
	.intersects = vmgpu_vram_mgr_intersects,
	.compatible = vmgpu_vram_mgr_compatible,
	.debug = vmgpu_vram_mgr_debug,
};

/**
 * vmgpu_vram_res_cursor_init() - point a cursor at a resource's first block
 * @vdev: the device
 * @res: a resource of a memory segment
 * @cur: the cursor; vmgpu_res_first() computes the first run
 */
void vmgpu_vram_res_cursor_init(struct vmgpu_device *vdev, struct ttm_resource *res,
				struct vmgpu_res_cursor *cur)
{
	struct vmgpu_vram_mgr *mgr = to_vram_mgr(ttm_manager_type(&vdev->ttm,
								  res->mem_type));
	struct vmgpu_vram_resource *vres = to_vram_res(res);

	cur->mm = &mgr->mm;
	cur->blocks = &vres->blocks;
	cur->block = list_first_entry(&vres->blocks, struct gpu_buddy_block, link);
	cur->block_pos = 0;
	cur->vram_base = mgr->segment->vram_base;
}

/**
 * vmgpu_vram_res_is_contiguous() - whether a resource is one VRAM range
 * @vdev: the device
 * @res: a resource of a memory segment
 *
 * Return: true if its blocks are adjacent, so (segment, res->start) is a
 * physical reference for all of it.
 */
bool vmgpu_vram_res_is_contiguous(struct vmgpu_device *vdev,
				  struct ttm_resource *res)
{
	struct ttm_place whole = {
		.mem_type = res->mem_type,
		.flags = TTM_PL_FLAG_CONTIGUOUS,
	};

	return vmgpu_vram_mgr_compatible(ttm_manager_type(&vdev->ttm, res->mem_type),
					 res, &whole, res->size);
}

/**
 * vmgpu_vram_res_page_offset() - VRAM offset of one page of a resource
 * @vdev: the device
 * @res: a resource of a memory segment
 * @page: page index (PAGE_SIZE units) in the allocation
 *
 * Return: the page's VRAM offset.
 */
u64 vmgpu_vram_res_page_offset(struct vmgpu_device *vdev,
			       struct ttm_resource *res, unsigned long page)
{
	struct vmgpu_vram_mgr *mgr = to_vram_mgr(ttm_manager_type(&vdev->ttm,
								  res->mem_type));
	u64 skip = (u64)page << PAGE_SHIFT;
	struct gpu_buddy_block *block;

	list_for_each_entry(block, &to_vram_res(res)->blocks, link) {
		u64 len = gpu_buddy_block_size(&mgr->mm, block);

		if (skip < len)
			return mgr->segment->vram_base +
			       gpu_buddy_block_offset(block) + skip;
		skip -= len;
	}
	return mgr->segment->vram_base;
}

/**
 * vmgpu_vram_mgr_init() - register a TTM manager for each memory segment
 * @vdev: the device, with its TTM device initialised
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_vram_mgr_init(struct vmgpu_device *vdev)
{
	u32 i;
	int ret;

	ret = vmgpu_vram_scrub_init(vdev);
	if (ret)
		return ret;
	for (i = 0; i < vdev->num_segments; i++) {
		struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[i];
		struct vmgpu_segment *seg = &vdev->segments[i];

		mgr->segment = seg;
		mgr->cpu_visible = vmgpu_segment_cpu_visible_size(vdev, seg);
		mutex_init(&mgr->lock);
		INIT_LIST_HEAD(&mgr->scrub_res.blocks);
		mgr->scrub_res.base.mem_type = seg->mem_type;
		ret = gpu_buddy_init(&mgr->mm, seg->size, seg->page_size);
		if (ret) {
			vmgpu_vram_mgr_fini(vdev, i);
			return ret;
		}
		mgr->manager.func = &vmgpu_vram_mgr_func;
		ttm_resource_manager_init(&mgr->manager, &vdev->ttm, seg->size);
		ttm_set_driver_manager(&vdev->ttm, seg->mem_type, &mgr->manager);
		ttm_resource_manager_set_used(&mgr->manager, true);
	}
	return 0;
}

/**
 * vmgpu_vram_mgr_fini() - evict everything and tear the managers down
 * @vdev: the device
 * @count: how many segments, from the first, have a manager
 */
void vmgpu_vram_mgr_fini(struct vmgpu_device *vdev, u32 count)
{
	u32 i;

	vmgpu_vram_scrub_fini(vdev, count);
	for (i = 0; i < count; i++) {
		struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[i];

		ttm_resource_manager_set_used(&mgr->manager, false);
		ttm_resource_manager_evict_all(&vdev->ttm, &mgr->manager);
		/* The fence of the last pipelined eviction, still held. */
		ttm_resource_manager_cleanup(&mgr->manager);
		ttm_set_driver_manager(&vdev->ttm, mgr->segment->mem_type, NULL);
		gpu_buddy_fini(&mgr->mm);
		dma_fence_put(mgr->scrub_fence);
		mutex_destroy(&mgr->lock);
	}
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_vram_mgr_test.c"
#endif
