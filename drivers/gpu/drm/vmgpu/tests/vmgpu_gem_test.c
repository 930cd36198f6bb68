// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: the rules GEM_CREATE enforces before TTM sees a request (seeds
 * "GPU segments" and "Allocation usage tracking"): the system segment is
 * named through the aperture's id, cached CPU access only in system
 * memory, a CPU-accessible allocation in a memory segment the BAR does not
 * wholly cover needs the aperture in its set (Lock2), sizes round up to
 * the set's largest page, and what no segment of the set can ever hold is
 * -E2BIG. Included by vmgpu_gem.c.
 */

#include <kunit/test.h>

#include "vmgpu_kunit.h"

#define S1	BIT(1)
#define S2	BIT(2)
#define AP	BIT(3)

static int gem_check(struct vmgpu_device *vdev, u64 size, u32 flags, u32 segments,
		     u32 preferred, u64 *rounded)
{
	const struct drm_vmgpu_gem_create args = {
		.size = size,
		.flags = flags,
		.segments = segments,
		.preferred_segment = preferred,
	};
	u64 ignored;

	return vmgpu_gem_check_create(vdev, &args, rounded ?: &ignored);
}

static void gem_lock2_needs_aperture(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_4M);

	KUNIT_EXPECT_EQ(test, -EINVAL, gem_check(vdev, SZ_1M, DRM_VMGPU_ALLOC_CPU_ACCESS,
						 S1, 1, NULL));
	KUNIT_EXPECT_EQ(test, 0, gem_check(vdev, SZ_1M, DRM_VMGPU_ALLOC_CPU_ACCESS,
					   S1 | AP, 1, NULL));
	/* Without CPU access the BAR does not matter. */
	KUNIT_EXPECT_EQ(test, 0, gem_check(vdev, SZ_1M, 0, S2, 2, NULL));
	/* A wholly visible segment needs nothing else. */
	vdev = vmgpu_kunit_device(test, SZ_32M);
	KUNIT_EXPECT_EQ(test, 0, gem_check(vdev, SZ_1M, DRM_VMGPU_ALLOC_CPU_ACCESS,
					   S1, 1, NULL));
}

static void gem_cached_only_in_system_memory(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_32M);

	KUNIT_EXPECT_EQ(test, -EINVAL, gem_check(vdev, SZ_1M, DRM_VMGPU_ALLOC_CACHED,
						 S1 | AP, 3, NULL));
	KUNIT_EXPECT_EQ(test, 0, gem_check(vdev, SZ_1M, DRM_VMGPU_ALLOC_CACHED, AP, 3, NULL));
}

static void gem_size_rounds_to_largest_page(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_32M);
	u64 size;

	KUNIT_EXPECT_EQ(test, 0, gem_check(vdev, 1, 0, S1 | S2, 2, &size));
	KUNIT_EXPECT_EQ(test, size, SZ_64K);
	KUNIT_EXPECT_EQ(test, 0, gem_check(vdev, SZ_4K + 1, 0, S2 | AP, 2, &size));
	KUNIT_EXPECT_EQ(test, size, SZ_8K);
}

static void gem_never_fits(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_4M);

	KUNIT_EXPECT_EQ(test, -E2BIG, gem_check(vdev, SZ_32M, 0, S1 | S2, 1, NULL));
	KUNIT_EXPECT_EQ(test, 0, gem_check(vdev, SZ_16M, 0, S1 | S2, 1, NULL));
	/* Physically accessed in system memory means the aperture's size. */
	KUNIT_EXPECT_EQ(test, -E2BIG, gem_check(vdev, SZ_2M, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
						AP, 3, NULL));
	KUNIT_EXPECT_EQ(test, -E2BIG, gem_check(vdev, ~0ull, 0, S1, 1, NULL));
	/* In system memory, no more than may be resident for the device. */
	KUNIT_EXPECT_EQ(test, 0, gem_check(vdev, VMGPU_KUNIT_SYSTEM_LIMIT, 0, AP, 3, NULL));
	KUNIT_EXPECT_EQ(test, -E2BIG, gem_check(vdev, VMGPU_KUNIT_SYSTEM_LIMIT + 1, 0, AP, 3,
						NULL));
}

static void gem_malformed(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_32M);
	struct drm_vmgpu_gem_create args = {
		.size = SZ_1M, .segments = S1, .preferred_segment = 1,
	};
	u64 size;

	KUNIT_EXPECT_EQ(test, 0, vmgpu_gem_check_create(vdev, &args, &size));
	args.reserved[1] = 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, vmgpu_gem_check_create(vdev, &args, &size));
	KUNIT_EXPECT_EQ(test, -EINVAL, gem_check(vdev, SZ_1M, BIT(31), S1, 1, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, gem_check(vdev, SZ_1M, 0, S1 | BIT(0), 1, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, gem_check(vdev, SZ_1M, 0, S1 | BIT(4), 1, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, gem_check(vdev, SZ_1M, 0, S1, 2, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, gem_check(vdev, 0, 0, S1, 1, NULL));
}

static struct kunit_case vmgpu_gem_cases[] = {
	KUNIT_CASE(gem_lock2_needs_aperture),
	KUNIT_CASE(gem_cached_only_in_system_memory),
	KUNIT_CASE(gem_size_rounds_to_largest_page),
	KUNIT_CASE(gem_never_fits),
	KUNIT_CASE(gem_malformed),
	{}
};

static struct kunit_suite vmgpu_gem_suite = {
	.name = "vmgpu_gem",
	.test_cases = vmgpu_gem_cases,
};

kunit_test_suite(vmgpu_gem_suite);
