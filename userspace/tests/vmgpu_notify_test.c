// SPDX-License-Identifier: MIT
/*
 * Allocation notifications (seed "Allocation notification") and the paging
 * process GPU VA.
 *
 * A user job compresses its allocation (COMPRESS): the device stores the
 * pages encoded and only it can decode them. An allocation created with
 * DRM_VMGPU_ALLOC_NOTIFY_EVICTION keeps its data when it leaves the
 * aperture segment or the system segment (the kernel sends NotifyEviction
 * and the device decompresses); one without it shows the loss the
 * notification prevents. Notifications go in chunks of the paging process
 * GPU VA, whose size follows the seed's rule (the configuration says what
 * the device asks for: VMGPU_PAGING_VA_MB), and never for an eviction from
 * a memory segment. NotifyIoMmuUnmap comes only when the device uses the
 * IOMMU addressing model (VMGPU_IOMMU), before the pages are unmapped.
 * Whose compression state it is: vmgpu_compress_test.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmgpu_notify.h"

#define PAGING_VA_MAX	(4ull << 30)

/* The rule of the seed, from what the configuration makes the device ask. */
TEST_F(notify, paging_va_size_follows_the_rule)
{
	const char *env = getenv("VMGPU_PAGING_VA_MB");
	struct drm_vmgpu_query_segments *s;
	uint64_t largest = 0, expect;
	uint32_t i;

	ASSERT_NE(NULL, env) TH_LOG("VMGPU_PAGING_VA_MB not set by the configuration");
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &s));
	for (i = 0; i < s->num_segments; i++)
		if (s->segments[i].kind == DRM_VMGPU_SEGMENT_MEMORY &&
		    s->segments[i].size > largest)
			largest = s->segments[i].size;
	free(s);
	expect = strtoull(env, NULL, 0) << 20;
	if (!expect) {
		expect = largest / 4 / PAGE * PAGE;
		if (expect < VMGPU_SCHED_LOG_SIZE)
			expect = VMGPU_SCHED_LOG_SIZE;
	}
	/* vmgpu's deviation from the seed: resident tables for 4 GiB at most. */
	if (expect > PAGING_VA_MAX)
		expect = PAGING_VA_MAX;
	EXPECT_EQ(expect, self->info.paging_va_size);
}

TEST_F(notify, iommu_model_follows_the_configuration)
{
	const char *env = getenv("VMGPU_IOMMU");

	ASSERT_NE(NULL, env) TH_LOG("VMGPU_IOMMU not set by the configuration");
	EXPECT_EQ(!strcmp(env, "on"), !!(self->info.flags & DRM_VMGPU_DEVICE_IOMMU_DMA));
}

/* Evicted from the aperture segment: notified, decompressed, data intact. */
TEST_F(notify, eviction_from_aperture_keeps_compressed_data)
{
	const uint64_t size = 256 * 1024;
	vmgpu_bo *bo;
	uint32_t *cpu;

	ASSERT_EQ(0, create_mapped(self, size, DRM_VMGPU_ALLOC_NOTIFY_EVICTION, 1, &bo, &cpu));
	EXPECT_EQ(chunks_for(self, size), compress_and_evict(_metadata, self, bo, cpu, size));
	EXPECT_EQ(0, cpu_differs(cpu, size, 0));
	destroy(self->dev, bo);
}

/*
 * The same without the flag: no notification, and the pages leave the
 * device still encoded, which is the loss NotifyEviction prevents. The
 * state stays with the device: back under device access, DECOMPRESS
 * restores the data.
 */
TEST_F(notify, eviction_without_flag_loses_compressed_data)
{
	const uint64_t size = 256 * 1024;
	vmgpu_bo *bo;
	uint32_t *cpu;

	ASSERT_EQ(0, create_mapped(self, size, 0, 1, &bo, &cpu));
	EXPECT_EQ(0, compress_and_evict(_metadata, self, bo, cpu, size));
	EXPECT_EQ(0, cpu_differs(cpu, size, VMGPU_COMPRESS_XOR));

	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	EXPECT_EQ(0, gpu_range(self, VMGPU_OP_DECOMPRESS, size));
	EXPECT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, size));
	EXPECT_EQ(0, cpu_differs(cpu, size, 0));
	destroy(self->dev, bo);
}

/*
 * Evicted from the system segment, larger than the paging VA: the
 * notification goes in ceil(size / paging VA) chunks, and every chunk is
 * decompressed.
 */
TEST_F_TIMEOUT(notify, eviction_from_system_segment_in_chunks, 300)
{
	uint64_t size = 2 * self->info.paging_va_size + PAGE;
	vmgpu_bo *bo;
	uint32_t *cpu;

	ASSERT_EQ(0, create_mapped(self, size, DRM_VMGPU_ALLOC_NOTIFY_EVICTION, 0, &bo, &cpu));
	EXPECT_EQ(3, chunks_for(self, size));
	EXPECT_EQ(3, compress_and_evict(_metadata, self, bo, cpu, size));
	EXPECT_EQ(0, cpu_differs(cpu, size, 0));
	destroy(self->dev, bo);
}

/*
 * Made non-resident, the notification is queued on the paging ring like
 * any paging operation: the eviction returns while the ring is held busy
 * for 1.5 s, and the CPU's next access waits for the notification, then
 * reads decompressed data.
 */
TEST_F(notify, nonresident_eviction_queues_the_notification)
{
	const uint64_t size = 128 * 1024;
	struct drm_vmgpu_gem_info info;
	int64_t held, start, took;
	uint64_t bad;
	vmgpu_bo *bo;
	uint32_t *cpu;

	ASSERT_EQ(0, create_mapped(self, size, DRM_VMGPU_ALLOC_NOTIFY_EVICTION, 1, &bo, &cpu));
	fill_and_compress(_metadata, self, bo, cpu, size);

	ASSERT_EQ(0, trace_start());
	held = now_ms();
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "1500"));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT));
	took = now_ms() - start;
	EXPECT_GT(750, took) TH_LOG("the eviction waited %lld ms for the paging ring",
				    (long long)took);
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(0, info.residency & DRM_VMGPU_RESIDENCY_RESIDENT);

	bad = cpu_differs(cpu, size, 0);
	took = now_ms() - held;
	EXPECT_EQ(0, bad) TH_LOG("the CPU read before the notification");
	/* The ring was held 1.5 s from the write on: the read waited that long. */
	EXPECT_LE(1400, took) TH_LOG("the CPU's fault did not wait (%lld ms)", (long long)took);
	EXPECT_EQ(1, trace_chunks("eviction", size));
	destroy(self->dev, bo);
}

/*
 * Never for an eviction from a memory segment, straight out of the
 * device's reach or to the aperture; the first eviction from the aperture
 * afterwards is notified.
 */
TEST_F(notify, none_for_eviction_from_memory_segment)
{
	const uint64_t size = 64 * 1024;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, size, DRM_VMGPU_ALLOC_NOTIFY_EVICTION,
				       1u << 1 | 1u << self->aperture, 1, &bo));
	ASSERT_EQ(1, segment_of(bo));
	ASSERT_EQ(0, trace_start());
	ASSERT_EQ(0, vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT));
	EXPECT_EQ(0, trace_chunks("eviction", size));

	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	ASSERT_EQ(1, segment_of(bo));
	ASSERT_EQ(0, trace_start());
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	EXPECT_NE(1, segment_of(bo));
	EXPECT_EQ(0, trace_chunks("eviction", size));

	ASSERT_EQ(0, trace_start());
	ASSERT_EQ(0, vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT));
	EXPECT_EQ(1, trace_chunks("eviction", size));
	vmgpu_bo_unref(bo);
}

/*
 * NotifyIoMmuUnmap before a destroyed allocation's pages are unmapped,
 * only in the IOMMU addressing model and only with the flag.
 */
TEST_F(notify, iommu_unmap_on_destroy)
{
	uint64_t size = self->info.paging_va_size + PAGE;
	int iommu = !!(self->info.flags & DRM_VMGPU_DEVICE_IOMMU_DMA);
	uint32_t flags[] = { DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP, 0 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		vmgpu_bo *bo;
		uint32_t *cpu;

		ASSERT_EQ(0, create_mapped(self, size, flags[i], 0, &bo, &cpu));
		EXPECT_EQ(0, gpu_range(self, VMGPU_OP_COMPRESS, size));
		ASSERT_EQ(0, trace_start());
		ASSERT_EQ(0, destroy_and_wait(self->dev, bo)) TH_LOG("the allocation was not freed");
		EXPECT_EQ(flags[i] && iommu ? chunks_for(self, size) : 0,
			  trace_chunks("iommu-unmap", size)) TH_LOG("flags 0x%x", flags[i]);
	}
}

/* One TTM swap-out (its debugfs hook): pages swapped, or <= 0 when nothing was. */
static long ttm_swap_out_one(void)
{
	char buf[32] = "";
	long n = -1;
	int fd = open("/sys/kernel/debug/ttm/tt_shrink", O_RDONLY);

	if (fd < 0)
		return -errno;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		n = strtol(buf, NULL, 10);
	close(fd);
	return n;
}

/*
 * Swap-out, as memory pressure on TTM does it: the allocation is evicted
 * from the aperture segment first (NotifyEviction: the device
 * decompresses), then its pages are unmapped (NotifyIoMmuUnmap, behind
 * the IOMMU) and swapped; the CPU swaps them back in intact.
 */
TEST_F_TIMEOUT(notify, swap_out_notifies_both, 120)
{
	const uint64_t size = 192 * 1024;
	int iommu = !!(self->info.flags & DRM_VMGPU_DEVICE_IOMMU_DMA);
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *bo;
	uint32_t *cpu;
	int i;

	/*
	 * In the aperture segment: TTM swaps out only what frees aperture
	 * space (vmgpu_gart_intersects()).
	 */
	ASSERT_EQ(0, create_mapped(self, size, DRM_VMGPU_ALLOC_NOTIFY_EVICTION |
				   DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP, 1, &bo, &cpu));
	fill_and_compress(_metadata, self, bo, cpu, size);

	ASSERT_EQ(0, trace_start());
	/* Other idle allocations may go first: TTM swaps one per call. */
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
		if (!(info.residency & DRM_VMGPU_RESIDENCY_RESIDENT))
			break;
		ASSERT_LT(0, ttm_swap_out_one()) TH_LOG("nothing left to swap");
	}
	ASSERT_EQ(0, info.residency & DRM_VMGPU_RESIDENCY_RESIDENT);
	EXPECT_EQ(chunks_for(self, size), trace_chunks("eviction", size));
	EXPECT_EQ(iommu ? chunks_for(self, size) : 0, trace_chunks("iommu-unmap", size));
	/* Swapped back in by the fault, decompressed. */
	EXPECT_EQ(0, cpu_differs(cpu, size, 0));
	destroy(self->dev, bo);
}

/*
 * Ordering: the pages are unmapped only once every paging operation
 * submitted before the notification is done. The paging ring is kept
 * busy for 500 ms first; destroying an idle allocation then takes at
 * least that long with the notification, and less without it (no IOMMU,
 * on a coherent device, where nothing else waits for the paging ring).
 */
TEST_F(notify, iommu_unmap_waits_for_earlier_paging)
{
	const uint64_t size = 64 * 1024;
	int iommu = !!(self->info.flags & DRM_VMGPU_DEVICE_IOMMU_DMA);
	int coherent = !(self->info.flags & DRM_VMGPU_DEVICE_NONCOHERENT);
	int64_t start, took;
	vmgpu_bo *bo;
	uint32_t *cpu;

	ASSERT_EQ(0, create_mapped(self, size, DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP, 0, &bo, &cpu));
	ASSERT_EQ(0, gpu_range(self, VMGPU_OP_COMPRESS, size));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "500"));
	ASSERT_EQ(0, destroy_and_wait(self->dev, bo));
	took = now_ms() - start;
	if (iommu) {
		EXPECT_LE(500, took);
	} else if (coherent) {
		EXPECT_GT(500, took);
	}
}

/*
 * Non-coherent device behind the IOMMU: a user job leaves dirty lines of
 * a flagged allocation in the device's cache, and the allocation is
 * destroyed. Instead of a whole-cache flush, the notification writes back
 * and drops just its lines before the unmap. Nothing of the kernel's runs
 * on the paging ring afterwards (whose flushes would hide a stale line):
 * a user job then fills twice the cache, evicting every line; a stale one
 * would be written back to its unmapped IOVA, a DMA fault that fails the
 * job and bans the context. Coherent configurations cache nothing and
 * must pass the same way.
 */
TEST_F(notify, iommu_unmap_leaves_no_dirty_line)
{
	const uint64_t size = 256 * 1024, evict = 8 << 20, big_va = VA + (1ull << 32);
	int fd = vmgpu_device_fd(self->dev);
	vmgpu_bo *bo, *big;
	union vmgpu_cmd cmd;
	uint32_t *cpu;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, evict, 0, 1u << self->aperture, self->aperture,
				       &big));
	ASSERT_EQ(0, vmgpu_vm_map(big, 0, big_va, evict, 0));
	ASSERT_EQ(0, create_mapped(self, size, DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP, 0, &bo, &cpu));
	/* Both resident and mapped for the device: no move comes later. */
	cmd = cmd_fill(big_va, PAGE, 0);
	ASSERT_EQ(0, run(self->ctx, fd, &cmd, 1));
	cmd = cmd_fill(VA, size, 0xd1d1d1d1);
	ASSERT_EQ(0, run(self->ctx, fd, &cmd, 1));
	destroy(self->dev, bo);

	cmd = cmd_fill(big_va, evict, 0x0b160b16);
	EXPECT_EQ(0, run(self->ctx, fd, &cmd, 1));
	/* A faulted job bans its context: the next submission fails. */
	cmd = cmd_nop(0);
	EXPECT_EQ(0, run(self->ctx, fd, &cmd, 1)) TH_LOG("a stale line was written back");
	vmgpu_vm_unmap(self->dev, big_va, evict);
	vmgpu_bo_unref(big);
}

/*
 * Out of the system segment into a memory segment is an eviction from
 * the system segment too: the notification comes before the copy, which
 * then moves plain data. It is part of the move's own paging operation,
 * queued on the GPU side like any move: MakeResident returns while the
 * paging ring is held busy for 1.5 s.
 */
TEST_F(notify, move_into_memory_segment_notifies_first)
{
	const uint64_t size = 128 * 1024;
	int64_t start, took;
	vmgpu_bo *bo;
	uint32_t *cpu;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, size,
				       DRM_VMGPU_ALLOC_CPU_ACCESS | DRM_VMGPU_ALLOC_NOTIFY_EVICTION,
				       1u << 1 | 1u << self->aperture, 1, &bo));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_NE(1, segment_of(bo));
	ASSERT_EQ(0, vmgpu_bo_map(bo, (void **)&cpu));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, VA, size, 0));
	fill_and_compress(_metadata, self, bo, cpu, size);

	ASSERT_EQ(0, trace_start());
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "1500"));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	took = now_ms() - start;
	EXPECT_GT(750, took) TH_LOG("MakeResident waited %lld ms for the paging ring",
				    (long long)took);
	ASSERT_EQ(1, segment_of(bo));
	EXPECT_EQ(1, trace_chunks("eviction", size));
	EXPECT_EQ(0, cpu_differs(cpu, size, 0)) TH_LOG("moved before the notification");
	destroy(self->dev, bo);
}

/*
 * Out of the system segment into a memory segment, the old pages go with
 * TTM's ghost of the move, which has no GEM device: NotifyIoMmuUnmap is
 * sent for them all the same when the ghost is freed, and the data moved.
 */
TEST_F(notify, iommu_unmap_of_pages_left_by_a_move)
{
	const uint64_t size = 128 * 1024;
	int iommu = !!(self->info.flags & DRM_VMGPU_DEVICE_IOMMU_DMA);
	struct drm_vmgpu_gem_info info;
	uint64_t used;
	vmgpu_bo *bo;
	uint32_t *cpu;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, size, DRM_VMGPU_ALLOC_CPU_ACCESS |
				       DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP,
				       1u << 1 | 1u << self->aperture, 1, &bo));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_NE(1, segment_of(bo));
	ASSERT_EQ(0, vmgpu_bo_map(bo, (void **)&cpu));
	cpu_fill(cpu, size);
	ASSERT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, size));
	ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, 0, &used));
	ASSERT_LE(size, used);

	ASSERT_EQ(0, trace_start());
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	ASSERT_EQ(1, segment_of(bo));
	ASSERT_EQ(0, vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info));
	ASSERT_EQ(0, wait_freed(self->dev, used - size)) TH_LOG("the old pages were not freed");
	EXPECT_EQ(iommu ? 1 : 0, trace_chunks("iommu-unmap", size));
	EXPECT_EQ(0, cpu_differs(cpu, size, 0));
	vmgpu_bo_unref(bo);
}

/* Evict takes only DRM_VMGPU_EVICT_NONRESIDENT; MakeResident no flag. */
TEST_F(notify, evict_flags_checked)
{
	struct drm_vmgpu_gem_make_resident args = { 0 };
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, PAGE, 0, 1u << self->aperture, self->aperture,
				       &bo));
	args.handle = vmgpu_bo_handle(bo);
	args.flags = DRM_VMGPU_EVICT_NONRESIDENT << 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_EVICT, &args));
	args.flags = DRM_VMGPU_EVICT_NONRESIDENT;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, &args));
	EXPECT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_EVICT, &args));
	vmgpu_bo_unref(bo);
}

/*
 * Chunks of paging operation op (2: Fill, 3: Transfer) traced since
 * paging_trace_start() for the allocation of size bytes: the one whose
 * chunks add up to it (others may move meanwhile, e.g. evicted to make
 * room).
 */
static int paging_chunks(unsigned int op, uint64_t size)
{
	struct { char bo[24]; uint64_t bytes; int chunks; } seen[64];
	unsigned long long offset, chunk;
	char line[512], bo[24];
	unsigned int got, i, n = 0;
	FILE *trace;
	int found = 0;

	if (vmgpu_test_write_file(TRACING "/events/vmgpu/vmgpu_paging_chunk/enable", "0"))
		return -1;
	trace = fopen(TRACING "/trace", "r");
	if (!trace)
		return -1;
	while (fgets(line, sizeof(line), trace)) {
		char *ev = strstr(line, "vmgpu_paging_chunk: ");

		if (!ev || sscanf(ev, "vmgpu_paging_chunk: bo %23s op %u chunk %llx+%llx",
				  bo, &got, &offset, &chunk) != 4 || got != op)
			continue;
		for (i = 0; i < n && strcmp(seen[i].bo, bo); i++)
			;
		if (i == n) {
			if (n == 64)
				continue;
			snprintf(seen[n].bo, sizeof(seen[n].bo), "%s", bo);
			seen[n].bytes = 0;
			seen[n++].chunks = 0;
		}
		seen[i].bytes += chunk;
		seen[i].chunks++;
	}
	fclose(trace);
	for (i = 0; i < n; i++)
		if (seen[i].bytes == size)
			found = seen[i].chunks;
	return found;
}

static int paging_trace_start(void)
{
	int ret = vmgpu_test_write_file(TRACING "/trace", "");

	return ret ?: vmgpu_test_write_file(TRACING "/events/vmgpu/vmgpu_paging_chunk/enable", "1");
}

/*
 * Item 5 of the seed's list: Fill and Transfer go through the paging
 * process VA, in chunks of it. An allocation of twice the VA and a page
 * is cleared in 3 Fills; its moves out of and back into segment 1 are 5
 * Transfers each (a side of a Transfer gets half the VA).
 */
TEST_F_TIMEOUT(notify, paging_ops_in_chunks_of_the_paging_va, 120)
{
	uint64_t pva = self->info.paging_va_size, half = pva / 2 / PAGE * PAGE;
	uint64_t size = 2 * pva + PAGE;
	vmgpu_bo *bo;
	int ret;

	ASSERT_EQ(0, paging_trace_start());
	/* The new backing's own clear, not a scrub of freed VRAM ahead of it. */
	ASSERT_EQ(0, vmgpu_test_vram_scrub(0));
	ret = vmgpu_test_create(self->dev, size, 0, 1u << 1 | 1u << self->aperture, 1, &bo);
	vmgpu_test_vram_scrub(1);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(1, segment_of(bo));
	/* Rounded to the segment's pages, still just over twice the VA. */
	size = vmgpu_bo_size(bo);
	ASSERT_EQ(3, (size + pva - 1) / pva);
	ASSERT_EQ(5, (size + half - 1) / half);
	EXPECT_EQ(3, paging_chunks(VMGPU_OP_FILL, size));

	ASSERT_EQ(0, paging_trace_start());
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_NE(1, segment_of(bo));
	EXPECT_EQ(5, paging_chunks(VMGPU_OP_TRANSFER, size));

	ASSERT_EQ(0, paging_trace_start());
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	ASSERT_EQ(1, segment_of(bo));
	EXPECT_EQ(5, paging_chunks(VMGPU_OP_TRANSFER, size));
	vmgpu_bo_unref(bo);
}

TEST_HARNESS_MAIN
