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
 * Compression state belongs to the address space: one process gets half
 * of the device's set at most, and a full set leaves pages raw rather than
 * failing anyone's job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define VA		0x600000000ull
#define PAGE		4096ull
#define PAGING_VA_MAX	(4ull << 30)
#define TRACING		"/sys/kernel/tracing"
#define NOTIFY_EVENT	TRACING "/events/vmgpu/vmgpu_notify/enable"

FIXTURE(notify) {
	vmgpu_device *dev;
	vmgpu_context *ctx;
	struct drm_vmgpu_query_device info;
	uint32_t aperture;
};

FIXTURE_SETUP(notify)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_device(self->dev, &self->info));
	self->aperture = vmgpu_test_aperture(self->dev);
	ASSERT_NE(0, self->aperture);
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &self->ctx));
	/* A missing tracefs or event is a failure: the feature is not there. */
	ASSERT_EQ(0, access(NOTIFY_EVENT, W_OK));
}

FIXTURE_TEARDOWN(notify)
{
	vmgpu_test_write_file(NOTIFY_EVENT, "0");
	vmgpu_context_unref(self->ctx);
	vmgpu_device_unref(self->dev);
}

static int trace_start(void)
{
	int ret = vmgpu_test_write_file(TRACING "/trace", "");

	return ret ?: vmgpu_test_write_file(NOTIFY_EVENT, "1");
}

/* Chunks of kind ("eviction", "iommu-unmap") traced for an allocation of size. */
static int trace_chunks(const char *kind, uint64_t size)
{
	char line[512], sz[40];
	FILE *trace;
	int n = 0;

	if (vmgpu_test_write_file(NOTIFY_EVENT, "0"))
		return -1;
	trace = fopen(TRACING "/trace", "r");
	if (!trace)
		return -1;
	snprintf(sz, sizeof(sz), " size 0x%llx ", (unsigned long long)size);
	while (fgets(line, sizeof(line), trace))
		n += strstr(line, "vmgpu_notify:") && strstr(line, kind) &&
		     strstr(line, sz) && strstr(line, "error 0");
	fclose(trace);
	return n;
}

static uint64_t chunks_for(FIXTURE_DATA(notify) *self, uint64_t size)
{
	return (size + self->info.paging_va_size - 1) / self->info.paging_va_size;
}

/*
 * A CPU-visible allocation in system memory with the given notification
 * flags, mapped at VA: in the aperture segment if physical, else in the
 * system segment.
 */
static int create_mapped(FIXTURE_DATA(notify) *self, uint64_t size, uint32_t flags,
			 int physical, vmgpu_bo **bo, uint32_t **cpu)
{
	return vmgpu_test_create_at_va(self->dev, size,
				       flags | (physical ? DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY : 0),
				       1u << self->aperture, self->aperture, VA, bo, (void **)cpu);
}

/* Unmapped from the VA space and closed: nothing keeps it any more. */
static void destroy(vmgpu_device *dev, vmgpu_bo *bo)
{
	vmgpu_vm_unmap(dev, VA, vmgpu_bo_size(bo));
	vmgpu_bo_unref(bo);
}

/* Until the system segment's use is at most target: 0, or -1 after 10 s. */
static int wait_freed(vmgpu_device *dev, uint64_t target)
{
	return vmgpu_test_used_drops_to(dev, 0, target, 10000) <= target ? 0 : -1;
}

/*
 * Destroy an allocation of the system segment and wait until it is freed:
 * the segment's use has gone down by its size. TTM unpopulates the pages
 * before it frees the backing.
 */
static int destroy_and_wait(vmgpu_device *dev, vmgpu_bo *bo)
{
	uint64_t used, size = vmgpu_bo_size(bo);

	if (vmgpu_test_segment_used(dev, 0, &used) || used < size)
		return -1;
	destroy(dev, bo);
	return wait_freed(dev, used - size);
}

static int gpu_range(FIXTURE_DATA(notify) *self, uint16_t opcode, uint64_t size)
{
	union vmgpu_cmd c = { 0 };

	c.range.hdr.opcode = opcode;
	c.range.addr = va_addr(VA);
	c.range.size = size;
	return run(self->ctx, vmgpu_device_fd(self->dev), &c, 1);
}

/* The UMD's part on a non-coherent device (seed "I/O coherency"). */
static int cache_sync(FIXTURE_DATA(notify) *self, vmgpu_bo *bo, uint32_t dir, uint64_t size)
{
	if (!(self->info.flags & DRM_VMGPU_DEVICE_NONCOHERENT))
		return 0;
	return vmgpu_bo_cache_sync(bo, dir, 0, size);
}

/* The words checked: the first 16 of every page and all of the last page. */
static int checked(uint64_t i, uint64_t words)
{
	return (i % (PAGE / 4)) < 16 || i >= words - PAGE / 4;
}

static void cpu_fill(uint32_t *cpu, uint64_t size)
{
	uint64_t i, words = size / 4;

	for (i = 0; i < words; i++)
		if (checked(i, words))
			cpu[i] = (uint32_t)vmgpu_test_word(0x0071f1, i);
}

/* Checked words that differ from the pattern XOR xor. */
static uint64_t cpu_differs(const uint32_t *cpu, uint64_t size, uint32_t xor)
{
	uint64_t i, words = size / 4, bad = 0;

	for (i = 0; i < words; i++)
		if (checked(i, words))
			bad += cpu[i] != ((uint32_t)vmgpu_test_word(0x0071f1, i) ^ xor);
	return bad;
}

/*
 * Fill from the CPU, have a user job compress (the allocation mapped at
 * VA), and check the control: the pages hold what only the device can
 * decode.
 */
static void fill_and_compress(struct __test_metadata *_metadata,
			      FIXTURE_DATA(notify) *self, vmgpu_bo *bo, uint32_t *cpu,
			      uint64_t size)
{
	cpu_fill(cpu, size);
	ASSERT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, size));
	ASSERT_EQ(0, gpu_range(self, VMGPU_OP_COMPRESS, size));
	ASSERT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, size));
	ASSERT_EQ(0, cpu_differs(cpu, size, VMGPU_COMPRESS_XOR));
}

/* Compressed, then made non-resident: returns the eviction chunks traced. */
static int compress_and_evict(struct __test_metadata *_metadata,
			      FIXTURE_DATA(notify) *self, vmgpu_bo *bo, uint32_t *cpu,
			      uint64_t size)
{
	struct drm_vmgpu_gem_info info;

	fill_and_compress(_metadata, self, bo, cpu, size);
	EXPECT_EQ(0, trace_start());
	EXPECT_EQ(0, vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT));
	EXPECT_EQ(0, vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info));
	EXPECT_EQ(0, info.residency & DRM_VMGPU_RESIDENCY_RESIDENT);
	return trace_chunks("eviction", vmgpu_bo_size(bo));
}

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
 * Pages a space compressed and freed without a notification keep their
 * state in the device until a physical write or the space goes. A new
 * allocation of the same space, likely on the same pages (TTM's pool gives
 * back what it got last), must not be decoded with it: a DECOMPRESS of
 * the new allocation leaves its zeros.
 */
TEST_F(notify, new_allocation_shows_no_compression_state)
{
	const uint64_t size = 256 * 1024;
	uint64_t first = 0, dirty;
	vmgpu_bo *bo;
	uint32_t *cpu;

	ASSERT_EQ(0, create_mapped(self, size, 0, 0, &bo, &cpu));
	fill_and_compress(_metadata, self, bo, cpu, size);
	ASSERT_EQ(0, destroy_and_wait(self->dev, bo));

	ASSERT_EQ(0, create_mapped(self, size, 0, 0, &bo, &cpu));
	ASSERT_EQ(0, gpu_range(self, VMGPU_OP_DECOMPRESS, size));
	ASSERT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, size));
	dirty = vmgpu_test_nonzero(cpu, size, &first);
	EXPECT_EQ(0, dirty) TH_LOG("%llu bytes decoded with the old state, first at %#llx",
				   (unsigned long long)dirty, (unsigned long long)first);
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

	ASSERT_EQ(0, paging_trace_start());
	ASSERT_EQ(0, vmgpu_test_create(self->dev, size, 0, 1u << 1 | 1u << self->aperture, 1,
				       &bo));
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

/*
 * Another process's compression, in its own address space: 0 if its
 * COMPRESS job ran, its CPU then sees the pages XORed with xor (the
 * encoding, or 0 where the set had no place for them), and a later job of
 * its context runs too (a failed one would have made the context guilty);
 * else a step number.
 */
static int compress_in_other_process(uint64_t size, uint32_t xor)
{
	FIXTURE_DATA(notify) other = { 0 };
	vmgpu_bo *bo = NULL;
	uint32_t *cpu;
	int ret = 1;

	if (vmgpu_device_open(&other.dev) || vmgpu_query_device(other.dev, &other.info))
		return ret;
	other.aperture = vmgpu_test_aperture(other.dev);
	if (!vmgpu_context_create(other.dev, DRM_VMGPU_ENGINE_GPU_VA0, &other.ctx) &&
	    !create_mapped(&other, size, 0, 0, &bo, &cpu)) {
		cpu_fill(cpu, size);
		ret = cache_sync(&other, bo, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, size) ? 2 :
		      gpu_range(&other, VMGPU_OP_COMPRESS, size) ? 3 :
		      cache_sync(&other, bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, size) ? 4 :
		      cpu_differs(cpu, size, xor) ? 5 :
		      gpu_range(&other, VMGPU_OP_DECOMPRESS, size) ? 6 : 0;
	}
	vmgpu_bo_unref(bo);
	vmgpu_context_unref(other.ctx);
	vmgpu_device_unref(other.dev);
	return ret;
}

/*
 * One process cannot take the device's whole compressed-page set for
 * itself (DOC: compression owners): a job compressing as much as the set
 * holds stops at its address space's quota, half of it, and another
 * process's COMPRESS still works.
 */
TEST_F_TIMEOUT(notify, one_process_cannot_fill_the_compressed_set, 180)
{
	const uint64_t whole = VMGPU_COMPRESS_MAX_PAGES * PAGE, small = 64 * 1024;
	uint64_t half_words = whole / 2 / 4, last_of_half = half_words - 1;
	vmgpu_bo *bo;
	uint32_t *cpu;
	int status;
	pid_t pid;

	ASSERT_EQ(0, create_mapped(self, whole, 0, 0, &bo, &cpu));
	/* Only the two pages at the boundary: 65536 CPU faults are slow. */
	cpu[last_of_half] = (uint32_t)vmgpu_test_word(0x0071f1, last_of_half);
	cpu[half_words] = (uint32_t)vmgpu_test_word(0x0071f1, half_words);
	ASSERT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, whole));
	ASSERT_EQ(0, gpu_range(self, VMGPU_OP_COMPRESS, whole));
	ASSERT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, whole));
	/* The last page of the first half encoded, the first of the rest not. */
	EXPECT_EQ((uint32_t)vmgpu_test_word(0x0071f1, last_of_half) ^ VMGPU_COMPRESS_XOR,
		  cpu[last_of_half]) TH_LOG("the quota's pages not compressed");
	EXPECT_EQ((uint32_t)vmgpu_test_word(0x0071f1, half_words), cpu[half_words])
		TH_LOG("compressed past the quota");

	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(compress_in_other_process(small, VMGPU_COMPRESS_XOR));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the other process's COMPRESS failed at step %d", WEXITSTATUS(status));
	destroy(self->dev, bo);
}

/* A second address space of this process that compresses size bytes. */
static int compress_in_second_space(FIXTURE_DATA(notify) *second, uint64_t size,
				    vmgpu_bo **bo)
{
	uint32_t *cpu;
	int ret = vmgpu_device_open(&second->dev);

	if (ret)
		return ret;
	second->aperture = vmgpu_test_aperture(second->dev);
	ret = vmgpu_query_device(second->dev, &second->info) ?:
	      vmgpu_context_create(second->dev, DRM_VMGPU_ENGINE_GPU_VA0, &second->ctx) ?:
	      create_mapped(second, size, 0, 0, bo, &cpu);
	return ret ?: gpu_range(second, VMGPU_OP_COMPRESS, size);
}

/*
 * What two address spaces hold of the compressed-page set fails nobody
 * else's job (contract 1.9): with the set full, a third process's COMPRESS
 * leaves its pages raw (its CPU sees them plain) and its context runs on.
 */
TEST_F_TIMEOUT(notify, a_full_compressed_set_fails_no_job, 240)
{
	const uint64_t half = VMGPU_COMPRESS_MAX_PAGES / 2 * PAGE, small = 64 * 1024;
	FIXTURE_DATA(notify) second = { 0 };
	vmgpu_bo *bo, *second_bo = NULL;
	uint32_t *cpu;
	int status;
	pid_t pid;

	ASSERT_EQ(0, create_mapped(self, half, 0, 0, &bo, &cpu));
	ASSERT_EQ(0, gpu_range(self, VMGPU_OP_COMPRESS, half));
	ASSERT_EQ(0, compress_in_second_space(&second, half, &second_bo));

	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(compress_in_other_process(small, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the third process failed at step %d", WEXITSTATUS(status));
	if (second_bo)
		destroy(second.dev, second_bo);
	vmgpu_context_unref(second.ctx);
	vmgpu_device_unref(second.dev);
	destroy(self->dev, bo);
}

TEST_HARNESS_MAIN
