// SPDX-License-Identifier: MIT
/*
 * Locking swizzled allocations (seed 001). In a memory segment a swizzled
 * allocation holds the device's SWIZZLE_X layout; the CPU sees it linear:
 * - through the CPU host aperture, which detiles each page;
 * - with no host-aperture room, moved to system memory unswizzled (or
 *   -ENOSPC with DO_NOT_EVICT), and swizzled again when the GPU next
 *   uses it;
 * - evicted swizzled, it is paged into a memory segment before the lock;
 * - evicted while locked, it is unswizzled so the mapping does not notice;
 * - no no-overwrite lock, and no GPU job while it is locked.
 * What the GPU sees is checked by copying the allocation's raw bytes with
 * a user job and comparing them with the swizzled layout of what the CPU
 * wrote; a linear allocation going through the same steps shows the check
 * tells the layouts apart.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define MiB		(1ull << 20)
#define SWZ_SIZE	(64 * 1024ull)
#define SWZ_VA		0x400000000ull
#define PROBE_VA	0x500000000ull
#define FILLER_SIZE	(4 * MiB)
#define MAX_FILLERS	8

FIXTURE(swz) {
	vmgpu_device *dev;
	struct drm_vmgpu_query_device info;
	uint32_t aperture;
	uint32_t mem;			/* the first memory segment */
	vmgpu_context *ctx;
	vmgpu_bo *probe;		/* linear, in system memory */
	void *probe_cpu;
};

FIXTURE_SETUP(swz)
{
	struct drm_vmgpu_query_segments *s;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_device(self->dev, &self->info));
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &s));
	self->aperture = vmgpu_aperture_segment_id(s);
	free(s);
	ASSERT_LT(1, self->aperture);
	self->mem = 1;
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &self->ctx));
	ASSERT_EQ(0, make_mapped_in_aperture(self->dev, self->aperture, PROBE_VA, SWZ_SIZE,
					     &self->probe, &self->probe_cpu));
}

FIXTURE_TEARDOWN(swz)
{
	vmgpu_bo_unref(self->probe);
	vmgpu_context_unref(self->ctx);
	vmgpu_device_unref(self->dev);
}

/* A CPU-accessible allocation in the first memory segment, at SWZ_VA. */
static int make_target(FIXTURE_DATA(swz) *self, uint32_t flags, vmgpu_bo **bo)
{
	int ret = vmgpu_test_create(self->dev, SWZ_SIZE, DRM_VMGPU_ALLOC_CPU_ACCESS | flags,
				    1u << self->mem | 1u << self->aperture, self->mem, bo);

	if (!ret)
		ret = vmgpu_vm_map(*bo, 0, SWZ_VA, SWZ_SIZE, 0);
	return ret;
}

static void drop_target(FIXTURE_DATA(swz) *self, vmgpu_bo *bo)
{
	vmgpu_vm_unmap(self->dev, SWZ_VA, SWZ_SIZE);
	vmgpu_bo_unref(bo);
}

/* Where the allocation is and its residency flags. */
static void where(vmgpu_bo *bo, uint32_t *segment, uint32_t *residency)
{
	struct drm_vmgpu_gem_info info;

	if (vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info)) {
		*segment = ~0u;
		*residency = ~0u;
		return;
	}
	*segment = info.segment_id;
	*residency = info.residency;
}

/* Words of the raw copy that differ from the layout of pattern @key. */
static uint64_t raw_differs(const uint64_t *raw, uint64_t key, int swizzled)
{
	uint64_t i, bad = 0;

	for (i = 0; i < SWZ_SIZE / 8; i++) {
		uint64_t off = i * 8, page = off & ~4095ull;
		uint64_t at = swizzled ? page + vmgpu_swizzle_offset(off & 4095) : off;

		bad += raw[at / 8] != vmgpu_test_word(key, i);
	}
	return bad;
}

/* Copy the target's raw bytes into the probe with a user job. */
static int gpu_copy_raw(FIXTURE_DATA(swz) *self)
{
	const union vmgpu_cmd cmd = cmd_transfer(SWZ_VA, PROBE_VA, SWZ_SIZE);

	memset(self->probe_cpu, 0, SWZ_SIZE);
	return run(self->ctx, vmgpu_device_fd(self->dev), &cmd, 1);
}

/* Lock, write pattern @key through the lock's mapping, unlock. */
static int write_locked(vmgpu_bo *bo, uint64_t key)
{
	void *cpu;
	int ret = vmgpu_bo_lock(bo, 0, &cpu);

	if (ret)
		return ret;
	vmgpu_test_fill(cpu, SWZ_SIZE, key);
	return vmgpu_bo_unlock(bo);
}

/* Lock swizzled allocations until the host aperture is all locked. */
static uint32_t lock_fillers(FIXTURE_DATA(swz) *self, vmgpu_bo **fillers)
{
	uint32_t n = self->info.host_aperture_size / FILLER_SIZE, i;

	for (i = 0; i < n && i < MAX_FILLERS; i++) {
		if (vmgpu_test_create(self->dev, FILLER_SIZE,
				      DRM_VMGPU_ALLOC_CPU_ACCESS | DRM_VMGPU_ALLOC_SWIZZLED,
				      1u << self->mem | 1u << self->aperture, self->mem,
				      &fillers[i]) ||
		    vmgpu_bo_lock(fillers[i], DRM_VMGPU_LOCK_DO_NOT_EVICT, NULL))
			break;
	}
	return i;
}

/*
 * Through the host aperture the CPU writes linear, VRAM gets the swizzled
 * layout; the same steps on a linear allocation leave it linear.
 */
TEST_F(swz, lock_detiles_through_the_host_aperture)
{
	const uint64_t key = 0x5a1;
	uint32_t seg, res;
	vmgpu_bo *bo;
	void *cpu;

	if (!self->info.host_aperture_size)
		SKIP(return, "no CPU host aperture");
	ASSERT_EQ(0, make_target(self, DRM_VMGPU_ALLOC_SWIZZLED, &bo));
	ASSERT_EQ(0, vmgpu_bo_lock(bo, 0, &cpu));
	where(bo, &seg, &res);
	EXPECT_EQ(self->mem, seg);
	EXPECT_TRUE(res & DRM_VMGPU_RESIDENCY_HOST_APERTURE) TH_LOG("residency %#x", res);
	vmgpu_test_fill(cpu, SWZ_SIZE, key);
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));

	ASSERT_EQ(0, gpu_copy_raw(self));
	EXPECT_EQ(0, raw_differs(self->probe_cpu, key, 1));
	ASSERT_EQ(0, vmgpu_bo_lock(bo, 0, &cpu));
	EXPECT_EQ(0, vmgpu_test_check(cpu, SWZ_SIZE, key, &(uint64_t){ 0 }));
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));
	drop_target(self, bo);

	/* Control: a linear allocation reads back linear. */
	ASSERT_EQ(0, make_target(self, 0, &bo));
	ASSERT_EQ(0, write_locked(bo, key));
	ASSERT_EQ(0, gpu_copy_raw(self));
	EXPECT_EQ(0, raw_differs(self->probe_cpu, key, 0));
	EXPECT_NE(0, raw_differs(self->probe_cpu, key, 1));
	drop_target(self, bo);
}

/*
 * No host-aperture room: the lock moves it to system memory unswizzled
 * (DO_NOT_EVICT refuses instead); the next GPU use swizzles it back.
 */
TEST_F_TIMEOUT(swz, no_room_unswizzles_to_system, 120)
{
	const uint64_t key = 0x5a2;
	vmgpu_bo *bo, *fillers[MAX_FILLERS];
	uint32_t seg, res, n, i;
	void *cpu;

	ASSERT_EQ(0, make_target(self, DRM_VMGPU_ALLOC_SWIZZLED, &bo));
	n = 0;
	if (self->info.host_aperture_size) {
		ASSERT_EQ(0, write_locked(bo, key));
		n = lock_fillers(self, fillers);
		ASSERT_EQ(self->info.host_aperture_size / FILLER_SIZE, n);
	}

	EXPECT_EQ(-ENOSPC, vmgpu_bo_lock(bo, DRM_VMGPU_LOCK_DO_NOT_EVICT, NULL));
	where(bo, &seg, &res);
	EXPECT_EQ(self->mem, seg);

	ASSERT_EQ(0, vmgpu_bo_lock(bo, 0, &cpu));
	where(bo, &seg, &res);
	EXPECT_EQ(0, seg);
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_RESIDENT | DRM_VMGPU_RESIDENCY_UNSWIZZLED, res);
	/* Braces: EXPECT_*() is two statements. */
	if (n) {
		EXPECT_EQ(0, vmgpu_test_check(cpu, SWZ_SIZE, key, &(uint64_t){ 0 }));
	} else {
		vmgpu_test_fill(cpu, SWZ_SIZE, key);
	}
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));

	/* The GPU's use pages it in, swizzling. */
	ASSERT_EQ(0, gpu_copy_raw(self));
	where(bo, &seg, &res);
	EXPECT_EQ(self->mem, seg);
	EXPECT_EQ(0, res & DRM_VMGPU_RESIDENCY_UNSWIZZLED);
	EXPECT_EQ(0, raw_differs(self->probe_cpu, key, 1));

	for (i = 0; i < n; i++)
		vmgpu_bo_unref(fillers[i]);
	drop_target(self, bo);
}

/* Evicted swizzled (raw): still swizzled in system memory; a lock pages it in. */
TEST_F(swz, evicted_swizzled_is_paged_in_first)
{
	const uint64_t key = 0x5a3;
	uint32_t seg, res;
	vmgpu_bo *bo;
	void *cpu;

	if (!self->info.host_aperture_size)
		SKIP(return, "no CPU host aperture");
	ASSERT_EQ(0, make_target(self, DRM_VMGPU_ALLOC_SWIZZLED, &bo));
	ASSERT_EQ(0, write_locked(bo, key));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	where(bo, &seg, &res);
	EXPECT_EQ(0, seg);
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_RESIDENT, res);
	/* The GPU may use it there: its bytes are still swizzled. */
	ASSERT_EQ(0, gpu_copy_raw(self));
	where(bo, &seg, &res);
	EXPECT_EQ(0, seg);
	EXPECT_EQ(0, raw_differs(self->probe_cpu, key, 1));

	ASSERT_EQ(0, vmgpu_bo_lock(bo, 0, &cpu));
	where(bo, &seg, &res);
	EXPECT_EQ(self->mem, seg);
	EXPECT_TRUE(res & DRM_VMGPU_RESIDENCY_HOST_APERTURE) TH_LOG("residency %#x", res);
	EXPECT_EQ(0, vmgpu_test_check(cpu, SWZ_SIZE, key, &(uint64_t){ 0 }));
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));
	drop_target(self, bo);
}

/* Evicted under a lock: unswizzled, so the mapping shows the same bytes. */
TEST_F(swz, eviction_during_a_lock_is_invisible)
{
	const uint64_t p = 0x5a4, q = 0x5a5;
	uint32_t seg, res;
	vmgpu_bo *bo;
	void *cpu;

	if (!self->info.host_aperture_size)
		SKIP(return, "no CPU host aperture");
	ASSERT_EQ(0, make_target(self, DRM_VMGPU_ALLOC_SWIZZLED, &bo));
	ASSERT_EQ(0, vmgpu_bo_lock(bo, 0, &cpu));
	vmgpu_test_fill(cpu, SWZ_SIZE, p);
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	where(bo, &seg, &res);
	EXPECT_EQ(0, seg);
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_RESIDENT | DRM_VMGPU_RESIDENCY_UNSWIZZLED, res);
	EXPECT_EQ(0, vmgpu_test_check(cpu, SWZ_SIZE, p, &(uint64_t){ 0 }));
	vmgpu_test_fill(cpu, SWZ_SIZE, q);
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));

	ASSERT_EQ(0, gpu_copy_raw(self));
	where(bo, &seg, &res);
	EXPECT_EQ(self->mem, seg);
	EXPECT_EQ(0, raw_differs(self->probe_cpu, q, 1));
	drop_target(self, bo);
}

/* The CPU or the GPU: no no-overwrite lock, no job while locked. */
TEST_F(swz, cpu_and_gpu_never_at_once)
{
	const union vmgpu_cmd cmd = cmd_transfer(SWZ_VA, PROBE_VA, SWZ_SIZE);
	int fd = vmgpu_device_fd(self->dev);
	vmgpu_bo *bo, *bad;

	ASSERT_EQ(0, make_target(self, DRM_VMGPU_ALLOC_SWIZZLED, &bo));
	EXPECT_EQ(-EINVAL, vmgpu_bo_lock(bo, DRM_VMGPU_LOCK_IGNORE_SYNC, NULL));
	ASSERT_EQ(0, vmgpu_bo_lock(bo, 0, NULL));
	EXPECT_EQ(-EBUSY, run(self->ctx, fd, &cmd, 1));
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));
	EXPECT_EQ(0, run(self->ctx, fd, &cmd, 1));
	drop_target(self, bo);

	/* Swizzled is a memory segment's layout. */
	EXPECT_EQ(-EINVAL, vmgpu_test_create(self->dev, SWZ_SIZE,
					     DRM_VMGPU_ALLOC_CPU_ACCESS | DRM_VMGPU_ALLOC_SWIZZLED,
					     1u << self->aperture, self->aperture, &bad));
}

TEST_HARNESS_MAIN
