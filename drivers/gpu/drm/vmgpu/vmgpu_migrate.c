// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>

#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_device.h"
#include "vmgpu_migrate.h"
#include "vmgpu_notify.h"
#include "vmgpu_paging_op.h"
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
 * The commands go into jobs of the paging job reserve, as many as they
 * fill (DOC: paging job reserve): nothing is allocated, and nothing can
 * fail once the first job is taken. The ring runs the jobs in order; each
 * one continues the previous (a failure of one fails the rest, see
 * &vmgpu_hw_fence.prev) and the last one's fence stands for the whole
 * operation.
 *
 * An operation on an allocation mapped into GPU VA spaces starts by
 * invalidating those mappings' page-table entries (Fills of zero into the
 * tables): the ring runs it after every job that used the allocation, so
 * no such job is stalled on the CPU and none runs on a stale entry. EXEC
 * rewrites them once the operation is done.
 */

/* For vmgpu_vm_bo_invalidate_cmds(). */
static int vmgpu_migrate_add_cb(void *op, const union vmgpu_cmd *cmd)
{
	vmgpu_paging_op_add(op, cmd);
	return 0;
}

/*
 * Start an operation on an allocation: after every fence of its
 * reservation, continuing @prev, with the invalidation of its GPU VA
 * mappings (DOC: GPU virtual address spaces), so that they run after the
 * jobs that used it, before the backing changes. In non-coherent mode a
 * flush of the device's cache starts the operation and another ends it
 * (vmgpu_paging_op_flush()).
 */
static void vmgpu_migrate_begin(struct vmgpu_paging_op *op, struct vmgpu_device *vdev,
				struct ttm_buffer_object *tbo, struct dma_fence *prev)
{
	u32 invalidations;

	vmgpu_paging_op_begin(op, vdev, tbo->base.resv, prev);
	vmgpu_paging_op_inject(op);
	vmgpu_paging_op_flush(op);
	/* They are added under page-table locks: no waiting for a job there. */
	vmgpu_vm_bo_invalidate_cmds(tbo, NULL, NULL, &invalidations);
	vmgpu_paging_op_make_room(op, invalidations);
	vmgpu_vm_bo_invalidate_cmds(tbo, vmgpu_migrate_add_cb, op, &invalidations);
}

static struct dma_fence *vmgpu_migrate_end(struct vmgpu_paging_op *op)
{
	vmgpu_paging_op_flush(op);
	return vmgpu_paging_op_end(op);
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

static void vmgpu_set_va(struct vmgpu_addr *a, u64 va)
{
	vmgpu_set_addr(a, VMGPU_SPACE_VIRTUAL, va);
	a->vm = cpu_to_le32(VMGPU_VM_PAGING);
}

/* Copy the whole backing, a chunk at a time. */
static void vmgpu_copy_chunks(struct vmgpu_device *vdev, struct ttm_buffer_object *tbo,
			      struct vmgpu_res_cursor *src, struct vmgpu_res_cursor *dst,
			      u16 flags, bool notify, struct vmgpu_paging_op *op)
{
	u64 chunk = vmgpu_copy_chunk(vdev), size = tbo->base.size, done;

	for (done = 0; done < size; done += chunk) {
		u64 n = min(chunk, size - done);
		union vmgpu_cmd cmd = {};

		/* NotifyEviction decodes the source in place: it writes it. */
		vmgpu_paging_op_map(op, 0, src, n, notify);
		vmgpu_paging_op_map(op, chunk, dst, n, true);
		vmgpu_paging_op_flush(op);
		if (notify) {
			cmd = vmgpu_notify_cmd(0, n, VMGPU_NOTIFY_FLAG_EVICTION);
			vmgpu_paging_op_work(op, &cmd);
			trace_vmgpu_notify(tbo, VMGPU_NOTIFY_FLAG_EVICTION, size, done, n, 0);
		}
		cmd = (union vmgpu_cmd){};
		cmd.transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
		cmd.transfer.hdr.flags = cpu_to_le16(flags);
		vmgpu_set_va(&cmd.transfer.src, 0);
		vmgpu_set_va(&cmd.transfer.dst, chunk);
		cmd.transfer.size = cpu_to_le64(n);
		vmgpu_paging_op_work(op, &cmd);
		vmgpu_paging_op_unmap(op, 0, n);
		vmgpu_paging_op_unmap(op, chunk, n);
		trace_vmgpu_paging_chunk(tbo, VMGPU_OP_TRANSFER, done, n);
	}
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
 * Context: the device entered (drm_dev_enter()); may wait for paging jobs
 * to give the reserve a job back.
 *
 * Return: the fence of the last operation, or an ERR_PTR if a backing
 * cannot be walked; nothing was queued then.
 */
struct dma_fence *vmgpu_migrate_copy(struct vmgpu_device *vdev,
				     struct ttm_buffer_object *tbo,
				     struct ttm_resource *from,
				     struct ttm_resource *to, u16 flags,
				     struct dma_fence *prev, bool notify)
{
	struct vmgpu_res_cursor src, dst;
	struct vmgpu_paging_op op;
	int ret;

	ret = vmgpu_res_first(vdev, from, tbo->ttm, tbo->base.size, &src);
	if (!ret)
		ret = vmgpu_res_first(vdev, to, tbo->ttm, tbo->base.size, &dst);
	if (ret)
		return ERR_PTR(ret);
	vmgpu_migrate_begin(&op, vdev, tbo, prev);
	vmgpu_copy_chunks(vdev, tbo, &src, &dst, flags, notify, &op);
	return vmgpu_migrate_end(&op);
}

/**
 * vmgpu_migrate_fill_chunk() - zero one chunk of a backing
 * @op: the operation
 * @cur: the backing, walked for @size bytes and left after them
 * @size: bytes, at most the paging process GPU VA's size
 *
 * Maps the chunk at the start of the paging process GPU VA, Fills it and
 * clears the entries again.
 */
void vmgpu_migrate_fill_chunk(struct vmgpu_paging_op *op, struct vmgpu_res_cursor *cur,
			      u64 size)
{
	union vmgpu_cmd cmd = {};

	vmgpu_paging_op_map(op, 0, cur, size, true);
	vmgpu_paging_op_flush(op);
	cmd.fill.hdr.opcode = cpu_to_le16(VMGPU_OP_FILL);
	vmgpu_set_va(&cmd.fill.dst, 0);
	cmd.fill.size = cpu_to_le64(size);
	vmgpu_paging_op_work(op, &cmd);
	vmgpu_paging_op_unmap(op, 0, size);
}

/**
 * vmgpu_migrate_clear() - queue the Fills that zero a backing
 * @vdev: the device
 * @tbo: the allocation, reserved; its TT populated if @res is TT
 * @res: the backing to clear
 * @prev: the fence of the last operation that wrote @res, or NULL
 *
 * Context: as vmgpu_migrate_copy().
 *
 * Return: the fence of the last Fill, or an ERR_PTR if @res cannot be
 * walked; nothing was queued then.
 */
struct dma_fence *vmgpu_migrate_clear(struct vmgpu_device *vdev,
				      struct ttm_buffer_object *tbo,
				      struct ttm_resource *res,
				      struct dma_fence *prev)
{
	u64 chunk = vdev->paging_vm.size, size = tbo->base.size, done;
	struct vmgpu_res_cursor cur;
	struct vmgpu_paging_op op;
	int ret;

	ret = vmgpu_res_first(vdev, res, tbo->ttm, size, &cur);
	if (ret)
		return ERR_PTR(ret);
	vmgpu_migrate_begin(&op, vdev, tbo, prev);
	for (done = 0; done < size; done += chunk) {
		u64 n = min(chunk, size - done);

		vmgpu_migrate_fill_chunk(&op, &cur, n);
		trace_vmgpu_paging_chunk(tbo, VMGPU_OP_FILL, done, n);
	}
	return vmgpu_migrate_end(&op);
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_migrate_test.c"
#endif
