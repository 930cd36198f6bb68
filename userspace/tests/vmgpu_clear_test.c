// SPDX-License-Identifier: MIT
/*
 * Clear on allocate: a new allocation never shows what an earlier one left
 * in the same memory, in a memory segment or in system memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

#define CLEAR_SIZE	(1ull << 20)
/* Allocations after the first, each likely to reuse freed memory. */
#define CLEAR_ROUNDS	8
#define DIRT		0xa5
#define TRACING		"/sys/kernel/tracing"
#define CHUNK_EVENT	TRACING "/events/vmgpu/vmgpu_paging_chunk/enable"

FIXTURE(clear) {
	vmgpu_device *dev;
	struct drm_vmgpu_query_segments *s;
	uint32_t aperture;
};

FIXTURE_SETUP(clear)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &self->s));
	self->aperture = vmgpu_aperture_segment_id(self->s);
	ASSERT_NE(0, self->aperture);
}

FIXTURE_TEARDOWN(clear)
{
	free(self->s);
	vmgpu_device_unref(self->dev);
}

/*
 * Allocate, check the allocation sits in segment where and reads zero,
 * dirty it and free it; CLEAR_ROUNDS + 1 times, so that every allocation
 * after the first is likely to get the memory the previous one dirtied.
 */
static void check_cleared(struct __test_metadata *_metadata, vmgpu_device *dev,
			  uint32_t flags, uint32_t set, uint32_t preferred,
			  uint32_t where)
{
	int round;

	for (round = 0; round <= CLEAR_ROUNDS; round++) {
		struct drm_vmgpu_gem_info info;
		uint64_t dirty, first = 0;
		vmgpu_bo *bo;
		void *cpu;

		ASSERT_EQ(0, vmgpu_test_create(dev, CLEAR_SIZE, DRM_VMGPU_ALLOC_CPU_ACCESS | flags,
					       set, preferred, &bo));
		ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
		EXPECT_EQ(where, info.segment_id)
			TH_LOG("flags %#x, preferred segment %u, round %d",
			       DRM_VMGPU_ALLOC_CPU_ACCESS | flags, preferred, round);
		ASSERT_EQ(0, vmgpu_bo_map(bo, &cpu));
		dirty = vmgpu_test_nonzero(cpu, CLEAR_SIZE, &first);
		EXPECT_EQ(0, dirty)
			TH_LOG("segment %u, round %d: %llu bytes not cleared, first at %#llx",
			       info.segment_id, round, (unsigned long long)dirty,
			       (unsigned long long)first);
		memset(cpu, DIRT, CLEAR_SIZE);
		vmgpu_bo_unref(bo);
	}
}

TEST_F_TIMEOUT(clear, memory_segments, 120)
{
	uint32_t id;

	for (id = 1; id < self->aperture; id++) {
		const struct drm_vmgpu_segment *seg =
			vmgpu_test_segment(self->s, id);
		uint32_t where = id;

		/*
		 * Beyond the VRAM BAR the CPU reads it through the host
		 * aperture; without one, CPU-accessible allocations only go
		 * where the BAR reaches, and with too little of the segment
		 * there to system memory, which is still worth checking.
		 */
		if (seg->cpu_visible_size < CLEAR_SIZE &&
		    !(seg->flags & DRM_VMGPU_SEGMENT_HOST_APERTURE)) {
			TH_LOG("segment %u: %llu bytes CPU-visible, checking system memory instead",
			       id, (unsigned long long)seg->cpu_visible_size);
			where = 0;
		}
		check_cleared(_metadata, self->dev, 0,
			      1u << id | 1u << self->aperture, id, where);
	}
}

/*
 * System memory: unmapped pages, CPU-cached pages, and pages mapped into
 * the aperture for physical access.
 */
TEST_F_TIMEOUT(clear, system_memory, 120)
{
	static const uint32_t flags[] = {
		0, DRM_VMGPU_ALLOC_CACHED, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
	};
	const uint32_t ap = self->aperture;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		/* Only allocations accessed physically map the aperture. */
		uint32_t where =
			flags[i] & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY ? ap : 0;

		check_cleared(_metadata, self->dev, flags[i], 1u << ap, ap, where);
	}
}

/* Fills (paging op 2) traced since the trace was emptied. */
static int traced_fills(void)
{
	char line[512];
	FILE *trace;
	int n = 0;

	trace = fopen(TRACING "/trace", "r");
	if (!trace)
		return -1;
	while (fgets(line, sizeof(line), trace))
		n += strstr(line, "vmgpu_paging_chunk:") && strstr(line, " op 2 ");
	fclose(trace);
	return n;
}

/* Fills traced while one allocation of the given set is created. */
static int fills_to_create(vmgpu_device *dev, uint32_t flags, uint32_t set,
			   uint32_t preferred, uint32_t *where)
{
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *bo;
	int ret;

	ret = vmgpu_test_write_file(TRACING "/trace", "");
	if (!ret)
		ret = vmgpu_test_create(dev, CLEAR_SIZE, flags, set, preferred, &bo);
	if (ret)
		return -1;
	ret = vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info);
	*where = info.segment_id;
	vmgpu_bo_unref(bo);
	return ret ? -1 : traced_fills();
}

/*
 * A first backing in system memory is zeroed pages from TTM's pool: no
 * Fill on the paging ring, unlike one in VRAM without the scrub of freed
 * VRAM (the control that the trace sees Fills at all).
 */
TEST_F(clear, system_pages_need_no_fill)
{
	const uint32_t ap = self->aperture;
	uint32_t where;
	int fills;

	/* A missing tracefs or event is a failure: the feature is not there. */
	ASSERT_EQ(0, vmgpu_test_write_file(CHUNK_EVENT, "1"));
	ASSERT_EQ(0, vmgpu_test_vram_scrub(0));
	fills = fills_to_create(self->dev, 0, 1u << 1 | 1u << ap, 1, &where);
	vmgpu_test_vram_scrub(1);
	EXPECT_LT(0, fills);
	EXPECT_EQ(1, where);
	EXPECT_EQ(0, fills_to_create(self->dev, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
				     1u << ap, ap, &where));
	EXPECT_EQ(ap, where);
	vmgpu_test_write_file(CHUNK_EVENT, "0");
}

/*
 * Freed VRAM is scrubbed in batches ahead of time: once segment 1 has
 * nothing left to scrub, a new backing there needs no Fill of its own.
 */
TEST_F(clear, scrubbed_vram_needs_no_fill)
{
	uint64_t before, scrubs, failed;
	uint32_t where;
	vmgpu_bo *bo;
	void *cpu;

	ASSERT_EQ(0, vmgpu_test_write_file(CHUNK_EVENT, "1"));
	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 1, &before, &failed));
	ASSERT_EQ(0, vmgpu_test_create(self->dev, CLEAR_SIZE, DRM_VMGPU_ALLOC_CPU_ACCESS,
				       1u << 1 | 1u << self->aperture, 1, &bo));
	ASSERT_EQ(0, vmgpu_bo_map(bo, &cpu));
	memset(cpu, DIRT, CLEAR_SIZE);
	vmgpu_bo_unref(bo);
	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 1, &scrubs, &failed));
	EXPECT_LT(before, scrubs) TH_LOG("what was freed was not scrubbed");
	EXPECT_EQ(0, fills_to_create(self->dev, DRM_VMGPU_ALLOC_CPU_ACCESS,
				     1u << 1 | 1u << self->aperture, 1, &where));
	EXPECT_EQ(1, where);
	vmgpu_test_write_file(CHUNK_EVENT, "0");
}

/*
 * A free larger than one scrub's batch (16 MiB) is scrubbed in several,
 * each queued when the one before ends, with nothing freed meanwhile.
 */
TEST_F_TIMEOUT(clear, a_large_free_is_scrubbed_to_the_end, 60)
{
	uint64_t before, scrubs, failed, used;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 1, &before, &failed));
	ASSERT_EQ(0, vmgpu_test_create(self->dev, 48ull << 20, 0, 1u << 1, 1, &bo));
	ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, 1, &used));
	vmgpu_bo_unref(bo);
	ASSERT_GE(used - (48ull << 20),
		  vmgpu_test_used_drops_to(self->dev, 1, used - (48ull << 20), 3000));
	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 1, &scrubs, &failed))
		TH_LOG("segment 1 still dirty after %llu scrubs",
		       (unsigned long long)(scrubs - before));
	EXPECT_LE(before + 3, scrubs);
}

#define BEYOND_MAX	64

/*
 * Fill segment 1 beyond the BAR with physical allocations of size bytes,
 * until one would go into the CPU-visible part; from bos[*n].
 */
static int fill_beyond_the_bar(vmgpu_device *dev, uint64_t visible, uint64_t size,
			       vmgpu_bo **bos, uint64_t *offsets, int *n)
{
	struct drm_vmgpu_gem_info info;
	int ret;

	while (*n < BEYOND_MAX) {
		ret = vmgpu_test_create(dev, size, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, 1u << 1, 1,
					&bos[*n]);
		if (ret == -ENOSPC || ret == -ENOMEM)
			return 0;
		if (ret)
			return ret;
		ret = vmgpu_bo_info(bos[*n], &info);
		if (ret || info.segment_id != 1 || info.offset < visible) {
			vmgpu_bo_unref(bos[*n]);
			return ret;
		}
		offsets[(*n)++] = info.offset;
	}
	return -E2BIG;
}

/*
 * An allocation without CPU access is placed top-down, out of the part of
 * segment 1 the VRAM BAR reaches (norebar, nohap): there too it takes
 * cleared pages, not the dirty ones just freed lower down. Segment 1
 * beyond the BAR is filled; its highest allocation is freed and
 * scrubbed, then its lowest freed, its scrub held back, and a new
 * allocation comes.
 */
TEST_F(clear, scrubbed_vram_beyond_the_bar_needs_no_fill)
{
	const struct drm_vmgpu_segment *seg = vmgpu_test_segment(self->s, 1);
	uint64_t offsets[BEYOND_MAX], scrubs, failed, used;
	int i, n = 0, low = 0, high = 0, fills;
	vmgpu_bo *bos[BEYOND_MAX];
	uint32_t where;

	ASSERT_NE(NULL, seg);
	if (!seg->cpu_visible_size || seg->cpu_visible_size == seg->size)
		SKIP(return, "segment 1 is all CPU-visible here");
	ASSERT_EQ(0, vmgpu_test_write_file(CHUNK_EVENT, "1"));
	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 1, &scrubs, &failed));
	ASSERT_EQ(0, fill_beyond_the_bar(self->dev, seg->cpu_visible_size, 16 * CLEAR_SIZE,
					 bos, offsets, &n));
	ASSERT_EQ(0, fill_beyond_the_bar(self->dev, seg->cpu_visible_size, CLEAR_SIZE,
					 bos, offsets, &n));
	ASSERT_LE(2, n);
	for (i = 1; i < n; i++) {
		low = offsets[i] < offsets[low] ? i : low;
		high = offsets[i] > offsets[high] ? i : high;
	}
	ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, 1, &used));
	vmgpu_bo_unref(bos[high]);
	ASSERT_GE(used - CLEAR_SIZE, vmgpu_test_used_drops_to(self->dev, 1, used - CLEAR_SIZE, 3000));
	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 1, &scrubs, &failed));
	/*
	 * The lowest is freed, and stays dirty while the next one is made: the
	 * delay also holds the look the end of the last scrub queued.
	 */
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_scrub_delay_ms", "8000"));
	ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, 1, &used));
	vmgpu_bo_unref(bos[low]);
	ASSERT_GE(used - CLEAR_SIZE, vmgpu_test_used_drops_to(self->dev, 1, used - CLEAR_SIZE, 3000));
	fills = fills_to_create(self->dev, 0, 1u << 1, 1, &where);
	vmgpu_test_debugfs_write("inject_scrub_delay_ms", "0");
	EXPECT_EQ(0, fills) TH_LOG("the allocation took the dirty pages at 0x%llx",
				   (unsigned long long)offsets[low]);
	EXPECT_EQ(1, where);
	for (i = 0; i < n; i++)
		if (i != low && i != high)
			vmgpu_bo_unref(bos[i]);
	vmgpu_test_write_file(CHUNK_EVENT, "0");
}

#define SCRUB_SIZE	(16ull << 20)
#define SCRUB_DIRT	0x5c

/*
 * A CPU-accessible allocation of one range of segment 1 (-ENOSPC if it
 * went elsewhere): 0 or -errno.
 */
static int create_physical(vmgpu_device *dev, uint32_t aperture, vmgpu_bo **bo, void **cpu,
			   uint64_t *offset)
{
	struct drm_vmgpu_gem_info info = { 0 };
	int ret;

	ret = vmgpu_test_create(dev, SCRUB_SIZE,
				DRM_VMGPU_ALLOC_CPU_ACCESS | DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
				1u << 1 | 1u << aperture, 1, bo);
	if (ret)
		return ret;
	ret = vmgpu_bo_info(*bo, &info);
	if (!ret && (info.segment_id != 1 || !(info.residency & DRM_VMGPU_RESIDENCY_PHYSICAL)))
		ret = -ENOSPC;
	if (!ret)
		ret = vmgpu_bo_map(*bo, cpu);
	if (ret)
		vmgpu_bo_unref(*bo);
	*offset = info.offset;
	return ret;
}

/*
 * Dirty a range of segment 1 and free it; once scrubbed, allocate ranges
 * until one lands where the dirt was, and check that it reads zero. Each
 * allocation is held, so the range comes round within the segment. With
 * hold_ms, the paging ring is kept busy that long from before the free:
 * the allocations are made while the scrub is still queued. Returns the
 * scrub counters seen before the second round.
 */
static void check_scrubbed(struct __test_metadata *_metadata, vmgpu_device *dev,
			   uint32_t aperture, const char *hold_ms, uint64_t *scrubs,
			   uint64_t *failed)
{
	uint64_t scrubs_then, failed_then;
	vmgpu_bo *held[64];
	uint64_t at, offset, dirty, first = 0;
	unsigned int n = 0, i;
	vmgpu_bo *bo;
	void *cpu;

	ASSERT_EQ(0, create_physical(dev, aperture, &bo, &cpu, &at));
	memset(cpu, SCRUB_DIRT, SCRUB_SIZE);
	if (hold_ms)
		ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", hold_ms));
	vmgpu_bo_unref(bo);
	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, !hold_ms, scrubs, failed));

	for (;;) {
		ASSERT_GT(64, n) TH_LOG("no range came back at %#llx", (unsigned long long)at);
		ASSERT_EQ(0, create_physical(dev, aperture, &held[n], &cpu, &offset))
			TH_LOG("range %u, looking for %#llx", n, (unsigned long long)at);
		n++;
		if (offset == at)
			break;
	}
	/* Held: the scrub has not run, let alone failed, when it is taken. */
	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 0, &scrubs_then, &failed_then));
	if (hold_ms)
		EXPECT_EQ(*failed, failed_then) TH_LOG("the scrub failed before the range was taken");
	dirty = vmgpu_test_nonzero(cpu, SCRUB_SIZE, &first);
	EXPECT_EQ(0, dirty) TH_LOG("%llu bytes of the freed range at %#llx not scrubbed, first at %#llx",
				   (unsigned long long)dirty, (unsigned long long)at,
				   (unsigned long long)first);
	for (i = 0; i < n; i++)
		vmgpu_bo_unref(held[i]);
}

/* What one owner leaves in VRAM is gone before the next gets it. */
TEST_F_TIMEOUT(clear, scrub_wipes_freed_vram, 120)
{
	uint64_t scrubs, failed, before;

	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 1, &before, &failed));
	check_scrubbed(_metadata, self->dev, self->aperture, NULL, &scrubs, &failed);
	EXPECT_LT(before, scrubs) TH_LOG("nothing was scrubbed");
}

/*
 * A scrub that failed leaves its pages marked cleared for a while: an
 * allocation that gets them while the scrub is queued holds its fence, and
 * is cleared again before anyone reads it once the scrub has failed; the
 * next scrub or allocation finds the failure and has the free memory
 * scrubbed again.
 */
TEST_F_TIMEOUT(clear, failed_scrub_is_cleared_again, 120)
{
	uint64_t scrubs, failed, before, after;
	char left[16];
	int i;

	ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 1, &scrubs, &before));
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_scrub_fault", "1"));
	check_scrubbed(_metadata, self->dev, self->aperture, "3000", &scrubs, &failed);
	ASSERT_EQ(0, vmgpu_test_debugfs_read("inject_scrub_fault", left, sizeof(left)));
	EXPECT_STREQ("0\n", left) TH_LOG("no scrub took the injected fault");
	/* The allocations just freed (some maybe later) are the next scrub's. */
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, vmgpu_test_vram_scrubbed(1, 1, &scrubs, &after));
		if (after != before)
			break;
		usleep(20000);
	}
	EXPECT_EQ(before + 1, after) TH_LOG("the failed scrub was not found");
}

TEST_HARNESS_MAIN
