// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/sched/signal.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "vmgpu_device.h"
#include "vmgpu_vm.h"
#include "vmgpu_vm_id.h"

/**
 * DOC: device VM slots
 *
 * The device has a handful of VMs (VMGPU_REG_NUM_VMS, 16 here, VM 0 being
 * the paging process's); there may be any number of GPU VA spaces. A
 * space holds a device VM only while it has jobs in flight: EXEC takes
 * one for it (pinned until the job is pushed), and its jobs' fences keep
 * it: every job's fence is on the space's own reservation, so the slot is
 * free to lend only once every job of the space has finished, whatever
 * the order in which its contexts' jobs complete. A space without one
 * takes a free slot, else the least recently used slot of a space whose
 * jobs have all completed, else it waits until any space holding a slot
 * has completed its jobs. Taking a slot points the device VM at the space's root table; the
 * tables themselves live with the space, so nothing else changes. Jobs
 * carry the slot in their commands, which is why a slot never changes
 * hands while its jobs are in flight, resets included (their fences have
 * not signalled). The device holds the
 * kernel to it: each job starts with SET_VM naming the slot and its
 * generation at submission, and every write of the slot's control
 * register (lending it) bumps the generation, so that a job that
 * outlived its slot faults instead of walking the next owner's tables.
 */

/**
 * vmgpu_vm_id_program() - point a device VM at a root table and enable it
 * @vdev: the device
 * @id: the device VM
 * @root: bus address of its level-3 table, in system memory
 * @asid: the space's ASID, whose compressed pages the device VM decodes
 *	  (DOC: compression owners); ignored for the paging VM, whose is 0
 */
void vmgpu_vm_id_program(struct vmgpu_device *vdev, u32 id, dma_addr_t root, u32 asid)
{
	vmgpu_write32(vdev, VMGPU_REG_VM(id) + VMGPU_VM_CTRL, 0);
	if (id != VMGPU_VM_PAGING)
		vmgpu_write32(vdev, VMGPU_REG_VM_ASID(id), asid);
	vmgpu_write32(vdev, VMGPU_REG_VM(id) + VMGPU_VM_ROOT_LO, lower_32_bits(root));
	vmgpu_write32(vdev, VMGPU_REG_VM(id) + VMGPU_VM_ROOT_HI, upper_32_bits(root));
	vmgpu_write32(vdev, VMGPU_REG_VM(id) + VMGPU_VM_CTRL, VMGPU_VM_CTRL_ENABLE |
		      VMGPU_SPACE_SYSTEM << VMGPU_VM_CTRL_SPACE_SHIFT);
	vdev->vm_slots.generation[id] = vmgpu_read32(vdev, VMGPU_REG_VM(id) +
							 VMGPU_VM_GENERATION);
}

/*
 * A fence of the space's jobs still to signal, or NULL; a reference. Every
 * job of the space has its fence on the space's reservation (added under
 * the pin, see vmgpu_exec.c), and a reservation keeps, per fence context,
 * the latest: fences of one context signal in order, so none is lost.
 */
static struct dma_fence *vmgpu_vm_id_busy(struct vmgpu_vm *vm)
{
	struct dma_resv_iter cursor;
	struct dma_fence *fence, *busy = NULL;

	dma_resv_iter_begin(&cursor, drm_gpuvm_resv(&vm->base), DMA_RESV_USAGE_BOOKKEEP);
	dma_resv_for_each_fence_unlocked(&cursor, fence) {
		if (!dma_fence_is_signaled(fence)) {
			busy = dma_fence_get(fence);
			break;
		}
	}
	dma_resv_iter_end(&cursor);
	return busy;
}

static void vmgpu_vm_id_drop(struct vmgpu_vm *vm)
{
	struct vmgpu_vm_slots *slots = &vm->vdev->vm_slots;
	int idx;

	lockdep_assert_held(&slots->lock);
	if (drm_dev_enter(&vm->vdev->drm, &idx)) {
		vmgpu_write32(vm->vdev, VMGPU_REG_VM(vm->hw_id) + VMGPU_VM_CTRL, 0);
		drm_dev_exit(idx);
	}
	slots->owner[vm->hw_id] = NULL;
	list_del_init(&vm->slot_link);
	vm->hw_id = -1;
}

/*
 * One step towards a slot for vm, under the lock: 0 when it has one,
 * -EAGAIN after a change worth looking again, or -EBUSY with wait[] set
 * to a fence of each space holding a slot (*count of them; none: every
 * slot is pinned for a moment). References for the caller.
 */
static int vmgpu_vm_id_try(struct vmgpu_vm *vm, struct dma_fence **wait, u32 *count)
{
	struct vmgpu_device *vdev = vm->vdev;
	struct vmgpu_vm_slots *slots = &vdev->vm_slots;
	struct vmgpu_vm *other;
	u32 id;

	*count = 0;
	if (vm->hw_id >= 0)
		return 0;
	for (id = VMGPU_VM_PAGING + 1; id < vdev->num_vms; id++) {
		if (!slots->owner[id]) {
			slots->owner[id] = vm;
			vm->hw_id = id;
			list_add_tail(&vm->slot_link, &slots->lru);
			vmgpu_vm_id_program(vdev, id, vm->root->bus, vm->asid);
			vm->had_slot = true;
			return 0;
		}
	}
	list_for_each_entry(other, &slots->lru, slot_link) {
		struct dma_fence *busy;

		if (other->pins)
			continue;
		busy = vmgpu_vm_id_busy(other);
		if (!busy) {
			while (*count)
				dma_fence_put(wait[--*count]);
			vmgpu_vm_id_drop(other);
			return -EAGAIN;
		}
		wait[(*count)++] = busy;
	}
	return -EBUSY;
}

/**
 * vmgpu_vm_id_get() - give a GPU VA space a device VM for a submission
 * @vm: the space
 * @generation: out, the device VM's generation, for the job's SET_VM
 *
 * Pins the slot until vmgpu_vm_id_put(). May wait, interruptibly, for
 * another space's jobs to complete.
 *
 * Return: the device VM, or -ERESTARTSYS / -EINTR.
 */
int vmgpu_vm_id_get(struct vmgpu_vm *vm, u32 *generation)
{
	struct vmgpu_vm_slots *slots = &vm->vdev->vm_slots;
	struct dma_fence *wait[VMGPU_MAX_VMS];
	long timeout;
	u32 count;
	int ret;

	for (;;) {
		mutex_lock(&slots->lock);
		ret = vmgpu_vm_id_try(vm, wait, &count);
		if (!ret) {
			list_move_tail(&vm->slot_link, &slots->lru);
			vm->pins++;
			ret = vm->hw_id;
			*generation = slots->generation[ret];
		}
		mutex_unlock(&slots->lock);
		if (ret != -EAGAIN && ret != -EBUSY)
			return ret;
		if (count) {
			/*
			 * Whichever space finishes first: one whose jobs wait
			 * for something that is long to come (another file's
			 * fence) must not hold up the others.
			 */
			timeout = dma_fence_wait_any_timeout(wait, count, true,
							     MAX_SCHEDULE_TIMEOUT, NULL);
			while (count)
				dma_fence_put(wait[--count]);
			if (timeout < 0)
				return timeout;
		} else if (ret == -EBUSY) {
			/* Every slot is pinned by an EXEC in flight: brief. */
			if (signal_pending(current))
				return -ERESTARTSYS;
			usleep_range(100, 200);
		}
	}
}

/**
 * vmgpu_vm_id_put() - the submission is pushed, its fence on the space's
 * reservation, or given up
 * @vm: the space
 */
void vmgpu_vm_id_put(struct vmgpu_vm *vm)
{
	struct vmgpu_vm_slots *slots = &vm->vdev->vm_slots;

	mutex_lock(&slots->lock);
	vm->pins--;
	mutex_unlock(&slots->lock);
}

/**
 * vmgpu_vm_id_release() - the space is going: free its slot
 * @vm: the space; no job of it is in flight any more
 */
void vmgpu_vm_id_release(struct vmgpu_vm *vm)
{
	struct vmgpu_vm_slots *slots = &vm->vdev->vm_slots;

	mutex_lock(&slots->lock);
	if (vm->hw_id >= 0)
		vmgpu_vm_id_drop(vm);
	mutex_unlock(&slots->lock);
}

/**
 * vmgpu_vm_id_init() - the device VM slots
 * @vdev: the device, @num_vms known
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_vm_id_init(struct vmgpu_device *vdev)
{
	INIT_LIST_HEAD(&vdev->vm_slots.lru);
	return drmm_mutex_init(&vdev->drm, &vdev->vm_slots.lock);
}
