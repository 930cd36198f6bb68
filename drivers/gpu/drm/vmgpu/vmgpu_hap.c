// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/bitmap.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/ttm/ttm_bo.h>

#include "vmgpu_drm.h"
#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_hap.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_trace.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: CPU host aperture
 *
 * Seed "Lock2", CpuHostAperture: when the VRAM BAR cannot cover VRAM, the
 * device's BAR 4 is a page-based window onto it. Each of its pages is
 * redirected by one entry of a table in BAR 0 to any VRAM page. The driver
 * lends them page by page: each page of an allocation beyond the VRAM BAR
 * gets one, wherever one is free, so a range the CPU maps is a
 * non-contiguous set of host-aperture pages. An allocation gets all it
 * needs at once, at its first CPU access or lock (a lock covers the whole
 * allocation), which is why only allocations the host aperture can hold
 * whole are placed beyond the BAR. Faults map them through
 * vmgpu_hap_pfn(); the pages the BAR reaches are mapped through it
 * directly. A linear page's entry makes its host-aperture page a direct
 * window onto VRAM (contract 1.9), as fast as the BAR; a DETILE page goes
 * through the device at each access. Windows follow the table at the next
 * read of an entry, which each batch of writes ends with.
 *
 * An allocation keeps its pages until it moves (even while locked: its
 * mapping then faults onto the new backing) or is freed, or, while it is
 * not locked, until another allocation needs them: unlocked holders are
 * kept least recently mapped first and give theirs back in that order (as
 * i915 steals fence registers). Locked allocations keep theirs, so the
 * memory locked through the host aperture is at most its size; a lock
 * that finds no room moves the allocation to system memory instead.
 *
 * Before an entry is reused, every CPU mapping through it is revoked:
 * taking pages back unmaps the holder's mappings under its reservation,
 * and TTM unmaps before any move. Mappings fault back in under the
 * reservation, which is what makes the lent pages stable for them.
 */

static void __iomem *vmgpu_hap_entry(struct vmgpu_device *vdev, u32 slot)
{
	return vdev->mmio + VMGPU_HAP_TABLE_OFFSET + (size_t)slot * sizeof(u64);
}

/* Entries are only written while the device is there. */
static void vmgpu_hap_write_entry(struct vmgpu_device *vdev, u32 slot, u64 pte)
{
	int idx;

	if (drm_dev_enter(&vdev->drm, &idx)) {
		writeq(pte, vmgpu_hap_entry(vdev, slot));
		drm_dev_exit(idx);
	}
}

/*
 * Reading an entry back flushes the posted writes before the CPU maps
 * (or stops mapping) the pages, as for GGTT updates, and brings the
 * device's direct windows up to date with them.
 */
static void vmgpu_hap_flush(struct vmgpu_device *vdev, u32 slot)
{
	int idx;

	if (drm_dev_enter(&vdev->drm, &idx)) {
		readq(vmgpu_hap_entry(vdev, slot));
		drm_dev_exit(idx);
	}
}

static void vmgpu_hap_release(struct drm_device *drm, void *arg)
{
	struct vmgpu_hap *hap = arg;

	bitmap_free(hap->used);
}

/**
 * vmgpu_hap_init() - take over the CPU host aperture, if the device has one
 * @vdev: the device, with registers mapped and VRAM discovered
 *
 * Return: 0 (also without a host aperture) or a negative errno.
 */
int vmgpu_hap_init(struct vmgpu_device *vdev)
{
	struct pci_dev *pdev = vmgpu_pdev(vdev);
	struct vmgpu_hap *hap = &vdev->hap;
	u32 pages, slot;
	int ret;

	BUILD_BUG_ON(PAGE_SIZE != SZ_4K);
	INIT_LIST_HEAD(&hap->lru);
	ret = drmm_mutex_init(&vdev->drm, &hap->lock);
	if (ret)
		return ret;
	if (!(vdev->caps & VMGPU_CAP_HOST_APERTURE))
		return 0;
	pages = min_t(u64, vmgpu_read32(vdev, VMGPU_REG_HOST_APERTURE_PAGES),
		      vdev->vram.host_aperture_size >> PAGE_SHIFT);
	if (pages > VMGPU_HAP_MAX_PAGES) {
		drm_warn(&vdev->drm, "host aperture of %u pages, using the first %u\n",
			 pages, VMGPU_HAP_MAX_PAGES);
		pages = VMGPU_HAP_MAX_PAGES;
	}
	if (!pages)
		return 0;
	ret = pcim_request_region(pdev, VMGPU_BAR_HOST_APERTURE,
				  dev_driver_string(&pdev->dev));
	if (ret)
		return ret;
	hap->used = bitmap_zalloc(pages, GFP_KERNEL);
	if (!hap->used)
		return -ENOMEM;
	ret = drmm_add_action_or_reset(&vdev->drm, vmgpu_hap_release, hap);
	if (ret)
		return ret;
	/* Whatever firmware or an earlier driver left there is not ours. */
	for (slot = 0; slot < pages; slot++)
		writeq(0, vmgpu_hap_entry(vdev, slot));
	readq(vmgpu_hap_entry(vdev, 0));
	hap->bar_start = pci_resource_start(pdev, VMGPU_BAR_HOST_APERTURE);
	hap->num_pages = pages;
	hap->num_free = pages;
	return 0;
}

/* Pages of @res beyond the VRAM BAR. */
static u32 vmgpu_hap_pages_beyond_bar(struct vmgpu_device *vdev, struct ttm_resource *res)
{
	struct vmgpu_res_cursor cur;
	u64 bytes = 0;

	vmgpu_res_first(vdev, res, NULL, res->size, &cur);
	for (; cur.remaining; vmgpu_res_next(&cur, cur.size))
		if (cur.start + cur.size > vdev->vram.bar_size)
			bytes += cur.start + cur.size - max(cur.start, vdev->vram.bar_size);
	return bytes >> PAGE_SHIFT;
}

/*
 * A swizzled allocation is only seen linear through the host aperture,
 * which detiles: every page of it goes through it, not only those beyond
 * the BAR.
 */
static bool vmgpu_hap_detiles(struct vmgpu_bo *vbo)
{
	return vbo->flags & DRM_VMGPU_ALLOC_SWIZZLED;
}

static bool vmgpu_hap_page_needs_slot(struct vmgpu_bo *vbo, u64 vram)
{
	return vmgpu_hap_detiles(vbo) || vram >= vmgpu_bo_device(vbo)->vram.bar_size;
}

/**
 * vmgpu_hap_res_invisible() - whether the CPU needs the host aperture
 * @vdev: the device
 * @res: a resource
 *
 * Return: true for a resource in a memory segment with pages beyond the
 * VRAM BAR.
 */
bool vmgpu_hap_res_invisible(struct vmgpu_device *vdev, struct ttm_resource *res)
{
	return res && res->mem_type >= VMGPU_TTM_FIRST_SEGMENT &&
	       vmgpu_hap_pages_beyond_bar(vdev, res);
}

/* Give @vbo's pages back, with hap->lock and its reservation held. */
static void vmgpu_hap_free_slots(struct vmgpu_device *vdev, struct vmgpu_bo *vbo)
{
	struct vmgpu_hap *hap = &vdev->hap;
	unsigned long page, pages = vbo->tbo.base.size >> PAGE_SHIFT;
	u32 slot = 0;

	lockdep_assert_held(&hap->lock);
	dma_resv_assert_held(vbo->tbo.base.resv);
	for (page = 0; page < pages; page++) {
		slot = vbo->hap_slots[page];
		if (slot == VMGPU_HAP_NO_SLOT)
			continue;
		vmgpu_hap_write_entry(vdev, slot, 0);
		__clear_bit(slot, hap->used);
	}
	vmgpu_hap_flush(vdev, slot == VMGPU_HAP_NO_SLOT ? 0 : slot);
	hap->num_free += vbo->hap_count;
	trace_vmgpu_hap(&vbo->tbo, vbo->hap_count, false);
	kvfree(vbo->hap_slots);
	vbo->hap_slots = NULL;
	vbo->hap_count = 0;
	list_del_init(&vbo->hap_link);
}

/*
 * Take pages back from unlocked holders, least recently mapped first,
 * until @need are free. A holder busy under its reservation (faulting,
 * moving) is passed over, and so is a pinned one: a kernel mapping
 * (vmgpu_gem_vmap()) may go through its pages. If that leaves too few,
 * nobody loses theirs.
 */
static int vmgpu_hap_steal(struct vmgpu_device *vdev, u32 need)
{
	struct vmgpu_hap *hap = &vdev->hap;
	struct vmgpu_bo *victim, *next;
	u64 could = hap->num_free;
	LIST_HEAD(taken);

	lockdep_assert_held(&hap->lock);
	list_for_each_entry_safe(victim, next, &hap->lru, hap_link) {
		if (!dma_resv_trylock(victim->tbo.base.resv))
			continue;
		if (victim->tbo.pin_count) {
			dma_resv_unlock(victim->tbo.base.resv);
			continue;
		}
		list_move_tail(&victim->hap_link, &taken);
		could += victim->hap_count;
		if (could >= need)
			break;
	}

	list_for_each_entry_safe(victim, next, &taken, hap_link) {
		if (could >= need) {
			/* No CPU mapping may point at an entry about to be reused. */
			ttm_bo_unmap_virtual(&victim->tbo);
			vmgpu_hap_free_slots(vdev, victim);
			hap->steals++;
		}
		dma_resv_unlock(victim->tbo.base.resv);
	}
	/* Those kept go back to the front, still the least recently used. */
	list_splice(&taken, &hap->lru);
	return could >= need ? 0 : -ENOSPC;
}

/* Lend a free page to each page of @vbo beyond the BAR. */
static void vmgpu_hap_fill_slots(struct vmgpu_device *vdev, struct vmgpu_bo *vbo)
{
	struct vmgpu_hap *hap = &vdev->hap;
	struct ttm_resource *res = vbo->tbo.resource;
	u64 pte_flags = VMGPU_HAP_PTE_VALID;
	struct vmgpu_res_cursor cur;
	u32 slot = 0;

	if (vmgpu_hap_detiles(vbo))
		pte_flags |= VMGPU_HAP_PTE_DETILE;
	vmgpu_res_first(vdev, res, NULL, res->size, &cur);
	for (; cur.remaining; vmgpu_res_next(&cur, cur.size)) {
		unsigned long page = (res->size - cur.remaining) >> PAGE_SHIFT;
		u64 vram;

		for (vram = cur.start; vram < cur.start + cur.size; vram += PAGE_SIZE, page++) {
			if (!vmgpu_hap_page_needs_slot(vbo, vram))
				continue;
			slot = find_next_zero_bit(hap->used, hap->num_pages, slot);
			__set_bit(slot, hap->used);
			vmgpu_hap_write_entry(vdev, slot, vram | pte_flags);
			vbo->hap_slots[page] = slot;
			vbo->hap_count++;
		}
	}
	hap->num_free -= vbo->hap_count;
	vmgpu_hap_flush(vdev, slot);
}

/**
 * vmgpu_hap_map() - map an allocation's pages beyond the BAR for the CPU
 * @vbo: the allocation, reserved, in a memory segment
 *
 * Lends a host-aperture page to each of its VRAM pages the BAR does not
 * reach (to every page of a swizzled one, with DETILE), taking pages back
 * from unlocked allocations if needed. An
 * allocation that has them already is only marked most recently used.
 *
 * Return: 0; -ENOSPC if the host aperture (or its lack) cannot hold it
 * now; -ENOMEM.
 */
int vmgpu_hap_map(struct vmgpu_bo *vbo)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	struct vmgpu_hap *hap = &vdev->hap;
	unsigned long pages = vbo->tbo.base.size >> PAGE_SHIFT;
	u32 need;
	u32 *slots;
	int ret = 0;

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (vbo->hap_slots) {
		vmgpu_hap_set_locked(vbo, !!vbo->locked_by);
		return 0;
	}
	need = vmgpu_hap_detiles(vbo) ? pages :
	       vmgpu_hap_pages_beyond_bar(vdev, vbo->tbo.resource);
	if (!need)
		return 0;
	if (need > hap->num_pages)
		return -ENOSPC;
	slots = kvmalloc_array(pages, sizeof(*slots), GFP_KERNEL);
	if (!slots)
		return -ENOMEM;
	memset32(slots, VMGPU_HAP_NO_SLOT, pages);

	mutex_lock(&hap->lock);
	if (hap->num_free < need)
		ret = vmgpu_hap_steal(vdev, need);
	if (!ret) {
		vbo->hap_slots = slots;
		vmgpu_hap_fill_slots(vdev, vbo);
		if (!vbo->locked_by)
			list_add_tail(&vbo->hap_link, &hap->lru);
		trace_vmgpu_hap(&vbo->tbo, vbo->hap_count, true);
	}
	mutex_unlock(&hap->lock);
	if (ret)
		kvfree(slots);
	return ret;
}

/**
 * vmgpu_hap_unmap() - an allocation gives its host-aperture pages back
 * @vbo: the allocation, reserved, whose CPU mappings through them are
 *	 revoked already (TTM does before moves; none remain at release)
 */
void vmgpu_hap_unmap(struct vmgpu_bo *vbo)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (!vbo->hap_slots)
		return;
	mutex_lock(&vdev->hap.lock);
	vmgpu_hap_free_slots(vdev, vbo);
	mutex_unlock(&vdev->hap.lock);
}

/**
 * vmgpu_hap_set_locked() - a lock on an allocation starts or ends
 * @vbo: the allocation, reserved
 * @locked: whether it is locked now
 *
 * A locked allocation's pages are not taken back; an unlocked one's go
 * back to the end of the queue, as most recently used.
 */
void vmgpu_hap_set_locked(struct vmgpu_bo *vbo, bool locked)
{
	struct vmgpu_hap *hap = &vmgpu_bo_device(vbo)->hap;

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (!vbo->hap_slots)
		return;
	mutex_lock(&hap->lock);
	if (locked)
		list_del_init(&vbo->hap_link);
	else
		list_move_tail(&vbo->hap_link, &hap->lru);
	mutex_unlock(&hap->lock);
}

/**
 * vmgpu_hap_pfn() - where the CPU maps one page of an allocation in VRAM
 * @vbo: the allocation, reserved, in a memory segment, its pages beyond
 *	 the BAR mapped by vmgpu_hap_map()
 * @page: the page index in the allocation
 *
 * Return: the page frame in the VRAM BAR or, beyond it, in the host
 * aperture.
 */
unsigned long vmgpu_hap_pfn(struct vmgpu_bo *vbo, unsigned long page)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	u64 vram = vmgpu_vram_res_page_offset(vdev, vbo->tbo.resource, page);

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (!vmgpu_hap_page_needs_slot(vbo, vram))
		return (vdev->vram.bar_start + vram) >> PAGE_SHIFT;
	return (vdev->hap.bar_start >> PAGE_SHIFT) + vbo->hap_slots[page];
}

/**
 * vmgpu_hap_used_pages() - host-aperture pages lent to allocations
 * @vdev: the device
 *
 * Return: the pages, locked or not, a snapshot.
 */
u32 vmgpu_hap_used_pages(struct vmgpu_device *vdev)
{
	struct vmgpu_hap *hap = &vdev->hap;
	u32 used;

	mutex_lock(&hap->lock);
	used = hap->num_pages - hap->num_free;
	mutex_unlock(&hap->lock);
	return used;
}

/**
 * vmgpu_hap_print() - the host aperture's state, for debugfs
 * @vdev: the device
 * @p: where to print
 */
void vmgpu_hap_print(struct vmgpu_device *vdev, struct drm_printer *p)
{
	struct vmgpu_hap *hap = &vdev->hap;
	struct vmgpu_bo *vbo;
	u32 unlocked = 0;

	mutex_lock(&hap->lock);
	list_for_each_entry(vbo, &hap->lru, hap_link)
		unlocked += vbo->hap_count;
	drm_printf(p, "pages %u free %u unlocked %u locked %u steals %llu\n",
		   hap->num_pages, hap->num_free, unlocked,
		   hap->num_pages - hap->num_free - unlocked, hap->steals);
	mutex_unlock(&hap->lock);
}
