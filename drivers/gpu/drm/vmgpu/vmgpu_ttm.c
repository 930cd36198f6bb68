// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-resv.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_placement.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_drm.h"
#include "vmgpu_bo.h"
#include "vmgpu_cache.h"
#include "vmgpu_device.h"
#include "vmgpu_gart.h"
#include "vmgpu_hap.h"
#include "vmgpu_migrate.h"
#include "vmgpu_notify.h"
#include "vmgpu_paging_op.h"
#include "vmgpu_prime.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_stats.h"
#include "vmgpu_swizzle.h"
#include "vmgpu_trace.h"
#include "vmgpu_ttm.h"
#include "vmgpu_vm.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: TTM glue
 *
 * The TTM device callbacks: system pages come from TTM's pool, DMA-mapped
 * through the IOMMU; moves become paging operations (seed "GPU
 * segments") whose fence TTM pipelines with ttm_bo_move_accel_cleanup(),
 * so neither an eviction nor the allocation that caused it waits on the
 * CPU for the copy. Leaving the device's reach, an allocation waits for
 * its users (its aperture entries go), and the NotifyEviction and cache
 * flush it may need are queued like a copy (vmgpu_notify.c).
 */

/*
 * The pages of an allocation: whether they need a NotifyIoMmuUnmap is kept
 * with them, since a TTM ghost may be the one that unpopulates them.
 */
struct vmgpu_tt {
	struct ttm_tt base;
	bool notify_iommu_unmap;
	/* The allocation's, for the notification: a ghost has none. */
	struct vmgpu_stats *stats;
};

static struct ttm_tt *vmgpu_ttm_tt_create(struct ttm_buffer_object *tbo,
					  u32 page_flags)
{
	struct vmgpu_bo *vbo = vmgpu_bo_is_vmgpu(tbo) ? to_vmgpu_bo(tbo) : NULL;
	enum ttm_caching caching = vbo && (vbo->flags & DRM_VMGPU_ALLOC_CACHED) ?
				   ttm_cached : ttm_write_combined;
	struct vmgpu_tt *vtt;

	vtt = kzalloc(sizeof(*vtt), GFP_KERNEL);
	if (!vtt)
		return NULL;
	vtt->notify_iommu_unmap = vbo && (vbo->flags & DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP);
	vtt->stats = vmgpu_stats_get(vbo ? vbo->stats : NULL);
	/* The sg variant also allocates dma_address[]: the device needs bus addresses. */
	if (ttm_sg_tt_init(&vtt->base, tbo, page_flags, caching)) {
		vmgpu_stats_put(vtt->stats);
		kfree(vtt);
		return NULL;
	}
	return &vtt->base;
}

/* An import's pages are its exporter's, mapped as its backing enters TT. */
static int vmgpu_ttm_tt_populate(struct ttm_device *bdev, struct ttm_tt *tt,
				 struct ttm_operation_ctx *ctx)
{
	if (tt->page_flags & TTM_TT_FLAG_EXTERNAL)
		return 0;
	return ttm_pool_alloc(&bdev->pool, tt, ctx);
}

static struct vmgpu_tt *to_vmgpu_tt(struct ttm_tt *tt)
{
	return container_of(tt, struct vmgpu_tt, base);
}

/* Whether the device gets NotifyIoMmuUnmap before these pages are unmapped. */
static bool vmgpu_ttm_tt_notifies_unmap(struct vmgpu_device *vdev, struct ttm_tt *tt)
{
	return tt && to_vmgpu_tt(tt)->notify_iommu_unmap && vmgpu_notify_iommu_model(vdev);
}

/* Destruction, swap-out and ghosts: the pages lose their DMA mappings. */
static void vmgpu_ttm_tt_unpopulate(struct ttm_device *bdev, struct ttm_tt *tt)
{
	struct vmgpu_device *vdev = container_of(bdev, struct vmgpu_device, ttm);

	/* An import was unmapped as its backing left TT (vmgpu_prime_unmap()). */
	if (tt->page_flags & TTM_TT_FLAG_EXTERNAL)
		return;
	if (vmgpu_ttm_tt_notifies_unmap(vdev, tt) && !vmgpu_notify_iommu_unmap(vdev, tt))
		vmgpu_stats_count(to_vmgpu_tt(tt)->stats, VMGPU_STATS_NOTIFY_IOMMU_UNMAP);
	ttm_pool_free(&bdev->pool, tt);
}

static void vmgpu_ttm_tt_destroy(struct ttm_device *bdev, struct ttm_tt *tt)
{
	ttm_tt_fini(tt);
	vmgpu_stats_put(to_vmgpu_tt(tt)->stats);
	kfree(to_vmgpu_tt(tt));
}

static void vmgpu_ttm_evict_flags(struct ttm_buffer_object *tbo,
				  struct ttm_placement *placement)
{
	vmgpu_bo_evict_placement(tbo, placement);
}

static bool vmgpu_ttm_is_vram(u32 mem_type)
{
	return mem_type >= VMGPU_TTM_FIRST_SEGMENT;
}

/* Segment id for tracing: memory segment, aperture, or 0. */
static u32 vmgpu_ttm_trace_segment(struct vmgpu_device *vdev,
				   struct ttm_resource *res)
{
	u64 offset;

	if (!res || res->mem_type == TTM_PL_SYSTEM)
		return 0;
	if (res->mem_type == TTM_PL_TT)
		return vmgpu_gart_res_offset(res, &offset) ? vdev->num_segments + 1 : 0;
	return res->mem_type - VMGPU_TTM_FIRST_SEGMENT + 1;
}

/*
 * The fdinfo region of a backing (vmgpu_stats.c): its segment id, or -1
 * for the temporary system pages of a move out of VRAM, which the move
 * counts from VRAM to its destination.
 */
static int vmgpu_ttm_stats_region(struct vmgpu_device *vdev, struct ttm_resource *res)
{
	if (res && (res->placement & TTM_PL_FLAG_TEMPORARY))
		return -1;
	return vmgpu_ttm_trace_segment(vdev, res);
}

/*
 * Queue the clear or copy that fills @new_mem. If anything fails after the
 * work was queued, wait for it: the caller frees @new_mem.
 */
static int vmgpu_ttm_move_by_device(struct ttm_buffer_object *tbo, bool evict,
				    struct ttm_operation_ctx *ctx,
				    struct ttm_resource *new_mem, bool clear, bool notify)
{
	struct vmgpu_device *vdev = vmgpu_tbo_device(tbo);
	struct vmgpu_bo *vbo = vmgpu_bo_is_vmgpu(tbo) ? to_vmgpu_bo(tbo) : NULL;
	u16 flags = 0;
	struct dma_fence *fence;
	int ret;

	/*
	 * Not out of a temporary placement: TTM would leave the allocation
	 * there, half-way through its move.
	 */
	if (!tbo->resource || !(tbo->resource->placement & TTM_PL_FLAG_TEMPORARY)) {
		ret = vmgpu_job_reserve_wait(vdev, ctx, tbo->base.resv);
		if (ret)
			return ret;
	}
	if (new_mem->mem_type == TTM_PL_TT)
		vmgpu_gart_bind(vdev, new_mem, tbo->ttm);
	if (vbo && !clear)
		flags = vmgpu_swizzle_move_flags(vbo, tbo->resource->mem_type,
						 new_mem->mem_type);
	fence = clear ? vmgpu_migrate_clear(vdev, tbo, new_mem, NULL) :
			vmgpu_migrate_copy(vdev, tbo, tbo->resource, new_mem, flags,
					   vbo ? vbo->paging_fence : NULL, notify);
	if (IS_ERR(fence))
		return PTR_ERR(fence);
	if (tbo->resource) {
		/* Its ghost's first release: see &vmgpu_device.unplug_sem. */
		down_read(&vdev->unplug_sem);
		ret = ttm_bo_move_accel_cleanup(tbo, fence, evict, true, new_mem);
		up_read(&vdev->unplug_sem);
	} else {
		/*
		 * A new allocation has no old backing to hand to a ghost; the
		 * clear's fence in the reservation keeps CPU and GPU users out.
		 * TTM reserved the fence slot before it allocated @new_mem.
		 */
		dma_resv_add_fence(tbo->base.resv, fence, DMA_RESV_USAGE_KERNEL);
		ttm_bo_move_null(tbo, new_mem);
		ret = 0;
	}
	if (ret) {
		dma_fence_wait(fence, false);
	} else if (vbo) {
		vmgpu_bo_set_paging(vbo, fence, !clear);
		vmgpu_swizzle_moved(vbo, new_mem->mem_type, flags);
		if (notify)
			vmgpu_stats_count(vbo->stats, VMGPU_STATS_NOTIFY_EVICTION);
	}
	dma_fence_put(fence);
	return ret;
}

/*
 * Before an allocation's system pages leave device access for TTM's system
 * memory (seed: NotifyEviction is sent for an eviction from the aperture
 * segment or the implicit system segment), queued on the paging ring.
 * Under memory pressure a failure only makes TTM pick another allocation.
 * A move into a memory segment notifies in its copy instead.
 */
static int vmgpu_ttm_leave_system_segment(struct ttm_buffer_object *tbo, bool evict)
{
	int ret;

	if (!vmgpu_notify_eviction_needed(tbo))
		return 0;
	ret = vmgpu_notify_eviction(to_vmgpu_bo(tbo));
	return ret && evict ? -EBUSY : ret;
}

static int vmgpu_ttm_move_backing(struct ttm_buffer_object *tbo, bool evict,
				  struct ttm_operation_ctx *ctx,
				  struct ttm_resource *new_mem, struct ttm_place *hop)
{
	struct vmgpu_device *vdev = vmgpu_tbo_device(tbo);
	/* Ghosts (see vmgpu_bo_is_vmgpu()) only ever hold data already cleared. */
	struct vmgpu_bo *vbo = vmgpu_bo_is_vmgpu(tbo) ? to_vmgpu_bo(tbo) : NULL;
	u32 old_type = tbo->resource ? tbo->resource->mem_type : TTM_PL_SYSTEM;
	u32 new_type = new_mem->mem_type;
	unsigned int fences;
	int idx, ret;

	if (new_type == TTM_PL_SYSTEM) {
		if (vmgpu_ttm_is_vram(old_type))
			goto hop_through_tt;
		/* Same pages: wait for users, then drop the aperture range. */
		ret = ttm_bo_wait_ctx(tbo, ctx);
		if (ret)
			return ret;
		/*
		 * Fence slots for the notification and the flush below, first:
		 * once the notification is queued, the flush must not fail.
		 */
		fences = vmgpu_notify_eviction_needed(tbo);
		if (vbo && !vmgpu_bo_is_import(vbo))
			fences += vmgpu_cache_leave_device_needed(vbo);
		ret = fences ? dma_resv_reserve_fences(tbo->base.resv, fences) : 0;
		if (ret)
			return evict ? -EBUSY : ret;
		/*
		 * A job queued before the allocation was bound may still write
		 * it through its mapping, and its fence is not on the
		 * allocation: the device loses its mappings first, so that the
		 * notification and the flush come after its last write. If the
		 * notification then fails, the next EXEC maps it again.
		 */
		if (vbo)
			vmgpu_vm_bo_invalidate(vbo);
		ret = vmgpu_ttm_leave_system_segment(tbo, evict);
		if (ret)
			return ret;
		/* An import's pages leave the device's mapping now: flush first. */
		if (vbo && !vmgpu_bo_is_import(vbo)) {
			ret = vmgpu_cache_leave_device(vbo);
			if (ret)
				return evict ? -EBUSY : ret;
		} else {
			vmgpu_cache_release_pages(tbo);
		}
		ttm_bo_move_null(tbo, new_mem);
		if (vbo && vmgpu_bo_is_import(vbo))
			vmgpu_prime_unmap(vbo);
		/*
		 * Now out of the device's reach, the CPU clears what failed;
		 * after what was just queued, if anything: the next access
		 * waits for it, then scrubs (vmgpu_bo_prepare_access()).
		 */
		if (vbo && dma_resv_test_signaled(tbo->base.resv, DMA_RESV_USAGE_KERNEL) &&
		    vmgpu_bo_needs_scrub(vbo))
			vmgpu_bo_scrub(vbo);
		return 0;
	}

	/* Everything else needs the device, at least its aperture. */
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	if (vbo && !vbo->cleared && !tbo->resource && new_type == TTM_PL_TT &&
	    (tbo->ttm->page_flags & TTM_TT_FLAG_ZERO_ALLOC) &&
	    !vmgpu_vm_compression_state(vdev)) {
		/*
		 * A first backing of pages TTM has just allocated zeroed (as
		 * it does for a first backing): fresh pages come with
		 * __GFP_ZERO, and its pool clears the pages it keeps. The
		 * device holds no compression state for them either, which
		 * only a device write would drop.
		 */
		vmgpu_gart_bind(vdev, new_mem, tbo->ttm);
		ttm_bo_move_null(tbo, new_mem);
		vbo->cleared = true;
		ret = 0;
	} else if (vbo && !vbo->cleared && !tbo->resource && vmgpu_ttm_is_vram(new_type) &&
		   vmgpu_vram_res_clear_fence(new_mem)) {
		/*
		 * A first backing of scrubbed pages only (DOC: scrubbing freed
		 * VRAM): the scrubs' fence stands for its clear, their outcome
		 * included. TTM reserved the fence slot.
		 */
		vmgpu_bo_queue_paging(vbo, vmgpu_vram_res_clear_fence(new_mem), false);
		ttm_bo_move_null(tbo, new_mem);
		vbo->cleared = true;
		ret = 0;
	} else if (vbo && (!vbo->cleared || vmgpu_bo_needs_scrub(vbo))) {
		/*
		 * First backing, or what the last paging operation was to
		 * write is not there: nothing to move, but earlier contents
		 * to wipe.
		 */
		ret = vmgpu_ttm_move_by_device(tbo, evict, ctx, new_mem, true, false);
		if (!ret) {
			/* The new backing is clear, the old one goes. */
			vbo->cleared = true;
			vbo->needs_scrub = false;
		}
	} else if (!vmgpu_ttm_is_vram(old_type) && new_type == TTM_PL_TT) {
		/*
		 * Same pages, mapped into the aperture or not: only the
		 * entries change, once nothing uses the old ones.
		 */
		ret = ttm_bo_wait_ctx(tbo, ctx);
		/* An import's pages are mapped for the device as they enter TT. */
		if (!ret && vbo && vmgpu_bo_is_import(vbo) && old_type != TTM_PL_TT)
			ret = vmgpu_prime_map(vbo);
		if (!ret) {
			if (vbo)
				vmgpu_vm_bo_invalidate(vbo);
			vmgpu_gart_bind(vdev, new_mem, tbo->ttm);
			ttm_bo_move_null(tbo, new_mem);
		}
	} else if (old_type == TTM_PL_SYSTEM) {
		ret = -EMULTIHOP;
	} else {
		/*
		 * Out of the system segment into a memory segment: the copy
		 * notifies first (DOC: allocation notifications).
		 */
		ret = vmgpu_ttm_move_by_device(tbo, evict, ctx, new_mem, false,
					       old_type == TTM_PL_TT &&
					       vmgpu_notify_eviction_needed(tbo));
	}
	drm_dev_exit(idx);
	if (ret != -EMULTIHOP)
		return ret;

hop_through_tt:
	/* The device reaches system pages only while they are DMA-mapped. */
	*hop = (struct ttm_place){
		.mem_type = TTM_PL_TT,
		.flags = TTM_PL_FLAG_TEMPORARY,
	};
	return -EMULTIHOP;
}

static int vmgpu_ttm_move(struct ttm_buffer_object *tbo, bool evict,
			  struct ttm_operation_ctx *ctx,
			  struct ttm_resource *new_mem, struct ttm_place *hop)
{
	struct vmgpu_device *vdev = vmgpu_tbo_device(tbo);
	struct ttm_resource *old_mem = tbo->resource;
	int from = vmgpu_ttm_stats_region(vdev, old_mem);
	int ret;

	trace_vmgpu_bo_move(tbo, tbo->base.size,
			    vmgpu_ttm_trace_segment(vdev, tbo->resource),
			    vmgpu_ttm_trace_segment(vdev, new_mem), evict);
	ret = vmgpu_ttm_move_backing(tbo, evict, ctx, new_mem, hop);
	if (!ret && vmgpu_bo_is_vmgpu(tbo)) {
		to_vmgpu_bo(tbo)->moves++;
		/* A first backing is not paged in. */
		if (old_mem)
			vmgpu_stats_move(to_vmgpu_bo(tbo)->stats, from,
					 vmgpu_ttm_stats_region(vdev, new_mem), tbo->base.size);
	}
	/*
	 * TTM revoked the CPU mappings; the host-aperture entries go with the
	 * old pages. A move that failed or hops first leaves the allocation
	 * where it was: it keeps them, a locked one in particular, which
	 * might not get them back with the host aperture full of locked ones.
	 */
	if (!ret && vmgpu_bo_is_vmgpu(tbo))
		vmgpu_hap_unmap(to_vmgpu_bo(tbo));
	return ret;
}

/*
 * VRAM is mapped page by page (vmgpu_ttm_io_mem_pfn()), never as one
 * range: TTM's kmap and vmap of it are not used.
 */
static int vmgpu_ttm_io_mem_reserve(struct ttm_device *bdev,
				    struct ttm_resource *mem)
{
	struct vmgpu_device *vdev = container_of(bdev, struct vmgpu_device, ttm);
	struct ttm_buffer_object *tbo = mem->bo;

	if (!vmgpu_ttm_is_vram(mem->mem_type))
		return 0;
	/*
	 * Beyond the BAR, or swizzled, only through the host-aperture pages
	 * it was lent.
	 */
	if (!tbo || !vmgpu_bo_is_vmgpu(tbo))
		return -EINVAL;
	if (!to_vmgpu_bo(tbo)->hap_slots &&
	    ((to_vmgpu_bo(tbo)->flags & DRM_VMGPU_ALLOC_SWIZZLED) ||
	     vmgpu_hap_res_invisible(vdev, mem)))
		return -EINVAL;
	mem->bus.is_iomem = true;
	mem->bus.caching = ttm_write_combined;
	return 0;
}

static unsigned long vmgpu_ttm_io_mem_pfn(struct ttm_buffer_object *tbo,
					  unsigned long page_offset)
{
	return vmgpu_hap_pfn(to_vmgpu_bo(tbo), page_offset);
}

/*
 * The allocation's backing is freed: so are its host-aperture pages, and
 * its system pages leave the device's cache first: by the whole-cache
 * flush, or, for pages that get NotifyIoMmuUnmap when TTM unpopulates
 * them next, by that notification alone, which writes back and drops
 * just their lines. An import's pages are unmapped after that.
 */
static void vmgpu_ttm_delete_mem_notify(struct ttm_buffer_object *tbo)
{
	if (vmgpu_bo_is_vmgpu(tbo))
		vmgpu_hap_unmap(to_vmgpu_bo(tbo));
	if (tbo->resource && tbo->resource->mem_type == TTM_PL_TT &&
	    !vmgpu_ttm_tt_notifies_unmap(vmgpu_tbo_device(tbo), tbo->ttm))
		vmgpu_cache_release_pages(tbo);
	if (vmgpu_bo_is_vmgpu(tbo) && vmgpu_bo_is_import(to_vmgpu_bo(tbo)))
		vmgpu_prime_unmap(to_vmgpu_bo(tbo));
}

static const struct ttm_device_funcs vmgpu_ttm_funcs = {
	.ttm_tt_create = vmgpu_ttm_tt_create,
	.ttm_tt_populate = vmgpu_ttm_tt_populate,
	.ttm_tt_unpopulate = vmgpu_ttm_tt_unpopulate,
	.ttm_tt_destroy = vmgpu_ttm_tt_destroy,
	.eviction_valuable = ttm_bo_eviction_valuable,
	.evict_flags = vmgpu_ttm_evict_flags,
	.move = vmgpu_ttm_move,
	.io_mem_reserve = vmgpu_ttm_io_mem_reserve,
	.io_mem_pfn = vmgpu_ttm_io_mem_pfn,
	.delete_mem_notify = vmgpu_ttm_delete_mem_notify,
};

/**
 * vmgpu_ttm_segment_used() - bytes allocated in a segment
 * @vdev: the device
 * @id: a segment id
 *
 * Return: the bytes resident in segment @id. The system segment counts
 * system memory not mapped into the aperture, the aperture segment what is.
 */
u64 vmgpu_ttm_segment_used(struct vmgpu_device *vdev, u32 id)
{
	u64 mapped = vmgpu_gart_mapped_bytes(vdev);
	u64 tt;

	if (id == vdev->num_segments + 1)
		return mapped;
	if (id)
		return ttm_resource_manager_usage(&vdev->vram_mgrs[id - 1].manager);
	/* Read apart from the mapped bytes: never let a race go below zero. */
	tt = max(ttm_resource_manager_usage(&vdev->gart.manager), mapped);
	return ttm_resource_manager_usage(ttm_manager_type(&vdev->ttm, TTM_PL_SYSTEM)) +
	       tt - mapped;
}

/* drmm: TTM and its managers live as long as the DRM device. */
static void vmgpu_ttm_release(struct drm_device *drm, void *arg)
{
	struct vmgpu_device *vdev = arg;

	/*
	 * TTM's delayed deletes of ghosts (pipelined moves) hold resources
	 * of the managers: done before the managers go.
	 */
	drain_workqueue(vdev->ttm.wq);
	vmgpu_vram_mgr_fini(vdev, vdev->num_segments);
	vmgpu_gart_fini(vdev);
	ttm_device_fini(&vdev->ttm);
}

/**
 * vmgpu_ttm_init() - TTM device, memory segment managers and aperture
 * @vdev: the device, with the paging ring running
 *
 * Everything is released with the last reference to the DRM device, after
 * every allocation is gone, even if the PCI device went long before.
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_ttm_init(struct vmgpu_device *vdev)
{
	struct drm_device *drm = &vdev->drm;
	int ret;

	ret = ttm_device_init(&vdev->ttm, &vmgpu_ttm_funcs, drm->dev,
			      drm->anon_inode->i_mapping, drm->vma_offset_manager,
			      false, false);
	if (ret)
		return ret;
	ret = vmgpu_vram_mgr_init(vdev);
	if (ret)
		goto err_device;
	ret = vmgpu_gart_init(vdev);
	if (ret)
		goto err_vram;
	return drmm_add_action_or_reset(drm, vmgpu_ttm_release, vdev);

err_vram:
	vmgpu_vram_mgr_fini(vdev, vdev->num_segments);
err_device:
	ttm_device_fini(&vdev->ttm);
	return ret;
}

/**
 * vmgpu_ttm_unplug() - the device is going: unmap every system page
 * @vdev: the device, unplugged, its work failed
 *
 * No DMA mapping may outlive the driver's binding to the device. The
 * allocations themselves stay until their last user lets go of them.
 */
void vmgpu_ttm_unplug(struct vmgpu_device *vdev)
{
	vmgpu_prime_unplug(vdev);
	/*
	 * Releases that come after the caller's flushes (a process's last
	 * handle or mapping, deferred unmaps of jobs the scheduler fails
	 * later) wait: see &vmgpu_device.unplug_sem.
	 */
	down_write(&vdev->unplug_sem);
	ttm_device_clear_dma_mappings(&vdev->ttm);
	up_write(&vdev->unplug_sem);
}
