// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "vmgpu_drm.h"
#include "vmgpu_device.h"
#include "vmgpu_gart.h"
#include "vmgpu_hap.h"
#include "vmgpu_query.h"
#include "vmgpu_ring.h"
#include "vmgpu_ttm.h"
#include "vmgpu_vram.h"

/**
 * DOC: device query
 *
 * DRM_IOCTL_VMGPU_QUERY tells userspace what the device is and lists its
 * segments the way WDDM's VidMm sees them: the implicit system segment as
 * id 0, the memory segments, and the one aperture segment last.
 */

/*
 * Write an answer of @size bytes. A larger buffer is accepted, its tail
 * zeroed, so that userspace built against a later, longer answer works
 * here; a smaller one is refused. The answer's size goes back either way.
 */
static int vmgpu_query_copy(struct drm_vmgpu_query *query, const void *answer,
			    u32 size)
{
	void __user *data = u64_to_user_ptr(query->data);
	u32 given = query->size;

	query->size = size;
	if (given < size)
		return -EINVAL;
	if (copy_to_user(data, answer, size))
		return -EFAULT;
	if (given > size && clear_user(data + size, given - size))
		return -EFAULT;
	return 0;
}

/* System segment, memory segments, aperture segment. */
static u32 vmgpu_query_num_segments(struct vmgpu_device *vdev)
{
	return vdev->num_segments + 2;
}

static int vmgpu_query_device(struct vmgpu_device *vdev,
			      struct drm_vmgpu_query *query)
{
	struct pci_dev *pdev = vmgpu_pdev(vdev);
	struct drm_vmgpu_query_device info = {
		.pci_vendor = pdev->vendor,
		.pci_device = pdev->device,
		.hw_version = vdev->hw_version,
		.num_segments = vmgpu_query_num_segments(vdev),
		.vram_size = vdev->vram.size,
		.vram_bar_size = vdev->vram.bar_size,
		.vram_bar_probe_size = vdev->vram.bar_probe_size,
		.host_aperture_size = vdev->vram.host_aperture_size,
		.paging_va_size = vdev->paging_vm.size,
		.contents_lost = atomic64_read(&vdev->contents_lost),
		.resident_system_size = vmgpu_gart_system_limit(vdev),
		.resident_system_used = vmgpu_gart_system_used(vdev),
		.host_aperture_used = (u64)vmgpu_hap_used_pages(vdev) << VMGPU_PAGE_SHIFT,
		.paging_busy_ns = atomic64_read(&vmgpu_paging_ring(vdev)->busy_ns),
		.paging_jobs = atomic64_read(&vmgpu_paging_ring(vdev)->jobs_done),
	};

	if (vdev->caps & VMGPU_CAP_REBAR)
		info.flags |= DRM_VMGPU_DEVICE_REBAR;
	if (vdev->hap.num_pages)
		info.flags |= DRM_VMGPU_DEVICE_HOST_APERTURE;
	if (vdev->noncoherent)
		info.flags |= DRM_VMGPU_DEVICE_NONCOHERENT;
	if (vdev->iommu_dma)
		info.flags |= DRM_VMGPU_DEVICE_IOMMU_DMA;

	if (!query->size) {
		query->size = sizeof(info);
		return 0;
	}
	return vmgpu_query_copy(query, &info, sizeof(info));
}

static void vmgpu_query_fill_segments(struct vmgpu_device *vdev,
				      struct drm_vmgpu_query_segments *out)
{
	struct drm_vmgpu_segment *entry = out->segments;
	u32 i;

	out->num_segments = vmgpu_query_num_segments(vdev);

	entry->id = 0;
	entry->kind = DRM_VMGPU_SEGMENT_SYSTEM;
	entry->size = (u64)totalram_pages() << PAGE_SHIFT;
	entry->cpu_visible_size = entry->size;
	entry->page_size = PAGE_SIZE;
	entry->flags = DRM_VMGPU_SEGMENT_CPU_VISIBLE;
	entry->used = vmgpu_ttm_segment_used(vdev, entry->id);
	entry++;

	for (i = 0; i < vdev->num_segments; i++, entry++) {
		const struct vmgpu_segment *seg = &vdev->segments[i];

		entry->id = seg->id;
		entry->kind = DRM_VMGPU_SEGMENT_MEMORY;
		entry->size = seg->size;
		entry->cpu_visible_size = vmgpu_segment_cpu_visible_size(vdev, seg);
		entry->page_size = seg->page_size;
		if (entry->cpu_visible_size == seg->size)
			entry->flags |= DRM_VMGPU_SEGMENT_CPU_VISIBLE;
		else if (vdev->hap.num_pages)
			entry->flags |= DRM_VMGPU_SEGMENT_HOST_APERTURE;
		entry->used = vmgpu_ttm_segment_used(vdev, entry->id);
	}

	entry->id = vdev->num_segments + 1;
	entry->kind = DRM_VMGPU_SEGMENT_APERTURE;
	entry->size = (u64)vdev->gart_pages << VMGPU_PAGE_SHIFT;
	entry->cpu_visible_size = entry->size;
	entry->page_size = VMGPU_PAGE_SIZE;
	entry->flags = DRM_VMGPU_SEGMENT_CPU_VISIBLE;
	entry->used = vmgpu_ttm_segment_used(vdev, entry->id);
}

static int vmgpu_query_segments(struct vmgpu_device *vdev,
				struct drm_vmgpu_query *query)
{
	struct drm_vmgpu_query_segments *out;
	size_t size = struct_size(out, segments, vmgpu_query_num_segments(vdev));
	int ret = 0;

	if (!query->size) {
		query->size = size;
		return 0;
	}
	out = kzalloc(size, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	vmgpu_query_fill_segments(vdev, out);
	ret = vmgpu_query_copy(query, out, size);
	kfree(out);
	return ret;
}

/**
 * vmgpu_query_ioctl() - DRM_IOCTL_VMGPU_QUERY
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_query
 * @file: the caller
 *
 * Return: 0, -EINVAL for unknown queries, non-zero extensions or reserved
 * words and a buffer smaller than the answer, -EFAULT for a bad @data
 * pointer, -ENODEV after unplug.
 */
int vmgpu_query_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vmgpu_device *vdev = to_vmgpu_device(drm);
	struct drm_vmgpu_query *query = data;
	int idx, ret;

	if (query->extensions || query->reserved[0] || query->reserved[1])
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	switch (query->query) {
	case DRM_VMGPU_QUERY_DEVICE:
		ret = vmgpu_query_device(vdev, query);
		break;
	case DRM_VMGPU_QUERY_SEGMENTS:
		ret = vmgpu_query_segments(vdev, query);
		break;
	default:
		ret = -EINVAL;
	}
	drm_dev_exit(idx);
	return ret;
}
