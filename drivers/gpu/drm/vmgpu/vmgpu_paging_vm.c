// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-mapping.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>

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
 * Transfers that copy its entries from staging memory (written by the CPU
 * when the operation is built) into the tables. Since the ring runs in
 * order, every chunk finds its own entries, however many operations are
 * queued, without waiting for the operations before it. In the device's
 * non-coherent mode those writes go through its cache, which table walks
 * bypass: a whole-cache flush follows them. Each job of the paging job
 * reserve has staging memory of its own, kept from probe to removal
 * (DOC: paging job reserve), so that a move takes no memory.
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
	vmgpu_vm_id_program(vdev, VMGPU_VM_PAGING, root, 0);
	drm_dbg_driver(&vdev->drm, "paging process GPU VA: %llu KiB, %u page tables\n",
		       pvm->size >> 10, leaves);
	return 0;
}

/**
 * vmgpu_paging_vm_run() - the part of a range one command maps or unmaps
 * @va: the range's start, page aligned
 * @size: its bytes, a page multiple
 *
 * Return: the bytes from @va to the end of its last-level table, at most
 * @size.
 */
u64 vmgpu_paging_vm_run(u64 va, u64 size)
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
 * vmgpu_paging_vm_entries() - write the entries of one run
 * @entries: where, room for @size / %VMGPU_PAGE_SIZE entries
 * @cur: the backing, walked for @size bytes and left after them
 * @size: bytes, a page multiple
 * @writable: whether the device may write through the entries
 */
void vmgpu_paging_vm_entries(__le64 *entries, struct vmgpu_res_cursor *cur, u64 size,
			     bool writable)
{
	u64 flags = VMGPU_PTE_VALID | (writable ? VMGPU_PTE_WRITE : 0);
	u64 off;

	for (off = 0; off < size; off += VMGPU_PAGE_SIZE) {
		*entries++ = cpu_to_le64(flags | (u64)cur->space << VMGPU_PTE_SPACE_SHIFT |
					 cur->start);
		vmgpu_res_next(cur, VMGPU_PAGE_SIZE);
	}
}

/**
 * vmgpu_paging_vm_map_cmd() - the command that maps one run
 * @vdev: the device
 * @va: the run's start (vmgpu_paging_vm_run())
 * @entries_bus: bus address of its entries (vmgpu_paging_vm_entries())
 * @size: its bytes
 *
 * The entries are written into staging memory when the operation is
 * built; the command copies them into the table when the ring gets to
 * it, so a queued operation never sees entries written for a later one
 * (DOC: paging process GPU VA).
 *
 * Return: the Transfer, for the paging ring.
 */
union vmgpu_cmd vmgpu_paging_vm_map_cmd(struct vmgpu_device *vdev, u64 va,
					dma_addr_t entries_bus, u64 size)
{
	union vmgpu_cmd cmd = {};

	cmd.transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
	cmd.transfer.src.space = cpu_to_le32(VMGPU_SPACE_SYSTEM);
	cmd.transfer.src.addr = cpu_to_le64(entries_bus);
	cmd.transfer.dst.space = cpu_to_le32(VMGPU_SPACE_SYSTEM);
	cmd.transfer.dst.addr = cpu_to_le64(vmgpu_paging_vm_pte_bus(&vdev->paging_vm, va));
	cmd.transfer.size = cpu_to_le64((size >> VMGPU_PAGE_SHIFT) * sizeof(__le64));
	return cmd;
}

/**
 * vmgpu_paging_vm_unmap_cmd() - the command that unmaps one run
 * @vdev: the device
 * @va: the run's start (vmgpu_paging_vm_run())
 * @size: its bytes
 *
 * Return: the Fill of zeros, for the paging ring.
 */
union vmgpu_cmd vmgpu_paging_vm_unmap_cmd(struct vmgpu_device *vdev, u64 va, u64 size)
{
	union vmgpu_cmd cmd = {};

	cmd.fill.hdr.opcode = cpu_to_le16(VMGPU_OP_FILL);
	cmd.fill.dst.space = cpu_to_le32(VMGPU_SPACE_SYSTEM);
	cmd.fill.dst.addr = cpu_to_le64(vmgpu_paging_vm_pte_bus(&vdev->paging_vm, va));
	cmd.fill.size = cpu_to_le64((size >> VMGPU_PAGE_SHIFT) * sizeof(__le64));
	return cmd;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_paging_vm_test.c"
#endif
