// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-resv.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <drm/drm_exec.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "vmgpu_alloc_list.h"
#include "vmgpu_bo.h"
#include "vmgpu_drm.h"
#include "vmgpu_exec.h"
#include "vmgpu_job.h"
#include "vmgpu_job_types.h"
#include "vmgpu_mmap.h"

/**
 * DOC: allocation lists
 *
 * Seed "GPU segments", engines in physical addressing mode: a job of the
 * physical engine names the allocations it uses in an allocation list, and
 * each address of its commands in a patch location (command, which
 * address, list entry, offset). Only AccessedPhysically allocations may be
 * on the list; any other fails the whole submission with -EINVAL before
 * anything runs.
 *
 * The kernel locks the listed allocations, makes each resident where it
 * has a physical reference (contiguous in a memory segment, or mapped into
 * the aperture segment: the device then reads the GART), and writes
 * (segment, offset) as a device address into the job's copy of the
 * commands. Every address must be patched, and the bytes a command
 * touches must lie inside the allocation, so the job reaches nothing
 * else. The job waits for the kernel's fences on the allocations and its
 * own fence goes on them, so a later move waits for the job on the GPU:
 * the memory stays the allocation's until the job is done.
 */

struct vmgpu_alloc_list {
	struct drm_vmgpu_alloc_ref *refs;
	struct drm_vmgpu_patch *patches;
	struct drm_gem_object **objs;
	u32 num_objs;
};

static void vmgpu_alloc_list_free(struct vmgpu_alloc_list *list)
{
	u32 i;

	for (i = 0; i < list->num_objs; i++)
		drm_gem_object_put(list->objs[i]);
	kfree(list->objs);
	if (!IS_ERR(list->patches))
		kfree(list->patches);
	if (!IS_ERR(list->refs))
		kfree(list->refs);
}

static int vmgpu_alloc_list_lookup(struct vmgpu_alloc_list *list,
				   struct drm_file *file,
				   const struct drm_vmgpu_exec *args)
{
	u32 i;

	list->refs = memdup_array_user(u64_to_user_ptr(args->allocs),
				       args->num_allocs, sizeof(*list->refs));
	if (IS_ERR(list->refs))
		return PTR_ERR(list->refs);
	list->patches = memdup_array_user(u64_to_user_ptr(args->patches),
					  args->num_patches, sizeof(*list->patches));
	if (IS_ERR(list->patches))
		return PTR_ERR(list->patches);
	list->objs = kcalloc(args->num_allocs, sizeof(*list->objs), GFP_KERNEL);
	if (!list->objs)
		return -ENOMEM;
	for (i = 0; i < args->num_allocs; i++) {
		struct drm_gem_object *obj;

		if (list->refs[i].flags)
			return -EINVAL;
		obj = drm_gem_object_lookup(file, list->refs[i].handle);
		if (!obj)
			return -ENOENT;
		list->objs[list->num_objs++] = obj;
		if (!(gem_to_vmgpu_bo(obj)->flags & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY))
			return -EINVAL;
	}
	return 0;
}

/*
 * Every address of every command is all zero and named by exactly one
 * patch, whose bytes lie inside its allocation.
 */
static int vmgpu_alloc_list_check(struct vmgpu_alloc_list *list,
				  struct vmgpu_job *job,
				  const struct drm_vmgpu_exec *args)
{
	u32 patched = 0, needed = 0, i;
	u8 *seen;
	int ret = -EINVAL;

	seen = kcalloc(job->num_cmds, 2, GFP_KERNEL);
	if (!seen)
		return -ENOMEM;
	for (i = 0; i < job->num_cmds; i++) {
		struct vmgpu_cmd_addrs addrs;
		u32 j;

		ret = vmgpu_exec_cmd_addrs(&job->cmds[i], &addrs);
		if (ret)
			goto out;
		ret = -EINVAL;
		/*
		 * Compression state belongs to a GPU VA space, which has its
		 * quota and is forgotten with it (DOC: compression owners);
		 * the physical engine has none.
		 */
		if (vmgpu_exec_cmd_compresses(&job->cmds[i]))
			goto out;
		for (j = 0; j < addrs.count; j++)
			if (memchr_inv(addrs.addr[j], 0, sizeof(*addrs.addr[j])))
				goto out;
		needed += addrs.count;
	}
	for (i = 0; i < args->num_patches; i++) {
		const struct drm_vmgpu_patch *p = &list->patches[i];
		struct vmgpu_cmd_addrs addrs;
		u64 end;

		if (p->pad || p->cmd >= job->num_cmds || p->alloc >= list->num_objs)
			goto out;
		vmgpu_exec_cmd_addrs(&job->cmds[p->cmd], &addrs);
		if (p->which >= addrs.count || seen[2 * p->cmd + p->which]++)
			goto out;
		if (check_add_overflow(p->offset, addrs.size[p->which], &end) ||
		    end > list->objs[p->alloc]->size)
			goto out;
		patched++;
	}
	ret = patched == needed ? 0 : -EINVAL;
out:
	kfree(seen);
	return ret;
}

/* With the list locked: resident, physically referenced, ordered. */
static int vmgpu_alloc_list_patch(struct vmgpu_alloc_list *list,
				  struct vmgpu_job *job,
				  const struct drm_vmgpu_exec *args)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	u32 i;
	int ret;

	for (i = 0; i < list->num_objs; i++) {
		struct vmgpu_bo *vbo = gem_to_vmgpu_bo(list->objs[i]);
		u64 offset;

		if ((vbo->flags & DRM_VMGPU_ALLOC_SWIZZLED) && vbo->locked_by)
			return -EBUSY;
		/* The exporter's side of the cache: see &vmgpu_job.cache_bracket. */
		job->cache_bracket |= vmgpu_bo_is_import(vbo) && vmgpu_job_may_bracket(job->ring);
		if (!(upper_32_bits(vmgpu_bo_residency(vbo, &offset)) &
		      DRM_VMGPU_RESIDENCY_PHYSICAL) || vbo->unswizzled || vbo->import_moved) {
			ret = vmgpu_bo_validate(vbo, &ctx);
			if (ret)
				return ret;
		}
		/* Never a backing whose fill failed: repaired first. */
		ret = vmgpu_bo_prepare_access(vbo, true);
		if (ret)
			return ret;
		/* An import: also the exporter's work (DOC: PRIME import). */
		ret = drm_sched_job_add_resv_dependencies(&job->base, vbo->tbo.base.resv,
							  vmgpu_bo_is_import(vbo) ?
							  DMA_RESV_USAGE_READ :
							  DMA_RESV_USAGE_KERNEL);
		if (ret)
			return ret;
		/* A move above may have taken the slot locking reserved. */
		ret = dma_resv_reserve_fences(vbo->tbo.base.resv, 1);
		if (ret)
			return ret;
	}
	for (i = 0; i < args->num_patches; i++) {
		const struct drm_vmgpu_patch *p = &list->patches[i];
		struct vmgpu_cmd_addrs addrs;
		struct vmgpu_addr *a;
		u32 space;
		u64 base;

		ret = vmgpu_bo_physical_address(gem_to_vmgpu_bo(list->objs[p->alloc]),
						&space, &base);
		if (ret)
			return ret;
		vmgpu_exec_cmd_addrs(&job->cmds[p->cmd], &addrs);
		a = addrs.addr[p->which];
		a->space = cpu_to_le32(space);
		a->addr = cpu_to_le64(base + p->offset);
	}
	return 0;
}

/**
 * vmgpu_alloc_list_push() - check, patch and queue a physical engine's job
 * @job: the job, prepared, with the user's commands copied in
 * @file: the submitter, whose handles the list names
 * @args: the EXEC request
 * @fence: out, the job's finished fence, a reference for the caller
 *
 * Return: 0, or a negative errno and nothing queued.
 */
int vmgpu_alloc_list_push(struct vmgpu_job *job, struct drm_file *file,
			  const struct drm_vmgpu_exec *args, struct dma_fence **fence)
{
	struct vmgpu_alloc_list list = {};
	struct drm_exec exec;
	u32 i;
	int ret;

	ret = vmgpu_alloc_list_lookup(&list, file, args) ?:
	      vmgpu_alloc_list_check(&list, job, args);
	if (ret)
		goto out;

	drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT | DRM_EXEC_IGNORE_DUPLICATES,
		      list.num_objs);
	drm_exec_until_all_locked(&exec) {
		for (i = 0; i < list.num_objs; i++) {
			ret = drm_exec_prepare_obj(&exec, list.objs[i], 1);
			drm_exec_retry_on_contention(&exec);
			if (ret)
				goto out_exec;
		}
	}
	ret = vmgpu_alloc_list_patch(&list, job, args);
	if (ret)
		goto out_exec;
	*fence = vmgpu_job_push(job);
	for (i = 0; i < list.num_objs; i++)
		dma_resv_add_fence(list.objs[i]->resv, *fence,
				   vmgpu_bo_is_import(gem_to_vmgpu_bo(list.objs[i])) ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_BOOKKEEP);
out_exec:
	drm_exec_fini(&exec);
out:
	vmgpu_alloc_list_free(&list);
	return ret;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_alloc_list_test.c"
#endif
