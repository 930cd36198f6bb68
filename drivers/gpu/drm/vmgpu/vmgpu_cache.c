// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_drm.h"
#include "vmgpu_bo.h"
#include "vmgpu_cache.h"
#include "vmgpu_device.h"
#include "vmgpu_paging_op.h"

/**
 * DOC: I/O coherency
 *
 * Seed "I/O coherency". On a device that offers it (CAP_NONCOHERENT), the
 * driver runs the non-coherent mode (module parameter noncoherent): the
 * device's data accesses to system memory go through its write-back cache,
 * which stands in for the CPU caches a device does not snoop on Arm
 * platforms without I/O coherency (hw-contract.rst). Then:
 *
 * - The kernel keeps its own work coherent: every paging operation starts
 *   and ends with a flush (write back and drop) of the whole cache, so
 *   moves and clears read what the CPU wrote and leave what they wrote in
 *   memory.
 * - System pages never leave device access with a line of the cache on
 *   them: before an allocation's system pages are freed, the cache is
 *   flushed and the flush waited for, so that no write back lands in
 *   pages that are no longer the allocation's. Moved out of the device's
 *   reach, the pages stay the allocation's: the flush is queued as its
 *   last paging operation, which the CPU's access and TTM's freeing or
 *   swapping of the pages wait for. Pages that get NotifyIoMmuUnmap before they
 *   are freed have just their own lines written back and dropped by it
 *   instead, or the whole cache if the notification fails (DOC:
 *   allocation notifications).
 * - Except for imports (DOC: PRIME import, &vmgpu_job.cache_bracket),
 *   user jobs' accesses are the UMD's to keep coherent, as the seed says:
 *   it calls DRM_IOCTL_VMGPU_GEM_CACHE_SYNC after CPU writes before the GPU
 *   reads, and after GPU writes before the CPU reads. The ioctl does the
 *   CPU cache maintenance the DMA API gives for the pages (a no-op on x86,
 *   where the CPU side is coherent) and flushes the device's cache.
 */

/**
 * vmgpu_cache_flush_cmd() - the command that writes back and drops every
 * line of the device's cache
 *
 * Return: the CACHE_FLUSH command.
 */
union vmgpu_cmd vmgpu_cache_flush_cmd(void)
{
	union vmgpu_cmd cmd = {};

	cmd.hdr.opcode = cpu_to_le16(VMGPU_OP_CACHE_FLUSH);
	cmd.hdr.flags = cpu_to_le16(VMGPU_CACHE_FLAG_WRITEBACK | VMGPU_CACHE_FLAG_INVALIDATE);
	return cmd;
}

/**
 * vmgpu_cache_flush_wait() - write back and drop every line of the
 * device's cache, and wait for it
 * @vdev: the device, inside drm_dev_enter()
 * @intr: whether a signal may end the wait (the flush still runs)
 *
 * Return: 0, -ERESTARTSYS if interrupted, or the error of the flush.
 */
int vmgpu_cache_flush_wait(struct vmgpu_device *vdev, bool intr)
{
	union vmgpu_cmd cmd = vmgpu_cache_flush_cmd();
	struct vmgpu_paging_op op;
	struct dma_fence *fence;
	long ret;

	vmgpu_paging_op_begin(&op, vdev, NULL, NULL);
	vmgpu_paging_op_add(&op, &cmd);
	fence = vmgpu_paging_op_end(&op);
	ret = dma_fence_wait(fence, intr);
	if (!ret)
		ret = min(dma_fence_get_status(fence), 0);
	dma_fence_put(fence);
	return ret;
}

/**
 * vmgpu_cache_release_pages() - before system pages leave device access
 * @tbo: the allocation, reserved, its users done, about to lose its system
 *	 pages' DMA mappings (or the pages themselves)
 *
 * In non-coherent mode, flushes the device's cache and waits, so that no
 * dirty line of these pages is written back once they are not the
 * allocation's. A flush that fails is reported: the device may then write
 * into pages that were freed, which only a device reset prevents.
 */
void vmgpu_cache_release_pages(struct ttm_buffer_object *tbo)
{
	struct vmgpu_device *vdev;
	int idx, ret;

	/*
	 * A ghost (see vmgpu_bo_is_vmgpu()) holds pages a move read last;
	 * the move's closing flush dropped their lines.
	 */
	if (!vmgpu_bo_is_vmgpu(tbo) || !tbo->ttm || !ttm_tt_is_populated(tbo->ttm))
		return;
	vdev = vmgpu_bo_device(to_vmgpu_bo(tbo));
	if (!vdev->noncoherent)
		return;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return;
	ret = vmgpu_cache_flush_wait(vdev, false);
	if (ret)
		drm_err_ratelimited(&vdev->drm, "cache flush before freeing pages failed: %d\n",
				    ret);
	drm_dev_exit(idx);
}

/**
 * vmgpu_cache_leave_device_needed() - whether vmgpu_cache_leave_device()
 * queues a flush, which takes a fence slot
 * @vbo: the allocation, reserved
 *
 * Return: true if it does for @vbo.
 */
bool vmgpu_cache_leave_device_needed(struct vmgpu_bo *vbo)
{
	struct ttm_buffer_object *tbo = &vbo->tbo;

	return vmgpu_bo_device(vbo)->noncoherent && tbo->ttm && ttm_tt_is_populated(tbo->ttm);
}

/**
 * vmgpu_cache_leave_device() - queue the flush before an allocation's
 * system pages leave device access, keeping them
 * @vbo: the allocation, reserved, moving out of the device's reach to
 *	 TTM's system memory
 *
 * In non-coherent mode, queues a whole-cache flush as the allocation's
 * last paging operation, continuing the one before: a kernel fence of its
 * reservation, which CPU access waits for, and which TTM waits for before
 * it frees or swaps the pages. If the flush fails, the contents are lost
 * (vmgpu_bo_needs_scrub()).
 *
 * Return: 0, or -ENOMEM without memory for the fence slot: the flush was
 * not queued, and the caller's move fails.
 */
int vmgpu_cache_leave_device(struct vmgpu_bo *vbo)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	struct ttm_buffer_object *tbo = &vbo->tbo;
	union vmgpu_cmd cmd = vmgpu_cache_flush_cmd();
	struct vmgpu_paging_op op;
	struct dma_fence *fence;
	int idx, ret;

	dma_resv_assert_held(tbo->base.resv);
	if (!vmgpu_cache_leave_device_needed(vbo))
		return 0;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return 0;
	ret = dma_resv_reserve_fences(tbo->base.resv, 1);
	if (ret) {
		drm_dev_exit(idx);
		return ret;
	}
	vmgpu_paging_op_begin(&op, vdev, tbo->base.resv, vbo->paging_fence);
	vmgpu_paging_op_add(&op, &cmd);
	fence = vmgpu_paging_op_end(&op);
	drm_dev_exit(idx);
	vmgpu_bo_queue_paging(vbo, fence, true);
	dma_fence_put(fence);
	return 0;
}

#define VMGPU_CACHE_SYNC_OPS	(DRM_VMGPU_CACHE_SYNC_TO_DEVICE | DRM_VMGPU_CACHE_SYNC_TO_CPU)

/* The CPU side of one operation, for pages [first, last] of its TT. */
static void vmgpu_cache_sync_cpu(struct vmgpu_device *vdev, struct ttm_tt *tt,
				 u64 first, u64 last, bool to_device)
{
	struct device *dev = vdev->drm.dev;
	u64 i;

	for (i = first; i <= last; i++) {
		if (to_device)
			dma_sync_single_for_device(dev, tt->dma_address[i], PAGE_SIZE,
						   DMA_BIDIRECTIONAL);
		else
			dma_sync_single_for_cpu(dev, tt->dma_address[i], PAGE_SIZE,
						DMA_BIDIRECTIONAL);
	}
}

/*
 * One operation's CPU cache maintenance, if it goes @to_device (first
 * pass) or not; *touched is set if the pages are in system memory the
 * device reaches (else there is nothing to do: VRAM is never cached, pages
 * out of the device's reach are not mapped for it). The first pass checks
 * every operation, so that a bad one fails the call before any flush.
 */
static int vmgpu_cache_sync_one(struct drm_device *drm, struct drm_file *file,
				const struct drm_vmgpu_cache_op *op, bool to_device,
				bool *touched)
{
	struct drm_gem_object *obj;
	struct ttm_buffer_object *tbo;
	int ret = 0;

	if (op->flags & ~VMGPU_CACHE_SYNC_OPS ||
	    hweight32(op->flags) != 1 || op->reserved || !op->size)
		return -EINVAL;
	if (!to_device && (op->flags & DRM_VMGPU_CACHE_SYNC_TO_DEVICE))
		return 0;
	obj = drm_gem_object_lookup(file, op->handle);
	if (!obj)
		return -ENOENT;
	if (op->offset > obj->size || op->size > obj->size - op->offset) {
		ret = -EINVAL;
		goto put;
	}
	tbo = &gem_to_vmgpu_bo(obj)->tbo;
	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret)
		goto put;
	if (tbo->resource && tbo->resource->mem_type == TTM_PL_TT &&
	    tbo->ttm && ttm_tt_is_populated(tbo->ttm)) {
		*touched = true;
		/*
		 * An import is mapped through its exporter's sg table, whose
		 * CPU side is the exporter's to keep (x86 needs nothing).
		 */
		if (!!(op->flags & DRM_VMGPU_CACHE_SYNC_TO_DEVICE) == to_device &&
		    !vmgpu_bo_is_import(gem_to_vmgpu_bo(obj)))
			vmgpu_cache_sync_cpu(to_vmgpu_device(drm), tbo->ttm,
					     op->offset >> PAGE_SHIFT,
					     (op->offset + op->size - 1) >> PAGE_SHIFT,
					     to_device);
	}
	dma_resv_unlock(obj->resv);
put:
	drm_gem_object_put(obj);
	return ret;
}

/* Every operation of one direction; the first pass also checks them all. */
static int vmgpu_cache_sync_pass(struct drm_device *drm, struct drm_file *file,
				 const struct drm_vmgpu_cache_op *ops, u32 num_ops,
				 bool to_device, bool *touched)
{
	u32 i;
	int ret;

	for (i = 0; i < num_ops; i++) {
		ret = vmgpu_cache_sync_one(drm, file, &ops[i], to_device, touched);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * vmgpu_gem_cache_sync_ioctl() - DRM_IOCTL_VMGPU_GEM_CACHE_SYNC
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_cache_sync
 * @file: the DRM file
 *
 * CPU writes are written back to memory (DMA API, for the device), then
 * the device's cache is flushed and the flush waited for, then the CPU
 * caches of the GPU-written ranges are invalidated (DMA API, for the CPU).
 *
 * Return: 0; -EINVAL for bad flags, ranges or reserved words; -ENOENT for
 * an unknown handle; -EFAULT; -ENOMEM; -EIO if the device's flush failed;
 * -EINTR if a signal ended the wait for it (the call restarts where the
 * signal allows); -ENODEV after unplug.
 */
int vmgpu_gem_cache_sync_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vmgpu_device *vdev = to_vmgpu_device(drm);
	struct drm_vmgpu_gem_cache_sync *args = data;
	struct drm_vmgpu_cache_op *ops;
	bool touched = false;
	int idx, ret;

	if (args->flags || args->reserved[0] || args->reserved[1] || !args->num_ops ||
	    args->num_ops > DRM_VMGPU_CACHE_SYNC_MAX_OPS)
		return -EINVAL;
	ops = memdup_array_user(u64_to_user_ptr(args->ops), args->num_ops, sizeof(*ops));
	if (IS_ERR(ops))
		return PTR_ERR(ops);
	ret = -ENODEV;
	if (!drm_dev_enter(drm, &idx))
		goto free;
	ret = vmgpu_cache_sync_pass(drm, file, ops, args->num_ops, true, &touched);
	if (!ret && vdev->noncoherent && touched) {
		/* Interrupted, the call is restarted: syncing twice is harmless. */
		ret = vmgpu_cache_flush_wait(vdev, true);
		if (ret && ret != -ERESTARTSYS)
			ret = -EIO;
	}
	if (!ret)
		ret = vmgpu_cache_sync_pass(drm, file, ops, args->num_ops, false, &touched);
	drm_dev_exit(idx);
free:
	kfree(ops);
	return ret;
}
