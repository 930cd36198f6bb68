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
#include "vmgpu_job.h"
#include "vmgpu_job_types.h"
#include "vmgpu_notify.h"
#include "vmgpu_paging_vm.h"
#include "vmgpu_res_cursor.h"
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
 * paging process GPU VA size (DOC: paging process GPU VA): one job on the
 * paging ring maps the chunk there, sends NOTIFY and unmaps the chunk;
 * the CPU waits for it before the next. That wait is why a flagged
 * allocation leaving for TTM's system memory (out of the device's reach)
 * is not pipelined like other moves.
 *
 * A move into a memory segment needs no such wait: its copy maps each
 * chunk of the old system pages into the paging VA anyway, and sends
 * NOTIFY on them just before the chunk's Transfer, in the move's own
 * paging operation (vmgpu_migrate_copy()). The operation runs after the
 * allocation's users, on the GPU side, like any move; if the notification
 * fails, so does the move's fence, and the allocation's contents are lost
 * (vmgpu_bo_needs_scrub()) instead of the move being refused.
 *
 * Where they run, in Linux 6.12's TTM: NotifyEviction from the move
 * callback, with the allocation reserved; an eviction out of the device's
 * reach asked not to wait
 * for the GPU (ctx->no_wait_gpu) is refused with -EBUSY, and a failed
 * notification during an eviction for memory pressure is -EBUSY too, so
 * that TTM tries another allocation instead of giving up. NotifyIoMmuUnmap
 * from ttm_tt_unpopulate(), which 6.12 calls in process context: the
 * release of the last reference (the GEM close ioctl, vmgpu's and TTM's
 * delete workers), swap-out (ttm_global_swapout() from populate and from
 * TTM's debugfs tt_shrink), move error paths and pipeline gutting, and
 * ttm_device_clear_dma_mappings() at removal, without reservation, where
 * drm_dev_enter() fails and nothing is sent. 6.12 has no shrinker for
 * buffer objects (its pool shrinker frees only pages already unmapped),
 * so reclaim never reaches a flagged allocation. This assumes that no
 * last reference is dropped from a fence callback or a scheduler's
 * free_job, which holds for vmgpu's own jobs (they hold no allocation).
 *
 * When a NotifyEviction on the CPU's side fails, so does the move: the
 * allocation stays where it is, its device state intact, and the caller
 * gets the error. One inside a move's paging operation fails that
 * operation's fence instead: the contents are lost (above), and pages it
 * did not decode keep their compression state in the device until their
 * address space goes (COMPRESS_FORGET). If the device is gone, the
 * allocation moves and its contents are marked lost.
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

/* For vmgpu_paging_vm_map() and _unmap(). */
static int vmgpu_notify_add(void *job, const union vmgpu_cmd *cmd)
{
	return vmgpu_job_add(job, cmd);
}

/*
 * A signal ended the wait for a notification: the job runs to its end
 * all the same, rewriting the pages, so the allocation's reservation
 * (held, @resv) keeps its fence for whoever frees or moves the pages
 * next. Without room for it, wait after all.
 */
static int vmgpu_notify_interrupted(struct dma_resv *resv, struct dma_fence *fence,
				    int ret)
{
	if (!dma_resv_reserve_fences(resv, 1)) {
		dma_resv_add_fence(resv, fence, DMA_RESV_USAGE_KERNEL);
		return ret;
	}
	dma_fence_wait(fence, false);
	return min(dma_fence_get_status(fence), 0);
}

/*
 * One chunk, as the seed lists the steps: map it into the paging VA, NOTIFY,
 * unmap, all on the paging ring (DOC: paging process GPU VA); then wait,
 * interruptibly if the allocation's reservation @resv is given
 * (vmgpu_notify_interrupted()).
 */
static int vmgpu_notify_chunk(struct vmgpu_device *vdev, struct vmgpu_res_cursor *cur,
			      u64 n, u16 flags, struct dma_resv *resv)
{
	u32 runs = vmgpu_paging_vm_runs(0, n);
	union vmgpu_cmd cmd = {}, flush = vmgpu_cache_flush_cmd();
	struct dma_fence *fence;
	struct vmgpu_job *job;
	int ret = 0;

	job = vmgpu_job_alloc(vmgpu_paging_ring(vdev), 2 * runs + 3);
	if (IS_ERR(job))
		return PTR_ERR(job);
	job->pte_staging = vmgpu_paging_vm_staging_alloc(vdev, runs);
	if (!job->pte_staging) {
		vmgpu_job_discard(job);
		return -ENOMEM;
	}
	/*
	 * Non-coherent: no stale line of the staging pages is read, and the
	 * entries written through the cache reach the tables the device walks.
	 */
	if (vdev->noncoherent)
		ret = vmgpu_job_add(job, &flush);
	if (!ret)
		ret = vmgpu_paging_vm_map(vdev, job->pte_staging, 0, cur, n, true,
					  vmgpu_notify_add, job);
	if (!ret && vdev->noncoherent)
		ret = vmgpu_job_add(job, &flush);
	if (!ret) {
		cmd = vmgpu_notify_cmd(0, n, flags);
		ret = vmgpu_job_add(job, &cmd);
	}
	if (!ret)
		ret = vmgpu_paging_vm_unmap(vdev, 0, n, vmgpu_notify_add, job);
	if (ret) {
		vmgpu_job_discard(job);
		return ret;
	}
	fence = vmgpu_job_submit(job, NULL);
	if (IS_ERR(fence))
		return PTR_ERR(fence);
	/*
	 * The paging ring runs its jobs in submission order: this is also
	 * the wait for every paging operation queued before.
	 */
	ret = dma_fence_wait(fence, !!resv);
	if (ret)
		ret = vmgpu_notify_interrupted(resv, fence, ret);
	else
		ret = min(dma_fence_get_status(fence), 0);
	dma_fence_put(fence);
	return ret;
}

/* Every page of @tt, in chunks of the paging VA; @key names it in traces. */
static int vmgpu_notify(struct vmgpu_device *vdev, struct ttm_tt *tt, u16 flags,
			const void *key, struct dma_resv *resv)
{
	u64 size = (u64)tt->num_pages << VMGPU_PAGE_SHIFT, chunk = vdev->paging_vm.size, done;
	u32 max_runs = (vmgpu_job_max_cmds(vmgpu_paging_ring(vdev)) - 3) / 2;
	struct vmgpu_res_cursor cur;
	int idx, ret;

	/* One job per chunk: a paging VA of several GiB takes several. */
	chunk = min_t(u64, chunk, (u64)max_runs * VMGPU_PT_ENTRIES * VMGPU_PAGE_SIZE);

	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	ret = vmgpu_res_first_tt(tt, size, &cur);
	for (done = 0; done < size && !ret; done += chunk) {
		u64 n = min(chunk, size - done);

		ret = vmgpu_notify_chunk(vdev, &cur, n, flags, resv);
		trace_vmgpu_notify(key, flags, size, done, n, ret);
	}
	drm_dev_exit(idx);
	return ret;
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
 * vmgpu_notify_eviction() - NotifyEviction before system pages leave
 * device access
 * @vbo: the allocation, reserved and idle, for which
 *	 vmgpu_notify_eviction_needed() holds
 * @intr: whether a signal may end the wait; the allocation then stays
 *	  (the device was told too early, which costs it nothing) and its
 *	  reservation keeps the notification's fence
 *
 * Return: 0 (also once the device is gone: the contents are then marked
 * lost), or the error of the notification, after which the allocation
 * must not move: -ERESTARTSYS, -ENOMEM, or the paging operation's error
 * (-EIO, -ETIMEDOUT, -ECANCELED).
 */
int vmgpu_notify_eviction(struct vmgpu_bo *vbo, bool intr)
{
	int ret;

	ret = vmgpu_notify(vmgpu_bo_device(vbo), vbo->tbo.ttm, VMGPU_NOTIFY_FLAG_EVICTION, vbo,
			   intr ? vbo->tbo.base.resv : NULL);
	if (ret != -ENODEV)
		return ret;
	vmgpu_bo_lose_contents(vbo, "NotifyEviction", ret);
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
 */
void vmgpu_notify_iommu_unmap(struct vmgpu_device *vdev, struct ttm_tt *tt)
{
	int idx, ret;

	/* Unpopulate cannot fail: no signal ends this wait. */
	ret = vmgpu_notify(vdev, tt, VMGPU_NOTIFY_FLAG_IOMMU_UNMAP, tt, NULL);
	if (!ret || ret == -ENODEV)
		return;
	if (drm_dev_enter(&vdev->drm, &idx)) {
		ret = vdev->noncoherent ? vmgpu_cache_flush_wait(vdev, false) : 0;
		drm_dev_exit(idx);
	}
	if (ret)
		drm_err_ratelimited(&vdev->drm, "NotifyIoMmuUnmap and the cache flush failed (%d) before unmapping pages\n",
				    ret);
}
