// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/debugfs.h>
#include <linux/dma-fence.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "vmgpu_device.h"
#include "vmgpu_inject.h"
#include "vmgpu_migrate.h"
#include "vmgpu_paging_op.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_trace.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: scrubbing freed VRAM
 *
 * Seed "GPU segments": a new allocation must not show what the memory
 * held for its last owner. In a memory segment that used to cost a Fill
 * per new backing, one paging job each, which bounded how many small
 * allocations a second a segment could make. Freed VRAM is cleared ahead
 * of time instead, many frees in one paging operation, and a new backing
 * made of cleared pages only needs no job of its own.
 *
 * The buddy allocator keeps the clear state of its free blocks (cleared
 * blocks merge only with cleared ones). Everything freed goes back dirty.
 * A delayed work item takes up to %VMGPU_SCRUB_BATCH of dirty blocks out
 * of the allocator, queues one paging operation that Fills them through
 * the paging process GPU VA, and at once gives them back marked cleared.
 * All of it under the segment's lock, which allocations take, so none
 * finds the segment short meanwhile; the operation is started only if it
 * waits for nothing (vmgpu_paging_op_try_begin()), otherwise the work
 * comes back later.
 *
 * Who else can reach a freed block:
 *
 * - work already on the paging ring: a pipelined eviction frees its source
 *   once its copy is queued (its ghost holds only that copy's fence), and
 *   a move into blocks a scrub just gave back is queued after the scrub.
 *   The ring runs its jobs in order, and a paging operation holds the
 *   ring's push lock from its first job to its last, so a scrub is queued
 *   after every job that may still read or write its blocks;
 * - nothing else: every other backing is freed once its reservation is
 *   idle (TTM's release and delayed delete wait for all its fences), and an
 *   AssumeNotInUse destruction frees it while jobs may still run only once
 *   its GPU VA mappings are gone and flushed (DOC: deferred destruction),
 *   so none of them reaches it. Host-aperture pages are taken back before
 *   a backing moves, and the device's write-back cache holds system memory
 *   only.
 *
 * A new allocation asks for cleared blocks first; a top-down one (which
 * keeps out of the CPU-visible part of the segment) gets the highest
 * cleared blocks (dirty ones where none is left) if they all lie beyond
 * the BAR, else the lowest free blocks beyond it, whatever their state;
 * a contiguous one only the latter. If it gets only cleared ones, its
 * first backing is not cleared again: the segment's last scrub fence
 * becomes the allocation's kernel fence and its last paging operation
 * (&vmgpu_vram_resource.clear_fence), which every CPU and GPU user waits
 * for and the display checks (vmgpu_plane_shows()).
 *
 * A scrub that fails must not leave memory marked cleared. Each scrub
 * continues the one before (&vmgpu_hw_fence.prev), so the last one fails
 * if any since the chain started did, and an allocation holding it sees
 * the failure and is cleared again before use (vmgpu_bo_needs_scrub()).
 * The work item, and any allocation that asks for cleared blocks, marks
 * every free block of the segment dirty and starts a new chain when it
 * finds the last scrub failed; no scrub follows for a second. One scrub
 * per segment is on the ring at a time: scrubs never hold more than a job
 * of the reserve each, and a new allocation waits for one scrub at most.
 * The end of a scrub queues the work again (a callback on its fence, taken
 * off at the last reference), so what was freed meanwhile is scrubbed next
 * without the work polling.
 *
 * Not scrubbed ahead: memory freed without ever being written still goes
 * back dirty; allocations limited to the CPU-visible part of a segment (a
 * range of the buddy allocator) rarely find cleared blocks, since the
 * allocator prefers them there only among whole free blocks.
 *
 * debugfs: vram_scrub turns the scheme off (new backings are cleared one
 * by one again, for tests of that path; no scrub is built once the write
 * returns) and on; inject_scrub_fault makes the next N scrubs fail,
 * inject_scrub_delay_ms holds the work back longer; segment_managers
 * counts scrubs and failures.
 */

/* Dirty bytes one scrub takes at most: one job, a few commands, no wait. */
#define VMGPU_SCRUB_BATCH	SZ_16M
/* Frees within this window share a scrub. */
#define VMGPU_SCRUB_DELAY_MS	4
/* The paging ring was busy building another operation. */
#define VMGPU_SCRUB_RETRY_MS	20
/* A scrub failed: the device may be going; try again this much later. */
#define VMGPU_SCRUB_FAILED_MS	1000

/* The leaf tables of the paging VA a batch spans, and its commands. */
#define VMGPU_SCRUB_LEAVES	(VMGPU_SCRUB_BATCH / (VMGPU_PT_ENTRIES * VMGPU_PAGE_SIZE) + 1)
#define VMGPU_SCRUB_CMDS	(2 * VMGPU_SCRUB_LEAVES + 2)

/* From a free (or the end of a scrub) to the work's look, in jiffies. */
static unsigned long vmgpu_vram_scrub_delay(struct vmgpu_device *vdev)
{
	return msecs_to_jiffies(VMGPU_SCRUB_DELAY_MS + vmgpu_inject_scrub_delay(vdev));
}

/**
 * vmgpu_vram_scrub_queue() - freed VRAM is waiting to be scrubbed
 * @vdev: the device
 *
 * Context: any context that may queue work.
 */
void vmgpu_vram_scrub_queue(struct vmgpu_device *vdev)
{
	if (READ_ONCE(vdev->vram_scrub_on))
		queue_delayed_work(system_unbound_wq, &vdev->vram_scrub,
				   vmgpu_vram_scrub_delay(vdev));
}

/**
 * vmgpu_vram_scrub_postpone() - the scrub work, queued or not, waits for
 * the delay from now
 * @vdev: the device
 *
 * For inject_scrub_delay_ms: a look queued before the delay was set waits
 * for it too.
 */
void vmgpu_vram_scrub_postpone(struct vmgpu_device *vdev)
{
	if (READ_ONCE(vdev->vram_scrub_on))
		mod_delayed_work(system_unbound_wq, &vdev->vram_scrub,
				 vmgpu_vram_scrub_delay(vdev));
}

/*
 * The end of the last scrub no longer queues the work. A fence is marked
 * signalled before its callbacks run, under its lock: taking that lock
 * (dma_fence_remove_callback()) is what says ours is done with.
 */
static void vmgpu_vram_scrub_unwait(struct vmgpu_vram_mgr *mgr)
{
	lockdep_assert_held(&mgr->lock);
	if (mgr->scrub_waiting)
		dma_fence_remove_callback(mgr->scrub_fence, &mgr->scrub_done);
	mgr->scrub_waiting = false;
}

/**
 * vmgpu_vram_scrub_check() - restart the scrubs of a segment if one failed
 * @vdev: the device
 * @mgr: the segment's manager, locked
 *
 * If the last scrub failed, nothing marked cleared can be trusted: every
 * free block of the segment becomes dirty, and the next scrub starts a new
 * chain.
 *
 * Return: true if it found a failed scrub.
 */
bool vmgpu_vram_scrub_check(struct vmgpu_device *vdev, struct vmgpu_vram_mgr *mgr)
{
	struct dma_fence *fence = mgr->scrub_fence;

	lockdep_assert_held(&mgr->lock);
	if (!fence || !dma_fence_is_signaled(fence) || !fence->error)
		return false;
	vmgpu_vram_scrub_unwait(mgr);
	drm_err_ratelimited(&vdev->drm,
			    "segment %u: a scrub of freed VRAM failed (%d), scrubbing its free memory again\n",
			    mgr->segment->id, fence->error);
	gpu_buddy_reset_clear(&mgr->mm, false);
	dma_fence_put(fence);
	mgr->scrub_fence = NULL;
	mgr->scrub_failures++;
	mgr->scrub_retry = jiffies + msecs_to_jiffies(VMGPU_SCRUB_FAILED_MS);
	return true;
}

/*
 * Take up to @max bytes of dirty free blocks, largest first. A block of
 * the size asked for comes from the cleared ones only when no dirty one
 * is that large: it goes back, and smaller ones are asked for.
 */
static u64 vmgpu_vram_scrub_take(struct vmgpu_vram_mgr *mgr, u64 max)
{
	struct gpu_buddy *mm = &mgr->mm;
	u64 size = rounddown_pow_of_two(max), taken = 0;
	struct gpu_buddy_block *block;
	LIST_HEAD(one);

	while (size >= mgr->segment->page_size) {
		if (size > max - taken || mm->avail - mm->clear_avail < size ||
		    gpu_buddy_alloc_blocks(mm, 0, mm->size, size, size, &one, 0)) {
			size >>= 1;
			continue;
		}
		block = list_first_entry(&one, struct gpu_buddy_block, link);
		if (gpu_buddy_block_is_clear(block)) {
			gpu_buddy_free_list(mm, &one, GPU_BUDDY_CLEARED);
			size >>= 1;
			continue;
		}
		list_splice_tail_init(&one, &mgr->scrub_res.blocks);
		taken += size;
	}
	return taken;
}

static void vmgpu_vram_scrub_done(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct vmgpu_vram_mgr *mgr = container_of(cb, struct vmgpu_vram_mgr, scrub_done);

	vmgpu_vram_scrub_queue(vmgpu_vram_mgr_device(mgr));
}

/*
 * Whether the last scrub still runs; if so, the work is queued again when
 * it ends.
 */
static bool vmgpu_vram_scrub_running(struct vmgpu_vram_mgr *mgr)
{
	int ret;

	lockdep_assert_held(&mgr->lock);
	if (!mgr->scrub_fence)
		return false;
	if (mgr->scrub_waiting) {
		if (!dma_fence_is_signaled(mgr->scrub_fence))
			return true;
		vmgpu_vram_scrub_unwait(mgr);
		return false;
	}
	ret = dma_fence_add_callback(mgr->scrub_fence, &mgr->scrub_done, vmgpu_vram_scrub_done);
	mgr->scrub_waiting = !ret;
	return mgr->scrub_waiting;
}

/*
 * One scrub of @mgr's dirty memory. Return: 0, or when to look again:
 * -ENODATA (when something is freed), -EINPROGRESS (when the last scrub
 * ends), -EBUSY (the paging ring is busy) or -EIO (a scrub failed).
 */
static int vmgpu_vram_scrub_one(struct vmgpu_device *vdev, struct vmgpu_vram_mgr *mgr)
{
	struct vmgpu_vram_resource *res = &mgr->scrub_res;
	struct vmgpu_res_cursor cur;
	struct vmgpu_paging_op op;
	struct dma_fence *fence;
	u64 size;

	BUILD_BUG_ON(VMGPU_SCRUB_BATCH / VMGPU_PAGE_SIZE > VMGPU_RESERVE_JOB_ENTRIES);
	BUILD_BUG_ON(VMGPU_SCRUB_CMDS > VMGPU_RESERVE_JOB_CMDS);
	lockdep_assert_held(&mgr->lock);
	if (vmgpu_vram_scrub_check(vdev, mgr) ||
	    (mgr->scrub_failures && time_before(jiffies, mgr->scrub_retry)))
		return -EIO;
	if (vmgpu_vram_scrub_running(mgr))
		return -EINPROGRESS;
	size = vmgpu_vram_scrub_take(mgr, min_t(u64, VMGPU_SCRUB_BATCH, vdev->paging_vm.size));
	if (!size)
		return -ENODATA;
	if (vmgpu_paging_op_try_begin(&op, vdev, mgr->scrub_fence)) {
		gpu_buddy_free_list(&mgr->mm, &res->blocks, 0);
		return -EBUSY;
	}
	res->base.size = size;
	vmgpu_res_first(vdev, &res->base, NULL, size, &cur);
	op.injected = vmgpu_inject_scrub_fault(vdev, &op.fault);
	/* One chunk of the paging VA in one job: see the BUILD_BUG_ON()s. */
	vmgpu_migrate_fill_chunk(&op, &cur, size);
	/* No line of the job's staging stays in the device's cache. */
	vmgpu_paging_op_flush(&op);
	fence = vmgpu_paging_op_end(&op);
	trace_vmgpu_vram_scrub(mgr->segment->id, size, fence->seqno);

	gpu_buddy_free_list(&mgr->mm, &res->blocks, GPU_BUDDY_CLEARED);
	/* vmgpu_vram_scrub_running() said the last one is done with. */
	dma_fence_put(mgr->scrub_fence);
	mgr->scrub_fence = fence;
	mgr->scrubs++;
	mgr->scrubbed += size;
	return 0;
}

static void vmgpu_vram_scrub_work(struct work_struct *work)
{
	struct vmgpu_device *vdev = container_of(to_delayed_work(work), struct vmgpu_device,
						 vram_scrub);
	unsigned int again = 0;
	int idx, ret;
	u32 i;

	if (!READ_ONCE(vdev->vram_scrub_on) || !drm_dev_enter(&vdev->drm, &idx))
		return;
	for (i = 0; i < vdev->num_segments; i++) {
		struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[i];
		unsigned int ms = 0;

		do {
			mutex_lock(&mgr->lock);
			ret = vmgpu_vram_scrub_one(vdev, mgr);
			mutex_unlock(&mgr->lock);
		} while (!ret);
		if (ret == -EBUSY)
			ms = VMGPU_SCRUB_RETRY_MS;
		else if (ret == -EIO)
			ms = VMGPU_SCRUB_FAILED_MS;
		if (ms && (!again || ms < again))
			again = ms;
	}
	drm_dev_exit(idx);
	if (again)
		queue_delayed_work(system_unbound_wq, &vdev->vram_scrub, msecs_to_jiffies(again));
}

static void vmgpu_vram_scrub_disable(void *arg)
{
	struct vmgpu_device *vdev = arg;

	disable_delayed_work_sync(&vdev->vram_scrub);
}

/**
 * vmgpu_vram_scrub_init() - prepare the scrub of freed VRAM
 * @vdev: the device, its paging ring running, its segment managers not
 *	  made yet
 *
 * Nothing is scrubbed before vmgpu_vram_scrub_queue(), which probe calls
 * once the device is registered. The work is disabled when the PCI device
 * goes, before the ring memory it writes is freed (a failed probe frees
 * that with the DRM device still alive), and again at the last reference
 * (vmgpu_vram_scrub_fini()).
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_vram_scrub_init(struct vmgpu_device *vdev)
{
	INIT_DELAYED_WORK(&vdev->vram_scrub, vmgpu_vram_scrub_work);
	vdev->vram_scrub_on = true;
	return devm_add_action_or_reset(vdev->drm.dev, vmgpu_vram_scrub_disable, vdev);
}

/**
 * vmgpu_vram_scrub_fini() - no scrub runs or is queued from now on
 * @vdev: the device
 * @count: how many segments, from the first, have a manager
 *
 * Context: before the segment managers and the paging ring go.
 */
void vmgpu_vram_scrub_fini(struct vmgpu_device *vdev, u32 count)
{
	u32 i;

	disable_delayed_work_sync(&vdev->vram_scrub);
	for (i = 0; i < count; i++) {
		struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[i];

		mutex_lock(&mgr->lock);
		vmgpu_vram_scrub_unwait(mgr);
		mutex_unlock(&mgr->lock);
	}
}

static ssize_t vmgpu_vram_scrub_read(struct file *f, char __user *buf, size_t count,
				     loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	char text[2] = { READ_ONCE(vdev->vram_scrub_on) ? '1' : '0', '\n' };

	return simple_read_from_buffer(buf, count, pos, text, sizeof(text));
}

static ssize_t vmgpu_vram_scrub_write(struct file *f, const char __user *buf, size_t count,
				      loff_t *pos)
{
	struct vmgpu_device *vdev = file_inode(f)->i_private;
	bool on;
	int ret;

	ret = kstrtobool_from_user(buf, count, &on);
	if (ret)
		return ret;
	WRITE_ONCE(vdev->vram_scrub_on, on);
	if (on)
		/* What was freed meanwhile is dirty. */
		vmgpu_vram_scrub_queue(vdev);
	else
		/* The work looks at the switch only when it starts. */
		cancel_delayed_work_sync(&vdev->vram_scrub);
	return count;
}

static const struct file_operations vmgpu_vram_scrub_fops = {
	.owner = THIS_MODULE,
	.read = vmgpu_vram_scrub_read,
	.write = vmgpu_vram_scrub_write,
	.llseek = default_llseek,
};

/**
 * vmgpu_vram_scrub_debugfs_init() - add debugfs vram_scrub
 * @vdev: the device
 */
void vmgpu_vram_scrub_debugfs_init(struct vmgpu_device *vdev)
{
	debugfs_create_file("vram_scrub", 0600, vdev->drm.debugfs_root, vdev,
			    &vmgpu_vram_scrub_fops);
}

/**
 * vmgpu_vram_scrub_print() - a segment's scrub counters, for debugfs
 * @mgr: the segment's manager
 * @p: where to
 */
void vmgpu_vram_scrub_print(struct vmgpu_vram_mgr *mgr, struct drm_printer *p)
{
	mutex_lock(&mgr->lock);
	drm_printf(p,
		   "segment %u scrub: %llu bytes dirty, %llu scrubs of %llu bytes, %llu failed, %u running\n",
		   mgr->segment->id, mgr->mm.avail - mgr->mm.clear_avail, mgr->scrubs,
		   mgr->scrubbed, mgr->scrub_failures,
		   mgr->scrub_fence && !dma_fence_is_signaled(mgr->scrub_fence));
	mutex_unlock(&mgr->lock);
}
