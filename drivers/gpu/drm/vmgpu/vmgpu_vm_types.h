/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_VM_TYPES_H_
#define _VMGPU_VM_TYPES_H_

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include <drm/drm_gpuvm.h>

#include "hw/vmgpu_hw.h"

struct dma_fence;
struct vmgpu_device;

/**
 * struct vmgpu_pt - one page table of a VM: 512 entries the device reads
 * by DMA, and for the upper levels the tables they point at
 */
struct vmgpu_pt {
	/** @entries: the table, a page the VM owns. */
	__le64 *entries;
	/**
	 * @bus: bus address of @entries, what the entry above holds; its
	 * DMA mapping goes at unplug (&vmgpu_vm.dma_unmapped).
	 */
	dma_addr_t bus;
	/**
	 * @used: a last-level table, the entries that mappings cover; above,
	 * the tables below it. At 0 it goes (vmgpu_vm_depopulate()).
	 */
	u32 used;
	/** @link: in &vmgpu_vm.pt_unused once no mapping needs it. */
	struct list_head link;
	/** @children: upper levels only, the next tables by index. */
	struct vmgpu_pt *children[];
};

/**
 * struct vmgpu_vm - a GPU virtual address space: one device VM, the
 * mappings of one DRM file and the page tables that implement them
 */
struct vmgpu_vm {
	/** @base: the mappings, and the allocations mapped (external objects). */
	struct drm_gpuvm base;
	/** @vdev: the device. */
	struct vmgpu_device *vdev;
	/**
	 * @hw_id: the device VM (VMGPU_REG_VM()) it holds, never the paging
	 * VM 0, or -1 (DOC: device VM slots). Under &vmgpu_vm_slots.lock.
	 */
	int hw_id;
	/**
	 * @asid: the space's own name for the device's compression owners,
	 * never 0 and unique while it lives (DOC: compression owners).
	 */
	u32 asid;
	/** @had_slot: it was lent a device VM once. Under &vmgpu_vm_slots.lock. */
	bool had_slot;
	/**
	 * @compressed: 1 once a job of it with COMPRESS or DECOMPRESS was
	 * pushed (&vmgpu_device.compressing_spaces).
	 */
	atomic_t compressed;
	/** @pins: EXECs between taking @hw_id and pushing their job. */
	u32 pins;
	/** @slot_link: in &vmgpu_vm_slots.lru while it holds @hw_id. */
	struct list_head slot_link;
	/**
	 * @lock: serialises binds with submissions, so that a job's
	 * allocations are the ones mapped when it was queued. Taken before
	 * any reservation.
	 */
	struct mutex lock;
	/**
	 * @pt_lock: protects the page tables. Taken inside reservations:
	 * moves rewrite entries with the allocation reserved.
	 */
	struct mutex pt_lock;
	/** @root: the level-3 table. */
	struct vmgpu_pt *root;
	/**
	 * @dma_unmapped: the device is gone and so are the tables' DMA
	 * mappings; the tables stay until no mapping needs them or the VM
	 * goes. Under @pt_lock.
	 */
	bool dma_unmapped;
	/**
	 * @pt_fence: paging operations that may still write entries of
	 * removed mappings; new mappings wait for it. Under @pt_lock.
	 */
	struct dma_fence *pt_fence;
	/**
	 * @pt_unused: tables no mapping needs, out of the tree but still
	 * DMA-mapped: paging operations of @pt_fence may still write them.
	 * Freed once it signals (vmgpu_vm_free_unused_tables()). Under @pt_lock.
	 */
	struct list_head pt_unused;
	/** @num_unused: tables on @pt_unused. Under @pt_lock. */
	u32 num_unused;
	/** @link: in &vmgpu_device.vms. */
	struct list_head link;
	/** @free_work: frees the VM on the module's queue. */
	struct work_struct free_work;
	/**
	 * @num_tables: page tables allocated, @root and @pt_unused included.
	 * Under @pt_lock.
	 */
	u32 num_tables;
	/**
	 * @fence_contexts: the dma-fence contexts of the jobs of every
	 * context ever created on the VM, for AssumeNotInUse. Under @lock.
	 */
	u64 *fence_contexts;
	/** @num_fence_contexts: entries in @fence_contexts. */
	u32 num_fence_contexts;
};

#endif
