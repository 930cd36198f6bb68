/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 *
 * A device for KUnit: the layout of the real one in miniature (a 16 MiB
 * segment of 64 KiB pages, then a 4 MiB segment of 4 KiB pages, a 1 MiB
 * aperture) with buddy allocators and an aperture range allocator behind
 * it, and no hardware, TTM device or scheduler. Enough for the pure logic:
 * placement, managers, the resource cursor, paging-operation building.
 */
#ifndef _VMGPU_KUNIT_H_
#define _VMGPU_KUNIT_H_

#include <kunit/test.h>
#include <linux/sizes.h>

#include "../vmgpu_device.h"
#include "../vmgpu_vram_mgr.h"

#define VMGPU_KUNIT_GART_PAGES	256
/* The limit on system memory resident for the device. */
#define VMGPU_KUNIT_SYSTEM_LIMIT	SZ_64M

static void vmgpu_kunit_device_exit(void *arg)
{
	struct vmgpu_device *vdev = arg;
	u32 i;

	for (i = 0; i < vdev->num_segments; i++)
		gpu_buddy_fini(&vdev->vram_mgrs[i].mm);
	drm_mm_takedown(&vdev->gart.mm);
}

/* @bar_size: bytes of VRAM the CPU reaches directly. */
static inline struct vmgpu_device *vmgpu_kunit_device(struct kunit *test, u64 bar_size)
{
	struct vmgpu_device *vdev = kunit_kzalloc(test, sizeof(*vdev), GFP_KERNEL);
	int ret;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, vdev);
	vdev->num_segments = 2;
	vdev->segments[0] = (struct vmgpu_segment){
		.id = 1, .page_size = SZ_64K, .vram_base = 0, .size = SZ_16M,
		.mem_type = VMGPU_TTM_FIRST_SEGMENT,
	};
	vdev->segments[1] = (struct vmgpu_segment){
		.id = 2, .page_size = SZ_4K, .vram_base = SZ_16M, .size = SZ_4M,
		.mem_type = VMGPU_TTM_FIRST_SEGMENT + 1,
	};
	vdev->vram.size = SZ_16M + SZ_4M;
	vdev->vram.bar_size = bar_size;
	vdev->gart_pages = VMGPU_KUNIT_GART_PAGES;
	vdev->gart.num_pages = VMGPU_KUNIT_GART_PAGES;
	vdev->gart.manager.size = VMGPU_KUNIT_SYSTEM_LIMIT;
	/* Its usage is read under TTM's LRU lock. */
	spin_lock_init(&vdev->ttm.lru_lock);
	vdev->gart.manager.bdev = &vdev->ttm;
	vdev->rings[VMGPU_RING_PAGING].num_slots = 16;
	vdev->rings[VMGPU_RING_PAGING].vdev = vdev;
	for (i = 0; i < vdev->num_segments; i++) {
		struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[i];

		mgr->segment = &vdev->segments[i];
		mutex_init(&mgr->lock);
		KUNIT_ASSERT_EQ(test, 0, gpu_buddy_init(&mgr->mm, mgr->segment->size,
							mgr->segment->page_size));
		vdev->ttm.man_drv[mgr->segment->mem_type] = &mgr->manager;
	}
	drm_mm_init(&vdev->gart.mm, 0, VMGPU_KUNIT_GART_PAGES);
	spin_lock_init(&vdev->gart.lock);
	ret = kunit_add_action_or_reset(test, vmgpu_kunit_device_exit, vdev);
	KUNIT_ASSERT_EQ(test, 0, ret);
	return vdev;
}

/* Take the page at @offset of a memory segment into @list. */
static inline void vmgpu_kunit_take_page(struct kunit *test, struct vmgpu_vram_mgr *mgr,
					 u64 offset, struct list_head *list)
{
	u32 page = mgr->segment->page_size;
	const struct ttm_place exactly = {
		.fpfn = offset >> PAGE_SHIFT,
		.lpfn = (offset + page) >> PAGE_SHIFT,
	};
	int ret = vmgpu_vram_mgr_alloc_blocks(mgr, &exactly, page, list, NULL);

	KUNIT_ASSERT_EQ(test, 0, ret);
}

static inline void vmgpu_kunit_vram_res_free(struct vmgpu_device *vdev,
					     struct vmgpu_vram_resource *vres)
{
	u32 index = vres->base.mem_type - VMGPU_TTM_FIRST_SEGMENT;

	gpu_buddy_free_list(&vdev->vram_mgrs[index].mm, &vres->blocks, 0);
}

#endif
