// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_placement.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_gart.h"

/**
 * DOC: aperture segment
 *
 * Seed "GPU segments": the aperture segment is one global page table that
 * makes scattered system pages look contiguous to the GPU, and the system
 * segment (id 0) is how VidMm names system memory that is not mapped. In
 * TTM both are the TT memory type: system pages, DMA-mapped through the
 * IOMMU. Only allocations that need a physical reference get a range of
 * the aperture: AccessedPhysically ones whenever they are resident in
 * system memory (primaries will while displayed). Everything else in TT
 * is "not mapped", reported as the system segment, and reached by the
 * device through its pages' bus addresses, which keeps aperture pressure
 * low as the seed asks.
 *
 * The table is an array of 64-bit entries in coherent system memory that
 * the device reads on every access; entries are written when a range is
 * bound after TTM populated the pages, and cleared when the range is freed,
 * which TTM does only once the allocation's moves have completed.
 *
 * System memory the device reaches stays in RAM while it is resident:
 * TTM swaps it out only by evicting it first. So the TT manager has a
 * size, the limit on system memory resident for the device (mapped into
 * the aperture or not; the hops of moves are not counted), like amdgpu's
 * GTT size: by default TTM's own page limit, half of RAM, else the module
 * parameter system_mb. Past it, TTM evicts allocations in least recently
 * used order, waiting for those still in use, to TTM system, out of the
 * device's reach, where TTM's swap-out takes them under memory pressure;
 * that swap-out also evicts idle resident ones itself.
 */

static unsigned int vmgpu_system_mb;
module_param_named(system_mb, vmgpu_system_mb, uint, 0444);
MODULE_PARM_DESC(system_mb,
		 "MiB of system memory resident for the device at once (0: TTM's page limit, half of RAM)");

static struct vmgpu_gart_resource *to_gart_res(struct ttm_resource *res)
{
	return container_of(res, struct vmgpu_gart_resource, base);
}

static struct vmgpu_gart *to_gart(struct ttm_resource_manager *man)
{
	return container_of(man, struct vmgpu_gart, manager);
}

static int vmgpu_gart_alloc(struct ttm_resource_manager *man,
			    struct ttm_buffer_object *tbo,
			    const struct ttm_place *place,
			    struct ttm_resource **res)
{
	struct vmgpu_gart *gart = to_gart(man);
	struct vmgpu_gart_resource *gres;
	unsigned long pages = PFN_UP(tbo->base.size);
	int ret;

	gres = kzalloc(sizeof(*gres), GFP_KERNEL);
	if (!gres)
		return -ENOMEM;
	ttm_resource_init(tbo, place, &gres->base);

	/*
	 * Counted in the usage already: over the limit, TTM evicts. Not for
	 * the hop of a move, whose pages are about to go or come anyway: an
	 * allocation in VRAM may be larger than the limit (as amdgpu's GTT).
	 */
	if (!(place->flags & TTM_PL_FLAG_TEMPORARY) &&
	    ttm_resource_manager_usage(man) > man->size) {
		ret = -ENOSPC;
		goto err_free;
	}
	if (vmgpu_bo_needs_aperture(tbo, place)) {
		/* -ENOSPC, never -E2BIG: TTM then tries the next place. */
		if (pages > gart->num_pages) {
			ret = -ENOSPC;
			goto err_free;
		}
		spin_lock(&gart->lock);
		ret = drm_mm_insert_node_in_range(&gart->mm, &gres->node, pages, 0, 0,
						  place->fpfn,
						  place->lpfn ?: gart->num_pages,
						  DRM_MM_INSERT_BEST);
		if (!ret)
			gart->mapped_bytes += tbo->base.size;
		spin_unlock(&gart->lock);
		if (ret) {
			ret = -ENOSPC;
			goto err_free;
		}
		gres->base.start = gres->node.start;
	}
	*res = &gres->base;
	return 0;

err_free:
	ttm_resource_fini(man, &gres->base);
	kfree(gres);
	return ret;
}

static void vmgpu_gart_free(struct ttm_resource_manager *man,
			    struct ttm_resource *res)
{
	struct vmgpu_gart_resource *gres = to_gart_res(res);
	struct vmgpu_gart *gart = to_gart(man);
	struct vmgpu_device *vdev = container_of(gart, struct vmgpu_device, gart);
	int idx;

	if (drm_mm_node_allocated(&gres->node)) {
		/* After unplug the table is gone with the device. */
		if (drm_dev_enter(&vdev->drm, &idx)) {
			memset(&gart->table[gres->node.start], 0,
			       gres->node.size * sizeof(*gart->table));
			drm_dev_exit(idx);
		}
		spin_lock(&gart->lock);
		drm_mm_remove_node(&gres->node);
		gart->mapped_bytes -= res->size;
		spin_unlock(&gart->lock);
	}
	ttm_resource_fini(man, res);
	kfree(gres);
}

/*
 * Whether evicting a resource (of @size bytes) makes room for @place.
 * Every resource frees room under the limit, which is all a place without
 * a range needs (a system-segment allocation, TTM's swap-out); a place
 * with a range needs aperture entries there (vmgpu_bo_tt_place()), which
 * a resource without aperture space does not free, unless the limit is
 * short too: less room left under it than @size.
 */
static bool vmgpu_gart_intersects(struct ttm_resource_manager *man,
				  struct ttm_resource *res,
				  const struct ttm_place *place, size_t size)
{
	struct vmgpu_gart_resource *gres = to_gart_res(res);

	if (!place->lpfn || ttm_resource_manager_usage(man) + size > man->size)
		return true;
	return drm_mm_node_allocated(&gres->node) &&
	       gres->node.start < place->lpfn &&
	       gres->node.start + gres->node.size > place->fpfn;
}

/*
 * Whether a resource already satisfies @place: mapped if it must be, and
 * not mapped if the entries were only lent (a primary no longer shown).
 */
static bool vmgpu_gart_compatible(struct ttm_resource_manager *man,
				  struct ttm_resource *res,
				  const struct ttm_place *place, size_t size)
{
	struct vmgpu_gart_resource *gres = to_gart_res(res);
	u64 end = place->lpfn ?: to_gart(man)->num_pages;

	if (!res->bo)
		return true;
	if (!vmgpu_bo_needs_aperture(res->bo, place))
		return !drm_mm_node_allocated(&gres->node) ||
		       !vmgpu_bo_gives_back_aperture(res->bo);
	return drm_mm_node_allocated(&gres->node) && gres->node.start >= place->fpfn &&
	       gres->node.start + gres->node.size <= end;
}

static void vmgpu_gart_debug(struct ttm_resource_manager *man,
			     struct drm_printer *printer)
{
	struct vmgpu_gart *gart = to_gart(man);

	spin_lock(&gart->lock);
	drm_printf(printer, "aperture: %llu bytes mapped of %llu\n",
		   gart->mapped_bytes, (u64)gart->num_pages << PAGE_SHIFT);
	drm_mm_print(&gart->mm, printer);
	spin_unlock(&gart->lock);
}

static const struct ttm_resource_manager_func vmgpu_gart_func = {
	.alloc = vmgpu_gart_alloc,
	.free = vmgpu_gart_free,
	.intersects = vmgpu_gart_intersects,
	.compatible = vmgpu_gart_compatible,
	.debug = vmgpu_gart_debug,
};

/**
 * vmgpu_gart_res_offset() - the aperture range of a TT resource
 * @res: a TT resource
 * @offset: out, its offset in the aperture segment
 *
 * Return: true if the resource is mapped into the aperture.
 */
bool vmgpu_gart_res_offset(struct ttm_resource *res, u64 *offset)
{
	struct vmgpu_gart_resource *gres = to_gart_res(res);

	if (!drm_mm_node_allocated(&gres->node))
		return false;
	*offset = gres->node.start << PAGE_SHIFT;
	return true;
}

/**
 * vmgpu_gart_bind() - point a TT resource's aperture range at its pages
 * @vdev: the device
 * @res: a TT resource
 * @tt: its populated, DMA-mapped pages
 *
 * Does nothing for resources without an aperture range.
 */
void vmgpu_gart_bind(struct vmgpu_device *vdev, struct ttm_resource *res,
		     struct ttm_tt *tt)
{
	struct vmgpu_gart_resource *gres = to_gart_res(res);
	unsigned long i;

	if (!drm_mm_node_allocated(&gres->node))
		return;
	for (i = 0; i < tt->num_pages; i++)
		vdev->gart.table[gres->node.start + i] =
			cpu_to_le64((tt->dma_address[i] & VMGPU_GART_PTE_ADDR_MASK) |
				    VMGPU_GART_PTE_VALID);
	/* The device reads entries by DMA; they must land before any command. */
	dma_wmb();
}

/**
 * vmgpu_gart_mapped_bytes() - bytes of allocations mapped into the aperture
 * @vdev: the device
 *
 * Return: the aperture segment's usage.
 */
u64 vmgpu_gart_mapped_bytes(struct vmgpu_device *vdev)
{
	u64 bytes;

	spin_lock(&vdev->gart.lock);
	bytes = vdev->gart.mapped_bytes;
	spin_unlock(&vdev->gart.lock);
	return bytes;
}

/* devres: the device must not read the table once its memory is freed. */
static void vmgpu_gart_hw_stop(void *arg)
{
	vmgpu_write32(arg, VMGPU_REG_GART_NUM_PAGES, 0);
}

/**
 * vmgpu_gart_init() - allocate the aperture table and the TT manager
 * @vdev: the device, with its TTM device initialised
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_gart_init(struct vmgpu_device *vdev)
{
	struct vmgpu_gart *gart = &vdev->gart;
	struct device *dev = vdev->drm.dev;
	u64 limit;
	int ret;

	gart->num_pages = vdev->gart_pages;
	gart->table = dmam_alloc_coherent(dev, gart->num_pages * sizeof(*gart->table),
					  &gart->table_bus, GFP_KERNEL);
	if (!gart->table)
		return -ENOMEM;
	spin_lock_init(&gart->lock);
	drm_mm_init(&gart->mm, 0, gart->num_pages);

	vmgpu_write32(vdev, VMGPU_REG_GART_BASE_LO, lower_32_bits(gart->table_bus));
	vmgpu_write32(vdev, VMGPU_REG_GART_BASE_HI, upper_32_bits(gart->table_bus));
	vmgpu_write32(vdev, VMGPU_REG_GART_NUM_PAGES, gart->num_pages);
	ret = devm_add_action_or_reset(dev, vmgpu_gart_hw_stop, vdev);
	if (ret)
		return ret;

	gart->manager.use_tt = true;
	gart->manager.func = &vmgpu_gart_func;
	/* Room for system memory, not just the aperture: most of TT is unmapped. */
	limit = vmgpu_system_mb ? (u64)vmgpu_system_mb << (20 - PAGE_SHIFT) :
		ttm_tt_pages_limit();
	limit = min_t(u64, limit, totalram_pages());
	ttm_resource_manager_init(&gart->manager, &vdev->ttm, limit << PAGE_SHIFT);
	ttm_set_driver_manager(&vdev->ttm, TTM_PL_TT, &gart->manager);
	ttm_resource_manager_set_used(&gart->manager, true);
	return 0;
}

/**
 * vmgpu_gart_system_limit() - the limit on system memory resident for the
 * device
 * @vdev: the device
 *
 * Return: bytes, mapped into the aperture or not.
 */
u64 vmgpu_gart_system_limit(struct vmgpu_device *vdev)
{
	return vdev->gart.manager.size;
}

/**
 * vmgpu_gart_system_used() - system memory resident for the device now
 * @vdev: the device
 *
 * Return: bytes, mapped into the aperture or not, temporary hops of moves
 * included.
 */
u64 vmgpu_gart_system_used(struct vmgpu_device *vdev)
{
	return ttm_resource_manager_usage(&vdev->gart.manager);
}

/**
 * vmgpu_gart_fini() - evict TT and tear the manager down
 * @vdev: the device; the table itself goes with the PCI device
 */
void vmgpu_gart_fini(struct vmgpu_device *vdev)
{
	struct vmgpu_gart *gart = &vdev->gart;

	ttm_resource_manager_set_used(&gart->manager, false);
	ttm_resource_manager_evict_all(&vdev->ttm, &gart->manager);
	ttm_resource_manager_cleanup(&gart->manager);
	ttm_set_driver_manager(&vdev->ttm, TTM_PL_TT, NULL);
	drm_mm_takedown(&gart->mm);
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_gart_test.c"
#endif
