// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/highmem.h>

#include <drm/drm_print.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_migrate.h"
#include "vmgpu_stats.h"

/**
 * DOC: outcome of paging operations
 *
 * Never report success for work that did not run. Each allocation
 * remembers the fence of the last paging operation that wrote its current
 * backing; jobs continuing that work inherit its failure (see
 * &vmgpu_hw_fence.prev). Before the backing is used again (a move, a CPU
 * access, GEM_INFO) vmgpu_bo_needs_scrub() looks at that fence once it
 * has signalled. If it failed, the backing may hold anything, another
 * process's bytes included, so it is cleared again before anyone sees it;
 * and if the failed work was copying data, the allocation's contents are
 * lost: it is marked so, GEM_INFO reports it, CPU access fails with -EIO
 * (SIGBUS in a fault) and the device's lost-contents counter grows. A clear
 * that failed on a new allocation is simply redone.
 */

/**
 * vmgpu_bo_set_paging() - record the paging operation now writing the backing
 * @vbo: the allocation, reserved
 * @fence: the operation's fence
 * @copy: it copies data (a move) rather than clearing
 */
void vmgpu_bo_set_paging(struct vmgpu_bo *vbo, struct dma_fence *fence, bool copy)
{
	dma_resv_assert_held(vbo->tbo.base.resv);
	dma_fence_put(vbo->paging_fence);
	vbo->paging_fence = dma_fence_get(fence);
	vbo->paging_copied |= copy;
}

/**
 * vmgpu_bo_queue_paging() - a paging operation queued on the current backing
 * @vbo: the allocation, reserved, one fence slot reserved in its reservation
 * @fence: the operation's fence
 * @copy: it may carry data userspace wrote (see vmgpu_bo_set_paging())
 *
 * Makes it a kernel fence of the reservation, which every CPU access and
 * later user waits for, and the allocation's last paging operation.
 */
void vmgpu_bo_queue_paging(struct vmgpu_bo *vbo, struct dma_fence *fence, bool copy)
{
	dma_resv_add_fence(vbo->tbo.base.resv, fence, DMA_RESV_USAGE_KERNEL);
	vmgpu_bo_set_paging(vbo, fence, copy);
}

/**
 * vmgpu_bo_lose_contents() - mark an allocation's contents lost
 * @vbo: the allocation, reserved, whose data could not be kept
 * @what: the operation that failed, for the log
 * @error: its error
 *
 * GEM_INFO reports it, CPU access fails with -EIO, and the device's
 * lost-contents counter grows (DOC: outcome of paging operations).
 */
void vmgpu_bo_lose_contents(struct vmgpu_bo *vbo, const char *what, int error)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (vbo->contents_lost)
		return;
	vbo->contents_lost = true;
	atomic64_inc(&vdev->contents_lost);
	vmgpu_stats_count(vbo->stats, VMGPU_STATS_CONTENTS_LOST);
	drm_err_ratelimited(&vdev->drm, "allocation %p: %s failed (%d), its contents are lost\n",
			    vbo, what, error);
}

/**
 * vmgpu_bo_needs_scrub() - whether the backing must be cleared before use
 * @vbo: the allocation, reserved
 *
 * Once the last paging operation that wrote the backing has signalled,
 * looks at its outcome. If it failed, the backing holds whatever the
 * memory held before, another process's bytes included: it needs a scrub,
 * and stays so until vmgpu_bo_scrub() or a clear of a new backing
 * succeeds, however often that fails. If the failed work was copying
 * data userspace may have written, the contents are lost from now on
 * (reported, and counted on the device).
 *
 * Return: true while the backing needs clearing; false if the last paging
 * operation succeeded, or has not finished (work queued after it inherits
 * its outcome).
 */
bool vmgpu_bo_needs_scrub(struct vmgpu_bo *vbo)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	struct dma_fence *fence = vbo->paging_fence;
	bool copied = vbo->paging_copied;
	int error;

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (!fence || !dma_fence_is_signaled(fence))
		return vbo->needs_scrub;
	error = fence->error;
	vbo->paging_fence = NULL;
	vbo->paging_copied = false;
	dma_fence_put(fence);
	if (!error)
		return vbo->needs_scrub;

	vbo->needs_scrub = true;
	if (copied && vbo->has_contents && !vbo->contents_lost) {
		vmgpu_bo_lose_contents(vbo, "a move", error);
	} else {
		drm_dbg_driver(&vdev->drm, "allocation %p: a clear failed (%d), clearing again\n",
			       vbo, error);
	}
	return true;
}

/* System pages out of the device's reach are cleared by the CPU. */
static void vmgpu_bo_clear_pages(struct ttm_tt *tt)
{
	unsigned long i;

	for (i = 0; i < tt->num_pages; i++)
		clear_highpage(tt->pages[i]);
}

/**
 * vmgpu_bo_scrub() - clear the current backing after a failed paging operation
 * @vbo: the allocation, reserved, with no paging operation pending
 *
 * Return: 0 if the backing is clear now, -EAGAIN if the device will clear
 * it (wait for the allocation's kernel fences, then look again with
 * vmgpu_bo_needs_scrub()), or a negative errno (the backing still needs
 * clearing).
 */
int vmgpu_bo_scrub(struct vmgpu_bo *vbo)
{
	struct ttm_buffer_object *tbo = &vbo->tbo;
	struct ttm_resource *res = tbo->resource;
	struct dma_fence *fence;
	int ret;

	dma_resv_assert_held(tbo->base.resv);
	if (!res || res->mem_type == TTM_PL_SYSTEM) {
		if (res && tbo->ttm && ttm_tt_is_populated(tbo->ttm))
			vmgpu_bo_clear_pages(tbo->ttm);
		vbo->needs_scrub = false;
		return 0;
	}
	ret = dma_resv_reserve_fences(tbo->base.resv, 1);
	if (ret)
		return ret;
	fence = vmgpu_migrate_clear(vmgpu_bo_device(vbo), tbo, res, NULL);
	if (IS_ERR(fence))
		return PTR_ERR(fence);
	vmgpu_bo_queue_paging(vbo, fence, false);
	vbo->needs_scrub = false;
	dma_fence_put(fence);
	return -EAGAIN;
}
