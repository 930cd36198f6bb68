// SPDX-License-Identifier: MIT
/*
 * The limit on system memory resident for the device. System memory the
 * device reaches is pinned: without a limit, one process could pin all of
 * RAM. Resident allocations beyond the limit evict the least recently used
 * out of the device's reach, where the kernel may swap them out; an
 * allocation larger than the limit, in system memory only, is refused.
 * The tests reload the driver with a 64 MiB limit, and back after.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

#define MiB		(1ull << 20)
#define LIMIT_MB	64
#define BO_SIZE		(4 * MiB)
/* Allocations that together go 16 MiB past the limit. */
#define OVER_COUNT	(LIMIT_MB * MiB / BO_SIZE + 4)

static uint64_t meminfo_total(void)
{
	unsigned long long kib = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return kib * 1024;
}

static int resident_system(vmgpu_device *dev, uint64_t *size, uint64_t *used)
{
	struct drm_vmgpu_query_device info;
	int ret = vmgpu_query_device(dev, &info);

	if (ret)
		return ret;
	*size = info.resident_system_size;
	*used = info.resident_system_used;
	return 0;
}

/* The default is TTM's page limit: half of RAM, as amdgpu's GTT size. */
TEST(default_is_half_of_ram)
{
	uint64_t half = meminfo_total() / 2, size, used;
	vmgpu_device *dev;

	ASSERT_NE(0, half);
	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, resident_system(dev, &size, &used));
	/* TTM took RAM's size when it first started; it moves a little. */
	EXPECT_LE(size, half + 16 * MiB);
	EXPECT_GE(size, half - 16 * MiB);
	EXPECT_LE(used, size);
	vmgpu_device_unref(dev);
}

FIXTURE(limit) {
	vmgpu_device *dev;
	uint32_t aperture;
	vmgpu_bo *bos[OVER_COUNT];
	void *cpu[OVER_COUNT];
};

FIXTURE_SETUP(limit)
{
	uint64_t size, used;

	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu system_mb=64"));
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	self->aperture = vmgpu_test_aperture(self->dev);
	ASSERT_NE(0, self->aperture);
	ASSERT_EQ(0, resident_system(self->dev, &size, &used));
	ASSERT_EQ(LIMIT_MB * MiB, size);
}

FIXTURE_TEARDOWN(limit)
{
	uint32_t i;

	for (i = 0; i < OVER_COUNT; i++)
		vmgpu_bo_unref(self->bos[i]);
	vmgpu_device_unref(self->dev);
	EXPECT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu"));
}

/* A CPU-accessible allocation in system memory only, filled with key @i. */
static int create_system(FIXTURE_DATA(limit) *self, uint32_t i)
{
	int ret = vmgpu_test_create_mapped(self->dev, BO_SIZE, 0, 1u << self->aperture,
					   self->aperture, &self->bos[i], &self->cpu[i]);

	if (!ret)
		vmgpu_test_fill(self->cpu[i], BO_SIZE, 0x5157 + i);
	return ret;
}

static bool resident(vmgpu_bo *bo)
{
	struct drm_vmgpu_gem_info info;

	return !vmgpu_bo_info(bo, &info) && (info.residency & DRM_VMGPU_RESIDENCY_RESIDENT);
}

/*
 * 16 MiB past the limit: the first allocations, least recently used, are
 * evicted out of the device's reach; what is resident never exceeds the
 * limit; every byte survives; making the first one resident again evicts
 * another.
 */
TEST_F(limit, resident_beyond_the_limit_evicts_lru)
{
	uint64_t size, used, first = 0;
	uint32_t i, evicted = 0;

	for (i = 0; i < OVER_COUNT; i++) {
		ASSERT_EQ(0, create_system(self, i));
		ASSERT_EQ(0, vmgpu_bo_make_resident(self->bos[i]));
		ASSERT_EQ(0, resident_system(self->dev, &size, &used));
		ASSERT_LE(used, size) TH_LOG("allocation %u: %llu bytes resident", i,
					     (unsigned long long)used);
	}
	for (i = 0; i < OVER_COUNT; i++)
		evicted += !resident(self->bos[i]);
	EXPECT_GE(evicted, OVER_COUNT - LIMIT_MB * MiB / BO_SIZE);
	EXPECT_FALSE(resident(self->bos[0])) TH_LOG("the least recently used stayed");
	EXPECT_TRUE(resident(self->bos[OVER_COUNT - 1]));

	ASSERT_EQ(0, vmgpu_bo_make_resident(self->bos[0]));
	EXPECT_TRUE(resident(self->bos[0]));
	ASSERT_EQ(0, resident_system(self->dev, &size, &used));
	EXPECT_LE(used, size);
	for (i = 0; i < OVER_COUNT; i++)
		EXPECT_EQ(0, vmgpu_test_check(self->cpu[i], BO_SIZE, 0x5157 + i, &first))
			TH_LOG("allocation %u wrong at %#llx", i, (unsigned long long)first);
}

/* No more than the limit in system memory only; in VRAM it may be larger. */
TEST_F(limit, larger_than_the_limit_refused)
{
	const uint32_t ap = self->aperture;

	EXPECT_EQ(-E2BIG, vmgpu_test_create(self->dev, LIMIT_MB * MiB + BO_SIZE, 0, 1u << ap, ap,
					    &self->bos[0]));
	ASSERT_EQ(0, vmgpu_test_create(self->dev, LIMIT_MB * MiB, 0, 1u << ap, ap, &self->bos[0]));
	ASSERT_EQ(0, vmgpu_bo_make_resident(self->bos[0]));
	EXPECT_TRUE(resident(self->bos[0]));
}

/*
 * Resident in the system segment yet idle, an allocation is not pinned for
 * the kernel's swap-out: TTM's tt_shrink (one swap-out per read) takes it
 * out of the device's reach and to swap, and it comes back intact.
 */
TEST_F(limit, idle_system_allocations_swap_out)
{
	uint64_t first = 0;
	int tries;

	ASSERT_EQ(0, create_system(self, 0));
	ASSERT_EQ(0, vmgpu_bo_make_resident(self->bos[0]));
	ASSERT_TRUE(resident(self->bos[0]));
	ASSERT_EQ(0, vmgpu_bo_wait(self->bos[0], UINT64_MAX, 0));
	for (tries = 0; tries < 64 && resident(self->bos[0]); tries++)
		ASSERT_EQ(0, vmgpu_test_run("cat /sys/kernel/debug/ttm/tt_shrink >/dev/null"))
			TH_LOG("TTM's tt_shrink cannot be read");
	EXPECT_FALSE(resident(self->bos[0])) TH_LOG("never swapped out in %d tries", tries);
	EXPECT_EQ(0, vmgpu_test_check(self->cpu[0], BO_SIZE, 0x5157, &first))
		TH_LOG("wrong at %#llx after swap-in", (unsigned long long)first);
}

TEST_HARNESS_MAIN
