// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/ttm/ttm_placement.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_bo.h"
#include "vmgpu_cache.h"
#include "vmgpu_device.h"
#include "vmgpu_drm.h"
#include "vmgpu_notify.h"
#include "vmgpu_paging_op.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_stats.h"
#include "vmgpu_trace.h"

/**
 * DOC: allocation notifications
 *
 * Seed "Allocation notification" (DXGK_OPERATION_NOTIFY_ALLOC). The device
 * holds state of its own for system pages under its access: it compresses
 * them on request (COMPRESS, from user jobs), and in its non-coherent mode
 * it caches them (hardware contract). Allocations created with
 * %DRM_VMGPU_ALLOC_NOTIFY_EVICTION or %DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP
 * have the device told before that state would go stale:
 *
 * - NotifyEviction, before the allocation leaves the aperture segment or
 *   the implicit system segment, that is before its system pages leave
 *   device access: made non-resident (Evict, memory pressure, swap-out,
 *   which evicts first) or moved into a memory segment. The device
 *   decompresses the pages in place and writes back its cached lines, so
 *   the data survives. As the seed says, it is never sent for an eviction
 *   from a memory segment, including the system pages such an eviction
 *   passes through on its way out of the device's reach (a temporary
 *   placement).
 * - NotifyIoMmuUnmap, only in the IOMMU addressing model (the device DMAs
 *   by IOVA and the kernel translates its DMA), before the pages' DMA
 *   mappings are removed: when TTM unpopulates them (destruction,
 *   swap-out, a ghost that kept pages a move read, a populate error). The
 *   device writes back and drops its lines of those pages and forgets
 *   their compression state; then every paging operation submitted before
 *   is waited for, and only then are the pages unmapped. It replaces the
 *   whole-cache flush those pages would get otherwise (vmgpu_cache.c),
 *   which is still done if the notification fails. It too maps the pages
 *   into the paging process GPU VA, which the seed lists for
 *   NotifyEviction only: the device's one NOTIFY command names pages
 *   through VM 0 for both (a deviation, memory-management.rst).
 *
 * Each notification follows the seed's steps, in chunks of at most the
 * paging process GPU VA size (DOC: paging process GPU VA): the paging
 * ring maps the chunk there, sends NOTIFY and unmaps the chunk. The
 * chunks are one paging operation, queued with jobs of the reserve (DOC:
 * paging job reserve), and nothing on the CPU waits for them to run but
 * what must:
 *
 * - NotifyEviction ahead of a move to TTM's system memory is queued after
 *   the allocation's users and becomes its last paging operation, a
 *   kernel fence of its reservation. The move itself only drops the
 *   aperture entries, which the notification does not use (it names the
 *   pages by bus address through the paging VA). Whoever touches the
 *   pages next waits for that fence: a CPU fault or access, a lock, a
 *   user job, a move back. If it fails, the contents are lost
 *   (vmgpu_bo_needs_scrub()), as for any failed move. In non-coherent
 *   mode the whole-cache flush that follows every such move is queued
 *   after it the same way (vmgpu_cache_leave_device()).
 * - A move into a memory segment sends NOTIFY inside its own paging
 *   operation, on each chunk of the old system pages just before its
 *   Transfer (vmgpu_migrate_copy()); a failed notification fails the
 *   move's fence, with the same outcome.
 * - NotifyIoMmuUnmap is waited for, with every paging operation before
 *   it (the ring runs in order): TTM removes the DMA mappings as soon as
 *   the unpopulate callback returns.
 *
 * Where they run, in Linux 6.12's TTM: NotifyEviction from the move
 * callback, with the allocation reserved; a notification that cannot be
 * queued (no fence slot) during an eviction for memory pressure makes it
 * -EBUSY, so that TTM tries another allocation instead of giving up.
 * NotifyIoMmuUnmap from ttm_tt_unpopulate(), which 6.12 calls in process
 * context: the release of the last reference (the GEM close ioctl,
 * vmgpu's and TTM's delete workers), swap-out (ttm_global_swapout() from
 * populate and from TTM's debugfs tt_shrink), move error paths and
 * pipeline gutting, and ttm_device_clear_dma_mappings() at removal,
 * without reservation, where drm_dev_enter() fails and nothing is sent.
 * 6.12 has no shrinker for buffer objects (its pool shrinker frees only
 * pages already unmapped), so reclaim never reaches a flagged allocation.
 * This assumes that no last reference is dropped from a fence callback or
 * a scheduler's free_job, which holds for vmgpu's own jobs (they hold no
 * allocation).
 *
 * Queueing a notification needs no memory but a fence slot of the
 * reservation (the jobs come from the reserve). One that fails on the
 * device loses the contents (above), and pages it did not decode keep
 * their compression state in the device until their address space goes
 * (COMPRESS_FORGET).
 * If the device is gone, the allocation moves and its contents are marked
 * lost.
 */

/**
 * vmgpu_notify_cmd() - the NOTIFY command for a range of the paging VA
 * @va: where the pages are mapped in the paging process GPU VA
 * @n: bytes
 * @flags: %VMGPU_NOTIFY_FLAG_EVICTION or %VMGPU_NOTIFY_FLAG_IOMMU_UNMAP
 *
 * Return: the command, for the paging ring.
 */
union vmgpu_cmd vmgpu_notify_cmd(u64 va, u64 n, u16 flags)
{
	union vmgpu_cmd cmd = {};

	cmd.range.hdr.opcode = cpu_to_le16(VMGPU_OP_NOTIFY);
	cmd.range.hdr.flags = cpu_to_le16(flags);
	cmd.range.addr.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	cmd.range.addr.vm = cpu_to_le32(VMGPU_VM_PAGING);
	cmd.range.addr.addr = cpu_to_le64(va);
	cmd.range.size = cpu_to_le64(n);
	return cmd;
}

/*
 * Every page of @tt, in chunks of the paging VA, as one paging operation
 * after the fences of @resv, if given, continuing @prev. @key names the
 * pages in traces. Returns the operation's fence, or an ERR_PTR: the
 * device is gone, or @tt has no bus addresses.
 */
static struct dma_fence *vmgpu_notify_queue(struct vmgpu_device *vdev, struct ttm_tt *tt,
					    u16 flags, const void *key,
					    struct dma_fence *prev, struct dma_resv *resv)
{
	u64 size = (u64)tt->num_pages << VMGPU_PAGE_SHIFT, chunk = vdev->paging_vm.size, done;
	struct vmgpu_paging_op op;
	struct vmgpu_res_cursor cur;
	struct dma_fence *fence;
	int idx, ret;

	if (!drm_dev_enter(&vdev->drm, &idx))
		return ERR_PTR(-ENODEV);
	ret = vmgpu_res_first_tt(tt, size, &cur);
	if (ret) {
		drm_dev_exit(idx);
		return ERR_PTR(ret);
	}
	vmgpu_paging_op_begin(&op, vdev, resv, prev);
	/* No stale line of the staging memory is read. */
	vmgpu_paging_op_flush(&op);
	for (done = 0; done < size; done += chunk) {
		u64 n = min(chunk, size - done);
		union vmgpu_cmd cmd = vmgpu_notify_cmd(0, n, flags);

		vmgpu_paging_op_map(&op, 0, &cur, n, true);
		/* Entries written through the cache reach the tables. */
		vmgpu_paging_op_flush(&op);
		vmgpu_paging_op_add(&op, &cmd);
		vmgpu_paging_op_unmap(&op, 0, n);
		trace_vmgpu_notify(key, flags, size, done, n, 0);
	}
	fence = vmgpu_paging_op_end(&op);
	drm_dev_exit(idx);
	return fence;
}

/**
 * vmgpu_notify_eviction_needed() - whether an allocation leaving its
 * system pages gets NotifyEviction first
 * @tbo: the allocation, reserved, in TTM_PL_TT
 *
 * Return: true for a populated allocation with
 * %DRM_VMGPU_ALLOC_NOTIFY_EVICTION in the aperture or system segment (not
 * passing through a temporary placement).
 */
bool vmgpu_notify_eviction_needed(struct ttm_buffer_object *tbo)
{
	dma_resv_assert_held(tbo->base.resv);
	return vmgpu_bo_is_vmgpu(tbo) &&
	       (to_vmgpu_bo(tbo)->flags & DRM_VMGPU_ALLOC_NOTIFY_EVICTION) &&
	       tbo->resource && !(tbo->resource->placement & TTM_PL_FLAG_TEMPORARY) &&
	       tbo->ttm && ttm_tt_is_populated(tbo->ttm);
}

/**
 * vmgpu_notify_eviction() - queue NotifyEviction before system pages leave
 * device access
 * @vbo: the allocation, reserved, for which vmgpu_notify_eviction_needed()
 *	 holds
 *
 * The notification runs on the paging ring after the allocation's users
 * and continues its last paging operation; it becomes that operation, and
 * a kernel fence of the reservation, which every CPU access and every
 * later user of the pages waits for. If it fails, the contents are lost
 * (vmgpu_bo_needs_scrub()). Nothing waits for it here.
 *
 * Return: 0 (also once the device is gone: the contents are then marked
 * lost), or an error after which the allocation must not move, nothing of
 * the notification having been queued: no fence slot for it (-ENOMEM),
 * or pages without bus addresses (-EINVAL).
 */
int vmgpu_notify_eviction(struct vmgpu_bo *vbo)
{
	struct dma_resv *resv = vbo->tbo.base.resv;
	struct dma_fence *fence;
	int ret;

	ret = dma_resv_reserve_fences(resv, 1);
	if (ret)
		return ret;
	fence = vmgpu_notify_queue(vmgpu_bo_device(vbo), vbo->tbo.ttm, VMGPU_NOTIFY_FLAG_EVICTION,
				   vbo, vbo->paging_fence, resv);
	if (IS_ERR(fence)) {
		ret = PTR_ERR(fence);
		if (ret != -ENODEV)
			return ret;
		vmgpu_bo_lose_contents(vbo, "NotifyEviction", ret);
		return 0;
	}
	vmgpu_bo_queue_paging(vbo, fence, true);
	dma_fence_put(fence);
	vmgpu_stats_count(vbo->stats, VMGPU_STATS_NOTIFY_EVICTION);
	return 0;
}

/**
 * vmgpu_notify_iommu_model() - whether NotifyIoMmuUnmap is sent at all
 * @vdev: the device
 *
 * Return: true if the device DMAs by IOVA.
 */
bool vmgpu_notify_iommu_model(struct vmgpu_device *vdev)
{
	return vdev->iommu_dma;
}

/**
 * vmgpu_notify_iommu_unmap() - NotifyIoMmuUnmap before system pages are
 * DMA-unmapped
 * @vdev: the device, in the IOMMU addressing model
 * @tt: populated pages of an allocation with
 *	%DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP, idle, about to be unpopulated
 *
 * Returns once the notification and every paging operation before it are
 * done. If it fails, the whole device cache is flushed instead; if that
 * fails too, the error is logged: the pages go all the same, which only a
 * device reset would make safe.
 *
 * Return: 0 if the notification was sent and done, else its error.
 */
int vmgpu_notify_iommu_unmap(struct vmgpu_device *vdev, struct ttm_tt *tt)
{
	struct dma_fence *fence;
	int idx, ret, flushed;

	fence = vmgpu_notify_queue(vdev, tt, VMGPU_NOTIFY_FLAG_IOMMU_UNMAP, tt, NULL, NULL);
	if (IS_ERR(fence)) {
		ret = PTR_ERR(fence);
	} else {
		/*
		 * Unpopulate cannot fail: no signal ends this wait. The paging
		 * ring runs its jobs in order: this is also the wait for every
		 * paging operation queued before.
		 */
		dma_fence_wait(fence, false);
		ret = min(dma_fence_get_status(fence), 0);
		dma_fence_put(fence);
	}
	if (!ret || ret == -ENODEV)
		return ret;
	flushed = ret;
	if (drm_dev_enter(&vdev->drm, &idx)) {
		flushed = vdev->noncoherent ? vmgpu_cache_flush_wait(vdev, false) : 0;
		drm_dev_exit(idx);
	}
	if (flushed)
		drm_err_ratelimited(&vdev->drm, "NotifyIoMmuUnmap and the cache flush failed (%d) before unmapping pages\n",
				    flushed);
	return ret;
}
