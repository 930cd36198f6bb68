// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence-unwrap.h>
#include <linux/dma-resv.h>
#include <linux/idr.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_drm.h"
#include "vmgpu_inject.h"
#include "vmgpu_mmap.h"
#include "vmgpu_trace.h"
#include "vmgpu_vm.h"
#include "vmgpu_vm_id.h"
#include "vmgpu_vm_pt.h"

/**
 * DOC: GPU virtual address spaces
 *
 * Seed "GPU virtual addressing": each DRM file has a GPU VA space of its
 * own, a device VM whose 4-level page tables the kernel keeps in system
 * memory. The UMD chooses addresses and binds ranges of its allocations
 * there (VM_BIND); jobs on GPU-VA engines reach memory through it only.
 * drm_gpuvm keeps the mappings; every allocation is an external object
 * with its own reservation, so that each can move, and be destroyed,
 * alone.
 *
 * The page tables follow the allocations. An entry is valid only while it
 * points at backing the device has finished filling (its clear or copy
 * done, or a failed one repaired: vmgpu_bo_prepare_access()), so no job,
 * whenever it was queued and whatever it waits for, reads memory that is
 * not yet, or no longer, the allocation's:
 *
 * - a move by the device starts its paging operation with Fills of zero
 *   into the mapping's entries; the paging ring runs it after every job
 *   that used the allocation (their fences are on its reservation), so the
 *   move never waits for them on the CPU. A move without the device (TT to
 *   system memory, aperture rebinds) waits for them on the CPU and
 *   invalidates there;
 * - either way the mappings are then stale: the next EXEC waits for the
 *   move to be done (repairing a failed one) and rewrites the entries for
 *   the new backing, bringing back what was evicted out of the device's
 *   reach. A job that touches the range meanwhile faults on its own
 *   context;
 * - a map writes valid entries only for settled backing;
 * - a mapping is removed at once, without waiting for the GPU; paging
 *   operations still queued may write its entries (zeros), so the next
 *   map into the VM waits for them, and the tables outlive them.
 *
 * The device caches no translations and a read of its MAGIC register
 * orders the CPU's table writes with the engine, copies in progress
 * included (hardware contract), which is what makes an invalidation take
 * effect before the memory can be handed out again.
 *
 * The tables themselves: DOC: GPU VA page tables.
 */

static struct vmgpu_vm *to_vmgpu_vm(struct drm_gpuvm *gpuvm)
{
	return container_of(gpuvm, struct vmgpu_vm, base);
}

/*
 * After this, no command translates through entries changed before it:
 * the device walks the tables on every access and a read of MAGIC waits
 * for the engine's slice in progress and the copies it began.
 */
static void vmgpu_vm_flush(struct vmgpu_vm *vm)
{
	int idx;

	if (drm_dev_enter(&vm->vdev->drm, &idx)) {
		vmgpu_read32(vm->vdev, VMGPU_REG_MAGIC);
		drm_dev_exit(idx);
	}
}

/**
 * vmgpu_vm_bo_invalidate() - before an allocation's backing changes
 * without the device (the move waited for its users on the CPU)
 * @vbo: the allocation, reserved, whose jobs have finished
 *
 * Invalidates the entries of every mapping of it, in every VM, and makes
 * sure the engine no longer translates through them. A job queued before
 * the allocation was bound, whose fence is not on it, may write it until
 * then: flushes and notifications for its pages come after this. Moves by
 * the device do this on the paging ring (vmgpu_vm_bo_invalidate_cmds()).
 */
void vmgpu_vm_bo_invalidate(struct vmgpu_bo *vbo)
{
	struct drm_gem_object *obj = &vbo->tbo.base;
	struct drm_gpuvm_bo *vm_bo;
	struct drm_gpuva *va;

	dma_resv_assert_held(obj->resv);
	if (list_empty(&obj->gpuva.list))
		return;
	drm_gem_for_each_gpuvm_bo(vm_bo, obj) {
		struct vmgpu_vm *vm = to_vmgpu_vm(vm_bo->vm);

		mutex_lock(&vm->pt_lock);
		drm_gpuvm_bo_for_each_va(va, vm_bo) {
			vmgpu_vm_clear_ptes(vm, va->va.addr, va->va.range);
			trace_vmgpu_vm_ptes(vm->hw_id, va->va.addr, va->va.range, -1);
		}
		mutex_unlock(&vm->pt_lock);
		vmgpu_vm_flush(vm);
	}
	vbo->vm_stale = true;
}

/**
 * vmgpu_vm_bo_invalidate_cmds() - the paging commands that invalidate an
 * allocation's mappings
 * @tbo: the allocation, reserved (a TTM ghost has no mappings)
 * @add: adds one command to the paging operation, or NULL to count only
 * @arg: for @add
 * @count: out, the commands: one Fill of zeros per last-level table run
 *
 * With @add, the mappings count as invalid from now on: the next EXEC
 * rewrites them once the operation is done. A mapping removed before the
 * operation has run leaves its tables allocated until it has
 * (vmgpu_vm_defer_pt_writes(), DOC: GPU VA page tables): the operation's
 * fence is on the allocation's reservation, which the removal holds.
 *
 * Return: 0 or the first error of @add.
 */
int vmgpu_vm_bo_invalidate_cmds(struct ttm_buffer_object *tbo,
				int (*add)(void *arg, const union vmgpu_cmd *cmd),
				void *arg, u32 *count)
{
	struct drm_gem_object *obj = &tbo->base;
	struct drm_gpuvm_bo *vm_bo;
	struct drm_gpuva *va;
	int ret = 0;

	*count = 0;
	if (!vmgpu_bo_is_vmgpu(tbo))
		return 0;
	dma_resv_assert_held(obj->resv);
	drm_gem_for_each_gpuvm_bo(vm_bo, obj) {
		struct vmgpu_vm *vm = to_vmgpu_vm(vm_bo->vm);

		mutex_lock(&vm->pt_lock);
		drm_gpuvm_bo_for_each_va(va, vm_bo) {
			u64 addr = va->va.addr, end = addr + va->va.range;

			while (addr < end && !ret) {
				u64 next = min(end, vmgpu_pt_next_leaf(addr));
				union vmgpu_cmd cmd = {};

				cmd.fill.hdr.opcode = cpu_to_le16(VMGPU_OP_FILL);
				/*
				 * The CPU writes these tables too: never through
				 * the non-coherent cache, whose write back of the
				 * whole page would revert the CPU's entries.
				 */
				cmd.fill.hdr.flags = cpu_to_le16(VMGPU_FILL_FLAG_COHERENT);
				cmd.fill.dst.space = cpu_to_le32(VMGPU_SPACE_SYSTEM);
				cmd.fill.dst.addr = cpu_to_le64(vmgpu_vm_pte_bus(vm, addr));
				cmd.fill.size = cpu_to_le64((next - addr) >> VMGPU_PAGE_SHIFT << 3);
				if (add)
					ret = add(arg, &cmd);
				(*count)++;
				addr = next;
			}
			if (add && !ret)
				trace_vmgpu_vm_ptes(vm->hw_id, va->va.addr, va->va.range, -1);
		}
		mutex_unlock(&vm->pt_lock);
	}
	if (add && *count)
		to_vmgpu_bo(tbo)->vm_stale = true;
	return ret;
}

/*
 * A queued paging operation of the allocation may still write the entries
 * of a mapping being removed (the Fills that invalidate them): rather than
 * wait for it (seed: AssumeNotInUse does not wait), the next mapping into
 * the VM waits, and the tables stay until it has run.
 */
static void vmgpu_vm_defer_pt_writes(struct vmgpu_vm *vm, struct dma_resv *resv)
{
	struct dma_fence *fence, *merged;

	lockdep_assert_held(&vm->lock);
	if (dma_resv_get_singleton(resv, DMA_RESV_USAGE_KERNEL, &fence))
		goto wait;
	if (!fence)
		return;
	merged = fence;
	if (vm->pt_fence) {
		/* A new reference, without what has signalled. */
		merged = dma_fence_unwrap_merge(vm->pt_fence, fence);
		dma_fence_put(fence);
	}
	if (!merged)
		goto wait;
	mutex_lock(&vm->pt_lock);
	dma_fence_put(vm->pt_fence);
	vm->pt_fence = merged;
	mutex_unlock(&vm->pt_lock);
	return;

wait:
	/* Out of memory for the fence: waiting is the safe way. */
	dma_resv_wait_timeout(resv, DMA_RESV_USAGE_KERNEL, false, MAX_SCHEDULE_TIMEOUT);
}

/*
 * Free the tables no mapping needs (DOC: GPU VA page tables) once no paging
 * write can reach them. The read of MAGIC comes first: a failed map took
 * its tables out of the tree without one, and a walk begun before must
 * not read them after.
 */
static void vmgpu_vm_reap_tables(struct vmgpu_vm *vm)
{
	lockdep_assert_held(&vm->lock);
	lockdep_assert_held(&vm->pt_lock);
	if (!vm->num_unused || (vm->pt_fence && !dma_fence_is_signaled(vm->pt_fence)))
		return;
	vmgpu_vm_flush(vm);
	vmgpu_vm_free_unused_tables(vm);
}

/* Before entries are written for a new mapping: see above. */
static int vmgpu_vm_wait_pt_writes(struct vmgpu_vm *vm)
{
	struct dma_fence *fence;
	long ret;

	lockdep_assert_held(&vm->lock);
	mutex_lock(&vm->pt_lock);
	fence = dma_fence_get(vm->pt_fence);
	mutex_unlock(&vm->pt_lock);
	if (!fence)
		return 0;
	ret = dma_fence_wait(fence, true);
	dma_fence_put(fence);
	return ret;
}

/**
 * vmgpu_vm_bo_reachable() - whether entries may point at an allocation's
 * backing
 * @vbo: the allocation, reserved
 *
 * Return: true if it is resident and, if an import, its exporter has not
 * moved it under a failed eviction (the next EXEC evicts it first,
 * vmgpu_prime_settle()): the bus addresses would be the old pages'.
 */
bool vmgpu_vm_bo_reachable(struct vmgpu_bo *vbo)
{
	return vmgpu_bo_is_resident(&vbo->tbo) && !vbo->import_moved;
}

/**
 * vmgpu_vm_bo_revalidate() - point an allocation's mappings at its backing
 * @vbo: the allocation, reserved
 * @intr: wait interruptibly
 *
 * Waits until the device has filled the backing (and repairs a failed
 * fill), then writes the entries of every mapping. Out of the device's
 * reach, the entries stay invalid until EXEC brings it back.
 *
 * Return: 0, or the error of vmgpu_bo_prepare_access(): the entries then
 * stay invalid.
 */
int vmgpu_vm_bo_revalidate(struct vmgpu_bo *vbo, bool intr)
{
	struct drm_gem_object *obj = &vbo->tbo.base;
	struct drm_gpuvm_bo *vm_bo;
	struct drm_gpuva *va;
	int ret;

	dma_resv_assert_held(obj->resv);
	if (!vmgpu_vm_bo_reachable(vbo))
		return 0;
	ret = vmgpu_bo_prepare_access(vbo, intr);
	if (ret)
		return ret;
	drm_gem_for_each_gpuvm_bo(vm_bo, obj) {
		struct vmgpu_vm *vm = to_vmgpu_vm(vm_bo->vm);

		mutex_lock(&vm->pt_lock);
		drm_gpuvm_bo_for_each_va(va, vm_bo)
			vmgpu_vm_write_ptes(vm, va);
		mutex_unlock(&vm->pt_lock);
	}
	vbo->vm_stale = false;
	return 0;
}

static int vmgpu_vm_map(struct vmgpu_vm *vm, struct drm_file *file,
			const struct drm_vmgpu_vm_bind *args)
{
	struct drm_gpuvm_bo *vm_bo;
	struct drm_gem_object *obj;
	struct drm_gpuva *va;
	struct vmgpu_bo *vbo;
	int ret;

	if (args->flags & ~DRM_VMGPU_VM_BIND_READ_ONLY)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	vbo = gem_to_vmgpu_bo(obj);
	ret = -EINVAL;
	if (args->offset > obj->size || args->range > obj->size - args->offset)
		goto out_put;
	ret = -ENOMEM;
	va = kzalloc(sizeof(*va), GFP_KERNEL);
	if (!va)
		goto out_put;
	va->va.addr = args->addr;
	va->va.range = args->range;
	va->gem.obj = obj;
	va->gem.offset = args->offset;
	if (args->flags & DRM_VMGPU_VM_BIND_READ_ONLY)
		va->flags |= VMGPU_VA_READ_ONLY;

	mutex_lock(&vm->lock);
	ret = -EEXIST;
	if (!drm_gpuvm_interval_empty(&vm->base, args->addr, args->range))
		goto out_unlock_vm;
	ret = vmgpu_vm_wait_pt_writes(vm);
	if (ret)
		goto out_unlock_vm;
	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret)
		goto out_unlock_vm;
	/* Valid entries only for backing the device has filled. */
	if (vmgpu_vm_bo_reachable(vbo)) {
		ret = vmgpu_bo_prepare_access(vbo, true);
		if (ret)
			goto out_unlock_resv;
	}
	mutex_lock(&vm->pt_lock);
	vmgpu_vm_reap_tables(vm);
	ret = vmgpu_vm_populate(vm, args->addr, args->range);
	if (ret)
		goto out_unlock;
	vm_bo = drm_gpuvm_bo_obtain(&vm->base, obj);
	if (IS_ERR(vm_bo)) {
		ret = PTR_ERR(vm_bo);
		goto out_depopulate;
	}
	ret = drm_gpuva_insert(&vm->base, va);
	if (ret) {
		drm_gpuvm_bo_put(vm_bo);
		goto out_depopulate;
	}
	drm_gpuva_link(va, vm_bo);
	drm_gpuvm_bo_extobj_add(vm_bo);
	/* The mapping holds its own reference now. */
	drm_gpuvm_bo_put(vm_bo);
	vmgpu_vm_write_ptes(vm, va);
	if (!vmgpu_vm_bo_reachable(vbo))
		vbo->vm_stale = true;
	va = NULL;
	goto out_unlock;
out_depopulate:
	vmgpu_vm_depopulate(vm, args->addr, args->range);
out_unlock:
	mutex_unlock(&vm->pt_lock);
out_unlock_resv:
	dma_resv_unlock(obj->resv);
out_unlock_vm:
	mutex_unlock(&vm->lock);
	kfree(va);
out_put:
	drm_gem_object_put(obj);
	return ret;
}

/*
 * Tear down one mapping; the VM lock and the allocation's reservation are
 * held, and the caller holds a reference to the allocation. Never waits
 * for the GPU.
 */
static void vmgpu_vm_remove_locked(struct vmgpu_vm *vm, struct drm_gpuva *va)
{
	lockdep_assert_held(&vm->lock);
	dma_resv_assert_held(va->gem.obj->resv);
	vmgpu_vm_defer_pt_writes(vm, va->gem.obj->resv);
	mutex_lock(&vm->pt_lock);
	vmgpu_vm_clear_ptes(vm, va->va.addr, va->va.range);
	vmgpu_vm_depopulate(vm, va->va.addr, va->va.range);
	mutex_unlock(&vm->pt_lock);
	vmgpu_vm_flush(vm);
	/*
	 * Under vm->lock, every table on the list left the tree before that
	 * read of MAGIC.
	 */
	mutex_lock(&vm->pt_lock);
	vmgpu_vm_free_unused_tables(vm);
	mutex_unlock(&vm->pt_lock);
	trace_vmgpu_vm_ptes(vm->hw_id, va->va.addr, va->va.range, -1);
	drm_gpuva_remove(va);
	drm_gpuva_unlink(va);
	kfree(va);
}

/* Tear down one mapping; the VM lock is held. */
static void vmgpu_vm_remove(struct vmgpu_vm *vm, struct drm_gpuva *va)
{
	struct drm_gem_object *obj = va->gem.obj;

	/* The mapping's reference, until it is unlinked below. */
	drm_gem_object_get(obj);
	dma_resv_lock(obj->resv, NULL);
	vmgpu_vm_remove_locked(vm, va);
	dma_resv_unlock(obj->resv);
	drm_gem_object_put(obj);
}

/**
 * vmgpu_vm_remove_bo_locked() - remove every mapping of an allocation
 * @vm: the VM, its lock held
 * @obj: the allocation, reserved
 */
void vmgpu_vm_remove_bo_locked(struct vmgpu_vm *vm, struct drm_gem_object *obj)
{
	struct drm_gpuvm_bo *vm_bo;
	struct drm_gpuva *va, *next;

	vm_bo = drm_gpuvm_bo_find(&vm->base, obj);
	if (!vm_bo)
		return;
	drm_gpuvm_bo_for_each_va_safe(va, next, vm_bo)
		vmgpu_vm_remove_locked(vm, va);
	drm_gpuvm_bo_put(vm_bo);
}

static int vmgpu_vm_unmap(struct vmgpu_vm *vm, const struct drm_vmgpu_vm_bind *args)
{
	struct drm_gpuva *va;
	int ret = -ENOENT;

	if (args->flags || args->handle || args->offset)
		return -EINVAL;
	mutex_lock(&vm->lock);
	va = drm_gpuva_find(&vm->base, args->addr, args->range);
	if (va) {
		vmgpu_vm_remove(vm, va);
		ret = 0;
	}
	mutex_unlock(&vm->lock);
	return ret;
}

/**
 * vmgpu_vm_bind() - carry out a VM_BIND request
 * @vm: the file's VM
 * @file: the file, whose handles name allocations
 * @args: the request
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_vm_bind(struct vmgpu_vm *vm, struct drm_file *file,
		  const struct drm_vmgpu_vm_bind *args)
{
	if (args->pad || args->reserved[0] || args->reserved[1] ||
	    !args->range || !IS_ALIGNED(args->addr | args->range | args->offset,
					VMGPU_PAGE_SIZE) ||
	    !drm_gpuvm_range_valid(&vm->base, args->addr, args->range))
		return -EINVAL;
	trace_vmgpu_vm_bind(vm->hw_id, args->op, args->addr, args->range);
	switch (args->op) {
	case DRM_VMGPU_VM_BIND_OP_MAP:
		return vmgpu_vm_map(vm, file, args);
	case DRM_VMGPU_VM_BIND_OP_UNMAP:
		return vmgpu_vm_unmap(vm, args);
	}
	return -EINVAL;
}

/**
 * DOC: compression owners
 *
 * User jobs may COMPRESS their pages (device state the seed's allocation
 * notifications exist for). The device keeps that state per page, for an
 * owner: the ASID of the device VM the command went through, which the
 * driver writes when it lends a slot to a space. Each space has its own
 * ASID, so a slot lent on keeps no state for the next owner, and one
 * space's pages are raw to every other: state a page keeps after leaving
 * the device without a notification (freed, swapped out and in) is never
 * seen by the next owner of the page. Each ASID owns at most half of the
 * device's set (COMPRESS_QUOTA, written at probe), so one process cannot
 * take it all. Past its quota, or with the set full, a COMPRESS leaves the
 * pages raw instead of failing (contract 1.9): the owner's view of them is
 * the same, so what other processes hold never fails a job or marks a
 * context guilty; they can only deny it compression. When the space
 * goes, its jobs done, the device forgets all its pages (COMPRESS_FORGET)
 * and the ASID is free.
 * Forgotten pages stay encoded: an allocation compressed by a space and
 * shared with another (PRIME, flink) shows the other space the encoding.
 */
#define VMGPU_COMPRESS_SHARES	2

static void vmgpu_vm_forget_compression(struct vmgpu_vm *vm)
{
	struct vmgpu_device *vdev = vm->vdev;
	int idx;

	/* Never lent a device VM, it compressed nothing: spare the walk. */
	if (vm->had_slot && drm_dev_enter(&vdev->drm, &idx)) {
		vmgpu_write32(vdev, VMGPU_REG_COMPRESS_FORGET, vm->asid);
		drm_dev_exit(idx);
	}
	if (atomic_read(&vm->compressed))
		atomic_dec(&vdev->compressing_spaces);
	ida_free(&vdev->asids, vm->asid);
}

/**
 * vmgpu_vm_compresses() - a job of the space COMPRESSes or DECOMPRESSes
 * @vm: the space, before the job is pushed
 *
 * From then on until the space is freed and the device forgot its pages,
 * pages the space frees may keep compression state that only a physical
 * write drops (vmgpu_vm_compression_state()).
 */
void vmgpu_vm_compresses(struct vmgpu_vm *vm)
{
	if (!atomic_read(&vm->compressed) && !atomic_cmpxchg(&vm->compressed, 0, 1))
		atomic_inc(&vm->vdev->compressing_spaces);
}

/**
 * vmgpu_vm_compression_state() - whether any page may have compression
 * state in the device
 * @vdev: the device
 *
 * Return: false only while no live space has compressed: then no page has
 * any, and new pages zeroed by the CPU need no device write (the first
 * backing of an allocation in system memory, vmgpu_ttm.c).
 */
bool vmgpu_vm_compression_state(struct vmgpu_device *vdev)
{
	return atomic_read(&vdev->compressing_spaces);
}

static void vmgpu_vm_free_work(struct work_struct *work)
{
	struct vmgpu_vm *vm = container_of(work, struct vmgpu_vm, free_work);
	struct vmgpu_device *vdev = vm->vdev;

	vmgpu_inject_vm_free_delay(vdev);
	vmgpu_vm_id_release(vm);
	/* Off the slot LRU now: nothing looks at the reservation any more. */
	drm_gem_object_put(vm->base.r_obj);
	/* The paging ring may still write the tables: a fence that signals. */
	if (vm->pt_fence) {
		dma_fence_wait(vm->pt_fence, false);
		dma_fence_put(vm->pt_fence);
	}
	vmgpu_vm_forget_compression(vm);
	/*
	 * Under the list lock: either unplug unmapped the tables already, or
	 * it waits for this, while the device is still bound.
	 */
	mutex_lock(&vdev->vms_lock);
	list_del(&vm->link);
	if (!vm->dma_unmapped)
		vmgpu_vm_unmap_tables(vm);
	mutex_unlock(&vdev->vms_lock);
	vmgpu_vm_free_tables(vm);
	mutex_destroy(&vm->pt_lock);
	mutex_destroy(&vm->lock);
	kfree(vm->fence_contexts);
	kfree(vm);
	drm_dev_put(&vdev->drm);
}

/*
 * The release sleeps (slot lock, page-table fence): it runs on the
 * module's queue, unless inject_vm_free_sync asks for it here, where the
 * last put runs in process context (see vmgpu_vm_put()).
 */
static void vmgpu_vm_free(struct drm_gpuvm *gpuvm)
{
	struct vmgpu_vm *vm = to_vmgpu_vm(gpuvm);

	if (READ_ONCE(vm->vdev->inject.vm_free_sync)) {
		lockdep_assert_not_held(&vm->lock);
		vmgpu_vm_free_work(&vm->free_work);
	} else {
		vmgpu_queue_release(&vm->free_work);
	}
}

static const struct drm_gpuvm_ops vmgpu_gpuvm_ops = {
	.vm_free = vmgpu_vm_free,
};

/**
 * vmgpu_vm_create() - a new GPU VA space; it gets a device VM when it
 * submits (DOC: device VM slots)
 * @vdev: the device
 *
 * Return: the VM, one reference for the caller, or an ERR_PTR: -ENODEV
 * once the device is gone, -ENOMEM.
 */
struct vmgpu_vm *vmgpu_vm_create(struct vmgpu_device *vdev)
{
	struct drm_gem_object *r_obj;
	struct vmgpu_vm *vm;
	int asid, ret = -ENOMEM;

	vm = kzalloc(sizeof(*vm), GFP_KERNEL);
	if (!vm)
		return ERR_PTR(-ENOMEM);
	asid = ida_alloc_min(&vdev->asids, 1, GFP_KERNEL);
	if (asid < 0) {
		kfree(vm);
		return ERR_PTR(asid);
	}
	vm->asid = asid;
	vm->vdev = vdev;
	vm->hw_id = -1;
	INIT_LIST_HEAD(&vm->slot_link);
	INIT_WORK(&vm->free_work, vmgpu_vm_free_work);
	/* Contexts and deferred destructions may keep it past the removal. */
	drm_dev_get(&vdev->drm);
	mutex_init(&vm->lock);
	mutex_init(&vm->pt_lock);
	INIT_LIST_HEAD(&vm->pt_unused);
	r_obj = drm_gpuvm_resv_object_alloc(&vdev->drm);
	if (!r_obj)
		goto err_vm;
	mutex_lock(&vdev->vms_lock);
	vm->root = vdev->vms_unplugged ? ERR_PTR(-ENODEV) :
		   vmgpu_pt_alloc(vm, VMGPU_PT_LEVELS - 1);
	if (IS_ERR(vm->root)) {
		mutex_unlock(&vdev->vms_lock);
		ret = PTR_ERR(vm->root);
		drm_gem_object_put(r_obj);
		goto err_vm;
	}
	list_add(&vm->link, &vdev->vms);
	mutex_unlock(&vdev->vms_lock);
	/*
	 * The space keeps its reference to r_obj past the last drm_gpuvm_put()
	 * until free_work: it stays on the slot LRU until then, where a slot
	 * search reads its reservation (vmgpu_vm_id_busy()).
	 */
	drm_gpuvm_init(&vm->base, "vmgpu", 0, &vdev->drm, r_obj, 0,
		       1ull << VMGPU_VA_BITS, 0, 0, &vmgpu_gpuvm_ops);
	return vm;

err_vm:
	ida_free(&vdev->asids, vm->asid);
	mutex_destroy(&vm->pt_lock);
	mutex_destroy(&vm->lock);
	kfree(vm);
	drm_dev_put(&vdev->drm);
	return ERR_PTR(ret);
}

/**
 * vmgpu_vm_unplug() - the device is going: unmap every VM's page tables
 * @vdev: the device, unplugged, its rings dead
 *
 * No DMA mapping may outlive the driver's binding. The tables themselves
 * stay, CPU memory only, until their VM goes; none is mapped any more.
 */
void vmgpu_vm_unplug(struct vmgpu_device *vdev)
{
	struct vmgpu_vm *vm;

	mutex_lock(&vdev->vms_lock);
	vdev->vms_unplugged = true;
	list_for_each_entry(vm, &vdev->vms, link) {
		mutex_lock(&vm->pt_lock);
		vmgpu_vm_unmap_tables(vm);
		mutex_unlock(&vm->pt_lock);
	}
	mutex_unlock(&vdev->vms_lock);
}

/**
 * vmgpu_vm_close() - the file is gone: remove every mapping, drop the VM
 * @vm: the file's VM; the reference is consumed
 *
 * Jobs still running fault on what they had mapped; their references keep
 * the device VM and its tables until they are freed.
 */
void vmgpu_vm_close(struct vmgpu_vm *vm)
{
	struct drm_gpuva *va, *next;

	mutex_lock(&vm->lock);
	drm_gpuvm_for_each_va_safe(va, next, &vm->base)
		vmgpu_vm_remove(vm, va);
	mutex_unlock(&vm->lock);
	vmgpu_vm_put(vm);
}

/**
 * vmgpu_vm_debugfs_show() - print a VM's mappings
 * @vm: the VM
 * @m: the debugfs file
 *
 * A line for the VM: its device VM, its page tables (those no mapping
 * needs any more, still held for queued paging writes, as unused; the most
 * it may have, vmgpu_vm_max_tables()) and whether a job of it has changed
 * compression state (vmgpu_vm_compresses()); then one line per mapping:
 * range, allocation, offset, access.
 */
void vmgpu_vm_debugfs_show(struct vmgpu_vm *vm, struct seq_file *m)
{
	struct drm_gpuva *va;

	mutex_lock(&vm->lock);
	mutex_lock(&vm->pt_lock);
	seq_printf(m, "vm %d: %u page tables, %u unused, at most %u%s\n", vm->hw_id,
		   vm->num_tables, vm->num_unused, vmgpu_vm_max_tables(vm->vdev),
		   atomic_read(&vm->compressed) ? ", compresses" : "");
	mutex_unlock(&vm->pt_lock);
	drm_gpuvm_for_each_va(va, &vm->base)
		seq_printf(m, "  0x%llx-0x%llx bo %p offset 0x%llx %s\n", va->va.addr,
			   va->va.addr + va->va.range, va->gem.obj, va->gem.offset,
			   va->flags & VMGPU_VA_READ_ONLY ? "ro" : "rw");
	mutex_unlock(&vm->lock);
}

/**
 * vmgpu_vm_get() - another reference to a VM
 * @vm: the VM
 *
 * Return: @vm.
 */
struct vmgpu_vm *vmgpu_vm_get(struct vmgpu_vm *vm)
{
	drm_gpuvm_get(&vm->base);
	return vm;
}

/**
 * vmgpu_vm_put() - drop a reference to a VM
 * @vm: the VM
 *
 * Context: process context. The last reference goes when the file closes,
 * which holds the DRM device, or on the module's queue, in the release of
 * a context or of a deferred destruction: with it drm_gpuvm drops its own
 * reference to the DRM device, which may be the device's last, and the
 * device's release must never run in scheduler work, whose scheduler it
 * stops (vmgpu_queue_release()).
 */
void vmgpu_vm_put(struct vmgpu_vm *vm)
{
	might_sleep();
	drm_gpuvm_put(&vm->base);
}

/* With the last DRM reference, which every space holds. */
static void vmgpu_vm_asids_destroy(struct drm_device *drm, void *asids)
{
	ida_destroy(asids);
}

/**
 * vmgpu_vm_init() - find out how many device VMs there are, set up the
 * list of VMs
 * @vdev: the device
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_vm_init(struct vmgpu_device *vdev)
{
	int ret;

	vdev->num_vms = min_t(u32, vmgpu_read32(vdev, VMGPU_REG_NUM_VMS),
			      VMGPU_MAX_VMS);
	if (!(vdev->caps & VMGPU_CAP_GPU_MMU) || vdev->num_vms < 2) {
		drm_err(&vdev->drm, "device has no GPU MMU or no VM for users (%u VMs)\n",
			vdev->num_vms);
		return -ENODEV;
	}
	ret = vmgpu_vm_id_init(vdev);
	if (ret)
		return ret;
	/* A share of the compressed-page set for each space (DOC above). */
	vmgpu_write32(vdev, VMGPU_REG_COMPRESS_QUOTA,
		      DIV_ROUND_UP(vmgpu_read32(vdev, VMGPU_REG_COMPRESS_PAGES),
				   VMGPU_COMPRESS_SHARES));
	ida_init(&vdev->asids);
	ret = drmm_add_action_or_reset(&vdev->drm, vmgpu_vm_asids_destroy, &vdev->asids);
	if (ret)
		return ret;
	INIT_LIST_HEAD(&vdev->vms);
	init_rwsem(&vdev->unplug_sem);
	return drmm_mutex_init(&vdev->drm, &vdev->vms_lock);
}
