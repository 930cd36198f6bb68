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
#include "vmgpu_vm_id.h"

/**
 * DOC: paging process GPU VA
 *
 * Seed "Allocation notification": the paging (system) process has a GPU
 * VA space of its own, through which the kernel maps an allocation before
 * it sends the device a NotifyAlloc for it. It is the device's VM 0, which
 * only the paging ring may use.
 *
 * Its size follows the seed's DXGKQAITYPE_PAGINGPROCESSGPUVASIZE: the
 * module parameter paging_va_mb if set (for testing), else the size the
 * device asks for (PAGING_VA_SIZE_MB, a QEMU property), else the greater
 * of a quarter of the largest memory segment and the hardware scheduling
 * log buffers (%VMGPU_SCHED_LOG_SIZE), and at most 4 GiB, since its page
 * tables stay resident. Notifications for larger allocations are sent in
 * chunks of that size.
 *
 * The page tables cover the whole space and are built at probe, in system
 * memory, and stay there (resident) until the device goes: mapping into
 * the space never allocates, so it cannot fail on the eviction and unmap
 * paths that need it. The space has one user at a time (&lock): it maps a
 * chunk, has the paging ring use it, waits, and clears the entries.
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
		pvm->leaves[va >> VMGPU_PAGING_VM_ENTRY_SHIFT(1)] = entries;
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

	ret = drmm_mutex_init(&vdev->drm, &pvm->lock);
	if (ret)
		return ret;
	pvm->size = vmgpu_paging_va_size(vdev);
	leaves = DIV_ROUND_UP_ULL(pvm->size, 1ull << VMGPU_PAGING_VM_ENTRY_SHIFT(1));
	pvm->leaves = drmm_kcalloc(&vdev->drm, leaves, sizeof(*pvm->leaves), GFP_KERNEL);
	if (!pvm->leaves)
		return -ENOMEM;
	ret = vmgpu_paging_vm_build(vdev, VMGPU_PT_LEVELS - 1, 0, &root);
	if (ret)
		return ret;
	vmgpu_vm_id_program(vdev, VMGPU_VM_PAGING, root);
	drm_dbg_driver(&vdev->drm, "paging process GPU VA: %llu KiB, %u page tables\n",
		       pvm->size >> 10, leaves);
	return 0;
}

static __le64 *vmgpu_paging_vm_pte(struct vmgpu_paging_vm *pvm, u64 va)
{
	return &pvm->leaves[va >> VMGPU_PAGING_VM_ENTRY_SHIFT(1)]
			   [(va >> VMGPU_PAGE_SHIFT) & (VMGPU_PT_ENTRIES - 1)];
}

/**
 * vmgpu_paging_vm_map() - map system pages at the start of the space
 * @vdev: the device
 * @pages: bus addresses of 4 KiB pages
 * @count: how many, at most the space's size in pages
 *
 * The caller holds &vmgpu_paging_vm.lock and is inside drm_dev_enter().
 * The entries are in effect for commands queued afterwards.
 */
void vmgpu_paging_vm_map(struct vmgpu_device *vdev, const dma_addr_t *pages, u64 count)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;
	u64 i;

	lockdep_assert_held(&pvm->lock);
	for (i = 0; i < count; i++)
		WRITE_ONCE(*vmgpu_paging_vm_pte(pvm, i << VMGPU_PAGE_SHIFT),
			   cpu_to_le64(VMGPU_PTE_VALID | VMGPU_PTE_WRITE |
				       (u64)VMGPU_SPACE_SYSTEM << VMGPU_PTE_SPACE_SHIFT |
				       pages[i]));
}

/**
 * vmgpu_paging_vm_unmap() - clear the first @count entries of the space
 * @vdev: the device
 * @count: entries that vmgpu_paging_vm_map() wrote
 *
 * Called once the commands that used them are done, under
 * &vmgpu_paging_vm.lock and inside drm_dev_enter(); the register read
 * orders the clears with the engine (hardware contract: no translation
 * cache), so nothing translates through them afterwards.
 */
void vmgpu_paging_vm_unmap(struct vmgpu_device *vdev, u64 count)
{
	struct vmgpu_paging_vm *pvm = &vdev->paging_vm;
	u64 i;

	lockdep_assert_held(&pvm->lock);
	for (i = 0; i < count; i++)
		WRITE_ONCE(*vmgpu_paging_vm_pte(pvm, i << VMGPU_PAGE_SHIFT), 0);
	vmgpu_read32(vdev, VMGPU_REG_MAGIC);
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_paging_vm_test.c"
#endif
