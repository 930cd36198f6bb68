// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_trace.h"
#include "vmgpu_vm.h"
#include "vmgpu_vm_pt.h"

/**
 * DOC: GPU VA page tables
 *
 * Seed "GPU virtual addressing": the 4-level tables of a GPU VA space, which
 * the device walks on every access (DOC: GPU virtual address spaces).
 * Page tables are never freed before their VM; a VM has at most
 * %VMGPU_VM_MAX_TABLES of them (-ENOSPC from VM_BIND beyond), charged to
 * the process that made them. They are pages of the VM's own with a
 * streaming DMA mapping, synced after each CPU write: the mapping goes
 * when the device does (vmgpu_vm_unplug()), the pages with the VM, which
 * a file, a job or a deferred unmap may keep long after.
 */

/* Tables one VM may have: 2 MiB of page-table memory maps 512 GiB. */
#define VMGPU_VM_MAX_TABLES	512

static unsigned int vmgpu_pt_index(u64 va, int level)
{
	return (va >> VMGPU_PT_COVER_SHIFT(level)) & (VMGPU_PT_ENTRIES - 1);
}

/**
 * vmgpu_pt_alloc() - a new, empty page table of @vm
 * @vm: the VM
 * @level: 0 for a last-level table, up to %VMGPU_PT_LEVELS - 1
 *
 * Tables are pages of the VM's own, DMA-mapped for the device: the mapping
 * goes at unplug (vmgpu_vm_unplug()), the page only with the VM, which
 * may outlive the device.
 *
 * Return: the table, or an ERR_PTR: -ENOSPC beyond %VMGPU_VM_MAX_TABLES,
 * -ENODEV once the device is gone, -ENOMEM.
 */
struct vmgpu_pt *vmgpu_pt_alloc(struct vmgpu_vm *vm, int level)
{
	struct device *dev = vm->vdev->drm.dev;
	struct vmgpu_pt *pt;

	if (vm->num_tables >= VMGPU_VM_MAX_TABLES)
		return ERR_PTR(-ENOSPC);
	if (vm->dma_unmapped)
		return ERR_PTR(-ENODEV);
	pt = kzalloc(struct_size(pt, children, level ? VMGPU_PT_ENTRIES : 0),
		     GFP_KERNEL_ACCOUNT);
	if (!pt)
		return ERR_PTR(-ENOMEM);
	pt->entries = (__le64 *)get_zeroed_page(GFP_KERNEL_ACCOUNT);
	if (!pt->entries)
		goto err_pt;
	pt->bus = dma_map_single(dev, pt->entries, VMGPU_PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(dev, pt->bus))
		goto err_page;
	vm->num_tables++;
	return pt;

err_page:
	free_page((unsigned long)pt->entries);
err_pt:
	kfree(pt);
	return ERR_PTR(-ENOMEM);
}

/**
 * vmgpu_pt_unmap() - drop the DMA mappings of a table and those below it
 * @vm: the VM
 * @pt: the table, or NULL
 * @level: its level
 *
 * Once: at unplug, or when the VM goes.
 */
void vmgpu_pt_unmap(struct vmgpu_vm *vm, struct vmgpu_pt *pt, int level)
{
	unsigned int i;

	if (!pt)
		return;
	for (i = 0; level && i < VMGPU_PT_ENTRIES; i++)
		vmgpu_pt_unmap(vm, pt->children[i], level - 1);
	dma_unmap_single(vm->vdev->drm.dev, pt->bus, VMGPU_PAGE_SIZE, DMA_BIDIRECTIONAL);
}

/**
 * vmgpu_pt_free() - free a table and those below it, their mappings gone
 * @pt: the table, or NULL
 * @level: its level
 */
void vmgpu_pt_free(struct vmgpu_pt *pt, int level)
{
	unsigned int i;

	if (!pt)
		return;
	for (i = 0; level && i < VMGPU_PT_ENTRIES; i++)
		vmgpu_pt_free(pt->children[i], level - 1);
	free_page((unsigned long)pt->entries);
	kfree(pt);
}

/* The CPU wrote entries [first, first + count) of pt: the device's turn. */
static void vmgpu_pt_sync(struct vmgpu_vm *vm, struct vmgpu_pt *pt,
			  unsigned int first, unsigned int count)
{
	lockdep_assert_held(&vm->pt_lock);
	if (!vm->dma_unmapped)
		dma_sync_single_range_for_device(vm->vdev->drm.dev, pt->bus,
						 first * sizeof(__le64),
						 count * sizeof(__le64),
						 DMA_BIDIRECTIONAL);
}

/**
 * vmgpu_vm_populate() - make the tables down to the last level for a range
 * @vm: the VM, its &vmgpu_vm.pt_lock held
 * @va: start of the range
 * @range: its size
 *
 * Return: 0, or vmgpu_pt_alloc()'s error; tables made before it stay.
 */
int vmgpu_vm_populate(struct vmgpu_vm *vm, u64 va, u64 range)
{
	u64 end = va + range;

	lockdep_assert_held(&vm->pt_lock);
	for (; va < end; va = vmgpu_pt_next_leaf(va)) {
		struct vmgpu_pt *pt = vm->root;
		int level;

		for (level = VMGPU_PT_LEVELS - 1; level > 0; level--) {
			unsigned int i = vmgpu_pt_index(va, level);

			if (!pt->children[i]) {
				struct vmgpu_pt *child = vmgpu_pt_alloc(vm, level - 1);

				if (IS_ERR(child))
					return PTR_ERR(child);
				pt->children[i] = child;
				pt->entries[i] = cpu_to_le64(VMGPU_PTE_VALID |
					(u64)VMGPU_SPACE_SYSTEM << VMGPU_PTE_SPACE_SHIFT |
					child->bus);
				vmgpu_pt_sync(vm, pt, i, 1);
			}
			pt = pt->children[i];
		}
	}
	return 0;
}

/* The last-level table of va, which vmgpu_vm_populate() made. */
static struct vmgpu_pt *vmgpu_vm_leaf(struct vmgpu_vm *vm, u64 va)
{
	struct vmgpu_pt *pt = vm->root;
	int level;

	for (level = VMGPU_PT_LEVELS - 1; level > 0; level--)
		pt = pt->children[vmgpu_pt_index(va, level)];
	return pt;
}

static __le64 *vmgpu_vm_pte(struct vmgpu_vm *vm, u64 va)
{
	return &vmgpu_vm_leaf(vm, va)->entries[vmgpu_pt_index(va, 0)];
}

/**
 * vmgpu_vm_pte_bus() - bus address of the entry that maps an address
 * @vm: the VM, its &vmgpu_vm.pt_lock held
 * @va: the address, whose tables vmgpu_vm_populate() made
 *
 * Return: the entry's bus address, for the device to write it.
 */
dma_addr_t vmgpu_vm_pte_bus(struct vmgpu_vm *vm, u64 va)
{
	lockdep_assert_held(&vm->pt_lock);
	return vmgpu_vm_leaf(vm, va)->bus + vmgpu_pt_index(va, 0) * sizeof(__le64);
}

/* Entries of [va, va + range) are written: each leaf table's run syncs. */
static void vmgpu_vm_sync_ptes(struct vmgpu_vm *vm, u64 va, u64 range)
{
	u64 end = va + range;

	while (va < end) {
		u64 next = min(end, vmgpu_pt_next_leaf(va));

		vmgpu_pt_sync(vm, vmgpu_vm_leaf(vm, va), vmgpu_pt_index(va, 0),
			      (next - va) >> VMGPU_PAGE_SHIFT);
		va = next;
	}
}

/**
 * vmgpu_vm_clear_ptes() - invalidate the entries of a range, on the CPU
 * @vm: the VM, its &vmgpu_vm.pt_lock held
 * @va: start of the range, whose tables vmgpu_vm_populate() made
 * @range: its size
 */
void vmgpu_vm_clear_ptes(struct vmgpu_vm *vm, u64 va, u64 range)
{
	u64 off;

	lockdep_assert_held(&vm->pt_lock);
	for (off = 0; off < range; off += VMGPU_PAGE_SIZE)
		WRITE_ONCE(*vmgpu_vm_pte(vm, va + off), 0);
	vmgpu_vm_sync_ptes(vm, va, range);
}

/**
 * vmgpu_vm_write_ptes() - point a mapping's entries at its backing
 * @vm: the VM, its &vmgpu_vm.pt_lock held
 * @va: the mapping; its allocation reserved
 *
 * Points them at the allocation's backing as it is now, or invalidates
 * them if the device cannot reach it (vmgpu_vm_bo_reachable()).
 */
void vmgpu_vm_write_ptes(struct vmgpu_vm *vm, struct drm_gpuva *va)
{
	struct vmgpu_bo *vbo = gem_to_vmgpu_bo(va->gem.obj);
	struct ttm_buffer_object *tbo = &vbo->tbo;
	u64 flags = VMGPU_PTE_VALID;
	u64 addr = va->va.addr, left = va->va.range, skip = va->gem.offset;
	struct vmgpu_res_cursor cur;

	lockdep_assert_held(&vm->pt_lock);
	dma_resv_assert_held(tbo->base.resv);
	if (!(va->flags & VMGPU_VA_READ_ONLY))
		flags |= VMGPU_PTE_WRITE;
	if (!vmgpu_vm_bo_reachable(vbo) ||
	    vmgpu_res_first(vm->vdev, tbo->resource, tbo->ttm, tbo->base.size, &cur)) {
		vmgpu_vm_clear_ptes(vm, addr, left);
		trace_vmgpu_vm_ptes(vm->hw_id, addr, left, -1);
		return;
	}
	trace_vmgpu_vm_ptes(vm->hw_id, addr, left, cur.space);
	while (skip) {
		u64 n = min(skip, cur.size);

		vmgpu_res_next(&cur, n);
		skip -= n;
	}
	flags |= (u64)cur.space << VMGPU_PTE_SPACE_SHIFT;
	while (left) {
		u64 n = min(cur.size, left), off;

		for (off = 0; off < n; off += VMGPU_PAGE_SIZE)
			WRITE_ONCE(*vmgpu_vm_pte(vm, addr + off),
				   cpu_to_le64(flags | (cur.start + off)));
		addr += n;
		left -= n;
		if (left)
			vmgpu_res_next(&cur, n);
	}
	vmgpu_vm_sync_ptes(vm, va->va.addr, va->va.range);
}
