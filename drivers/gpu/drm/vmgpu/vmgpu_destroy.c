// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>
#include <linux/dma-fence-array.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include <drm/drm_gem.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_vm.h"

/**
 * DOC: deferred destruction
 *
 * Seed "destruction is asynchronous": by default VidMm assumes queued work
 * may still use an allocation being destroyed and defers the destruction
 * until that work is done, without blocking the caller; with
 * AssumeNotInUse it goes at once. With GPU-VA engines the kernel cannot
 * tell which jobs use an allocation, so "queued work" is every job queued
 * on the file's VM before the request, mapped or not when it was queued:
 * one may use an address that was bound after it was submitted. Their
 * fences are on the VM's own reservation, added under &vmgpu_vm.lock.
 *
 * Default: the mappings are removed by a work item once those fences have
 * signalled (a fence callback queues it); then the last reference goes
 * and TTM frees the memory once its own reservation is idle.
 * AssumeNotInUse: the mappings go at once, and the file's job fences on
 * the allocation's reservation are replaced by a signalled stub, so that
 * TTM frees the memory at once. A job that did use it
 * faults on the invalid entries; it never reaches the memory's next owner.
 */

/**
 * struct vmgpu_vm_deferred - mappings to remove once queued jobs are done
 */
struct vmgpu_vm_deferred {
	/** @cb: on @fence. */
	struct dma_fence_cb cb;
	/**
	 * @work: removes the mappings, outside the signalling path, on the
	 * module's queue: the VM's last reference may go with it.
	 */
	struct work_struct work;
	/** @vm: a reference. */
	struct vmgpu_vm *vm;
	/** @obj: a reference. */
	struct drm_gem_object *obj;
	/** @fence: every job that may use the mappings. */
	struct dma_fence *fence;
};

static void vmgpu_vm_deferred_work(struct work_struct *work)
{
	struct vmgpu_vm_deferred *d = container_of(work, struct vmgpu_vm_deferred, work);
	struct vmgpu_device *vdev = d->vm->vdev;

	mutex_lock(&d->vm->lock);
	dma_resv_lock(d->obj->resv, NULL);
	vmgpu_vm_remove_bo_locked(d->vm, d->obj);
	dma_resv_unlock(d->obj->resv);
	mutex_unlock(&d->vm->lock);
	dma_fence_put(d->fence);
	drm_gem_object_put(d->obj);
	/* The VM still holds the device. */
	if (atomic_dec_and_test(&vdev->deferred_queued))
		wake_up_var(&vdev->deferred_queued);
	vmgpu_vm_put(d->vm);
	kfree(d);
}

static void vmgpu_vm_deferred_queue(struct vmgpu_vm_deferred *d)
{
	atomic_inc(&d->vm->vdev->deferred_queued);
	vmgpu_queue_release(&d->work);
}

static void vmgpu_vm_deferred_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	vmgpu_vm_deferred_queue(container_of(cb, struct vmgpu_vm_deferred, cb));
}

/**
 * vmgpu_vm_wait_deferred() - wait for the deferred destructions queued so far
 * @vdev: the device
 *
 * Only this device's: the module's queue also holds other devices'
 * releases, which may wait for fences outside vmgpu.
 */
void vmgpu_vm_wait_deferred(struct vmgpu_device *vdev)
{
	wait_var_event(&vdev->deferred_queued, !atomic_read(&vdev->deferred_queued));
}

/*
 * AssumeNotInUse: the file's jobs do not count as users of obj any more;
 * if they do use it, they fault (its mappings are gone first). Not for an
 * import: its exporter and other importers still wait for them (DOC: PRIME
 * import).
 */
static void vmgpu_vm_forget_jobs(struct vmgpu_vm *vm, struct drm_gem_object *obj)
{
	struct dma_fence *stub;
	u32 i;

	if (vmgpu_bo_is_import(gem_to_vmgpu_bo(obj)))
		return;
	stub = dma_fence_get_stub();
	for (i = 0; i < vm->num_fence_contexts; i++)
		dma_resv_replace_fences(obj->resv, vm->fence_contexts[i], stub,
					DMA_RESV_USAGE_BOOKKEEP);
	dma_fence_put(stub);
}

/*
 * Every job queued on @vm so far, as one fence, or NULL when all are done.
 * Under @vm->lock no job can be added; the reservation need not be locked.
 */
static int vmgpu_vm_jobs_fence(struct vmgpu_vm *vm, struct dma_fence **fence)
{
	struct dma_fence **fences;
	struct dma_fence_array *array;
	unsigned int count;
	int ret;

	lockdep_assert_held(&vm->lock);
	*fence = NULL;
	ret = dma_resv_get_fences(drm_gpuvm_resv(&vm->base), DMA_RESV_USAGE_BOOKKEEP,
				  &count, &fences);
	if (ret || !count)
		return ret;
	if (count == 1) {
		*fence = fences[0];
		kfree(fences);
		return 0;
	}
	/* The array takes the fences and the table. */
	array = dma_fence_array_create(count, fences, dma_fence_context_alloc(1), 1,
				       false);
	if (!array) {
		while (count--)
			dma_fence_put(fences[count]);
		kfree(fences);
		return -ENOMEM;
	}
	*fence = &array->base;
	return 0;
}

/**
 * vmgpu_vm_destroy_bo() - the file destroys an allocation: remove its
 * mappings now or once the file's queued jobs are done
 * @vm: the file's VM
 * @obj: the allocation
 * @assume_not_in_use: AssumeNotInUse: now, and the file's jobs no longer
 *	keep the memory
 *
 * Never waits for the GPU.
 *
 * Return: 0 or a negative errno (-EINTR, -ENOMEM), before any change.
 */
int vmgpu_vm_destroy_bo(struct vmgpu_vm *vm, struct drm_gem_object *obj,
			bool assume_not_in_use)
{
	struct vmgpu_vm_deferred *d = NULL;
	struct dma_fence *fence = NULL;
	int ret;

	if (!assume_not_in_use) {
		d = kzalloc(sizeof(*d), GFP_KERNEL);
		if (!d)
			return -ENOMEM;
	}
	mutex_lock(&vm->lock);
	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret)
		goto out_unlock_vm;
	if (!assume_not_in_use) {
		ret = vmgpu_vm_jobs_fence(vm, &fence);
		if (ret)
			goto out_unlock;
	}
	if (!fence) {
		vmgpu_vm_remove_bo_locked(vm, obj);
		if (assume_not_in_use)
			vmgpu_vm_forget_jobs(vm, obj);
		goto out_unlock;
	}
	INIT_WORK(&d->work, vmgpu_vm_deferred_work);
	d->vm = vmgpu_vm_get(vm);
	drm_gem_object_get(obj);
	d->obj = obj;
	d->fence = fence;
	if (dma_fence_add_callback(fence, &d->cb, vmgpu_vm_deferred_cb))
		vmgpu_vm_deferred_queue(d);
	d = NULL;
out_unlock:
	dma_resv_unlock(obj->resv);
out_unlock_vm:
	mutex_unlock(&vm->lock);
	kfree(d);
	return ret;
}

/**
 * vmgpu_vm_add_fence_context() - remember whose jobs run on the VM
 * @vm: the VM
 * @context: the dma-fence context of a new context's jobs
 *
 * Return: 0 or -ENOMEM.
 */
int vmgpu_vm_add_fence_context(struct vmgpu_vm *vm, u64 context)
{
	u64 *contexts;

	mutex_lock(&vm->lock);
	contexts = krealloc_array(vm->fence_contexts, vm->num_fence_contexts + 1,
				  sizeof(*contexts), GFP_KERNEL);
	if (contexts) {
		contexts[vm->num_fence_contexts++] = context;
		vm->fence_contexts = contexts;
	}
	mutex_unlock(&vm->lock);
	return contexts ? 0 : -ENOMEM;
}
