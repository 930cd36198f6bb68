// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/debugfs.h>
#include <linux/dma-fence.h>
#include <linux/fs.h>
#include <linux/seq_file.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_print.h>

#include "vmgpu_bo.h"
#include "vmgpu_debugfs.h"
#include "vmgpu_device.h"
#include "vmgpu_job.h"
#include "vmgpu_ring.h"
#include "vmgpu_ttm.h"

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
 * inject_paging_error: fault injection. A write queues a paging job whose
 * Transfer reads past the end of VRAM; the device halts the ring and raises
 * its error interrupt, the driver fails the job and resumes the ring. The
 * write returns what the job's fence says (-EIO when all went right), so a
 * test can check the whole error path and that the ring still works after.
 *
 * inject_paging_hang: a write queues a paging job that keeps the engine
 * busy (NOPs) for twice the scheduler timeout; the write returns its
 * fence's error, -ETIMEDOUT once the driver declared the ring hung and
 * reset it.
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

/* Submit a job, wait for it, and return its fence's error. */
static long vmgpu_debugfs_run_job(struct vmgpu_job *job, long timeout)
{
	struct dma_fence *fence;
	long ret;

	fence = vmgpu_job_submit(job, NULL);
	if (IS_ERR(fence))
		return PTR_ERR(fence);
	ret = dma_fence_wait_timeout(fence, true, timeout);
	if (ret > 0)
		ret = fence->error;
	else if (!ret)
		ret = -EBUSY;
	dma_fence_put(fence);
	return ret;
}

static ssize_t vmgpu_debugfs_inject_error(struct file *f, const char __user *buf,
					  size_t len, loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	union vmgpu_cmd cmd = {};
	struct vmgpu_job *job;
	long ret;

	job = vmgpu_job_alloc(&vdev->paging, 1);
	if (IS_ERR(job))
		return PTR_ERR(job);
	cmd.transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
	cmd.transfer.src.space = cpu_to_le32(VMGPU_SPACE_VRAM);
	cmd.transfer.src.addr = cpu_to_le64(vdev->vram.size);
	cmd.transfer.dst.space = cpu_to_le32(VMGPU_SPACE_VRAM);
	cmd.transfer.size = cpu_to_le64(PAGE_SIZE);
	vmgpu_job_add(job, &cmd);
	ret = vmgpu_debugfs_run_job(job, 30 * HZ);
	return ret ?: len;
}

static ssize_t vmgpu_debugfs_inject_hang(struct file *f, const char __user *buf,
					 size_t len, loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	long timeout = vmgpu_ring_timeout(&vdev->paging);
	u32 i, nops = DIV_ROUND_UP(2 * jiffies_to_usecs(timeout), VMGPU_NOP_MAX_DELAY_US);
	union vmgpu_cmd cmd = {};
	struct vmgpu_job *job;
	long ret;

	job = vmgpu_job_alloc(&vdev->paging, nops);
	if (IS_ERR(job))
		return PTR_ERR(job);
	cmd.nop.hdr.opcode = cpu_to_le16(VMGPU_OP_NOP);
	cmd.nop.delay_us = cpu_to_le32(VMGPU_NOP_MAX_DELAY_US);
	for (i = 0; i < nops; i++)
		vmgpu_job_add(job, &cmd);
	ret = vmgpu_debugfs_run_job(job, 4 * timeout);
	return ret ?: len;
}

static const struct file_operations vmgpu_debugfs_inject_error_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vmgpu_debugfs_inject_error,
	.llseek = noop_llseek,
};

static const struct file_operations vmgpu_debugfs_inject_hang_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vmgpu_debugfs_inject_hang,
	.llseek = noop_llseek,
};

/**
 * vmgpu_debugfs_register() - add the files that need the DRM minor
 * @vdev: the device, registered
 */
void vmgpu_debugfs_register(struct vmgpu_device *vdev)
{
	debugfs_create_file("inject_paging_error", 0200, vdev->drm.debugfs_root,
			    vdev, &vmgpu_debugfs_inject_error_fops);
	debugfs_create_file("inject_paging_hang", 0200, vdev->drm.debugfs_root,
			    vdev, &vmgpu_debugfs_inject_hang_fops);
}

/**
 * vmgpu_debugfs_init() - register the debugfs files
 * @vdev: the device, before drm_dev_register()
 */
void vmgpu_debugfs_init(struct vmgpu_device *vdev)
{
	drm_debugfs_add_file(&vdev->drm, "segments", vmgpu_debugfs_segments, NULL);
	drm_debugfs_add_file(&vdev->drm, "segment_managers", vmgpu_debugfs_managers, NULL);
}
