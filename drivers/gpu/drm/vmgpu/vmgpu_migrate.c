// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>
#include <linux/slab.h>

#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_device.h"
#include "vmgpu_migrate.h"
#include "vmgpu_ring.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: paging operations for moves
 *
 * Seed "GPU segments": data moves into and out of memory segments by
 * paging operations. A resource is seen as a list of runs: contiguous
 * ranges of VRAM (buddy blocks, merged when adjacent), or of system memory
 * by bus address (the IOMMU-mapped pages of the TT, merged when their
 * addresses follow each other). A copy walks the source and destination
 * runs together and emits one Transfer per overlap; a clear emits one Fill
 * per destination run. Operations that do not fit one ring-sized job are
 * split across jobs, which the ring runs in order; the last job's fence
 * covers the whole operation.
 */

struct vmgpu_run {
	u32 space;
	u64 addr;
	u64 len;
};

struct vmgpu_runs {
	struct vmgpu_run *run;
	u32 count;
	u32 max;
};

static int vmgpu_runs_add(void *arg, u64 addr, u64 len)
{
	struct vmgpu_runs *runs = arg;
	struct vmgpu_run *last = runs->count ? &runs->run[runs->count - 1] : NULL;

	if (last && last->space == VMGPU_SPACE_VRAM && last->addr + last->len == addr) {
		last->len += len;
		return 0;
	}
	if (runs->count == runs->max)
		return -EOVERFLOW;
	runs->run[runs->count++] = (struct vmgpu_run){ VMGPU_SPACE_VRAM, addr, len };
	return 0;
}

static int vmgpu_runs_init(struct vmgpu_device *vdev, struct ttm_buffer_object *tbo,
			   struct ttm_resource *res, struct vmgpu_runs *runs)
{
	struct ttm_tt *tt = tbo->ttm;
	unsigned long i;
	int ret;

	runs->count = 0;
	runs->max = PFN_UP(res->size);
	runs->run = kvmalloc_array(runs->max, sizeof(*runs->run), GFP_KERNEL);
	if (!runs->run)
		return -ENOMEM;

	if (res->mem_type != TTM_PL_TT) {
		ret = vmgpu_vram_res_walk(vdev, res, vmgpu_runs_add, runs);
		if (ret)
			kvfree(runs->run);
		return ret;
	}

	for (i = 0; i < tt->num_pages; i++) {
		dma_addr_t addr = tt->dma_address[i];
		struct vmgpu_run *last = runs->count ? &runs->run[runs->count - 1] : NULL;

		if (last && last->addr + last->len == addr) {
			last->len += PAGE_SIZE;
			continue;
		}
		runs->run[runs->count++] = (struct vmgpu_run){
			VMGPU_SPACE_SYSTEM, addr, PAGE_SIZE
		};
	}
	return 0;
}

/* Queues commands into as few ring-sized jobs as needed. */
struct vmgpu_emitter {
	struct vmgpu_device *vdev;
	struct dma_resv *resv;
	struct vmgpu_job *job;
	struct dma_fence *fence;
	u32 remaining;
	u32 room;
	int error;
};

static void vmgpu_emit(struct vmgpu_emitter *e, const union vmgpu_cmd *cmd)
{
	struct dma_fence *fence;

	if (e->error)
		return;
	if (!e->job) {
		e->room = min(e->remaining, vmgpu_job_max_cmds(e->vdev));
		e->job = vmgpu_job_alloc(e->vdev, e->room);
		if (IS_ERR(e->job)) {
			e->error = PTR_ERR(e->job);
			e->job = NULL;
			return;
		}
	}
	vmgpu_job_add(e->job, cmd);
	e->remaining--;
	if (--e->room)
		return;

	fence = vmgpu_job_submit(e->job, e->resv);
	e->job = NULL;
	if (IS_ERR(fence)) {
		e->error = PTR_ERR(fence);
		return;
	}
	dma_fence_put(e->fence);
	e->fence = fence;
}

static struct dma_fence *vmgpu_emit_done(struct vmgpu_emitter *e)
{
	if (e->error) {
		dma_fence_put(e->fence);
		return ERR_PTR(e->error);
	}
	return e->fence;
}

static void vmgpu_set_addr(struct vmgpu_addr *a, u32 space, u64 addr)
{
	a->space = cpu_to_le32(space);
	a->addr = cpu_to_le64(addr);
}

/* Walk both run lists; count the transfers, and emit them if @e is given. */
static u32 vmgpu_copy_walk(const struct vmgpu_runs *src, const struct vmgpu_runs *dst,
			   struct vmgpu_emitter *e)
{
	u32 i = 0, j = 0, count = 0;
	u64 src_off = 0, dst_off = 0;

	while (i < src->count && j < dst->count) {
		const struct vmgpu_run *s = &src->run[i];
		const struct vmgpu_run *d = &dst->run[j];
		u64 len = min(s->len - src_off, d->len - dst_off);

		if (e) {
			union vmgpu_cmd cmd = {};

			cmd.transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
			vmgpu_set_addr(&cmd.transfer.src, s->space, s->addr + src_off);
			vmgpu_set_addr(&cmd.transfer.dst, d->space, d->addr + dst_off);
			cmd.transfer.size = cpu_to_le64(len);
			vmgpu_emit(e, &cmd);
		}
		count++;
		src_off += len;
		dst_off += len;
		if (src_off == s->len) {
			i++;
			src_off = 0;
		}
		if (dst_off == d->len) {
			j++;
			dst_off = 0;
		}
	}
	return count;
}

/**
 * vmgpu_migrate_copy() - queue the paging operations of a move
 * @vdev: the device
 * @tbo: the allocation, reserved; its TT populated if either side is TT
 * @from: the current resource
 * @to: the new resource
 *
 * The operations wait, on the GPU side, for every fence of the allocation's
 * reservation object.
 *
 * Return: the fence of the last operation, or an ERR_PTR.
 */
struct dma_fence *vmgpu_migrate_copy(struct vmgpu_device *vdev,
				     struct ttm_buffer_object *tbo,
				     struct ttm_resource *from,
				     struct ttm_resource *to)
{
	struct vmgpu_emitter e = { .vdev = vdev, .resv = tbo->base.resv };
	struct vmgpu_runs src, dst;
	struct dma_fence *fence;
	int ret;

	ret = vmgpu_runs_init(vdev, tbo, from, &src);
	if (ret)
		return ERR_PTR(ret);
	ret = vmgpu_runs_init(vdev, tbo, to, &dst);
	if (ret) {
		kvfree(src.run);
		return ERR_PTR(ret);
	}
	e.remaining = vmgpu_copy_walk(&src, &dst, NULL);
	vmgpu_copy_walk(&src, &dst, &e);
	fence = vmgpu_emit_done(&e);
	kvfree(src.run);
	kvfree(dst.run);
	return fence;
}

/**
 * vmgpu_migrate_clear() - queue the Fill that zeroes a new backing
 * @vdev: the device
 * @tbo: the allocation, reserved; its TT populated if @res is TT
 * @res: the backing to clear
 *
 * Return: the fence of the last Fill, or an ERR_PTR.
 */
struct dma_fence *vmgpu_migrate_clear(struct vmgpu_device *vdev,
				      struct ttm_buffer_object *tbo,
				      struct ttm_resource *res)
{
	struct vmgpu_emitter e = { .vdev = vdev, .resv = tbo->base.resv };
	struct vmgpu_runs runs;
	u32 i;
	int ret;

	ret = vmgpu_runs_init(vdev, tbo, res, &runs);
	if (ret)
		return ERR_PTR(ret);
	e.remaining = runs.count;
	for (i = 0; i < runs.count; i++) {
		union vmgpu_cmd cmd = {};

		cmd.fill.hdr.opcode = cpu_to_le16(VMGPU_OP_FILL);
		vmgpu_set_addr(&cmd.fill.dst, runs.run[i].space, runs.run[i].addr);
		cmd.fill.size = cpu_to_le64(runs.run[i].len);
		vmgpu_emit(&e, &cmd);
	}
	kvfree(runs.run);
	return vmgpu_emit_done(&e);
}
