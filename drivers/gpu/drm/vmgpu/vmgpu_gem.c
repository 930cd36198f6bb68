// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-resv.h>
#include <linux/mm.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "vmgpu_drm.h"
#include "vmgpu_bo.h"
#include "vmgpu_context.h"
#include "vmgpu_device.h"
#include "vmgpu_gart.h"
#include "vmgpu_gem.h"
#include "vmgpu_hap.h"
#include "vmgpu_stats.h"
#include "vmgpu_vm.h"
#include "vmgpu_vram.h"

/**
 * DOC: allocation ioctls
 *
 * Create, inspect, map and make resident allocations (seed "GPU segments").
 * Creation enforces the seeds' rules before TTM sees anything: the system
 * segment is reached through the aperture segment's id, cached CPU access
 * only exists in system memory, and a CPU-accessible allocation that may
 * land where the VRAM BAR does not reach must be allowed into system memory
 * (Lock2).
 */

#define VMGPU_ALLOC_FLAGS (DRM_VMGPU_ALLOC_CPU_ACCESS | DRM_VMGPU_ALLOC_CACHED | \
			   DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY | DRM_VMGPU_ALLOC_PRIMARY | \
			   DRM_VMGPU_ALLOC_SWIZZLED | DRM_VMGPU_ALLOC_NOTIFY_EVICTION | \
			   DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP)

/* Largest allocation one segment of the set could ever hold. */
static u64 vmgpu_gem_capacity(struct vmgpu_device *vdev, u32 id, u32 flags)
{
	const struct vmgpu_segment *seg;

	/* System memory: as much as may be resident for the device at once. */
	if (id == vmgpu_aperture_segment(vdev))
		return flags & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY ?
		       min((u64)vdev->gart_pages << PAGE_SHIFT, vmgpu_gart_system_limit(vdev)) :
		       vmgpu_gart_system_limit(vdev);
	seg = &vdev->segments[id - 1];
	if (!(flags & DRM_VMGPU_ALLOC_CPU_ACCESS) || vmgpu_bo_cpu_fits_beyond_bar(vdev, seg->size))
		return seg->size;
	/* Beyond the BAR only what the host aperture can map in place. */
	return max(vmgpu_segment_cpu_visible_size(vdev, seg),
		   min_t(u64, seg->size, (u64)vdev->hap.num_pages << PAGE_SHIFT));
}

/* Validate a create request; returns the size rounded to the set's page. */
static int vmgpu_gem_check_create(struct vmgpu_device *vdev,
				  const struct drm_vmgpu_gem_create *args, u64 *size)
{
	u32 aperture = vmgpu_aperture_segment(vdev);
	u32 flags = args->flags;
	u64 page = PAGE_SIZE, capacity = 0;
	u32 id;

	if (args->extensions || args->reserved[0] || args->reserved[1] ||
	    (flags & ~VMGPU_ALLOC_FLAGS) || !args->size || !args->segments ||
	    (args->segments & ~GENMASK(aperture, 1)) ||
	    args->preferred_segment > aperture ||
	    !(args->segments & BIT(args->preferred_segment)))
		return -EINVAL;
	if ((flags & DRM_VMGPU_ALLOC_CACHED) && (args->segments & ~BIT(aperture)))
		return -EINVAL;
	/* Swizzled is a memory segment's layout. */
	if ((flags & DRM_VMGPU_ALLOC_SWIZZLED) && !(args->segments & ~BIT(aperture)))
		return -EINVAL;

	for (id = 1; id < aperture; id++) {
		const struct vmgpu_segment *seg = &vdev->segments[id - 1];

		if (!(args->segments & BIT(id)))
			continue;
		if ((flags & DRM_VMGPU_ALLOC_CPU_ACCESS) &&
		    vmgpu_segment_cpu_visible_size(vdev, seg) < seg->size &&
		    !(args->segments & BIT(aperture)))
			return -EINVAL;
		page = max_t(u64, page, seg->page_size);
	}

	if (args->size > U64_MAX - page)
		return -E2BIG;
	*size = ALIGN(args->size, page);
	for (id = 1; id <= aperture; id++)
		if (args->segments & BIT(id))
			capacity = max(capacity, vmgpu_gem_capacity(vdev, id, flags));
	return *size > capacity ? -E2BIG : 0;
}

/**
 * vmgpu_gem_create_ioctl() - DRM_IOCTL_VMGPU_GEM_CREATE
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_create
 * @file: the caller
 *
 * Return: 0; -EINVAL or -E2BIG for requests the rules forbid (see the uapi);
 * -ENOSPC or -ENOMEM when nothing can hold it now; -ERESTARTSYS if a signal
 * came while its clear waited for a paging job.
 */
int vmgpu_gem_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vmgpu_device *vdev = to_vmgpu_device(drm);
	struct drm_vmgpu_gem_create *args = data;
	struct vmgpu_bo *vbo;
	int idx, ret;
	u64 size;

	ret = vmgpu_gem_check_create(vdev, args, &size);
	if (ret)
		return ret;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	vbo = vmgpu_bo_create(vdev, size, args->flags, args->segments,
			      args->preferred_segment,
			      ((struct vmgpu_file *)file->driver_priv)->stats);
	if (IS_ERR(vbo)) {
		ret = PTR_ERR(vbo);
		goto exit;
	}
	ret = drm_gem_handle_create(file, &vbo->tbo.base, &args->handle);
	drm_gem_object_put(&vbo->tbo.base);
exit:
	drm_dev_exit(idx);
	return ret;
}

/*
 * Settle the outcome of the allocation's finished paging work (see
 * vmgpu_bo_needs_scrub()): a backing a failed operation left behind is
 * cleared before anyone can see it. The clear is queued, not waited for.
 */
static int vmgpu_gem_settle_paging(struct vmgpu_bo *vbo)
{
	int ret = 0;

	if (vmgpu_bo_needs_scrub(vbo))
		ret = vmgpu_bo_scrub(vbo);
	return ret == -EAGAIN ? 0 : ret;
}

/**
 * vmgpu_gem_info_ioctl() - DRM_IOCTL_VMGPU_GEM_INFO
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_info
 * @file: the caller
 *
 * Return: 0, -EINVAL for unknown flags or non-zero reserved words, -ENOENT
 * for an unknown handle, -EINTR or -ERESTARTSYS if interrupted, -ENODEV
 * after unplug.
 */
int vmgpu_gem_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vmgpu_gem_info *args = data;
	struct drm_gem_object *obj;
	struct vmgpu_bo *vbo;
	u32 residency = 0;
	u64 where;
	int idx, ret;

	if ((args->info_flags & ~DRM_VMGPU_GEM_INFO_WAIT) || args->reserved[0] ||
	    args->reserved[1])
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
	if (ret)
		goto put;
	if (args->info_flags & DRM_VMGPU_GEM_INFO_WAIT) {
		long lret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_KERNEL, true,
						  MAX_SCHEDULE_TIMEOUT);

		if (lret < 0) {
			ret = lret;
			goto unlock;
		}
	}
	ret = vmgpu_gem_settle_paging(vbo);
	if (ret)
		goto unlock;
	where = vmgpu_bo_residency(vbo, &args->offset);
	if (vmgpu_bo_is_resident(&vbo->tbo))
		residency |= DRM_VMGPU_RESIDENCY_RESIDENT;
	if (vbo->contents_lost)
		residency |= DRM_VMGPU_RESIDENCY_CONTENTS_LOST;
	if (vmgpu_hap_res_invisible(to_vmgpu_device(drm), vbo->tbo.resource))
		residency |= DRM_VMGPU_RESIDENCY_CPU_INVISIBLE;
	if (vbo->hap_slots)
		residency |= DRM_VMGPU_RESIDENCY_HOST_APERTURE;
	if (vbo->unswizzled && !vmgpu_bo_in_memory_segment(vbo))
		residency |= DRM_VMGPU_RESIDENCY_UNSWIZZLED;
	if (vmgpu_bo_is_import(vbo))
		residency |= DRM_VMGPU_RESIDENCY_IMPORTED;
	args->size = obj->size;
	args->flags = vbo->flags;
	args->segments = vbo->segments;
	args->segment_id = lower_32_bits(where);
	args->residency = upper_32_bits(where) | residency;
unlock:
	dma_resv_unlock(obj->resv);
put:
	drm_gem_object_put(obj);
exit:
	drm_dev_exit(idx);
	return ret;
}

/**
 * vmgpu_gem_mmap_offset_ioctl() - DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_mmap_offset
 * @file: the caller
 *
 * Return: 0, -EINVAL for non-zero flags or reserved words or an allocation
 * created without CPU access (not an import), -ENOENT for an unknown handle, -EIO for an
 * allocation whose contents were lost, -ENODEV after unplug.
 */
int vmgpu_gem_mmap_offset_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct drm_vmgpu_gem_mmap_offset *args = data;

	if (args->flags || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	return vmgpu_gem_dumb_map_offset(file, drm, args->handle, &args->offset);
}

/**
 * vmgpu_gem_dumb_map_offset() - &drm_driver.dumb_map_offset, and the
 * offset of DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET
 * @file: the caller
 * @drm: the DRM device
 * @handle: the allocation
 * @offset: out, its fake offset for mmap
 *
 * Return: 0, -EINVAL for an allocation created without CPU access (an
 * import is mapped by its exporter), -ENOENT for an unknown handle, -EIO
 * for an allocation whose contents were lost, -ENODEV after unplug, -EINTR
 * or -ERESTARTSYS if interrupted.
 */
int vmgpu_gem_dumb_map_offset(struct drm_file *file, struct drm_device *drm, u32 handle,
			      u64 *offset)
{
	struct drm_gem_object *obj;
	struct vmgpu_bo *vbo;
	int idx, ret;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	obj = drm_gem_object_lookup(file, handle);
	if (!obj) {
		ret = -ENOENT;
		goto exit;
	}
	vbo = gem_to_vmgpu_bo(obj);
	/* An import's mapping is its exporter's (vmgpu_prime_mmap()). */
	if (!(vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS) && !vmgpu_bo_is_import(vbo)) {
		ret = -EINVAL;
		goto put;
	}
	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret)
		goto put;
	ret = vmgpu_gem_settle_paging(vbo);
	if (!ret && vbo->contents_lost)
		ret = -EIO;
	dma_resv_unlock(obj->resv);
	if (!ret)
		*offset = drm_vma_node_offset_addr(&obj->vma_node);
put:
	drm_gem_object_put(obj);
exit:
	drm_dev_exit(idx);
	return ret;
}

/**
 * vmgpu_gem_dumb_create() - &drm_driver.dumb_create
 * @file: the caller
 * @drm: the DRM device
 * @args: width, height and bpp in; pitch, size and handle out
 *
 * A dumb buffer is what KMS clients scan out: a PRIMARY allocation the
 * CPU maps, in any memory segment or the aperture segment, preferring the
 * first memory segment. Displaying it pins it in a memory segment
 * (vmgpu_display.c).
 *
 * Return: 0, -EINVAL for a pitch beyond 32 bits, or an error of
 * GEM_CREATE's (-E2BIG for more than the segments hold).
 */
int vmgpu_gem_dumb_create(struct drm_file *file, struct drm_device *drm,
			  struct drm_mode_create_dumb *args)
{
	struct vmgpu_device *vdev = to_vmgpu_device(drm);
	struct drm_vmgpu_gem_create create = {
		.flags = DRM_VMGPU_ALLOC_PRIMARY | DRM_VMGPU_ALLOC_CPU_ACCESS,
		.segments = GENMASK(vmgpu_aperture_segment(vdev), 1),
		.preferred_segment = 1,
	};
	struct drm_gem_object *obj;
	u64 pitch;
	u32 cpp;
	int ret;

	/* The core checked for zero and for a u32 size; any height goes. */
	cpp = DIV_ROUND_UP(args->bpp, 8);
	/* The display reads lines from 4-byte aligned starts. */
	pitch = ALIGN((u64)args->width * cpp, 64);
	if (pitch > U32_MAX)
		return -EINVAL;
	args->pitch = pitch;
	create.size = pitch * args->height;
	ret = vmgpu_gem_create_ioctl(drm, &create, file);
	if (ret)
		return ret;
	obj = drm_gem_object_lookup(file, create.handle);
	if (!obj)
		return -ENOENT;
	args->handle = create.handle;
	/* Rounded up to the set's page size: what mmap can map. */
	args->size = obj->size;
	drm_gem_object_put(obj);
	return 0;
}

static int vmgpu_gem_residency_op(struct drm_device *drm, struct drm_file *file,
				  const struct drm_vmgpu_gem_make_resident *args,
				  u32 valid_flags,
				  int (*op)(struct vmgpu_bo *vbo, u32 flags))
{
	struct drm_gem_object *obj;
	int idx, ret;

	if ((args->flags & ~valid_flags) || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	obj = drm_gem_object_lookup(file, args->handle);
	if (obj) {
		ret = op(gem_to_vmgpu_bo(obj), args->flags);
		drm_gem_object_put(obj);
	} else {
		ret = -ENOENT;
	}
	drm_dev_exit(idx);
	return ret;
}

/* MakeResident has no flags: vmgpu_gem_residency_op() let none through. */
static int vmgpu_gem_make_resident(struct vmgpu_bo *vbo, u32 flags)
{
	return vmgpu_bo_make_resident(vbo);
}

/**
 * vmgpu_gem_make_resident_ioctl() - DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_make_resident
 * @file: the caller
 *
 * Return: 0, -EINVAL for non-zero flags or reserved words, -ENOENT for an
 * unknown handle, or what vmgpu_bo_make_resident() returns.
 */
int vmgpu_gem_make_resident_ioctl(struct drm_device *drm, void *data,
				  struct drm_file *file)
{
	return vmgpu_gem_residency_op(drm, file, data, 0, vmgpu_gem_make_resident);
}

/**
 * vmgpu_gem_evict_ioctl() - DRM_IOCTL_VMGPU_GEM_EVICT
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_make_resident
 * @file: the caller
 *
 * Return: 0, -EINVAL for unknown flags or non-zero reserved words, -ENOENT
 * for an unknown handle, or what vmgpu_bo_evict() returns.
 */
int vmgpu_gem_evict_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	return vmgpu_gem_residency_op(drm, file, data, DRM_VMGPU_EVICT_NONRESIDENT,
				      vmgpu_bo_evict);
}

/**
 * vmgpu_gem_show_fdinfo() - per-segment memory use of one DRM file
 * @p: the fdinfo printer
 * @file: the file
 *
 * Regions are named after segments: "system", "vram1".."vramN", "aperture",
 * so that standard tools (gputop, nvtop) read vmgpu's usage. An allocation
 * evicted out of the device's reach counts in "system" but not as
 * resident. One being moved at that instant is skipped rather than waited
 * for. vmgpu-host-aperture: the host-aperture pages they hold
 * (DOC: per-client statistics).
 */
void vmgpu_gem_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct vmgpu_device *vdev = to_vmgpu_device(file->minor->dev);
	struct drm_memory_stats stats[VMGPU_STATS_REGIONS] = {};
	u32 aperture = vmgpu_aperture_segment(vdev);
	struct drm_gem_object *obj;
	u64 hap_pages = 0;
	char region[16];
	u32 id;
	int handle;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, handle) {
		struct vmgpu_bo *vbo = gem_to_vmgpu_bo(obj);
		struct drm_memory_stats *s;
		bool resident;

		if (!dma_resv_trylock(obj->resv))
			continue;
		s = &stats[vmgpu_bo_segment_id(vbo)];
		resident = vmgpu_bo_is_resident(&vbo->tbo);
		hap_pages += vbo->hap_count;
		dma_resv_unlock(obj->resv);
		if (obj->handle_count > 1)
			s->shared += obj->size;
		else
			s->private += obj->size;
		if (resident)
			s->resident += obj->size;
	}
	spin_unlock(&file->table_lock);

	for (id = 0; id <= aperture; id++) {
		vmgpu_stats_region_name(vdev, id, region, sizeof(region));
		drm_print_memory_stats(p, &stats[id], DRM_GEM_OBJECT_RESIDENT, region);
	}
	drm_printf(p, "vmgpu-host-aperture:\t%llu KiB\n", hap_pages * (VMGPU_PAGE_SIZE >> 10));
}

/**
 * vmgpu_gem_wait_ioctl() - DRM_IOCTL_VMGPU_GEM_WAIT
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_wait
 * @file: the DRM file
 *
 * Return: 0 when the allocation is idle, -EBUSY (no-wait mode) or -ETIME
 * while it is not, or another negative errno.
 */
int vmgpu_gem_wait_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vmgpu_gem_wait *args = data;
	struct drm_gem_object *obj;
	long timeout;
	int idx, ret;

	if (args->flags & ~DRM_VMGPU_GEM_WAIT_NO_WAIT ||
	    args->reserved[0] || args->reserved[1])
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out_put;
	}
	if (args->flags & DRM_VMGPU_GEM_WAIT_NO_WAIT) {
		ret = vmgpu_bo_wait_idle(gem_to_vmgpu_bo(obj), 0);
	} else {
		/* A zero timeout only looks, and runs out if busy. */
		timeout = min_t(u64, nsecs_to_jiffies64(args->timeout_ns),
				MAX_SCHEDULE_TIMEOUT);
		if (args->timeout_ns && !timeout)
			timeout = 1;
		ret = vmgpu_bo_wait_idle(gem_to_vmgpu_bo(obj), timeout);
		if (ret == -EBUSY)
			ret = -ETIME;
	}
	drm_dev_exit(idx);
out_put:
	drm_gem_object_put(obj);
	return ret;
}

/**
 * vmgpu_gem_destroy_ioctl() - DRM_IOCTL_VMGPU_GEM_DESTROY
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_destroy
 * @file: the DRM file
 *
 * Return: 0 or a negative errno; never waits for the GPU.
 */
int vmgpu_gem_destroy_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vmgpu_gem_destroy *args = data;
	struct drm_gem_object *obj;
	struct vmgpu_vm *vm;
	int idx, ret = 0;

	if (args->flags & ~DRM_VMGPU_GEM_DESTROY_ASSUME_NOT_IN_USE ||
	    args->reserved[0] || args->reserved[1])
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out_put;
	}
	vm = vmgpu_file_vm_if_made(file);
	if (vm)
		ret = vmgpu_vm_destroy_bo(vm, obj, args->flags &
					  DRM_VMGPU_GEM_DESTROY_ASSUME_NOT_IN_USE);
	if (!ret)
		ret = drm_gem_handle_delete(file, args->handle);
	drm_dev_exit(idx);
out_put:
	drm_gem_object_put(obj);
	return ret;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_gem_test.c"
#endif
