// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>
#include <linux/slab.h>

#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_cache.h"
#include "vmgpu_device.h"
#include "vmgpu_inject.h"
#include "vmgpu_job.h"
#include "vmgpu_job_types.h"
#include "vmgpu_migrate.h"
#include "vmgpu_notify.h"
#include "vmgpu_paging_vm.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_trace.h"
#include "vmgpu_vm.h"

/**
 * DOC: paging operations for moves
 *
 * Seed "GPU segments": data moves into and out of memory segments by
 * paging operations. Seed "Allocation notification": they reach the
 * allocation through the paging process GPU VA, in chunks of at most its
 * size (DOC: paging process GPU VA). A clear maps each chunk of the
 * backing at the start of the space and Fills it; a copy maps a chunk of
 * the source in the first half and the same chunk of the destination in
 * the second half, and Transfers between them. However scattered the
 * pages (a backing is walked page by page with the resource cursor), a
 * chunk is one Fill or Transfer, after one entry-writing command per page
 * table it touches, and followed by one that clears them, so that no
 * entry outlives its chunk.
 *
 * An operation too large for one ring-sized job is split over several,
 * all or nothing: every job is allocated, filled and has its dependencies
 * before the first is pushed, so an error leaves nothing queued that
 * could still write memory the caller then frees. The ring runs the jobs
 * in order; each one continues the previous (a failure of one fails the
 * rest, see &vmgpu_hw_fence.prev) and the last one's fence stands for the
 * whole operation.
 *
 * An operation on an allocation mapped into GPU VA spaces starts by
 * invalidating those mappings' page-table entries (Fills of zero into the
 * tables): the ring runs it after every job that used the allocation, so
 * no such job is stalled on the CPU and none runs on a stale entry. EXEC
 * rewrites them once the operation is done.
 */

/* The jobs of one paging operation, filled in order. */
struct vmgpu_paging_op {
	struct vmgpu_job **jobs;
	u32 num_jobs;
	u32 cur;
	/*
	 * Fault injection: the operation's work is one rejected command
	 * (page-table invalidations still happen, before it).
	 */
	bool injected;
	bool fault_added;
	union vmgpu_cmd fault;
	/* Non-coherent mode: the operation starts and ends with a flush. */
	bool flush;
	/* Paging-VA entries, handed to the last job when pushed. */
	struct vmgpu_pte_staging *staging;
	struct vmgpu_device *vdev;
};

static void vmgpu_paging_op_discard(struct vmgpu_paging_op *op)
{
	u32 i;

	vmgpu_paging_vm_staging_free(op->vdev, op->staging);
	for (i = 0; i < op->num_jobs && op->jobs[i]; i++)
		vmgpu_job_discard(op->jobs[i]);
	kfree(op->jobs);
}

/* The jobs were sized from the same walk: the last one never overflows. */
static int vmgpu_paging_op_push(struct vmgpu_paging_op *op, const union vmgpu_cmd *cmd)
{
	int ret;

	ret = vmgpu_job_add(op->jobs[op->cur], cmd);
	if (ret == -ENOSPC && op->cur + 1 < op->num_jobs)
		ret = vmgpu_job_add(op->jobs[++op->cur], cmd);
	return ret;
}

/* For vmgpu_vm_bo_invalidate_cmds(): always part of the operation. */
static int vmgpu_paging_op_push_cb(void *op, const union vmgpu_cmd *cmd)
{
	return vmgpu_paging_op_push(op, cmd);
}

/* The operation's work, which an injected fault replaces. */
static int vmgpu_paging_op_add(struct vmgpu_paging_op *op, const union vmgpu_cmd *cmd)
{
	if (!op->injected)
		return vmgpu_paging_op_push(op, cmd);
	if (op->fault_added)
		return 0;
	op->fault_added = true;
	return vmgpu_paging_op_push(op, &op->fault);
}

/* For vmgpu_paging_vm_map(): the entries are part of the work. */
static int vmgpu_paging_op_add_cb(void *op, const union vmgpu_cmd *cmd)
{
	return vmgpu_paging_op_add(op, cmd);
}

/*
 * Jobs for @num_cmds commands. A test may have asked for this operation to
 * fail (see vmgpu_inject.c): it is then one command the device rejects
 * instead, so that its work does not happen, as when a real command
 * faults.
 */
static int vmgpu_paging_op_init(struct vmgpu_paging_op *op, struct vmgpu_device *vdev,
				u32 num_cmds, u32 num_invalidations)
{
	struct vmgpu_ring *ring = vmgpu_paging_ring(vdev);
	u32 max = vmgpu_job_max_cmds(ring);
	u32 i;

	op->vdev = vdev;
	op->staging = NULL;
	op->injected = vmgpu_inject_paging_fault(vdev, &op->fault);
	op->fault_added = false;
	op->flush = vdev->noncoherent;
	if (op->injected)
		num_cmds = 1;
	num_cmds += num_invalidations + (op->flush ? 2 : 0);
	op->cur = 0;
	op->num_jobs = DIV_ROUND_UP(num_cmds, max);
	op->jobs = kcalloc(op->num_jobs, sizeof(*op->jobs), GFP_KERNEL);
	if (!op->jobs)
		return -ENOMEM;
	for (i = 0; i < op->num_jobs; i++) {
		struct vmgpu_job *job = vmgpu_job_alloc(ring, min(num_cmds, max));

		if (IS_ERR(job)) {
			vmgpu_paging_op_discard(op);
			return PTR_ERR(job);
		}
		op->jobs[i] = job;
		num_cmds -= min(num_cmds, max);
	}
	return 0;
}

/*
 * Size an operation on an allocation and start it with the invalidation
 * of its GPU VA mappings (DOC: GPU virtual address spaces): they run after
 * the jobs that used it, before the backing changes. In non-coherent mode
 * a flush of the device's cache follows, so that the operation reads
 * what the CPU wrote, and another ends it, so that the CPU reads what it
 * wrote (DOC: I/O coherency).
 */
static int vmgpu_paging_op_begin(struct vmgpu_paging_op *op, struct vmgpu_device *vdev,
				 struct ttm_buffer_object *tbo, u32 num_cmds, u32 num_staging)
{
	u32 invalidations;
	int ret;

	vmgpu_vm_bo_invalidate_cmds(tbo, NULL, NULL, &invalidations);
	ret = vmgpu_paging_op_init(op, vdev, num_cmds, invalidations);
	if (ret)
		return ret;
	op->staging = vmgpu_paging_vm_staging_alloc(vdev, num_staging);
	if (!op->staging) {
		vmgpu_paging_op_discard(op);
		return -ENOMEM;
	}
	ret = vmgpu_vm_bo_invalidate_cmds(tbo, vmgpu_paging_op_push_cb, op,
					  &invalidations);
	if (!ret && op->flush) {
		union vmgpu_cmd flush = vmgpu_cache_flush_cmd();

		ret = vmgpu_paging_op_push(op, &flush);
	}
	if (ret)
		vmgpu_paging_op_discard(op);
	return ret;
}

/*
 * Prepare every job, then push them all. The first waits for @resv; each
 * continues the one before, the first continues @prev.
 */
static struct dma_fence *vmgpu_paging_op_submit(struct vmgpu_paging_op *op,
						struct dma_resv *resv,
						struct dma_fence *prev)
{
	struct dma_fence *fence;
	u32 i;
	int ret;

	if (op->flush) {
		union vmgpu_cmd flush = vmgpu_cache_flush_cmd();

		ret = vmgpu_paging_op_push(op, &flush);
		if (ret) {
			vmgpu_paging_op_discard(op);
			return ERR_PTR(ret);
		}
	}
	for (i = 0; i < op->num_jobs; i++) {
		ret = vmgpu_job_prepare(op->jobs[i], i ? NULL : resv);
		if (ret) {
			vmgpu_paging_op_discard(op);
			return ERR_PTR(ret);
		}
	}
	/* The last job ends after every read of the entries. */
	op->jobs[op->num_jobs - 1]->pte_staging = op->staging;
	op->staging = NULL;
	fence = vmgpu_job_push_chain(op->jobs, op->num_jobs, prev);
	kfree(op->jobs);
	return fence;
}

static void vmgpu_set_addr(struct vmgpu_addr *a, u32 space, u64 addr)
{
	a->space = cpu_to_le32(space);
	a->addr = cpu_to_le64(addr);
}

/* Bytes of each Transfer side, and the Fill chunk: see DOC above. */
static u64 vmgpu_copy_chunk(struct vmgpu_device *vdev)
{
	return round_down(vdev->paging_vm.size / 2, VMGPU_PAGE_SIZE);
}

/*
 * The commands of one chunk: entries for @sides ranges of @n bytes, at 0
 * and at the copy chunk, a flush in non-coherent mode, the work, and the
 * entries cleared again.
 */
static u32 vmgpu_chunk_cmds(struct vmgpu_device *vdev, u64 n, u32 sides, u32 *staging)
{
	u32 runs = vmgpu_paging_vm_runs(0, n);

	if (sides > 1)
		runs += vmgpu_paging_vm_runs(vmgpu_copy_chunk(vdev), n);
	*staging += runs;
	return 2 * runs + (vdev->noncoherent ? 1 : 0) + 1;
}

/* The paging-VA commands of a whole operation, and its staging pages. */
static u32 vmgpu_op_cmds(struct vmgpu_device *vdev, u64 size, u64 chunk, u32 sides,
			 u32 *staging)
{
	u32 cmds = 0;
	u64 done;

	*staging = 0;
	for (done = 0; done < size; done += chunk)
		cmds += vmgpu_chunk_cmds(vdev, min(chunk, size - done), sides, staging);
	return cmds;
}

/* Map one side of a chunk, for the operation's work; a source read-only. */
static int vmgpu_op_map(struct vmgpu_paging_op *op, struct vmgpu_device *vdev, u64 va,
			struct vmgpu_res_cursor *cur, u64 n, bool writable)
{
	return vmgpu_paging_vm_map(vdev, op->staging, va, cur, n, writable,
				   vmgpu_paging_op_add_cb, op);
}

/*
 * A chunk's entries are cleared after its work: if a later chunk's entry
 * writes fail (the ring skips a failed command and goes on), its work
 * faults on the paging VA instead of reaching pages an earlier operation
 * mapped, which may have another owner by then.
 */
static int vmgpu_op_unmap(struct vmgpu_paging_op *op, struct vmgpu_device *vdev, u64 va, u64 n)
{
	return vmgpu_paging_vm_unmap(vdev, va, n, vmgpu_paging_op_add_cb, op);
}

/* Entries written through the cache reach the tables the device walks. */
static int vmgpu_op_mapped(struct vmgpu_paging_op *op)
{
	union vmgpu_cmd flush = vmgpu_cache_flush_cmd();

	return op->flush ? vmgpu_paging_op_add(op, &flush) : 0;
}

static void vmgpu_set_va(struct vmgpu_addr *a, u64 va)
{
	vmgpu_set_addr(a, VMGPU_SPACE_VIRTUAL, va);
	a->vm = cpu_to_le32(VMGPU_VM_PAGING);
}

/* Copy the whole backing, a chunk at a time. */
static int vmgpu_copy_chunks(struct vmgpu_device *vdev, struct ttm_buffer_object *tbo,
			     struct ttm_resource *from, struct ttm_resource *to, u16 flags,
			     bool notify, struct vmgpu_paging_op *op)
{
	u64 chunk = vmgpu_copy_chunk(vdev), size = tbo->base.size, done;
	struct vmgpu_res_cursor src, dst;
	int ret;

	ret = vmgpu_res_first(vdev, from, tbo->ttm, size, &src);
	if (!ret)
		ret = vmgpu_res_first(vdev, to, tbo->ttm, size, &dst);
	for (done = 0; done < size && !ret; done += chunk) {
		u64 n = min(chunk, size - done);
		union vmgpu_cmd cmd = {};

		/* NotifyEviction decodes the source in place: it writes it. */
		ret = vmgpu_op_map(op, vdev, 0, &src, n, notify);
		if (!ret)
			ret = vmgpu_op_map(op, vdev, chunk, &dst, n, true);
		if (!ret)
			ret = vmgpu_op_mapped(op);
		if (!ret && notify) {
			cmd = vmgpu_notify_cmd(0, n, VMGPU_NOTIFY_FLAG_EVICTION);
			ret = vmgpu_paging_op_add(op, &cmd);
			trace_vmgpu_notify(tbo, VMGPU_NOTIFY_FLAG_EVICTION, size, done, n, ret);
		}
		if (ret)
			break;
		cmd = (union vmgpu_cmd){};
		cmd.transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
		cmd.transfer.hdr.flags = cpu_to_le16(flags);
		vmgpu_set_va(&cmd.transfer.src, 0);
		vmgpu_set_va(&cmd.transfer.dst, chunk);
		cmd.transfer.size = cpu_to_le64(n);
		ret = vmgpu_paging_op_add(op, &cmd);
		if (!ret)
			ret = vmgpu_op_unmap(op, vdev, 0, n);
		if (!ret)
			ret = vmgpu_op_unmap(op, vdev, chunk, n);
		if (!ret)
			trace_vmgpu_paging_chunk(tbo, VMGPU_OP_TRANSFER, done, n);
	}
	return ret;
}

/**
 * vmgpu_migrate_copy() - queue the paging operations of a move
 * @vdev: the device
 * @tbo: the allocation, reserved; its TT populated if either side is TT
 * @from: the current resource
 * @to: the new resource
 * @flags: VMGPU_TRANSFER_FLAG_SWIZZLE or _UNSWIZZLE to change the layout on
 *	   the way (runs are whole pages: the swizzle format is page-local)
 * @prev: the fence of the last operation that wrote @from, or NULL
 * @notify: send NotifyEviction for each chunk of @from (system pages)
 *	    before copying it (DOC: allocation notifications)
 *
 * The operations wait, on the GPU side, for every fence of the allocation's
 * reservation object, and fail if @prev failed.
 *
 * Return: the fence of the last operation, or an ERR_PTR; on error nothing
 * was queued.
 */
struct dma_fence *vmgpu_migrate_copy(struct vmgpu_device *vdev,
				     struct ttm_buffer_object *tbo,
				     struct ttm_resource *from,
				     struct ttm_resource *to, u16 flags,
				     struct dma_fence *prev, bool notify)
{
	u64 chunk = vmgpu_copy_chunk(vdev);
	struct vmgpu_paging_op op;
	u32 count, staging;
	int ret;

	count = vmgpu_op_cmds(vdev, tbo->base.size, chunk, 2, &staging);
	if (notify)
		count += DIV_ROUND_UP_ULL(tbo->base.size, chunk);
	ret = vmgpu_paging_op_begin(&op, vdev, tbo, count, staging);
	if (ret)
		return ERR_PTR(ret);
	ret = vmgpu_copy_chunks(vdev, tbo, from, to, flags, notify, &op);
	if (ret) {
		vmgpu_paging_op_discard(&op);
		return ERR_PTR(ret);
	}
	return vmgpu_paging_op_submit(&op, tbo->base.resv, prev);
}

/**
 * vmgpu_migrate_clear() - queue the Fills that zero a backing
 * @vdev: the device
 * @tbo: the allocation, reserved; its TT populated if @res is TT
 * @res: the backing to clear
 * @prev: the fence of the last operation that wrote @res, or NULL
 *
 * Return: the fence of the last Fill, or an ERR_PTR; on error nothing was
 * queued.
 */
struct dma_fence *vmgpu_migrate_clear(struct vmgpu_device *vdev,
				      struct ttm_buffer_object *tbo,
				      struct ttm_resource *res,
				      struct dma_fence *prev)
{
	u64 chunk = vdev->paging_vm.size, size = tbo->base.size, done;
	struct vmgpu_res_cursor cur;
	struct vmgpu_paging_op op;
	u32 count, staging;
	int ret;

	count = vmgpu_op_cmds(vdev, size, chunk, 1, &staging);
	ret = vmgpu_paging_op_begin(&op, vdev, tbo, count, staging);
	if (ret)
		return ERR_PTR(ret);
	ret = vmgpu_res_first(vdev, res, tbo->ttm, size, &cur);
	for (done = 0; done < size && !ret; done += chunk) {
		u64 n = min(chunk, size - done);
		union vmgpu_cmd cmd = {};

		ret = vmgpu_op_map(&op, vdev, 0, &cur, n, true);
		if (!ret)
			ret = vmgpu_op_mapped(&op);
		if (ret)
			break;
		cmd.fill.hdr.opcode = cpu_to_le16(VMGPU_OP_FILL);
		vmgpu_set_va(&cmd.fill.dst, 0);
		cmd.fill.size = cpu_to_le64(n);
		ret = vmgpu_paging_op_add(&op, &cmd);
		if (!ret)
			ret = vmgpu_op_unmap(&op, vdev, 0, n);
		if (!ret)
			trace_vmgpu_paging_chunk(tbo, VMGPU_OP_FILL, done, n);
	}
	if (ret) {
		vmgpu_paging_op_discard(&op);
		return ERR_PTR(ret);
	}
	return vmgpu_paging_op_submit(&op, tbo->base.resv, prev);
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_migrate_test.c"
#endif
