// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_exec.h>
#include <drm/drm_file.h>
#include <drm/drm_gpuvm.h>
#include <drm/drm_syncobj.h>

#include "vmgpu_alloc_list.h"
#include "vmgpu_bo.h"
#include "vmgpu_context.h"
#include "vmgpu_device.h"
#include "vmgpu_drm.h"
#include "vmgpu_exec.h"
#include "vmgpu_job.h"
#include "vmgpu_job_types.h"
#include "vmgpu_vm.h"
#include "vmgpu_vm_id.h"

/**
 * DOC: user submission
 *
 * EXEC queues one job on a context. Seed "GPU virtual addressing": the
 * kernel does not learn which allocations a GPU-VA job uses. (Jobs of the
 * physical engine name theirs in an allocation list: vmgpu_alloc_list.c.)
 * It checks the commands (only NOP, FENCE, FILL, TRANSFER, WAIT, COMPRESS
 * and DECOMPRESS, virtual addresses only, reserved fields zero), writes
 * the file's device VM into every address and copies them; the device
 * checks again by ring mode.
 * A process can therefore only reach what its own VM maps, and the kernel
 * never parses anything at run time.
 *
 * Ordering: the job waits for its in-syncs (drm_syncobj points) and for
 * the kernel's fences (moves, clears) of every allocation its VM maps,
 * which are all locked with drm_gpuvm_exec_lock(); an allocation evicted
 * out of the device's reach is made resident again first. The job's
 * fence goes on every one of them as a bookkeeping fence, which is what
 * makes moves wait for it and destruction deferred until it is done. Out
 * fences are installed in syncobjs, timeline points included.
 * Everything that can fail is done before the job is pushed: a
 * submission runs whole or not at all.
 */

struct vmgpu_exec_out_sync {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;
	u64 point;
};

static bool vmgpu_exec_mbz(const void *p, size_t size)
{
	return !memchr_inv(p, 0, size);
}

/**
 * vmgpu_exec_cmd_addrs() - check a user command but for its addresses
 * @cmd: the command
 * @addrs: out, its addresses and the bytes the command touches at each
 *
 * Return: 0, or -EINVAL for a command no user job may contain.
 */
int vmgpu_exec_cmd_addrs(union vmgpu_cmd *cmd, struct vmgpu_cmd_addrs *addrs)
{
	u16 flags = le16_to_cpu(cmd->hdr.flags);

	addrs->count = 0;
	if (cmd->hdr.reserved)
		return -EINVAL;
	switch (le16_to_cpu(cmd->hdr.opcode)) {
	case VMGPU_OP_NOP:
		if (flags || le32_to_cpu(cmd->nop.delay_us) > VMGPU_NOP_MAX_DELAY_US ||
		    !vmgpu_exec_mbz(cmd->nop.reserved, sizeof(cmd->nop.reserved)))
			return -EINVAL;
		return 0;
	case VMGPU_OP_FENCE:
		/* No interrupt and no ring fence word: those are the kernel's. */
		if (flags || !vmgpu_exec_mbz(cmd->fence.reserved,
					     sizeof(cmd->fence.reserved)))
			return -EINVAL;
		*addrs = (struct vmgpu_cmd_addrs){ { &cmd->fence.dst }, { 8 }, 1 };
		return 0;
	case VMGPU_OP_FILL:
		if (flags || !vmgpu_exec_mbz(cmd->fill.reserved,
					     sizeof(cmd->fill.reserved)))
			return -EINVAL;
		*addrs = (struct vmgpu_cmd_addrs){ { &cmd->fill.dst },
						   { le64_to_cpu(cmd->fill.size) }, 1 };
		return 0;
	case VMGPU_OP_TRANSFER:
		if ((flags & ~(VMGPU_TRANSFER_FLAG_SWIZZLE | VMGPU_TRANSFER_FLAG_UNSWIZZLE)) ||
		    flags == (VMGPU_TRANSFER_FLAG_SWIZZLE | VMGPU_TRANSFER_FLAG_UNSWIZZLE) ||
		    !vmgpu_exec_mbz(cmd->transfer.reserved,
				    sizeof(cmd->transfer.reserved)))
			return -EINVAL;
		*addrs = (struct vmgpu_cmd_addrs){
			{ &cmd->transfer.src, &cmd->transfer.dst },
			{ le64_to_cpu(cmd->transfer.size), le64_to_cpu(cmd->transfer.size) },
			2 };
		return 0;
	case VMGPU_OP_COMPRESS:
	case VMGPU_OP_DECOMPRESS:
		/* Device-only state on the job's own pages: allocation notification. */
		if (flags || !vmgpu_exec_mbz(cmd->range.reserved,
					     sizeof(cmd->range.reserved)))
			return -EINVAL;
		*addrs = (struct vmgpu_cmd_addrs){ { &cmd->range.addr },
						   { le64_to_cpu(cmd->range.size) }, 1 };
		return 0;
	case VMGPU_OP_WAIT:
		if (flags || !vmgpu_exec_mbz(cmd->wait.reserved,
					     sizeof(cmd->wait.reserved)))
			return -EINVAL;
		*addrs = (struct vmgpu_cmd_addrs){ { &cmd->wait.addr }, { 8 }, 1 };
		return 0;
	}
	return -EINVAL;
}

/**
 * vmgpu_exec_cmd_compresses() - whether a user command changes compression
 * state
 * @cmd: a user command
 *
 * Return: true for COMPRESS and DECOMPRESS.
 */
bool vmgpu_exec_cmd_compresses(const union vmgpu_cmd *cmd)
{
	u16 opcode = le16_to_cpu(cmd->hdr.opcode);

	return opcode == VMGPU_OP_COMPRESS || opcode == VMGPU_OP_DECOMPRESS;
}

/* A GPU-VA job's command: virtual addresses in the submitter's VM. */
static int vmgpu_exec_check_cmd(union vmgpu_cmd *cmd, u32 hw_vm)
{
	struct vmgpu_cmd_addrs addrs;
	u32 i;
	int ret;

	ret = vmgpu_exec_cmd_addrs(cmd, &addrs);
	if (ret)
		return ret;
	for (i = 0; i < addrs.count; i++) {
		struct vmgpu_addr *a = addrs.addr[i];

		if (le32_to_cpu(a->space) != VMGPU_SPACE_VIRTUAL || a->vm)
			return -EINVAL;
		a->vm = cpu_to_le32(hw_vm);
	}
	return 0;
}

/*
 * GPU-VA jobs (@hw_vm, the space's device VM) check every command here;
 * physical ones (-1) with their list. *@compresses: whether the job
 * changes compression state, which the space records only once the job
 * is pushed (vmgpu_exec_push()).
 */
static int vmgpu_exec_copy_cmds(struct vmgpu_job *job, const struct drm_vmgpu_exec *args,
				int hw_vm, bool *compresses)
{
	u32 i;
	int ret;

	*compresses = false;
	if (copy_from_user(job->cmds, u64_to_user_ptr(args->cmds),
			   array_size(args->num_cmds, sizeof(union vmgpu_cmd))))
		return -EFAULT;
	job->num_cmds = args->num_cmds;
	for (i = 0; hw_vm >= 0 && i < job->num_cmds; i++) {
		ret = vmgpu_exec_check_cmd(&job->cmds[i], hw_vm);
		if (ret)
			return ret;
		if (vmgpu_exec_cmd_compresses(&job->cmds[i]))
			*compresses = true;
	}
	return 0;
}

static int vmgpu_exec_read_syncs(struct drm_vmgpu_sync **syncs, u64 ptr, u32 count)
{
	u32 i;

	*syncs = NULL;
	if (!count)
		return 0;
	*syncs = memdup_array_user(u64_to_user_ptr(ptr), count, sizeof(**syncs));
	if (IS_ERR(*syncs))
		return PTR_ERR(*syncs);
	for (i = 0; i < count; i++)
		if ((*syncs)[i].flags)
			return -EINVAL;
	return 0;
}

static int vmgpu_exec_add_in_syncs(struct vmgpu_job *job, struct drm_file *file,
				   const struct drm_vmgpu_sync *syncs, u32 count)
{
	u32 i;
	int ret;

	for (i = 0; i < count; i++) {
		struct dma_fence *fence;

		ret = drm_syncobj_find_fence(file, syncs[i].handle, syncs[i].point,
					     0, &fence);
		if (ret)
			return ret;
		ret = drm_sched_job_add_dependency(&job->base, fence);
		if (ret)
			return ret;
	}
	return 0;
}

static int vmgpu_exec_get_out_syncs(struct vmgpu_exec_out_sync *out,
				    struct drm_file *file,
				    const struct drm_vmgpu_sync *syncs, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++) {
		out[i].syncobj = drm_syncobj_find(file, syncs[i].handle);
		if (!out[i].syncobj)
			return -ENOENT;
		out[i].point = syncs[i].point;
		if (out[i].point) {
			out[i].chain = dma_fence_chain_alloc();
			if (!out[i].chain)
				return -ENOMEM;
		}
	}
	return 0;
}

static void vmgpu_exec_signal_out_syncs(struct vmgpu_exec_out_sync *out,
					u32 count, struct dma_fence *fence)
{
	u32 i;

	for (i = 0; i < count; i++) {
		if (out[i].chain) {
			drm_syncobj_add_point(out[i].syncobj, out[i].chain, fence,
					      out[i].point);
			out[i].chain = NULL;
		} else {
			drm_syncobj_replace_fence(out[i].syncobj, fence);
		}
	}
}

static void vmgpu_exec_put_out_syncs(struct vmgpu_exec_out_sync *out, u32 count)
{
	u32 i;

	for (i = 0; out && i < count; i++) {
		dma_fence_chain_free(out[i].chain);
		if (out[i].syncobj)
			drm_syncobj_put(out[i].syncobj);
	}
	kfree(out);
}

static bool vmgpu_exec_obj_is_import(struct drm_gpuvm_exec *vm_exec,
				     struct drm_gem_object *obj)
{
	return obj != drm_gpuvm_resv_obj(vm_exec->vm) && vmgpu_bo_is_import(gem_to_vmgpu_bo(obj));
}

/*
 * With every allocation of the VM locked: bring back what was evicted out
 * of the device's reach, and wait for the kernel's work on all of them.
 */
static int vmgpu_exec_prepare_bos(struct vmgpu_job *job, struct drm_gpuvm_exec *vm_exec)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct drm_gem_object *obj;
	int ret;

	drm_exec_for_each_locked_object(&vm_exec->exec, obj) {
		if (obj != drm_gpuvm_resv_obj(vm_exec->vm)) {
			struct vmgpu_bo *vbo = gem_to_vmgpu_bo(obj);

			job->cache_bracket |= vmgpu_bo_is_import(vbo) &&
					      vmgpu_job_may_bracket(job->ring);

			/* Seed 001: the CPU or the GPU, never both. */
			if ((vbo->flags & DRM_VMGPU_ALLOC_SWIZZLED) && vbo->locked_by)
				return -EBUSY;
			if (!vmgpu_bo_is_resident(&vbo->tbo) || vbo->unswizzled ||
			    vbo->import_moved) {
				ret = vmgpu_bo_validate(vbo, &ctx);
				if (ret)
					return ret;
			}
			if (vbo->vm_stale) {
				ret = vmgpu_vm_bo_revalidate(vbo, true);
				if (ret)
					return ret;
			}
		}
		/*
		 * An import also waits for the exporter's and its other
		 * importers' work (implicit synchronisation).
		 */
		ret = drm_sched_job_add_resv_dependencies(&job->base, obj->resv,
							  vmgpu_exec_obj_is_import(vm_exec, obj) ?
							  DMA_RESV_USAGE_READ :
							  DMA_RESV_USAGE_KERNEL);
		if (ret)
			return ret;
		/* A move above may have taken the slot locking reserved. */
		ret = dma_resv_reserve_fences(obj->resv, 1);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Lock the VM's allocations, order the job after the kernel, push it; a
 * job that @compresses marks its space first, and only a job that is
 * pushed: a failed EXEC marks nothing.
 */
static int vmgpu_exec_push(struct vmgpu_job *job, struct vmgpu_vm *vm, bool compresses,
			   struct dma_fence **fence)
{
	struct drm_gpuvm_exec vm_exec = {
		.vm = &vm->base,
		.flags = DRM_EXEC_INTERRUPTIBLE_WAIT,
		.num_fences = 1,
	};
	int ret;

	mutex_lock(&vm->lock);
	/* On failure it has unlocked everything itself. */
	ret = drm_gpuvm_exec_lock(&vm_exec);
	if (ret)
		goto out;
	ret = vmgpu_exec_prepare_bos(job, &vm_exec);
	if (!ret) {
		struct drm_gem_object *obj;

		if (compresses)
			vmgpu_vm_compresses(vm);
		*fence = vmgpu_job_push(job);
		drm_gpuvm_resv_add_fence(&vm->base, &vm_exec.exec, *fence,
					 DMA_RESV_USAGE_BOOKKEEP,
					 DMA_RESV_USAGE_BOOKKEEP);
		/*
		 * Imports are seen as written, by the exporter and whoever
		 * else shares them: the same fence, its entry replaced.
		 */
		drm_exec_for_each_locked_object(&vm_exec.exec, obj)
			if (vmgpu_exec_obj_is_import(&vm_exec, obj))
				dma_resv_add_fence(obj->resv, *fence, DMA_RESV_USAGE_WRITE);
	}
	drm_gpuvm_exec_unlock(&vm_exec);
out:
	mutex_unlock(&vm->lock);
	return ret;
}

static int vmgpu_exec_check_args(const struct drm_vmgpu_exec *args)
{
	if (args->flags || args->pad || args->reserved[0] || args->reserved[1] ||
	    !args->num_cmds || args->num_cmds > DRM_VMGPU_EXEC_MAX_CMDS ||
	    args->num_allocs > DRM_VMGPU_EXEC_MAX_ALLOCS ||
	    args->num_patches > 2 * args->num_cmds ||
	    args->num_in_syncs > DRM_VMGPU_EXEC_MAX_SYNCS ||
	    args->num_out_syncs > DRM_VMGPU_EXEC_MAX_SYNCS)
		return -EINVAL;
	return 0;
}

static int vmgpu_exec(struct drm_file *file, struct drm_vmgpu_exec *args,
		      struct vmgpu_context *ctx)
{
	struct drm_vmgpu_sync *in = NULL, *out = NULL;
	struct vmgpu_exec_out_sync *out_syncs;
	struct dma_fence *fence = NULL;
	struct vmgpu_job *job;
	int hw_vm = -1, ret;
	bool compresses;

	out_syncs = kcalloc(args->num_out_syncs, sizeof(*out_syncs), GFP_KERNEL);
	if (!out_syncs)
		return -ENOMEM;
	job = vmgpu_job_alloc(ctx->ring, args->num_cmds);
	if (IS_ERR(job)) {
		kfree(out_syncs);
		return PTR_ERR(job);
	}
	job->entity = &ctx->entity;
	/* Before any lock: it may wait for other spaces' jobs. */
	if (ctx->vm) {
		hw_vm = vmgpu_vm_id_get(ctx->vm, &job->vm_generation);
		if (hw_vm < 0) {
			ret = hw_vm;
			goto err_job;
		}
		job->hw_vm = hw_vm;
	}
	ret = vmgpu_exec_copy_cmds(job, args, hw_vm, &compresses) ?:
	      vmgpu_exec_read_syncs(&in, args->in_syncs, args->num_in_syncs) ?:
	      vmgpu_exec_read_syncs(&out, args->out_syncs, args->num_out_syncs) ?:
	      vmgpu_job_prepare(job, NULL) ?:
	      vmgpu_exec_add_in_syncs(job, file, in, args->num_in_syncs) ?:
	      vmgpu_exec_get_out_syncs(out_syncs, file, out, args->num_out_syncs);
	if (ret)
		goto err_job;
	kref_get(&ctx->ref);
	job->ctx = ctx;
	mutex_lock(&ctx->submit_lock);
	if (ctx->destroyed)
		ret = -ENOENT;
	else if (ctx->vm)
		ret = vmgpu_exec_push(job, ctx->vm, compresses, &fence);
	else
		ret = vmgpu_alloc_list_push(job, file, args, &fence);
	mutex_unlock(&ctx->submit_lock);
	if (ret)
		goto err_job;
	if (ctx->vm)
		vmgpu_vm_id_put(ctx->vm);
	vmgpu_exec_signal_out_syncs(out_syncs, args->num_out_syncs, fence);
	args->seqno = fence->seqno;
	dma_fence_put(fence);
	goto out;

err_job:
	if (hw_vm >= 0)
		vmgpu_vm_id_put(ctx->vm);
	vmgpu_job_discard(job);
out:
	vmgpu_exec_put_out_syncs(out_syncs, args->num_out_syncs);
	if (!IS_ERR(in))
		kfree(in);
	if (!IS_ERR(out))
		kfree(out);
	return ret;
}

/**
 * vmgpu_exec_ioctl() - DRM_IOCTL_VMGPU_EXEC
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_exec
 * @file: the DRM file
 *
 * Return: 0, -ECANCELED for a guilty context, or another negative errno;
 * nothing was queued unless it returns 0.
 */
int vmgpu_exec_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vmgpu_exec *args = data;
	struct vmgpu_context *ctx;
	int idx, ret;

	ret = vmgpu_exec_check_args(args);
	if (ret)
		return ret;
	ctx = vmgpu_context_lookup(file, args->ctx_id);
	if (!ctx)
		return -ENOENT;
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out_put;
	}
	if (atomic_read(&ctx->guilty))
		ret = -ECANCELED;
	else if (ctx->vm && (args->num_allocs || args->num_patches))
		ret = -EINVAL;
	else
		ret = vmgpu_exec(file, args, ctx);
	drm_dev_exit(idx);
out_put:
	vmgpu_context_put(ctx);
	return ret;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_exec_test.c"
#endif
