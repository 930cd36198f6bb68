// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: the aperture segment's manager. Only allocations that hold
 * aperture entries are worth evicting for aperture space, any for room
 * under the limit on resident system memory, and an
 * AccessedPhysically allocation in system memory is only where it belongs
 * while it holds its entries. Included by vmgpu_gart.c.
 */

#include <kunit/test.h>

#include "vmgpu_drm.h"
#include "vmgpu_kunit.h"

static struct vmgpu_gart_resource *gart_res(struct kunit *test, struct vmgpu_device *vdev,
					    u64 pages)
{
	struct vmgpu_gart_resource *gres = kunit_kzalloc(test, sizeof(*gres), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, gres);
	gres->base.mem_type = TTM_PL_TT;
	if (pages) {
		int ret = drm_mm_insert_node_in_range(&vdev->gart.mm, &gres->node, pages, 0, 0,
						      10, 10 + pages, DRM_MM_INSERT_LOW);

		KUNIT_ASSERT_EQ(test, 0, ret);
	}
	return gres;
}

/* A physically accessed allocation, as TTM's resource sees it. */
static struct ttm_buffer_object *gart_physical_bo(struct kunit *test,
						  struct vmgpu_device *vdev)
{
	struct vmgpu_bo *vbo = kunit_kzalloc(test, sizeof(*vbo), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, vbo);
	vbo->tbo.base.dev = &vdev->drm;
	vbo->flags = DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY;
	vbo->tbo.destroy = vmgpu_bo_destroy;
	return &vbo->tbo;
}

/*
 * For aperture space (a place with a range) only allocations holding
 * entries there; for room under the limit on resident system memory (no
 * range: system-segment allocations, hops, TTM's swap-out) any.
 */
static void gart_intersects_by_need(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_gart_resource *mapped = gart_res(test, vdev, 10);
	struct vmgpu_gart_resource *unmapped = gart_res(test, vdev, 0);
	const struct ttm_place aperture = {
		.mem_type = TTM_PL_TT, .lpfn = VMGPU_KUNIT_GART_PAGES,
	};
	const struct ttm_place above = {
		.mem_type = TTM_PL_TT, .fpfn = 20, .lpfn = VMGPU_KUNIT_GART_PAGES,
	};
	const struct ttm_place room = { .mem_type = TTM_PL_TT };
	struct ttm_resource_manager *man = &vdev->gart.manager;

	KUNIT_EXPECT_TRUE(test, vmgpu_gart_intersects(man, &mapped->base, &aperture, SZ_4K));
	KUNIT_EXPECT_FALSE(test, vmgpu_gart_intersects(man, &mapped->base, &above, SZ_4K));
	KUNIT_EXPECT_FALSE(test, vmgpu_gart_intersects(man, &unmapped->base, &aperture, SZ_4K));
	KUNIT_EXPECT_TRUE(test, vmgpu_gart_intersects(man, &unmapped->base, &room, SZ_4K));
	KUNIT_EXPECT_TRUE(test, vmgpu_gart_intersects(man, &mapped->base, &room, SZ_4K));
	/* With less room under the limit than the resource holds, any helps. */
	man->size = SZ_4K;
	KUNIT_EXPECT_TRUE(test, vmgpu_gart_intersects(man, &unmapped->base, &aperture, SZ_8K));
	drm_mm_remove_node(&mapped->node);
}

static void gart_compatible_when_mapped_as_needed(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_gart_resource *mapped = gart_res(test, vdev, 10);
	struct vmgpu_gart_resource *unmapped = gart_res(test, vdev, 0);
	const struct ttm_place tt = { .mem_type = TTM_PL_TT };
	const struct ttm_place hop = { .mem_type = TTM_PL_TT, .flags = TTM_PL_FLAG_TEMPORARY };
	struct ttm_resource_manager *man = &vdev->gart.manager;

	mapped->base.bo = gart_physical_bo(test, vdev);
	unmapped->base.bo = mapped->base.bo;
	KUNIT_EXPECT_TRUE(test, vmgpu_gart_compatible(man, &mapped->base, &tt, SZ_4K));
	KUNIT_EXPECT_FALSE(test, vmgpu_gart_compatible(man, &unmapped->base, &tt, SZ_4K));
	/* The temporary hop of a move is reached by bus address. */
	KUNIT_EXPECT_TRUE(test, vmgpu_gart_compatible(man, &unmapped->base, &hop, SZ_4K));
	drm_mm_remove_node(&mapped->node);
}

static struct kunit_case vmgpu_gart_cases[] = {
	KUNIT_CASE(gart_intersects_by_need),
	KUNIT_CASE(gart_compatible_when_mapped_as_needed),
	{}
};

static struct kunit_suite vmgpu_gart_suite = {
	.name = "vmgpu_gart",
	.test_cases = vmgpu_gart_cases,
};

kunit_test_suite(vmgpu_gart_suite);
