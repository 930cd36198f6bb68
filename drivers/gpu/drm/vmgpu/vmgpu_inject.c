// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "vmgpu_device.h"
#include "vmgpu_inject.h"
#include "vmgpu_job.h"
#include "vmgpu_ring.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: fault injection
 *
 * debugfs files that make the paging engine fail on purpose, so that tests
 * can check every failure path end to end (the error interrupt, hang
 * recovery, failed clears and moves) in a booted guest, and some that
 * hold a race window open:
 *
 * inject_paging_error: a write queues three jobs back to back: one that
 * succeeds, one whose Transfer reads past the end of VRAM, one that
 * succeeds. The device halts the ring on the bad command; the driver must
 * blame exactly that job (-EIO) and resume. The write waits for all three
 * and returns -EIO if only the bad one failed, -EPROTO otherwise; a read
 * gives the three fence errors ("before 0 bad -5 after 0").
 *
 * inject_paging_hang: a write queues a job that keeps the engine busy
 * (NOPs) for twice the scheduler timeout and returns its fence's error:
 * -ETIMEDOUT once the driver declared the ring hung and reset it.
 *
 * inject_paging_delay: writing a number of milliseconds queues a job that
 * keeps the engine busy that long and returns at once: work queued next
 * waits behind it, which makes "still queued" states observable.
 *
 * inject_paging_fault: writing N makes the next N paging operations (the
 * clears and copies of moves) fail: each is replaced by one command the
 * device rejects, so its work does not happen. A read gives how many are
 * still to fail.
 *
 * inject_scrub_fault: the same for the next N scrubs of freed VRAM (DOC:
 * scrubbing freed VRAM), which no other paging operation takes.
 *
 * inject_import_evict_fault: writing N makes the next N evictions of an
 * import for its exporter (a dynamic exporter's move_notify) fail as an
 * allocation failure would: the import keeps its mapping, out of the
 * device's reach, until its next use evicts it.
 *
 * inject_scrub_delay_ms: the scrub work waits this much longer, at most
 * 10 s, whoever queues it (a free of VRAM, the end of a scrub); a write
 * postpones a look already queued too. What was freed stays dirty
 * meanwhile, which makes "the allocator passes dirty pages over"
 * observable. 0 (the default) adds nothing.
 *
 * inject_vm_free_delay_ms: a dying GPU VA space (its file closed, its
 * jobs done) waits this long, at most 10 s, before it is released: it
 * keeps its device VM meanwhile, on the slot LRU, where a slot search
 * finds it and may take its slot. 0 (the default) does not wait.
 *
 * inject_reset_delay_ms: a hang reset that found its job unfinished waits
 * this long, at most 10 s, before it stops the ring: the job may finish
 * meanwhile, and the next one start.
 *
 * inject_vm_free_sync: a GPU VA space's last put releases it there and
 * then, not on the module's queue. drm_gpuvm drops its own reference to
 * the DRM device after that, so it drops the device's last one if nothing
 * else holds it.
 *
 * inject_free_job_delay_ms: the scheduler's free of a user job waits this
 * long, at most 10 s, first: a job failed by an unplug is freed after the
 * removal has dropped the device's own reference. Paging jobs (the scrub
 * of freed VRAM runs some at any time) are freed at once.
 *
 * inject_display_events_lost: while set, the display interrupt handler
 * drops every FLIP_DONE and VBLANK event it reads, as if the interrupt
 * had been lost: a flip is then completed only by its timeout
 * (vmgpu_wait_for_flip_done()). inject_display_commit_lost: while set, a
 * flip's COMMIT for the next vblank is not written, as if the device had
 * missed it: only the timeout's latch shows the flip.
 *
 * The delays sleep interruptibly: a worker held on purpose is not a hung
 * task to the detector that the unplug tests watch.
 */

#define VMGPU_INJECT_DELAY_MAX_MS	10000

/* A Transfer the device rejects: it reads past the end of VRAM. */
static void vmgpu_inject_bad_cmd(struct vmgpu_device *vdev, union vmgpu_cmd *cmd)
{
	*cmd = (union vmgpu_cmd){};
	cmd->transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
	cmd->transfer.src.space = cpu_to_le32(VMGPU_SPACE_VRAM);
	cmd->transfer.src.addr = cpu_to_le64(vdev->vram.size);
	cmd->transfer.dst.space = cpu_to_le32(VMGPU_SPACE_VRAM);
	cmd->transfer.size = cpu_to_le64(PAGE_SIZE);
}

/* A job of NOPs busy for @ms milliseconds, not yet submitted. */
static struct vmgpu_job *vmgpu_inject_busy_job(struct vmgpu_device *vdev, u64 ms)
{
	u32 i, nops = max_t(u32, 1, DIV_ROUND_UP(ms * 1000, VMGPU_NOP_MAX_DELAY_US));
	u64 left = ms * 1000;
	union vmgpu_cmd cmd = {};
	struct vmgpu_job *job;

	job = vmgpu_job_alloc(vmgpu_paging_ring(vdev), nops);
	if (IS_ERR(job))
		return job;
	cmd.nop.hdr.opcode = cpu_to_le16(VMGPU_OP_NOP);
	for (i = 0; i < nops; i++) {
		u32 us = min_t(u64, left, VMGPU_NOP_MAX_DELAY_US);

		cmd.nop.delay_us = cpu_to_le32(us);
		left -= us;
		vmgpu_job_add(job, &cmd);
	}
	return job;
}

/* Wait for a submitted job; its fence's error, or why the wait failed. */
static long vmgpu_inject_wait(struct dma_fence *fence, long timeout)
{
	long ret = dma_fence_wait_timeout(fence, true, timeout);

	if (ret > 0)
		ret = fence->error;
	else if (!ret)
		ret = -EBUSY;
	dma_fence_put(fence);
	return ret;
}

static ssize_t vmgpu_inject_error_write(struct file *f, const char __user *buf,
					size_t len, loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	struct vmgpu_inject *inject = &vdev->inject;
	struct dma_fence *fences[3] = {};
	long errors[3] = { -ENOMEM, -ENOMEM, -ENOMEM };
	union vmgpu_cmd nop = {}, bad;
	int i, idx;

	nop.nop.hdr.opcode = cpu_to_le16(VMGPU_OP_NOP);
	vmgpu_inject_bad_cmd(vdev, &bad);
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	for (i = 0; i < ARRAY_SIZE(fences); i++) {
		fences[i] = vmgpu_job_submit_cmd(vmgpu_paging_ring(vdev), i == 1 ? &bad : &nop,
						 NULL);
		if (IS_ERR(fences[i])) {
			fences[i] = NULL;
			break;
		}
	}
	for (i = 0; i < ARRAY_SIZE(fences); i++)
		if (fences[i])
			errors[i] = vmgpu_inject_wait(fences[i], 30 * HZ);
	drm_dev_exit(idx);

	mutex_lock(&inject->lock);
	inject->before = errors[0];
	inject->bad = errors[1];
	inject->after = errors[2];
	mutex_unlock(&inject->lock);
	if (errors[1] == -EIO && !errors[0] && !errors[2])
		return -EIO;
	return -EPROTO;
}

static ssize_t vmgpu_inject_error_read(struct file *f, char __user *buf,
				       size_t len, loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	struct vmgpu_inject *inject = &vdev->inject;
	char text[64];
	int n;

	mutex_lock(&inject->lock);
	n = scnprintf(text, sizeof(text), "before %ld bad %ld after %ld\n",
		      inject->before, inject->bad, inject->after);
	mutex_unlock(&inject->lock);
	return simple_read_from_buffer(buf, len, pos, text, n);
}

static ssize_t vmgpu_inject_hang_write(struct file *f, const char __user *buf,
				       size_t len, loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	long timeout = vmgpu_ring_timeout(vmgpu_paging_ring(vdev));
	struct dma_fence *fence;
	struct vmgpu_job *job;
	long ret;
	int idx;

	if (timeout == MAX_SCHEDULE_TIMEOUT)
		return -EINVAL;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	job = vmgpu_inject_busy_job(vdev, 2 * jiffies_to_msecs(timeout));
	fence = IS_ERR(job) ? ERR_CAST(job) : vmgpu_job_submit(job, NULL);
	ret = IS_ERR(fence) ? PTR_ERR(fence) : vmgpu_inject_wait(fence, 4 * timeout);
	drm_dev_exit(idx);
	return ret ?: len;
}

static ssize_t vmgpu_inject_delay_write(struct file *f, const char __user *buf,
					size_t len, loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	struct dma_fence *fence;
	struct vmgpu_job *job;
	unsigned int ms;
	int idx, ret;

	ret = kstrtouint_from_user(buf, len, 0, &ms);
	if (ret)
		return ret;
	if (ms > VMGPU_INJECT_DELAY_MAX_MS)
		return -EINVAL;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	job = vmgpu_inject_busy_job(vdev, ms);
	fence = IS_ERR(job) ? ERR_CAST(job) : vmgpu_job_submit(job, NULL);
	drm_dev_exit(idx);
	if (IS_ERR(fence))
		return PTR_ERR(fence);
	dma_fence_put(fence);
	return len;
}

static ssize_t vmgpu_inject_fault_write(struct file *f, const char __user *buf,
					size_t len, loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	unsigned int count;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &count);
	if (ret)
		return ret;
	if (count > INT_MAX)
		return -EINVAL;
	atomic_set(&vdev->inject.paging_faults, count);
	return len;
}

static ssize_t vmgpu_inject_fault_read(struct file *f, char __user *buf,
				       size_t len, loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	char text[16];
	int n;

	n = scnprintf(text, sizeof(text), "%d\n", atomic_read(&vdev->inject.paging_faults));
	return simple_read_from_buffer(buf, len, pos, text, n);
}

/**
 * vmgpu_inject_paging_fault() - whether to fail the paging operation being built
 * @vdev: the device
 * @cmd: out, a command the device rejects, to put first
 *
 * Return: true once for each operation inject_paging_fault asked to fail.
 */
bool vmgpu_inject_paging_fault(struct vmgpu_device *vdev, union vmgpu_cmd *cmd)
{
	if (!atomic_add_unless(&vdev->inject.paging_faults, -1, 0))
		return false;
	vmgpu_inject_bad_cmd(vdev, cmd);
	return true;
}

/**
 * vmgpu_inject_scrub_fault() - whether to fail the scrub being built
 * @vdev: the device
 * @cmd: filled with the command the device rejects, if so
 *
 * Return: true once for each scrub inject_scrub_fault asked to fail.
 */
bool vmgpu_inject_scrub_fault(struct vmgpu_device *vdev, union vmgpu_cmd *cmd)
{
	if (!atomic_add_unless(&vdev->inject.scrub_faults, -1, 0))
		return false;
	vmgpu_inject_bad_cmd(vdev, cmd);
	return true;
}

/**
 * vmgpu_inject_import_evict_fault() - whether to fail an import's eviction
 * for its exporter
 * @vdev: the device
 *
 * Return: true once for each eviction inject_import_evict_fault asked to
 * fail.
 */
bool vmgpu_inject_import_evict_fault(struct vmgpu_device *vdev)
{
	return atomic_add_unless(&vdev->inject.import_evict_faults, -1, 0);
}

/**
 * vmgpu_inject_scrub_delay() - what inject_scrub_delay_ms adds to the wait
 * of freed VRAM for its scrub
 * @vdev: the device
 *
 * Return: milliseconds.
 */
u32 vmgpu_inject_scrub_delay(struct vmgpu_device *vdev)
{
	return min_t(u32, READ_ONCE(vdev->inject.scrub_delay_ms), VMGPU_INJECT_DELAY_MAX_MS);
}

/**
 * vmgpu_inject_vm_free_delay() - hold a dying GPU VA space before its
 * release, as inject_vm_free_delay_ms asks
 * @vdev: the device
 */
void vmgpu_inject_vm_free_delay(struct vmgpu_device *vdev)
{
	u32 ms = min_t(u32, READ_ONCE(vdev->inject.vm_free_delay_ms),
		       VMGPU_INJECT_DELAY_MAX_MS);

	if (ms)
		msleep_interruptible(ms);
}

/**
 * vmgpu_inject_reset_delay() - hold a hang reset before it stops the ring,
 * as inject_reset_delay_ms asks
 * @vdev: the device
 */
void vmgpu_inject_reset_delay(struct vmgpu_device *vdev)
{
	u32 ms = min_t(u32, READ_ONCE(vdev->inject.reset_delay_ms),
		       VMGPU_INJECT_DELAY_MAX_MS);

	if (ms)
		msleep_interruptible(ms);
}

/**
 * vmgpu_inject_free_job_delay() - hold the free of a job, as
 * inject_free_job_delay_ms asks
 * @vdev: the device
 */
void vmgpu_inject_free_job_delay(struct vmgpu_device *vdev)
{
	u32 ms = min_t(u32, READ_ONCE(vdev->inject.free_job_delay_ms),
		       VMGPU_INJECT_DELAY_MAX_MS);

	if (ms)
		msleep_interruptible(ms);
}

static int vmgpu_inject_scrub_delay_get(void *data, u64 *val)
{
	struct vmgpu_device *vdev = data;

	*val = READ_ONCE(vdev->inject.scrub_delay_ms);
	return 0;
}

static int vmgpu_inject_scrub_delay_set(void *data, u64 val)
{
	struct vmgpu_device *vdev = data;

	if (val > U32_MAX)
		return -EINVAL;
	WRITE_ONCE(vdev->inject.scrub_delay_ms, val);
	vmgpu_vram_scrub_postpone(vdev);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(vmgpu_inject_scrub_delay_fops, vmgpu_inject_scrub_delay_get,
			 vmgpu_inject_scrub_delay_set, "%llu\n");

static const struct file_operations vmgpu_inject_error_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = vmgpu_inject_error_read,
	.write = vmgpu_inject_error_write,
	.llseek = default_llseek,
};

static const struct file_operations vmgpu_inject_hang_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vmgpu_inject_hang_write,
	.llseek = noop_llseek,
};

static const struct file_operations vmgpu_inject_delay_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vmgpu_inject_delay_write,
	.llseek = noop_llseek,
};

static const struct file_operations vmgpu_inject_fault_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = vmgpu_inject_fault_read,
	.write = vmgpu_inject_fault_write,
	.llseek = default_llseek,
};

/**
 * vmgpu_inject_init() - add the fault-injection files
 * @vdev: the device, registered
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_inject_init(struct vmgpu_device *vdev)
{
	struct dentry *root = vdev->drm.debugfs_root;
	int ret;

	ret = drmm_mutex_init(&vdev->drm, &vdev->inject.lock);
	if (ret)
		return ret;
	atomic_set(&vdev->inject.paging_faults, 0);
	atomic_set(&vdev->inject.scrub_faults, 0);
	atomic_set(&vdev->inject.import_evict_faults, 0);
	debugfs_create_file("inject_paging_error", 0600, root, vdev,
			    &vmgpu_inject_error_fops);
	debugfs_create_file("inject_paging_hang", 0200, root, vdev,
			    &vmgpu_inject_hang_fops);
	debugfs_create_file("inject_paging_delay", 0200, root, vdev,
			    &vmgpu_inject_delay_fops);
	debugfs_create_file("inject_paging_fault", 0600, root, vdev,
			    &vmgpu_inject_fault_fops);
	debugfs_create_atomic_t("inject_scrub_fault", 0600, root, &vdev->inject.scrub_faults);
	debugfs_create_atomic_t("inject_import_evict_fault", 0600, root,
				&vdev->inject.import_evict_faults);
	debugfs_create_file_unsafe("inject_scrub_delay_ms", 0600, root, vdev,
				   &vmgpu_inject_scrub_delay_fops);
	debugfs_create_u32("inject_vm_free_delay_ms", 0600, root,
			   &vdev->inject.vm_free_delay_ms);
	debugfs_create_u32("inject_reset_delay_ms", 0600, root,
			   &vdev->inject.reset_delay_ms);
	debugfs_create_bool("inject_vm_free_sync", 0600, root,
			    &vdev->inject.vm_free_sync);
	debugfs_create_u32("inject_free_job_delay_ms", 0600, root,
			   &vdev->inject.free_job_delay_ms);
	debugfs_create_bool("inject_display_events_lost", 0600, root,
			    &vdev->inject.display_events_lost);
	debugfs_create_bool("inject_display_commit_lost", 0600, root,
			    &vdev->inject.display_commit_lost);
	return 0;
}
