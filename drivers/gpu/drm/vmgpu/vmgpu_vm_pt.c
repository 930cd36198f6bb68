// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_gart.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_trace.h"
#include "vmgpu_vm.h"
#include "vmgpu_vm_pt.h"

/**
 * DOC: GPU VA page tables
 *
 * Seed "GPU virtual addressing": the 4-level tables of a GPU VA space, which
 * the device walks on every access (DOC: GPU virtual address spaces).
 * A VM has a bounded number of them at once (vmgpu_vm_max_tables(),
 * -ENOSPC from VM_BIND beyond), charged to the process that made them.
 * They are pages
 * of the VM's own with a streaming DMA mapping, synced after each CPU
 * write: the mapping goes when the device does (vmgpu_vm_unplug()), the
 * pages when no mapping needs them any more, or with the VM, which a file,
 * a job or a deferred unmap may keep long after.
 *
 * A table no mapping needs any more is taken out of the tree when the
 * mapping goes, so that the limit bounds what is mapped, not how many
 * addresses were ever used. Who else can still reach it then:
 *
 * - the engine, for jobs in flight: the entry above it is cleared before
 *   the unmap's read of MAGIC (vmgpu_vm_flush()), and the device caches no
 *   translations, so nothing walks through it after that;
 * - paging operations still queued that invalidate the removed mapping
 *   (Fills of its entries by bus address, &vmgpu_vm.pt_fence): the table
 *   keeps its page and its DMA mapping until they have run. It is freed
 *   by the unmap itself if none is queued, else by the next map into the
 *   VM, which waits for them anyway, or with the VM.
 */

/* The fewest tables a VM may have: 2 MiB of page-table memory. */
#define VMGPU_VM_MIN_TABLES	512
/* The most, whatever the device: 64 MiB, which map 32 GiB. */
#define VMGPU_VM_MAX_TABLES	16384

/**
 * vmgpu_vm_max_tables() - page tables one VM may have at once
 * @vdev: the device
 *
 * Enough last-level tables to map, densely in 4 KiB pages, twice what the
 * device holds at once, its VRAM and the limit on resident system memory,
 * with the tables above them (for less than 512 GiB). Twice, since
 * allocations out of the device's reach can be mapped too, and one
 * allocation many times. Each table is a page charged to the process,
 * about 0.4 % of that memory per file, so within
 * [%VMGPU_VM_MIN_TABLES, %VMGPU_VM_MAX_TABLES].
 *
 * Return: the number of tables.
 */
u32 vmgpu_vm_max_tables(struct vmgpu_device *vdev)
{
	u64 span = BIT_ULL(VMGPU_PT_COVER_SHIFT(1));
	u64 leaves = 2 * (DIV_ROUND_UP_ULL(vdev->vram.size, span) +
			  DIV_ROUND_UP_ULL(vmgpu_gart_system_limit(vdev), span));
	/* One table above per 512 below, then the root and one more level. */
	u64 tables = leaves + DIV_ROUND_UP_ULL(leaves, VMGPU_PT_ENTRIES) + 2;

	return clamp_t(u64, tables, VMGPU_VM_MIN_TABLES, VMGPU_VM_MAX_TABLES);
}

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
 * goes at unplug (vmgpu_vm_unplug()), the page once no mapping needs it
 * (vmgpu_vm_depopulate()) or with the VM, which may outlive the device.
 *
 * Return: the table, or an ERR_PTR: -ENOSPC beyond vmgpu_vm_max_tables(),
 * -ENODEV once the device is gone, -ENOMEM.
 */
struct vmgpu_pt *vmgpu_pt_alloc(struct vmgpu_vm *vm, int level)
{
	struct device *dev = vm->vdev->drm.dev;
	struct vmgpu_pt *pt;

	if (vm->num_tables >= vmgpu_vm_max_tables(vm->vdev))
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

/* Free one table out of the tree; its DMA mapping too if still there. */
static void vmgpu_pt_release(struct vmgpu_vm *vm, struct vmgpu_pt *pt)
{
	if (!vm->dma_unmapped)
		dma_unmap_single(vm->vdev->drm.dev, pt->bus, VMGPU_PAGE_SIZE,
				 DMA_BIDIRECTIONAL);
	free_page((unsigned long)pt->entries);
	kfree(pt);
	vm->num_tables--;
}

/* Drop the DMA mappings of a table and those below it. */
static void vmgpu_pt_unmap(struct vmgpu_vm *vm, struct vmgpu_pt *pt, int level)
{
	unsigned int i;

	if (!pt)
		return;
	for (i = 0; level && i < VMGPU_PT_ENTRIES; i++)
		vmgpu_pt_unmap(vm, pt->children[i], level - 1);
	dma_unmap_single(vm->vdev->drm.dev, pt->bus, VMGPU_PAGE_SIZE, DMA_BIDIRECTIONAL);
}

/* Free a table and those below it, their mappings gone. */
static void vmgpu_pt_free(struct vmgpu_pt *pt, int level)
{
	unsigned int i;

	if (!pt)
		return;
	for (i = 0; level && i < VMGPU_PT_ENTRIES; i++)
		vmgpu_pt_free(pt->children[i], level - 1);
	free_page((unsigned long)pt->entries);
	kfree(pt);
}

/**
 * vmgpu_vm_unmap_tables() - drop the DMA mappings of every table of a VM
 * @vm: the VM, its &vmgpu_vm.pt_lock held or no user left
 *
 * Once: at unplug, or when the VM goes. The tables stay, CPU memory only.
 */
void vmgpu_vm_unmap_tables(struct vmgpu_vm *vm)
{
	struct device *dev = vm->vdev->drm.dev;
	struct vmgpu_pt *pt;

	vmgpu_pt_unmap(vm, vm->root, VMGPU_PT_LEVELS - 1);
	list_for_each_entry(pt, &vm->pt_unused, link)
		dma_unmap_single(dev, pt->bus, VMGPU_PAGE_SIZE, DMA_BIDIRECTIONAL);
	vm->dma_unmapped = true;
}

/**
 * vmgpu_vm_free_tables() - free every table of a VM going away
 * @vm: the VM, its tables' DMA mappings gone and no paging operation left
 *	that writes them
 */
void vmgpu_vm_free_tables(struct vmgpu_vm *vm)
{
	struct vmgpu_pt *pt, *next;

	vmgpu_pt_free(vm->root, VMGPU_PT_LEVELS - 1);
	/* Out of the tree only once the tables below them were. */
	list_for_each_entry_safe(pt, next, &vm->pt_unused, link)
		vmgpu_pt_free(pt, 0);
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

/* The last-level table of va, which vmgpu_vm_populate() made. */
static struct vmgpu_pt *vmgpu_vm_leaf(struct vmgpu_vm *vm, u64 va)
{
	struct vmgpu_pt *pt = vm->root;
	int level;

	for (level = VMGPU_PT_LEVELS - 1; level > 0; level--)
		pt = pt->children[vmgpu_pt_index(va, level)];
	return pt;
}

/* Hang @child below entry @i of @pt. */
static void vmgpu_pt_link(struct vmgpu_vm *vm, struct vmgpu_pt *pt,
			  unsigned int i, struct vmgpu_pt *child)
{
	pt->children[i] = child;
	pt->entries[i] = cpu_to_le64(VMGPU_PTE_VALID |
		(u64)VMGPU_SPACE_SYSTEM << VMGPU_PTE_SPACE_SHIFT | child->bus);
	vmgpu_pt_sync(vm, pt, i, 1);
	pt->used++;
}

/* The tables down to the last level for @va: all of them or none. */
static int vmgpu_vm_populate_leaf(struct vmgpu_vm *vm, u64 va)
{
	struct vmgpu_pt *made[VMGPU_PT_LEVELS - 1], *pt = vm->root;
	int level = VMGPU_PT_LEVELS - 1, n, i;

	while (level > 0 && pt->children[vmgpu_pt_index(va, level)]) {
		pt = pt->children[vmgpu_pt_index(va, level)];
		level--;
	}
	/* Every table first: a failure leaves no empty one in the tree. */
	for (n = 0; n < level; n++) {
		made[n] = vmgpu_pt_alloc(vm, level - 1 - n);
		if (IS_ERR(made[n])) {
			int ret = PTR_ERR(made[n]);

			while (n--)
				vmgpu_pt_release(vm, made[n]);
			return ret;
		}
	}
	for (i = 0; i < n; i++) {
		vmgpu_pt_link(vm, pt, vmgpu_pt_index(va, level - i), made[i]);
		pt = made[i];
	}
	return 0;
}

/**
 * vmgpu_vm_populate() - make the tables down to the last level for a new
 * mapping of a range
 * @vm: the VM, its &vmgpu_vm.pt_lock held
 * @va: start of the range
 * @range: its size
 *
 * The range counts as used in its last-level tables until
 * vmgpu_vm_depopulate().
 *
 * Return: 0, or vmgpu_pt_alloc()'s error; the tables it made are then out
 * of the tree again, waiting to be freed like those of an unmap.
 */
int vmgpu_vm_populate(struct vmgpu_vm *vm, u64 va, u64 range)
{
	u64 start = va, end = va + range;

	lockdep_assert_held(&vm->lock);
	lockdep_assert_held(&vm->pt_lock);
	while (va < end) {
		u64 next = min(end, vmgpu_pt_next_leaf(va));
		int ret = vmgpu_vm_populate_leaf(vm, va);

		if (ret) {
			vmgpu_vm_depopulate(vm, start, va - start);
			return ret;
		}
		vmgpu_vm_leaf(vm, va)->used += (next - va) >> VMGPU_PAGE_SHIFT;
		va = next;
	}
	return 0;
}

/**
 * vmgpu_vm_depopulate() - a mapping of a range is gone: take the tables
 * no mapping needs out of the tree
 * @vm: the VM, its &vmgpu_vm.lock and &vmgpu_vm.pt_lock held
 * @va: start of the range, whose entries are invalid
 * @range: its size
 *
 * The tables wait on &vmgpu_vm.pt_unused; the caller makes the device see
 * the change (vmgpu_vm_flush()) before vmgpu_vm_free_unused_tables() may
 * free them, under the same &vmgpu_vm.lock (DOC: GPU VA page tables).
 */
void vmgpu_vm_depopulate(struct vmgpu_vm *vm, u64 va, u64 range)
{
	u64 end = va + range;

	lockdep_assert_held(&vm->lock);
	lockdep_assert_held(&vm->pt_lock);
	while (va < end) {
		u64 next = min(end, vmgpu_pt_next_leaf(va));
		struct vmgpu_pt *path[VMGPU_PT_LEVELS];
		int level;

		path[VMGPU_PT_LEVELS - 1] = vm->root;
		for (level = VMGPU_PT_LEVELS - 1; level > 0; level--)
			path[level - 1] = path[level]->children[vmgpu_pt_index(va, level)];
		path[0]->used -= (next - va) >> VMGPU_PAGE_SHIFT;
		/* The root stays with the VM. */
		for (level = 0; level < VMGPU_PT_LEVELS - 1 && !path[level]->used; level++) {
			struct vmgpu_pt *parent = path[level + 1];
			unsigned int i = vmgpu_pt_index(va, level + 1);

			WRITE_ONCE(parent->entries[i], 0);
			vmgpu_pt_sync(vm, parent, i, 1);
			parent->children[i] = NULL;
			parent->used--;
			list_add_tail(&path[level]->link, &vm->pt_unused);
			vm->num_unused++;
		}
		va = next;
	}
}

/**
 * vmgpu_vm_free_unused_tables() - free the tables no mapping needs, once
 * no paging operation can write them
 * @vm: the VM, its &vmgpu_vm.lock and &vmgpu_vm.pt_lock held
 *
 * Frees nothing while &vmgpu_vm.pt_fence has not signalled.
 */
void vmgpu_vm_free_unused_tables(struct vmgpu_vm *vm)
{
	struct vmgpu_pt *pt, *next;

	lockdep_assert_held(&vm->lock);
	lockdep_assert_held(&vm->pt_lock);
	if (vm->pt_fence && !dma_fence_is_signaled(vm->pt_fence))
		return;
	list_for_each_entry_safe(pt, next, &vm->pt_unused, link) {
		list_del(&pt->link);
		vmgpu_pt_release(vm, pt);
	}
	vm->num_unused = 0;
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
