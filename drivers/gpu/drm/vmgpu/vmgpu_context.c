// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_vma_manager.h>

#include "vmgpu_context.h"
#include "vmgpu_device.h"
#include "vmgpu_drm.h"
#include "vmgpu_job_types.h"
#include "vmgpu_ring.h"
#include "vmgpu_stats.h"
#include "vmgpu_trace.h"
#include "vmgpu_vm.h"

/**
 * DOC: contexts and monitored fences
 *
 * A context is a queue of user jobs on one engine: a drm_sched entity of
 * that engine's ring, and the file's GPU VA space. Seed "monitored
 * fences": the UMD tracks which work uses what and synchronises itself,
 * so each context has a seqno page, one page the UMD maps read-only, in
 * which the kernel writes the seqno of the context's last completed job
 * before that job's fence signals. A busy check is then a memory read,
 * and the fence, the page and the syncobjs agree. A blocking wait sleeps
 * on the job's fence (a syncobj, or GEM_WAIT).
 *
 * A job that fails on the device (a VM fault, a bad field) or hangs makes
 * its context guilty: the scheduler cancels the context's queued jobs
 * (-ECANCELED; they run no commands) and EXEC refuses new ones. Other
 * contexts, on the same engine too, are not touched.
 */

static struct vmgpu_seqno_page *to_seqno_page(struct drm_gem_object *obj)
{
	return container_of(obj, struct vmgpu_seqno_page, base);
}

static void vmgpu_seqno_page_free(struct drm_gem_object *obj)
{
	struct vmgpu_seqno_page *sp = to_seqno_page(obj);

	drm_gem_free_mmap_offset(obj);
	drm_gem_object_release(obj);
	__free_page(sp->page);
	kfree(sp);
}

/* Read-only, for good: the kernel is the only writer. */
static int vmgpu_seqno_page_mmap(struct drm_gem_object *obj,
				 struct vm_area_struct *vma)
{
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	vm_flags_mod(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP, VM_MAYWRITE);
	return 0;
}

/*
 * Plain memory, so also after hot-unplug revoked the device's mappings:
 * the UMD's last completed seqno stays readable.
 */
static vm_fault_t vmgpu_seqno_page_fault(struct vm_fault *vmf)
{
	struct drm_gem_object *obj = vmf->vma->vm_private_data;

	return vmf_insert_page(vmf->vma, vmf->address, to_seqno_page(obj)->page);
}

static const struct vm_operations_struct vmgpu_seqno_page_vm_ops = {
	.fault = vmgpu_seqno_page_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs vmgpu_seqno_page_funcs = {
	.free = vmgpu_seqno_page_free,
	.mmap = vmgpu_seqno_page_mmap,
	.vm_ops = &vmgpu_seqno_page_vm_ops,
};

static struct vmgpu_seqno_page *vmgpu_seqno_page_create(struct drm_device *drm)
{
	struct vmgpu_seqno_page *sp;
	int ret;

	sp = kzalloc(sizeof(*sp), GFP_KERNEL);
	if (!sp)
		return ERR_PTR(-ENOMEM);
	/* Lowmem, so that a signalling fence writes it without mapping. */
	sp->page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!sp->page) {
		kfree(sp);
		return ERR_PTR(-ENOMEM);
	}
	sp->seqno = page_address(sp->page);
	sp->base.funcs = &vmgpu_seqno_page_funcs;
	drm_gem_private_object_init(drm, &sp->base, PAGE_SIZE);
	ret = drm_gem_create_mmap_offset(&sp->base);
	if (ret) {
		drm_gem_object_put(&sp->base);
		return ERR_PTR(ret);
	}
	return sp;
}

/*
 * The module reference goes last: this runs on the module's queue, which
 * module unload drains before the module's text goes.
 */
static void vmgpu_context_release_work(struct work_struct *work)
{
	struct vmgpu_context *ctx = container_of(work, struct vmgpu_context, release_work);
	struct drm_device *drm = ctx->drm;

	drm_gem_object_put(&ctx->seqno_page->base);
	if (ctx->vm)
		vmgpu_vm_put(ctx->vm);
	mutex_destroy(&ctx->submit_lock);
	kfree(ctx);
	drm_dev_put(drm);
	module_put(THIS_MODULE);
}

/*
 * The last reference may go with a job's free, in scheduler work, or in
 * the work that frees the jobs the scheduler killed, after the device was
 * removed: the context's device and module references go on the module's
 * queue.
 */
static void vmgpu_context_release(struct kref *ref)
{
	struct vmgpu_context *ctx = container_of(ref, struct vmgpu_context, ref);

	vmgpu_queue_release(&ctx->release_work);
}

/**
 * vmgpu_context_put() - drop a reference to a context
 * @ctx: the context
 */
void vmgpu_context_put(struct vmgpu_context *ctx)
{
	kref_put(&ctx->ref, vmgpu_context_release);
}

/**
 * vmgpu_context_lookup() - find a context of a file
 * @file: the file
 * @id: the context id
 *
 * Return: the context, a reference for the caller, or NULL.
 */
struct vmgpu_context *vmgpu_context_lookup(struct drm_file *file, u32 id)
{
	struct vmgpu_file *vfile = file->driver_priv;
	struct vmgpu_context *ctx;

	xa_lock(&vfile->contexts);
	ctx = xa_load(&vfile->contexts, id);
	if (ctx)
		kref_get(&ctx->ref);
	xa_unlock(&vfile->contexts);
	return ctx;
}

/*
 * Only ever forward: at hot-unplug run_job may drop a later job (and
 * write its seqno) before an earlier one's fence fails.
 */
static void vmgpu_seqno_page_advance(struct vmgpu_seqno_page *sp, u64 seqno)
{
	u64 old = READ_ONCE(*sp->seqno);

	while (old < seqno && !try_cmpxchg64(sp->seqno, &old, seqno))
		;
}

/**
 * vmgpu_context_job_done() - publish a user job's completion
 * @fence: the job's hardware fence, its error final, about to signal
 * @busy_ns: the time the job kept its engine busy
 *
 * Called by the fence as it signals, under the ring's fence lock, before
 * its signalled bit is set (see &vmgpu_hw_fence.ctx): a fence callback
 * instead could run after the scheduler, having seen the bit, freed the
 * job. A context's jobs complete in order (one entity, one ring); the
 * seqno page only grows. Allocates nothing.
 */
void vmgpu_context_job_done(struct vmgpu_hw_fence *fence, u64 busy_ns)
{
	struct vmgpu_context *ctx = fence->ctx;

	lockdep_assert_held(&fence->ring->fence_lock);
	atomic64_add(busy_ns, &ctx->busy_ns);
	trace_vmgpu_ctx_job_done(ctx->id, fence->ctx_seqno, fence->base.error);
	if (fence->base.error)
		atomic_set(&ctx->guilty, 1);
	vmgpu_seqno_page_advance(ctx->seqno_page, fence->ctx_seqno);
	fence->ctx = NULL;
}

/**
 * vmgpu_context_job_dropped() - run_job refused a user job (device gone)
 * @job: the job
 *
 * Its fence signals with an error; the seqno page still has to say it is
 * done, or a UMD polling it would wait for ever.
 */
void vmgpu_context_job_dropped(struct vmgpu_job *job)
{
	vmgpu_seqno_page_advance(job->ctx->seqno_page, job->base.s_fence->finished.seqno);
}

/**
 * vmgpu_context_job_running() - run_job is writing a user job to its ring
 * @job: the job, its hardware fence not yet initialised
 *
 * Hooks the job's completion to its context: vmgpu_context_job_done()
 * runs as the hardware fence signals. Allocates nothing.
 */
void vmgpu_context_job_running(struct vmgpu_job *job)
{
	job->hw_fence->ctx = job->ctx;
	job->hw_fence->ctx_seqno = job->base.s_fence->finished.seqno;
}

/**
 * vmgpu_file_vm_if_made() - the GPU VA space of a file, if it has one
 * @file: the file
 *
 * Return: the VM, which lives as long as the file, or NULL.
 */
struct vmgpu_vm *vmgpu_file_vm_if_made(struct drm_file *file)
{
	struct vmgpu_file *vfile = file->driver_priv;
	struct vmgpu_vm *vm;

	mutex_lock(&vfile->lock);
	vm = vfile->vm;
	mutex_unlock(&vfile->lock);
	return vm;
}

/**
 * vmgpu_file_vm() - the GPU VA space of a file, made on first use
 * @file: the file
 *
 * Return: the VM, which lives as long as the file, or an ERR_PTR.
 */
struct vmgpu_vm *vmgpu_file_vm(struct drm_file *file)
{
	struct vmgpu_file *vfile = file->driver_priv;
	struct vmgpu_vm *vm;

	mutex_lock(&vfile->lock);
	if (!vfile->vm) {
		vm = vmgpu_vm_create(vfile->vdev);
		if (!IS_ERR(vm))
			vfile->vm = vm;
	} else {
		vm = vfile->vm;
	}
	mutex_unlock(&vfile->lock);
	return vm;
}

static struct vmgpu_context *vmgpu_context_create(struct drm_file *file,
						  struct vmgpu_ring *ring)
{
	struct drm_gpu_scheduler *sched = &ring->sched;
	struct vmgpu_context *ctx;
	struct vmgpu_vm *vm = NULL;
	int ret;

	/* The physical engine addresses no VM. */
	if (ring->mode == VMGPU_RING_MODE_VIRTUAL) {
		vm = vmgpu_file_vm(file);
		if (IS_ERR(vm))
			return ERR_CAST(vm);
	}
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->seqno_page = vmgpu_seqno_page_create(file->minor->dev);
	if (IS_ERR(ctx->seqno_page)) {
		ret = PTR_ERR(ctx->seqno_page);
		kfree(ctx);
		return ERR_PTR(ret);
	}
	kref_init(&ctx->ref);
	INIT_WORK(&ctx->release_work, vmgpu_context_release_work);
	mutex_init(&ctx->submit_lock);
	__module_get(THIS_MODULE);
	ctx->drm = file->minor->dev;
	drm_dev_get(ctx->drm);
	ctx->ring = ring;
	ctx->vm = vm ? vmgpu_vm_get(vm) : NULL;
	ret = drm_sched_entity_init(&ctx->entity, DRM_SCHED_PRIORITY_NORMAL,
				    &sched, 1, &ctx->guilty);
	if (ret) {
		vmgpu_context_put(ctx);
		return ERR_PTR(ret);
	}
	/* Its jobs' finished fences: the scheduled ones are context + 0. */
	ret = vm ? vmgpu_vm_add_fence_context(vm, ctx->entity.fence_context + 1) : 0;
	if (ret) {
		drm_sched_entity_destroy(&ctx->entity);
		vmgpu_context_put(ctx);
		return ERR_PTR(ret);
	}
	return ctx;
}

/* Stop a context taking jobs; those queued still run. */
static void vmgpu_context_kill(struct vmgpu_context *ctx, struct drm_file *file)
{
	struct vmgpu_file *vfile = file->driver_priv;

	/* An EXEC in flight pushes before this, or fails after. */
	mutex_lock(&ctx->submit_lock);
	ctx->destroyed = true;
	mutex_unlock(&ctx->submit_lock);
	drm_sched_entity_destroy(&ctx->entity);
	mutex_lock(&vfile->lock);
	vfile->retired_busy_ns[ctx->ring->index] += atomic64_read(&ctx->busy_ns);
	mutex_unlock(&vfile->lock);
	drm_vma_node_revoke(&ctx->seqno_page->base.vma_node, file);
	vmgpu_context_put(ctx);
}

/**
 * vmgpu_ctx_create_ioctl() - DRM_IOCTL_VMGPU_CTX_CREATE
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_ctx_create
 * @file: the DRM file
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_ctx_create_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct vmgpu_file *vfile = file->driver_priv;
	struct drm_vmgpu_ctx_create *args = data;
	struct vmgpu_context *ctx;
	struct vmgpu_ring *ring;
	int idx, ret;
	u32 id;

	if (args->flags || args->pad || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	ring = vmgpu_ring_user_engine(to_vmgpu_device(drm), args->engine);
	if (!ring)
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ctx = vmgpu_context_create(file, ring);
	if (IS_ERR(ctx)) {
		ret = PTR_ERR(ctx);
		goto out;
	}
	ret = drm_vma_node_allow(&ctx->seqno_page->base.vma_node, file);
	if (ret) {
		drm_sched_entity_destroy(&ctx->entity);
		vmgpu_context_put(ctx);
		goto out;
	}
	/*
	 * Once published, another thread may destroy the context at once:
	 * everything is read and set before, with the id only reserved.
	 */
	ret = xa_alloc(&vfile->contexts, &id, NULL, xa_limit_32b, GFP_KERNEL);
	if (ret) {
		vmgpu_context_kill(ctx, file);
		goto out;
	}
	ctx->id = id;
	args->seqno_offset = drm_vma_node_offset_addr(&ctx->seqno_page->base.vma_node);
	ret = xa_err(xa_store(&vfile->contexts, id, ctx, GFP_KERNEL));
	if (ret) {
		xa_erase(&vfile->contexts, id);
		vmgpu_context_kill(ctx, file);
		goto out;
	}
	args->ctx_id = id;
out:
	drm_dev_exit(idx);
	return ret;
}

/**
 * vmgpu_ctx_destroy_ioctl() - DRM_IOCTL_VMGPU_CTX_DESTROY
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_ctx_destroy
 * @file: the DRM file
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_ctx_destroy_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct vmgpu_file *vfile = file->driver_priv;
	struct drm_vmgpu_ctx_destroy *args = data;
	struct vmgpu_context *ctx;

	if (args->pad || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	/* Index 0 is the allocator's reserved slot: never erase it. */
	ctx = args->ctx_id ? xa_erase(&vfile->contexts, args->ctx_id) : NULL;
	if (!ctx)
		return -ENOENT;
	vmgpu_context_kill(ctx, file);
	return 0;
}

/**
 * vmgpu_vm_bind_ioctl() - DRM_IOCTL_VMGPU_VM_BIND
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_vm_bind
 * @file: the DRM file
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_vm_bind_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct vmgpu_vm *vm;
	int idx, ret;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	vm = vmgpu_file_vm(file);
	ret = IS_ERR(vm) ? PTR_ERR(vm) : vmgpu_vm_bind(vm, file, data);
	drm_dev_exit(idx);
	return ret;
}

/**
 * vmgpu_file_open() - &drm_driver.open
 * @drm: the DRM device
 * @file: the new file
 *
 * Return: 0 or -ENOMEM.
 */
int vmgpu_file_open(struct drm_device *drm, struct drm_file *file)
{
	struct vmgpu_file *vfile;

	vfile = kzalloc(sizeof(*vfile), GFP_KERNEL);
	if (!vfile)
		return -ENOMEM;
	vfile->stats = vmgpu_stats_create();
	if (!vfile->stats) {
		kfree(vfile);
		return -ENOMEM;
	}
	vfile->vdev = to_vmgpu_device(drm);
	mutex_init(&vfile->lock);
	xa_init_flags(&vfile->contexts, XA_FLAGS_ALLOC1);
	file->driver_priv = vfile;
	return 0;
}

/**
 * vmgpu_file_postclose() - &drm_driver.postclose
 * @drm: the DRM device
 * @file: the file going away
 *
 * Queued jobs still run; the memory they use is freed after them.
 */
void vmgpu_file_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct vmgpu_file *vfile = file->driver_priv;
	struct vmgpu_context *ctx;
	unsigned long id;

	xa_for_each(&vfile->contexts, id, ctx) {
		xa_erase(&vfile->contexts, id);
		vmgpu_context_kill(ctx, file);
	}
	xa_destroy(&vfile->contexts);
	if (vfile->vm)
		vmgpu_vm_close(vfile->vm);
	mutex_destroy(&vfile->lock);
	vmgpu_stats_put(vfile->stats);
	kfree(vfile);
}

/**
 * vmgpu_context_show_fdinfo() - busy time of a file's jobs per engine
 * @p: the fdinfo printer
 * @file: the file
 *
 * drm-engine-<name>, as the DRM usage-stats document defines it: the time
 * the file's jobs kept each user engine busy, from when the engine got to
 * a job to its completion.
 */
void vmgpu_context_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct vmgpu_device *vdev = to_vmgpu_device(file->minor->dev);
	struct vmgpu_file *vfile = file->driver_priv;
	u64 busy[VMGPU_MAX_RINGS];
	struct vmgpu_context *ctx;
	unsigned long id;
	u32 i;

	mutex_lock(&vfile->lock);
	memcpy(busy, vfile->retired_busy_ns, sizeof(busy));
	mutex_unlock(&vfile->lock);
	xa_lock(&vfile->contexts);
	xa_for_each(&vfile->contexts, id, ctx)
		busy[ctx->ring->index] += atomic64_read(&ctx->busy_ns);
	xa_unlock(&vfile->contexts);
	for (i = 0; i < VMGPU_MAX_RINGS; i++) {
		struct vmgpu_ring *ring = &vdev->rings[i];

		if (ring->live && i != VMGPU_RING_PAGING)
			drm_printf(p, "drm-engine-%s:\t%llu ns\n", ring->name, busy[i]);
	}
}
