// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/debugfs.h>
#include <linux/dma-fence.h>
#include <linux/fs.h>
#include <linux/seq_file.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "vmgpu_bo.h"
#include "vmgpu_context.h"
#include "vmgpu_debugfs.h"
#include "vmgpu_device.h"
#include "vmgpu_hap.h"
#include "vmgpu_paging_op.h"
#include "vmgpu_ttm.h"
#include "vmgpu_vm.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: debugfs
 *
 * segments: each segment's occupancy, then every allocation with the
 * segment it is resident in and its physical reference, if any. An
 * allocation whose reservation is held at that instant (being moved) is
 * listed as busy rather than waited for.
 *
 * segment_managers: the allocators' own view (buddy free lists, aperture
 * ranges).
 *
 * vms: every file's GPU VA space: its device VM, page tables and
 * mappings.
 *
 * host_aperture: the CPU host aperture's pages: free, lent to unlocked and
 * to locked allocations, and how often pages were taken back.
 *
 * The fault-injection files are in vmgpu_inject.c.
 */

static int vmgpu_debugfs_segments(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct vmgpu_device *vdev = to_vmgpu_device(entry->dev);
	struct vmgpu_bo *vbo;
	u32 id;

	for (id = 0; id <= vdev->num_segments + 1; id++)
		seq_printf(m, "segment %u: %llu bytes used\n", id,
			   vmgpu_ttm_segment_used(vdev, id));

	mutex_lock(&vdev->bos_lock);
	list_for_each_entry(vbo, &vdev->bos, link) {
		u64 residency, offset;

		if (!dma_resv_trylock(vbo->tbo.base.resv)) {
			seq_printf(m, "bo %p size %zu: busy\n", vbo, vbo->tbo.base.size);
			continue;
		}
		residency = vmgpu_bo_residency(vbo, &offset);
		dma_resv_unlock(vbo->tbo.base.resv);
		seq_printf(m, "bo %p size %zu flags 0x%x set 0x%x: segment %u",
			   vbo, vbo->tbo.base.size, vbo->flags, vbo->segments,
			   lower_32_bits(residency));
		if (upper_32_bits(residency))
			seq_printf(m, " offset 0x%llx", offset);
		seq_puts(m, "\n");
	}
	mutex_unlock(&vdev->bos_lock);
	return 0;
}

static int vmgpu_debugfs_managers(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct vmgpu_device *vdev = to_vmgpu_device(entry->dev);
	struct drm_printer p = drm_seq_file_printer(m);
	u32 i;

	for (i = 0; i < vdev->num_segments; i++)
		ttm_resource_manager_debug(&vdev->vram_mgrs[i].manager, &p);
	ttm_resource_manager_debug(&vdev->gart.manager, &p);
	return 0;
}

static int vmgpu_debugfs_hap(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct drm_printer p = drm_seq_file_printer(m);

	vmgpu_hap_print(to_vmgpu_device(entry->dev), &p);
	return 0;
}

static int vmgpu_debugfs_job_reserve(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct drm_printer p = drm_seq_file_printer(m);

	vmgpu_job_reserve_print(to_vmgpu_device(entry->dev), &p);
	return 0;
}

/* Every file's GPU VA space and its mappings. */
static int vmgpu_debugfs_vms(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct drm_device *drm = entry->dev;
	struct drm_file *file;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead) {
		struct vmgpu_vm *vm = vmgpu_file_vm_if_made(file);

		if (vm)
			vmgpu_vm_debugfs_show(vm, m);
	}
	mutex_unlock(&drm->filelist_mutex);
	return 0;
}

/**
 * vmgpu_debugfs_init() - register the debugfs files
 * @vdev: the device, before drm_dev_register()
 */
void vmgpu_debugfs_init(struct vmgpu_device *vdev)
{
	drm_debugfs_add_file(&vdev->drm, "segments", vmgpu_debugfs_segments, NULL);
	drm_debugfs_add_file(&vdev->drm, "segment_managers", vmgpu_debugfs_managers, NULL);
	drm_debugfs_add_file(&vdev->drm, "vms", vmgpu_debugfs_vms, NULL);
	drm_debugfs_add_file(&vdev->drm, "host_aperture", vmgpu_debugfs_hap, NULL);
	drm_debugfs_add_file(&vdev->drm, "job_reserve", vmgpu_debugfs_job_reserve, NULL);
	vmgpu_vram_scrub_debugfs_init(vdev);
}
