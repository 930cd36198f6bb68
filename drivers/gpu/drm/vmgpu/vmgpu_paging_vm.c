// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-mapping.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "vmgpu_device.h"
#include "vmgpu_paging_vm.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_vm_id.h"

/**
 * DOC: paging process GPU VA
 *
 * Seed "Allocation notification": the paging (system) process has a GPU
 * VA space of its own, through which paging operations reach an
 * allocation: NotifyAlloc, and the Fills and Transfers of clears and
 * moves. It is the device's VM 0, which only the paging ring may use.
 *
 * Its size follows the seed's DXGKQAITYPE_PAGINGPROCESSGPUVASIZE: the
 * module parameter paging_va_mb if set (for testing), else the size the
 * device asks for (PAGING_VA_SIZE_MB, a QEMU property), else the greater
 * of a quarter of the largest memory segment and the hardware scheduling
 * log buffers (%VMGPU_SCHED_LOG_SIZE), and at most 4 GiB, since its page
 * tables stay resident. Operations on larger allocations are done in
 * chunks: at most the whole space for a Fill or a NotifyAlloc, half of it
 * for each side of a Transfer.
 *
 * The page tables cover the whole space and are built at probe, in system
 * memory, and stay there (resident) until the device goes. Only the paging
 * ring writes their entries: each chunk of an operation starts with
 * Transfers that copy its entries from staging pages (written by the CPU
 * when the operation is built) into the tables. Since the ring runs in
 * order, every chunk finds its own entries, however many operations are
 * queued, and none waits for another on the CPU. In the device's
 * non-coherent mode those writes go through its cache, which table walks
 * bypass: a whole-cache flush follows them. The staging pages come from a
 * pool kept from probe to removal, so that a move takes no DMA memory.
 */

static unsigned int vmgpu_paging_va_mb;
module_param_named(paging_va_mb, vmgpu_paging_va_mb, uint, 0444);
MODULE_PARM_DESC(paging_va_mb,
		 "Paging process GPU VA size in MiB, for testing (default 0: the device's or WDDM's rule)");

/*
 * The page tables are resident (4 KiB per 2 MiB of VA): however large a
 * size is asked for, no more than this.
 */
#define VMGPU_PAGING_VA_MAX	SZ_4G

/* Staging pages filled in at probe, at most: 4 MiB. */
#define VMGPU_STAGING_POOL_MAX	1024

/* What one entry of a table at @level maps: 4 KiB at level 0. */
#define VMGPU_PAGING_VM_ENTRY_SHIFT(level)	(VMGPU_PAGE_SHIFT + 9 * (level))

/**
 * vmgpu_paging_va_rule() - the paging process GPU VA size
 * @requested: the size asked for (module parameter, else the device's), 0
 *	       for none
 * @largest_segment: bytes of the largest memory segment, 0 if none
 *
 * Return: @requested if non-zero, else the greater of a quarter of
 * @largest_segment and %VMGPU_SCHED_LOG_SIZE, in whole pages; at most
 * %VMGPU_PAGING_VA_MAX.
 */
u64 vmgpu_paging_va_rule(u64 requested, u64 largest_segment)
{
	u64 size = requested;

	if (!size)
		size = max_t(u64, round_down(largest_segment / 4, VMGPU_PAGE_SIZE),
			     VMGPU_SCHED_LOG_SIZE);
	return min_t(u64, size, VMGPU_PAGING_VA_MAX);
}

static u64 vmgpu_paging_va_size(struct vmgpu_device *vdev)
{
	u64 requested = (u64)vmgpu_paging_va_mb << 20;
	u64 largest = 0;
	u32 i;

	if (!requested)
		requested = (u64)vmgpu_read32(vdev, VMGPU_REG_PAGING_VA_SIZE_MB) << 20;
	for (i = 0; i < vdev->num_segments; i++)
		largest = max(largest, vdev->segments[i].size);
	if (requested > VMGPU_PAGING_VA_MAX)
		drm_warn(&vdev->drm, "paging process GPU VA of %llu MiB asked for, %llu MiB used\n",
			 requested >> 20, (u64)VMGPU_PAGING_VA_MAX >> 20);
	return vmgpu_paging_va_rule(requested, largest);
}

/*
 * The table of @level whose first entry maps @va, and below it everything
 * of the space it covers; its bus address in *bus.
 */
static int vmgpu_paging_vm_build(struct vmgpu_device *vdev, int level, u64 va,
				 dma_addr_t *bus)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;
	u64 step = 1ull << VMGPU_PAGING_VM_ENTRY_SHIFT(level);
	__le64 *entries;
	u32 i;

	entries = dmam_alloc_coherent(vdev->drm.dev, VMGPU_PAGE_SIZE, bus, GFP_KERNEL);
	if (!entries)
		return -ENOMEM;
	if (!level) {
		pvm->leaf_bus[va >> VMGPU_PAGING_VM_ENTRY_SHIFT(1)] = *bus;
		return 0;
	}
	for (i = 0; i < VMGPU_PT_ENTRIES && va + i * step < pvm->size; i++) {
		dma_addr_t child;
		int ret;

		ret = vmgpu_paging_vm_build(vdev, level - 1, va + i * step, &child);
		if (ret)
			return ret;
		entries[i] = cpu_to_le64(VMGPU_PTE_VALID |
					 (u64)VMGPU_SPACE_SYSTEM << VMGPU_PTE_SPACE_SHIFT | child);
	}
	return 0;
}

/*
 * Back to the pool, or, past what it keeps, back to the system. Called with
 * the device bound: staging pages are devres DMA memory, which unbinding
 * frees (vmgpu_paging_vm_unplug()).
 */
static void vmgpu_paging_vm_staging_put_page(struct vmgpu_device *vdev,
					     const struct vmgpu_pte_page *page)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;

	lockdep_assert_held(&pvm->staging_lock);
	if (pvm->staging_free < pvm->staging_keep) {
		pvm->staging_pool[pvm->staging_free++] = *page;
		return;
	}
	dmam_free_coherent(vdev->drm.dev, VMGPU_PAGE_SIZE, page->cpu, page->bus);
	pvm->staging_pages--;
}

/*
 * A new staging page. Not under @staging_lock: job frees take it, and a
 * job's completion must not wait for reclaim.
 */
static bool vmgpu_paging_vm_staging_new_page(struct vmgpu_device *vdev,
					     struct vmgpu_pte_page *page, gfp_t gfp)
{
	page->cpu = dmam_alloc_coherent(vdev->drm.dev, VMGPU_PAGE_SIZE, &page->bus, gfp);
	return page->cpu;
}

/*
 * The pool: what two moves of the largest memory segment take (two sides,
 * a table each per 2 MiB, one more per chunk boundary), since a move is
 * queued while the job of the one before still holds its pages, at most
 * %VMGPU_STAGING_POOL_MAX pages; twice that kept free. Filled as far as
 * memory allows: operations grow it later if needed.
 */
static int vmgpu_paging_vm_staging_init(struct vmgpu_device *vdev)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;
	struct vmgpu_pte_page page;
	u64 largest = 0, need;
	u32 i;

	mutex_init(&pvm->staging_lock);
	init_waitqueue_head(&pvm->staging_wq);
	for (i = 0; i < vdev->num_segments; i++)
		largest = max(largest, vdev->segments[i].size);
	need = 2 * 2 * (DIV_ROUND_UP_ULL(largest, 1ull << VMGPU_PAGING_VM_ENTRY_SHIFT(1)) +
			DIV_ROUND_UP_ULL(largest, pvm->size / 2) + 1);
	need = min_t(u64, need, VMGPU_STAGING_POOL_MAX);
	pvm->staging_keep = 2 * need;
	pvm->staging_pool = drmm_kcalloc(&vdev->drm, pvm->staging_keep,
					 sizeof(*pvm->staging_pool), GFP_KERNEL);
	if (!pvm->staging_pool)
		return -ENOMEM;
	for (i = 0; i < need; i++) {
		if (!vmgpu_paging_vm_staging_new_page(vdev, &page, GFP_KERNEL | __GFP_NOWARN))
			break;
		mutex_lock(&pvm->staging_lock);
		pvm->staging_pages++;
		vmgpu_paging_vm_staging_put_page(vdev, &page);
		mutex_unlock(&pvm->staging_lock);
	}
	return 0;
}

/**
 * vmgpu_paging_vm_init() - size the paging process GPU VA and build VM 0
 * @vdev: the device, its memory segments known, reset
 *
 * Return: 0 or -ENOMEM.
 */
int vmgpu_paging_vm_init(struct vmgpu_device *vdev)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;
	u32 leaves;
	dma_addr_t root;
	int ret;

	pvm->size = vmgpu_paging_va_size(vdev);
	leaves = DIV_ROUND_UP_ULL(pvm->size, 1ull << VMGPU_PAGING_VM_ENTRY_SHIFT(1));
	pvm->leaf_bus = drmm_kcalloc(&vdev->drm, leaves, sizeof(*pvm->leaf_bus), GFP_KERNEL);
	if (!pvm->leaf_bus)
		return -ENOMEM;
	ret = vmgpu_paging_vm_build(vdev, VMGPU_PT_LEVELS - 1, 0, &root);
	if (ret)
		return ret;
	ret = vmgpu_paging_vm_staging_init(vdev);
	if (ret)
		return ret;
	vmgpu_vm_id_program(vdev, VMGPU_VM_PAGING, root, 0);
	drm_dbg_driver(&vdev->drm, "paging process GPU VA: %llu KiB, %u page tables\n",
		       pvm->size >> 10, leaves);
	return 0;
}

/* The bytes from @va to the end of its last-level table, at most @size. */
static u64 vmgpu_paging_vm_run(u64 va, u64 size)
{
	u64 end = (va | GENMASK_ULL(VMGPU_PAGING_VM_ENTRY_SHIFT(1) - 1, 0)) + 1;

	return min(size, end - va);
}

/* Bus address of the entry that maps @va. */
static dma_addr_t vmgpu_paging_vm_pte_bus(struct vmgpu_paging_vm *pvm, u64 va)
{
	return pvm->leaf_bus[va >> VMGPU_PAGING_VM_ENTRY_SHIFT(1)] +
	       ((va >> VMGPU_PAGE_SHIFT) & (VMGPU_PT_ENTRIES - 1)) * sizeof(__le64);
}

/**
 * vmgpu_paging_vm_runs() - commands to map, or unmap, a range of the space
 * @va: its start, page aligned
 * @size: its bytes, a page multiple
 *
 * Return: the last-level tables the range touches: one command each, and
 * for a map one staging page each.
 */
u32 vmgpu_paging_vm_runs(u64 va, u64 size)
{
	u32 runs = 0;

	for (; size; runs++) {
		u64 n = vmgpu_paging_vm_run(va, size);

		va += n;
		size -= n;
	}
	return runs;
}

/* Pages of @st back to the pool; the device is bound (not @staging_gone). */
static void vmgpu_paging_vm_staging_put_pages(struct vmgpu_device *vdev,
					      struct vmgpu_pte_staging *st)
{
	lockdep_assert_held(&vdev->paging_vm.staging_lock);
	while (st->count)
		vmgpu_paging_vm_staging_put_page(vdev, &st->pages[--st->count]);
}

/**
 * vmgpu_paging_vm_staging_alloc() - staging pages for the entries of an
 * operation
 * @vdev: the device, entered (drm_dev_enter())
 * @count: pages, one per vmgpu_paging_vm_runs() of every range mapped
 *
 * The pages come from a pool the size of two of the largest moves, kept
 * for the device's lifetime: an eviction takes no DMA memory. A larger
 * operation, or more queued at once, grow the pool; if memory runs out,
 * it waits for the paging operations in flight to give theirs back.
 *
 * Context: process context; may sleep until paging jobs complete, so
 * never from a job's completion or free.
 *
 * Return: the staging, or NULL: -ENOMEM (memory ran out and the pool can
 * never hold @count pages), or the device is gone.
 */
struct vmgpu_pte_staging *vmgpu_paging_vm_staging_alloc(struct vmgpu_device *vdev, u32 count)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;
	struct vmgpu_pte_staging *st;
	struct vmgpu_pte_page page;

	st = kvzalloc(struct_size(st, pages, count), GFP_KERNEL);
	if (!st)
		return NULL;
	mutex_lock(&pvm->staging_lock);
	for (;;) {
		if (pvm->staging_gone)
			goto err;
		while (st->count < count && pvm->staging_free)
			st->pages[st->count++] = pvm->staging_pool[--pvm->staging_free];
		if (st->count == count)
			break;
		mutex_unlock(&pvm->staging_lock);
		if (vmgpu_paging_vm_staging_new_page(vdev, &page, GFP_KERNEL | __GFP_NORETRY |
						     __GFP_NOWARN)) {
			mutex_lock(&pvm->staging_lock);
			st->pages[st->count++] = page;
			pvm->staging_pages++;
			pvm->staging_grown++;
			continue;
		}
		/*
		 * All or nothing: a waiter holds no pages, so the pages it
		 * waits for are in jobs, or with allocators that do not wait.
		 */
		mutex_lock(&pvm->staging_lock);
		vmgpu_paging_vm_staging_put_pages(vdev, st);
		if (pvm->staging_pages < count || count > pvm->staging_keep)
			goto err;
		mutex_unlock(&pvm->staging_lock);
		wait_event(pvm->staging_wq, READ_ONCE(pvm->staging_free) >= count ||
			   READ_ONCE(pvm->staging_gone));
		mutex_lock(&pvm->staging_lock);
	}
	mutex_unlock(&pvm->staging_lock);
	return st;

err:
	if (!pvm->staging_gone)
		vmgpu_paging_vm_staging_put_pages(vdev, st);
	mutex_unlock(&pvm->staging_lock);
	wake_up_all(&pvm->staging_wq);
	kvfree(st);
	return NULL;
}

/**
 * vmgpu_paging_vm_staging_free() - give staging pages back
 * @vdev: the device
 * @st: the staging, or NULL; the commands that read it are done or were
 *	never queued
 *
 * Jobs may be freed after the device is gone (by the scheduler, or at the
 * last reference): their pages went with its binding.
 */
void vmgpu_paging_vm_staging_free(struct vmgpu_device *vdev, struct vmgpu_pte_staging *st)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;

	if (!st)
		return;
	mutex_lock(&pvm->staging_lock);
	if (!pvm->staging_gone)
		vmgpu_paging_vm_staging_put_pages(vdev, st);
	mutex_unlock(&pvm->staging_lock);
	wake_up_all(&pvm->staging_wq);
	kvfree(st);
}

/**
 * vmgpu_paging_vm_unplug() - the device is going: no more staging
 * @vdev: the device, still bound, its rings stopped
 *
 * Staging pages are devres DMA memory: unbinding frees them all, those of
 * jobs that live on after it too. The device reads none of them any more,
 * and later allocations fail.
 */
void vmgpu_paging_vm_unplug(struct vmgpu_device *vdev)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;

	mutex_lock(&pvm->staging_lock);
	pvm->staging_gone = true;
	pvm->staging_free = 0;
	mutex_unlock(&pvm->staging_lock);
	wake_up_all(&pvm->staging_wq);
}

/**
 * vmgpu_paging_vm_staging_print() - the staging pool, for debugfs
 * @vdev: the device
 * @p: where to
 *
 * Prints the pages the device has, those free, and how many were
 * allocated after probe because an operation found the pool empty.
 */
void vmgpu_paging_vm_staging_print(struct vmgpu_device *vdev, struct drm_printer *p)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;

	mutex_lock(&pvm->staging_lock);
	drm_printf(p, "staging pages %u free %u grown %llu\n", pvm->staging_pages,
		   pvm->staging_free, pvm->staging_grown);
	mutex_unlock(&pvm->staging_lock);
}

/**
 * vmgpu_paging_vm_map() - the paging ring's commands that map backing into
 * the space
 * @vdev: the device
 * @st: staging, with a free page for each vmgpu_paging_vm_runs() of the range
 * @va: where, page aligned, inside the space
 * @cur: the backing, walked for @size bytes and left after them
 * @size: bytes, a page multiple
 * @writable: whether the device may write through the entries
 * @add: adds one command to the paging operation
 * @arg: for @add
 *
 * The entries are written into @st now; the commands copy them into the
 * tables when the ring gets to them, so a queued operation never sees
 * entries written for a later one (DOC: paging process GPU VA).
 *
 * Return: 0, -ENOSPC if @st has no page left, or the first error of @add.
 */
int vmgpu_paging_vm_map(struct vmgpu_device *vdev, struct vmgpu_pte_staging *st, u64 va,
			struct vmgpu_res_cursor *cur, u64 size, bool writable,
			int (*add)(void *arg, const union vmgpu_cmd *cmd), void *arg)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;
	u64 flags = VMGPU_PTE_VALID | (writable ? VMGPU_PTE_WRITE : 0);

	while (size) {
		u64 n = vmgpu_paging_vm_run(va, size), off;
		struct vmgpu_pte_page *page;
		union vmgpu_cmd cmd = {};
		u32 i = 0;
		int ret;

		if (st->used >= st->count)
			return -ENOSPC;
		page = &st->pages[st->used++];
		for (off = 0; off < n; off += VMGPU_PAGE_SIZE, i++) {
			page->cpu[i] = cpu_to_le64(flags |
						   (u64)cur->space << VMGPU_PTE_SPACE_SHIFT |
						   cur->start);
			vmgpu_res_next(cur, VMGPU_PAGE_SIZE);
		}
		cmd.transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
		cmd.transfer.src.space = cpu_to_le32(VMGPU_SPACE_SYSTEM);
		cmd.transfer.src.addr = cpu_to_le64(page->bus);
		cmd.transfer.dst.space = cpu_to_le32(VMGPU_SPACE_SYSTEM);
		cmd.transfer.dst.addr = cpu_to_le64(vmgpu_paging_vm_pte_bus(pvm, va));
		cmd.transfer.size = cpu_to_le64((u64)i * sizeof(__le64));
		ret = add(arg, &cmd);
		if (ret)
			return ret;
		va += n;
		size -= n;
	}
	return 0;
}

/**
 * vmgpu_paging_vm_unmap() - the paging ring's commands that unmap a range
 * @vdev: the device
 * @va: its start, page aligned
 * @size: its bytes, a page multiple
 * @add: adds one command to the paging operation
 * @arg: for @add
 *
 * Return: 0 or the first error of @add.
 */
int vmgpu_paging_vm_unmap(struct vmgpu_device *vdev, u64 va, u64 size,
			  int (*add)(void *arg, const union vmgpu_cmd *cmd), void *arg)
{
	while (size) {
		u64 n = vmgpu_paging_vm_run(va, size);
		union vmgpu_cmd cmd = {};
		int ret;

		cmd.fill.hdr.opcode = cpu_to_le16(VMGPU_OP_FILL);
		cmd.fill.dst.space = cpu_to_le32(VMGPU_SPACE_SYSTEM);
		cmd.fill.dst.addr = cpu_to_le64(vmgpu_paging_vm_pte_bus(&vdev->paging_vm, va));
		cmd.fill.size = cpu_to_le64((n >> VMGPU_PAGE_SHIFT) * sizeof(__le64));
		ret = add(arg, &cmd);
		if (ret)
			return ret;
		va += n;
		size -= n;
	}
	return 0;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_paging_vm_test.c"
#endif
