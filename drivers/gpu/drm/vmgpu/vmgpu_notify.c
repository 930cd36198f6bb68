// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_drm.h"
#include "vmgpu_job.h"
#include "vmgpu_notify.h"
#include "vmgpu_paging_vm.h"
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
 *   passes through on its way out of the device's reach.
 * - NotifyIoMmuUnmap, only when the device uses the IOMMU addressing model
 *   (%VMGPU_CAP_IOMMU_DMA), before the pages' DMA mappings are removed
 *   (TTM unpopulates them: destruction, swap-out, and the ghost that
 *   keeps the pages a move read). The device drops what it keeps keyed by
 *   those bus addresses; then every paging operation submitted before is
 *   waited for, and only then are the pages unmapped.
 *
 * Each notification follows the seed's steps, in chunks of at most the
 * paging process GPU VA size (DOC: paging process GPU VA): map the chunk
 * there, build NOTIFY, submit it on the paging ring, wait, unmap.
 *
 * Where it runs: both come from TTM callbacks in process context, with the
 * allocation reserved and idle, never from the dma-fence signalling path.
 * Linux 6.12's TTM unpopulates from buffer release (the delayed-delete
 * worker), swap-out (ttm_global_swapout(), called when populating past
 * TTM's page limit and on suspend) and device teardown; it has no shrinker
 * for buffer objects (its pool shrinker frees only pages already
 * unmapped), so reclaim never reaches a flagged allocation and every path
 * can wait.
 *
 * When a NotifyEviction fails, so does the move: the allocation stays where
 * it is, its device state intact, and the caller gets the error.
 */

/* One chunk: its pages mapped at the start of the paging VA, NOTIFY, wait. */
static int vmgpu_notify_chunk(struct vmgpu_device *vdev, const dma_addr_t *pages,
			      u64 count, u16 flags)
{
	union vmgpu_cmd cmd = {};
	struct dma_fence *fence;
	struct vmgpu_job *job;
	int ret;

	cmd.range.hdr.opcode = cpu_to_le16(VMGPU_OP_NOTIFY);
	cmd.range.hdr.flags = cpu_to_le16(flags);
	cmd.range.addr.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	cmd.range.addr.vm = cpu_to_le32(VMGPU_VM_PAGING);
	cmd.range.size = cpu_to_le64(count << VMGPU_PAGE_SHIFT);
	job = vmgpu_job_alloc(vmgpu_paging_ring(vdev), 1);
	if (IS_ERR(job))
		return PTR_ERR(job);
	ret = vmgpu_job_add(job, &cmd);
	if (ret) {
		vmgpu_job_discard(job);
		return ret;
	}
	vmgpu_paging_vm_map(vdev, pages, count);
	fence = vmgpu_job_submit(job, NULL);
	if (IS_ERR(fence)) {
		ret = PTR_ERR(fence);
	} else {
		/*
		 * The paging ring runs its jobs in submission order: this is
		 * also the wait for every paging operation queued before.
		 */
		dma_fence_wait(fence, false);
		ret = fence->error;
		dma_fence_put(fence);
	}
	vmgpu_paging_vm_unmap(vdev, count);
	return ret;
}

/* Every page of @tt, in chunks of the paging VA; @bo names it in traces. */
static int vmgpu_notify(struct vmgpu_device *vdev, struct ttm_tt *tt, u16 flags,
			const void *bo)
{
	u64 chunk = vdev->paging_vm.size >> VMGPU_PAGE_SHIFT;
	u64 done;
	int idx, ret = 0;

	BUILD_BUG_ON(PAGE_SIZE != VMGPU_PAGE_SIZE);
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	mutex_lock(&vdev->paging_vm.lock);
	for (done = 0; done < tt->num_pages && !ret; done += chunk) {
		u64 count = min_t(u64, chunk, tt->num_pages - done);

		ret = vmgpu_notify_chunk(vdev, tt->dma_address + done, count, flags);
		trace_vmgpu_notify(bo, flags, (u64)tt->num_pages << PAGE_SHIFT,
				   done << PAGE_SHIFT, count << PAGE_SHIFT, ret);
	}
	mutex_unlock(&vdev->paging_vm.lock);
	drm_dev_exit(idx);
	return ret;
}

/**
 * vmgpu_notify_eviction() - NotifyEviction before system pages leave
 * device access
 * @vbo: the allocation, reserved and idle, in the aperture segment or the
 *	 system segment (TTM_PL_TT), about to leave it
 *
 * Nothing for an allocation without %DRM_VMGPU_ALLOC_NOTIFY_EVICTION. After
 * removal there is no device state left to resolve.
 *
 * Return: 0, or the error of the notification (the move must fail).
 */
int vmgpu_notify_eviction(struct vmgpu_bo *vbo)
{
	struct ttm_tt *tt = vbo->tbo.ttm;
	int ret;

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (!(vbo->flags & DRM_VMGPU_ALLOC_NOTIFY_EVICTION) || !tt ||
	    !ttm_tt_is_populated(tt))
		return 0;
	ret = vmgpu_notify(vmgpu_bo_device(vbo), tt, VMGPU_NOTIFY_FLAG_EVICTION, vbo);
	return ret == -ENODEV ? 0 : ret;
}

/**
 * vmgpu_notify_iommu_unmap() - NotifyIoMmuUnmap before system pages are
 * DMA-unmapped
 * @vdev: the device
 * @tt: populated pages of an allocation with
 *	%DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP, idle, about to be unpopulated
 *
 * Only on a device that uses the IOMMU addressing model. Returns once the
 * notification and every paging operation before it are done. A failure
 * is logged: the pages go all the same, which only a device reset would
 * make safe.
 */
void vmgpu_notify_iommu_unmap(struct vmgpu_device *vdev, struct ttm_tt *tt)
{
	int ret;

	if (!(vdev->caps & VMGPU_CAP_IOMMU_DMA))
		return;
	ret = vmgpu_notify(vdev, tt, VMGPU_NOTIFY_FLAG_IOMMU_UNMAP, tt);
	if (ret && ret != -ENODEV)
		drm_err_ratelimited(&vdev->drm, "NotifyIoMmuUnmap failed (%d) before unmapping pages\n",
				    ret);
}
