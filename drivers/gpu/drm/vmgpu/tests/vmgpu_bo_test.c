// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: where an allocation may live (seed "GPU segments" and Lock2):
 * the preferred segment first, CPU-accessible allocations inside the VRAM
 * BAR if it has room, else beyond if the host aperture could map them, the
 * others top-down beyond it, physical ones contiguous, the
 * aperture only for what fits it; where eviction sends it; whether it is
 * resident. Included by vmgpu_bo.c.
 */

#include <kunit/test.h>

#include "vmgpu_kunit.h"

/* The segment ids of the kunit device: two memory segments, aperture 3. */
#define S1	BIT(1)
#define S2	BIT(2)
#define AP	BIT(3)

static struct vmgpu_bo *bo_fake(struct kunit *test, struct vmgpu_device *vdev,
				u64 size, u32 flags, u32 segments, u32 preferred)
{
	struct vmgpu_bo *vbo = kunit_kzalloc(test, sizeof(*vbo), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, vbo);
	vbo->tbo.base.dev = &vdev->drm;
	vbo->tbo.base.size = size;
	vbo->tbo.destroy = vmgpu_bo_destroy;
	vbo->flags = flags;
	vbo->segments = segments;
	vbo->preferred = preferred;
	vmgpu_bo_build_placement(vbo);
	return vbo;
}

static void bo_expect_place(struct kunit *test, const struct ttm_place *place,
			    u32 mem_type, u32 flags, u32 lpfn)
{
	KUNIT_EXPECT_EQ(test, place->mem_type, mem_type);
	KUNIT_EXPECT_EQ(test, place->flags, flags);
	KUNIT_EXPECT_EQ(test, place->lpfn, lpfn);
	KUNIT_EXPECT_EQ(test, place->fpfn, 0);
}

/*
 * With a 4 MiB BAR: segment 1 partly visible, segment 2 not at all. The
 * visible part is desired (tried first, never evicted from for it), the
 * rest of the preferred segment comes next, beyond the BAR included.
 */
static void bo_cpu_access_prefers_the_bar(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_4M);
	struct vmgpu_bo *vbo;

	vdev->hap.num_pages = SZ_16M >> PAGE_SHIFT;
	vbo = bo_fake(test, vdev, SZ_1M, DRM_VMGPU_ALLOC_CPU_ACCESS, S1 | S2 | AP, 1);

	KUNIT_ASSERT_EQ(test, vbo->placement.num_placement, 4);
	bo_expect_place(test, &vbo->places[0], vdev->segments[0].mem_type,
			TTM_PL_FLAG_DESIRED, SZ_4M >> PAGE_SHIFT);
	bo_expect_place(test, &vbo->places[1], vdev->segments[0].mem_type, 0, 0);
	bo_expect_place(test, &vbo->places[2], vdev->segments[1].mem_type,
			TTM_PL_FLAG_FALLBACK, 0);
	bo_expect_place(test, &vbo->places[3], TTM_PL_TT, TTM_PL_FLAG_FALLBACK, 0);
	KUNIT_EXPECT_EQ(test, vbo->num_preferred, 2);

	/* Larger than the visible part: no desired place. */
	vbo = bo_fake(test, vdev, SZ_8M, DRM_VMGPU_ALLOC_CPU_ACCESS, S1 | AP, 1);
	KUNIT_ASSERT_EQ(test, vbo->placement.num_placement, 2);
	bo_expect_place(test, &vbo->places[0], vdev->segments[0].mem_type, 0, 0);
	KUNIT_EXPECT_EQ(test, vbo->num_preferred, 1);
}

static void bo_invisible_goes_top_down(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_4M);
	struct vmgpu_bo *vbo = bo_fake(test, vdev, SZ_1M, 0, S1 | S2, 2);

	KUNIT_ASSERT_EQ(test, vbo->placement.num_placement, 2);
	/* Segment 2 is wholly invisible: nothing to leave free there. */
	bo_expect_place(test, &vbo->places[0], vdev->segments[1].mem_type, 0, 0);
	bo_expect_place(test, &vbo->places[1], vdev->segments[0].mem_type,
			TTM_PL_FLAG_FALLBACK | TTM_PL_FLAG_TOPDOWN, 0);
}

static void bo_physical_is_contiguous(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_32M);
	struct vmgpu_bo *vbo = bo_fake(test, vdev, SZ_512K,
				       DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, S1 | AP, 3);

	KUNIT_ASSERT_EQ(test, vbo->placement.num_placement, 2);
	/* The range says it needs aperture entries (vmgpu_gart_intersects()). */
	bo_expect_place(test, &vbo->places[0], TTM_PL_TT, 0, VMGPU_KUNIT_GART_PAGES);
	bo_expect_place(test, &vbo->places[1], vdev->segments[0].mem_type,
			TTM_PL_FLAG_FALLBACK | TTM_PL_FLAG_CONTIGUOUS, 0);
	KUNIT_EXPECT_TRUE(test, vmgpu_bo_needs_aperture(&vbo->tbo, &vbo->places[0]));
}

/*
 * A preferred segment that can never hold the allocation (the aperture,
 * for a physically accessed one larger than it) leaves the first place to
 * the next of the set, not as a fallback (TTM's first pass skips those),
 * and MakeResident knows there is no preferred place.
 */
static void bo_impossible_preference(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_4M);
	struct vmgpu_bo *vbo = bo_fake(test, vdev, 2 * VMGPU_KUNIT_GART_PAGES * PAGE_SIZE,
				       DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, S2 | AP, 3);

	KUNIT_ASSERT_EQ(test, vbo->placement.num_placement, 1);
	bo_expect_place(test, &vbo->places[0], vdev->segments[1].mem_type,
			TTM_PL_FLAG_CONTIGUOUS, 0);
	KUNIT_EXPECT_EQ(test, vbo->num_preferred, 0);
}

/* Wholly beyond the BAR: CPU-accessible allocations may live there now. */
static void bo_cpu_access_beyond_the_bar(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_4M);
	struct vmgpu_bo *vbo;

	vdev->hap.num_pages = SZ_1M >> PAGE_SHIFT;
	vbo = bo_fake(test, vdev, SZ_1M, DRM_VMGPU_ALLOC_CPU_ACCESS, S1 | S2 | AP, 2);

	KUNIT_ASSERT_EQ(test, vbo->placement.num_placement, 3);
	bo_expect_place(test, &vbo->places[0], vdev->segments[1].mem_type, 0, 0);
	bo_expect_place(test, &vbo->places[1], vdev->segments[0].mem_type,
			TTM_PL_FLAG_FALLBACK, 0);
	bo_expect_place(test, &vbo->places[2], TTM_PL_TT, TTM_PL_FLAG_FALLBACK, 0);
	KUNIT_EXPECT_EQ(test, vbo->num_preferred, 1);
}

/*
 * Where the host aperture could not map it (none here, or smaller than
 * the allocation), only the visible part: a segment wholly beyond the BAR
 * is no place for it, and MakeResident knows.
 */
static void bo_cpu_access_without_host_aperture(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_4M);
	struct vmgpu_bo *vbo = bo_fake(test, vdev, SZ_1M, DRM_VMGPU_ALLOC_CPU_ACCESS,
				       S1 | S2 | AP, 2);

	KUNIT_ASSERT_EQ(test, vbo->placement.num_placement, 2);
	bo_expect_place(test, &vbo->places[0], vdev->segments[0].mem_type, 0,
			SZ_4M >> PAGE_SHIFT);
	bo_expect_place(test, &vbo->places[1], TTM_PL_TT, TTM_PL_FLAG_FALLBACK, 0);
	KUNIT_EXPECT_EQ(test, vbo->num_preferred, 0);

	vdev->hap.num_pages = SZ_512K >> PAGE_SHIFT;
	vbo = bo_fake(test, vdev, SZ_1M, DRM_VMGPU_ALLOC_CPU_ACCESS, S1 | AP, 1);
	KUNIT_ASSERT_EQ(test, vbo->placement.num_placement, 2);
	bo_expect_place(test, &vbo->places[0], vdev->segments[0].mem_type, 0,
			SZ_4M >> PAGE_SHIFT);
	KUNIT_EXPECT_EQ(test, vbo->num_preferred, 1);
}

/* Physically accessed and larger than the aperture: never offered it. */
static void bo_too_big_for_aperture(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_32M);
	struct vmgpu_bo *vbo = bo_fake(test, vdev, 2 * VMGPU_KUNIT_GART_PAGES * PAGE_SIZE,
				       DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, S1 | AP, 1);
	struct ttm_resource in_vram = { .mem_type = vdev->segments[0].mem_type };
	struct ttm_placement evict;

	KUNIT_ASSERT_EQ(test, vbo->placement.num_placement, 1);
	bo_expect_place(test, &vbo->places[0], vdev->segments[0].mem_type,
			TTM_PL_FLAG_CONTIGUOUS, 0);
	vbo->tbo.resource = &in_vram;
	vmgpu_bo_evict_placement(&vbo->tbo, &evict);
	KUNIT_ASSERT_EQ(test, evict.num_placement, 1);
	KUNIT_EXPECT_EQ(test, evict.placement[0].mem_type, TTM_PL_SYSTEM);
}

/* Eviction: to system memory the device reaches if the set allows it. */
static void bo_evict_placement(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_32M);
	struct vmgpu_bo *with_ap = bo_fake(test, vdev, SZ_1M, 0, S1 | AP, 1);
	struct vmgpu_bo *without = bo_fake(test, vdev, SZ_1M, 0, S1, 1);
	struct vmgpu_bo *physical = bo_fake(test, vdev, SZ_1M, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
					    S1 | AP, 1);
	struct ttm_resource in_vram = { .mem_type = vdev->segments[0].mem_type };
	struct ttm_resource in_tt = { .mem_type = TTM_PL_TT };
	struct ttm_placement evict;

	with_ap->tbo.resource = &in_vram;
	vmgpu_bo_evict_placement(&with_ap->tbo, &evict);
	KUNIT_ASSERT_EQ(test, evict.num_placement, 2);
	bo_expect_place(test, &evict.placement[0], TTM_PL_TT, 0, 0);
	bo_expect_place(test, &evict.placement[1], TTM_PL_SYSTEM, TTM_PL_FLAG_FALLBACK, 0);

	/* Physically accessed: it needs aperture entries, which the range says. */
	physical->tbo.resource = &in_vram;
	vmgpu_bo_evict_placement(&physical->tbo, &evict);
	KUNIT_ASSERT_EQ(test, evict.num_placement, 2);
	bo_expect_place(test, &evict.placement[0], TTM_PL_TT, 0, VMGPU_KUNIT_GART_PAGES);

	without->tbo.resource = &in_vram;
	vmgpu_bo_evict_placement(&without->tbo, &evict);
	KUNIT_ASSERT_EQ(test, evict.num_placement, 1);
	KUNIT_EXPECT_EQ(test, evict.placement[0].mem_type, TTM_PL_SYSTEM);

	with_ap->tbo.resource = &in_tt;
	vmgpu_bo_evict_placement(&with_ap->tbo, &evict);
	KUNIT_ASSERT_EQ(test, evict.num_placement, 1);
	KUNIT_EXPECT_EQ(test, evict.placement[0].mem_type, TTM_PL_SYSTEM);
}

/* Resident: where the device reaches it, not evicted out of its reach. */
static void bo_residency(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_32M);
	struct vmgpu_bo *vbo = bo_fake(test, vdev, SZ_1M, 0, S1 | AP, 1);
	struct ttm_resource res = {};

	KUNIT_EXPECT_FALSE(test, vmgpu_bo_is_resident(&vbo->tbo));
	vbo->tbo.resource = &res;
	res.mem_type = TTM_PL_SYSTEM;
	KUNIT_EXPECT_FALSE(test, vmgpu_bo_is_resident(&vbo->tbo));
	res.mem_type = TTM_PL_TT;
	KUNIT_EXPECT_TRUE(test, vmgpu_bo_is_resident(&vbo->tbo));
	res.mem_type = vdev->segments[1].mem_type;
	KUNIT_EXPECT_TRUE(test, vmgpu_bo_is_resident(&vbo->tbo));
}

static const char *bo_fence_name(struct dma_fence *f)
{
	return "kunit";
}

static DEFINE_SPINLOCK(bo_fence_lock);

static const struct dma_fence_ops bo_fence_ops = {
	.get_driver_name = bo_fence_name,
	.get_timeline_name = bo_fence_name,
};

/* A paging operation that has finished with @error. */
static struct dma_fence *bo_finished(struct kunit *test, int error)
{
	struct dma_fence *f = kzalloc(sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	dma_fence_init(f, &bo_fence_ops, &bo_fence_lock, dma_fence_context_alloc(1), 1);
	if (error)
		dma_fence_set_error(f, error);
	dma_fence_signal(f);
	return f;
}

/*
 * A failed paging operation is not forgotten until the backing is clear:
 * looking twice still says so (a repair may have failed in between). Lost
 * contents only if a copy failed after userspace could write.
 */
static void bo_failed_paging_stays_until_scrubbed(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_32M);
	struct vmgpu_bo *vbo = bo_fake(test, vdev, SZ_1M, 0, S1 | AP, 1);
	struct dma_fence *f;

	vbo->tbo.base.resv = &vbo->tbo.base._resv;
	dma_resv_init(vbo->tbo.base.resv);
	dma_resv_lock(vbo->tbo.base.resv, NULL);

	f = bo_finished(test, 0);
	vmgpu_bo_set_paging(vbo, f, false);
	dma_fence_put(f);
	KUNIT_EXPECT_FALSE(test, vmgpu_bo_needs_scrub(vbo));

	f = bo_finished(test, -EIO);
	vmgpu_bo_set_paging(vbo, f, false);
	dma_fence_put(f);
	KUNIT_EXPECT_TRUE(test, vmgpu_bo_needs_scrub(vbo));
	KUNIT_EXPECT_TRUE(test, vmgpu_bo_needs_scrub(vbo));
	KUNIT_EXPECT_FALSE(test, vbo->contents_lost);

	vbo->has_contents = true;
	f = bo_finished(test, -EIO);
	vmgpu_bo_set_paging(vbo, f, true);
	dma_fence_put(f);
	KUNIT_EXPECT_TRUE(test, vmgpu_bo_needs_scrub(vbo));
	KUNIT_EXPECT_TRUE(test, vbo->contents_lost);
	KUNIT_EXPECT_EQ(test, atomic64_read(&vdev->contents_lost), 1);

	dma_resv_unlock(vbo->tbo.base.resv);
	dma_resv_fini(vbo->tbo.base.resv);
}

static struct kunit_case vmgpu_bo_cases[] = {
	KUNIT_CASE(bo_cpu_access_prefers_the_bar),
	KUNIT_CASE(bo_cpu_access_beyond_the_bar),
	KUNIT_CASE(bo_cpu_access_without_host_aperture),
	KUNIT_CASE(bo_invisible_goes_top_down),
	KUNIT_CASE(bo_physical_is_contiguous),
	KUNIT_CASE(bo_impossible_preference),
	KUNIT_CASE(bo_too_big_for_aperture),
	KUNIT_CASE(bo_evict_placement),
	KUNIT_CASE(bo_residency),
	KUNIT_CASE(bo_failed_paging_stays_until_scrubbed),
	{}
};

static struct kunit_suite vmgpu_bo_suite = {
	.name = "vmgpu_bo",
	.test_cases = vmgpu_bo_cases,
};

kunit_test_suite(vmgpu_bo_suite);
