// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-resv.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_vma_manager.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_drm.h"
#include "vmgpu_hap.h"
#include "vmgpu_lock.h"
#include "vmgpu_mmap.h"
#include "vmgpu_stats.h"
#include "vmgpu_swizzle.h"

/**
 * DOC: Lock and Lock2
 *
 * Seed "Lock2" (and LockCb): a lock is CPU access to an allocation with a
 * duration, from the lock to its unlock, held by one file. It returns the
 * mmap offset; the mapping may outlive the lock, as the seed allows.
 * Waiting: by default the lock sleeps until the GPU is done with the
 * allocation (every fence on its reservation, user jobs included);
 * DO_NOT_WAIT turns a busy allocation into -EBUSY at once (the UMD's
 * WasStillDrawing), IGNORE_SYNC does not wait at all (no-overwrite: the
 * UMD knows the GPU does not touch what it writes). Lock2 has no flags
 * and is "a simple method for obtaining a virtual address": the UMD
 * synchronizes with its own jobs (seed: the UMD's non-polling wait on its
 * monitored fences), so Lock2 waits only for the kernel's work on the
 * allocation, never for user jobs. Either way the backing is settled
 * first (clears and moves done or repaired), as for any CPU access.
 *
 * Where a locked allocation may be, by the seed's rules:
 *
 * - CPU-accessible: where the CPU reaches it. In VRAM the BAR covers, or
 *   in system memory, it stays where it is; beyond the BAR it is mapped
 *   through the CPU host aperture, whose pages it keeps until the unlock,
 *   or, with no room there, moved to system memory (which its supported
 *   set allows: creation requires the aperture segment for any
 *   CPU-accessible allocation that may be placed beyond the BAR).
 *   DO_NOT_EVICT turns that move into -ENOSPC.
 * - Not CPU-accessible: only in system memory. One in a memory segment is
 *   moved out if its set has the aperture segment, and cannot be locked
 *   otherwise. For the duration of the lock it is held there: making it
 *   resident or submitting work that needs it resident places it in the
 *   aperture segment, or fails with -EBUSY (vmgpu_bo_validate()). Its
 *   CPU mapping exists only during the lock.
 *
 * Swizzled allocations (vmgpu_swizzle.c) are seen linear: through the
 * host aperture's detiling, or unswizzled in system memory; IGNORE_SYNC
 * is -EINVAL for them.
 */

#define VMGPU_LOCK_FLAGS	(DRM_VMGPU_LOCK_DO_NOT_WAIT | DRM_VMGPU_LOCK_IGNORE_SYNC | \
				 DRM_VMGPU_LOCK_DO_NOT_EVICT | DRM_VMGPU_LOCK_READ_ONLY | \
				 DRM_VMGPU_LOCK_WRITE_ONLY)

static int vmgpu_lock_wait(struct vmgpu_bo *vbo, u32 flags, bool lock2)
{
	long ret;

	if (lock2) {
		ret = dma_resv_wait_timeout(vbo->tbo.base.resv, DMA_RESV_USAGE_KERNEL, true,
					    MAX_SCHEDULE_TIMEOUT);
		return ret < 0 ? ret : 0;
	}
	if (flags & DRM_VMGPU_LOCK_IGNORE_SYNC)
		return 0;
	return vmgpu_bo_wait_idle(vbo, flags & DRM_VMGPU_LOCK_DO_NOT_WAIT ?
				  0 : MAX_SCHEDULE_TIMEOUT);
}

static int vmgpu_lock_place(struct vmgpu_bo *vbo, u32 flags)
{
	bool may_move = !(flags & DRM_VMGPU_LOCK_DO_NOT_EVICT);

	bool swizzled = vbo->flags & DRM_VMGPU_ALLOC_SWIZZLED;

	if (vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS)
		return vmgpu_bo_cpu_reach(vbo, may_move);
	if (!vmgpu_bo_in_memory_segment(vbo) && (!swizzled || vbo->unswizzled))
		return 0;
	if (vmgpu_bo_in_memory_segment(vbo) &&
	    !(vbo->segments & BIT(vmgpu_aperture_segment(vmgpu_bo_device(vbo)))))
		return -EINVAL;
	if (!may_move)
		return -ENOSPC;
	return swizzled ? vmgpu_swizzle_to_system(vbo) : vmgpu_bo_move_to_system(vbo);
}

/* Under the reservation. */
static void vmgpu_lock_end(struct vmgpu_bo *vbo)
{
	WRITE_ONCE(vbo->locked_by, NULL);
	if (vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS)
		vmgpu_hap_set_locked(vbo, false);
	else
		ttm_bo_unmap_virtual(&vbo->tbo);
}

/*
 * Whether @handle still names @obj in @file. The handle may have been
 * closed while the lock waited: its close callback, which ends the file's
 * lock, has run or will run after the reservation is dropped, once the
 * handle is gone from the table.
 */
static bool vmgpu_lock_handle_alive(struct drm_file *file, u32 handle,
				    struct drm_gem_object *obj)
{
	bool alive;

	dma_resv_assert_held(obj->resv);
	spin_lock(&file->table_lock);
	alive = idr_find(&file->object_idr, handle) == obj;
	spin_unlock(&file->table_lock);
	return alive;
}

static int vmgpu_lock(struct drm_device *drm, struct drm_file *file,
		      struct drm_vmgpu_gem_lock *args, bool lock2)
{
	struct drm_gem_object *obj;
	struct vmgpu_bo *vbo;
	int idx, ret;
	u64 moves;

	if (args->reserved[0] || args->reserved[1])
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	vbo = gem_to_vmgpu_bo(obj);
	/*
	 * Seed 001: no no-overwrite lock on a swizzled allocation. The CPU
	 * reaches an import through its exporter only.
	 */
	ret = -EINVAL;
	if (vmgpu_bo_is_import(vbo) ||
	    ((vbo->flags & DRM_VMGPU_ALLOC_SWIZZLED) && (args->flags & DRM_VMGPU_LOCK_IGNORE_SYNC)))
		goto out_put;
	ret = -ENODEV;
	if (!drm_dev_enter(drm, &idx))
		goto out_put;
	/* Not under the reservation: waiting there would block the GPU's moves. */
	ret = vmgpu_lock_wait(vbo, args->flags, lock2);
	if (ret)
		goto out_exit;
	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret)
		goto out_exit;
	/* A lock with no handle behind it could never be ended. */
	if (!vmgpu_lock_handle_alive(file, args->handle, obj)) {
		ret = -ENOENT;
		goto out_unlock;
	}
	if (vbo->locked_by) {
		ret = vbo->locked_by == file ? -EINVAL : -EBUSY;
		goto out_unlock;
	}
	moves = vbo->moves;
	ret = vmgpu_lock_place(vbo, args->flags);
	if (!ret)
		ret = vmgpu_bo_prepare_access(vbo, true);
	if (ret)
		goto out_unlock;
	if (vbo->moves != moves)
		vmgpu_stats_count(vbo->stats, VMGPU_STATS_LOCK_MOVES);
	WRITE_ONCE(vbo->locked_by, file);
	vmgpu_hap_set_locked(vbo, true);
	args->offset = drm_vma_node_offset_addr(&obj->vma_node);
out_unlock:
	dma_resv_unlock(obj->resv);
out_exit:
	drm_dev_exit(idx);
out_put:
	drm_gem_object_put(obj);
	return ret;
}

/**
 * vmgpu_gem_lock_ioctl() - DRM_IOCTL_VMGPU_GEM_LOCK
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_lock
 * @file: the DRM file
 *
 * Return: 0; -EBUSY (do-not-wait on a busy allocation, or locked by
 * another file); -ENOSPC (do-not-evict, and the lock would have to move
 * it); -EINVAL (an import, or an allocation without CPU access that
 * cannot leave its memory segment); -ENOENT (an unknown handle, or one
 * closed while the lock waited); or another negative errno.
 */
int vmgpu_gem_lock_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vmgpu_gem_lock *args = data;

	if (args->flags & ~VMGPU_LOCK_FLAGS ||
	    (args->flags & DRM_VMGPU_LOCK_READ_ONLY && args->flags & DRM_VMGPU_LOCK_WRITE_ONLY))
		return -EINVAL;
	return vmgpu_lock(drm, file, args, false);
}

/**
 * vmgpu_gem_lock2_ioctl() - DRM_IOCTL_VMGPU_GEM_LOCK2
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_lock, @flags 0
 * @file: the DRM file
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_gem_lock2_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vmgpu_gem_lock *args = data;

	if (args->flags)
		return -EINVAL;
	return vmgpu_lock(drm, file, args, true);
}

/**
 * vmgpu_gem_unlock_ioctl() - DRM_IOCTL_VMGPU_GEM_UNLOCK
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_unlock
 * @file: the DRM file
 *
 * After unplug the lock ends with the handle (vmgpu_lock_gem_close()).
 *
 * Return: 0, -EINVAL if this file holds no lock on it, -ENOENT for an
 * unknown handle, -EINTR or -ERESTARTSYS if interrupted, -ENODEV after
 * unplug.
 */
int vmgpu_gem_unlock_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vmgpu_gem_unlock *args = data;
	struct drm_gem_object *obj;
	struct vmgpu_bo *vbo;
	int idx, ret;

	if (args->flags || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj) {
		ret = -ENOENT;
		goto exit;
	}
	vbo = gem_to_vmgpu_bo(obj);
	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (!ret) {
		if (vbo->locked_by == file)
			vmgpu_lock_end(vbo);
		else
			ret = -EINVAL;
		dma_resv_unlock(obj->resv);
	}
	drm_gem_object_put(obj);
exit:
	drm_dev_exit(idx);
	return ret;
}

/**
 * vmgpu_lock_gem_close() - &drm_gem_object_funcs.close: a handle goes
 * @obj: the allocation
 * @file: the file closing its handle, whose lock, if any, ends
 */
void vmgpu_lock_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct vmgpu_bo *vbo = gem_to_vmgpu_bo(obj);

	dma_resv_lock(obj->resv, NULL);
	if (vbo->locked_by == file)
		vmgpu_lock_end(vbo);
	dma_resv_unlock(obj->resv);
}
