/* SPDX-License-Identifier: MIT */
/*
 * The notification tests' fixture (vmgpu_notify_test.c, vmgpu_compress_test.c):
 * a file with a GPU-VA context, allocations mapped at VA that a user job
 * compresses, and the vmgpu_notify tracepoint that counts notifications.
 */
#ifndef VMGPU_NOTIFY_H
#define VMGPU_NOTIFY_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define VA		0x600000000ull
#define PAGE		4096ull
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

static inline int trace_start(void)
{
	int ret = vmgpu_test_write_file(TRACING "/trace", "");

	return ret ?: vmgpu_test_write_file(NOTIFY_EVENT, "1");
}

/* Chunks of kind ("eviction", "iommu-unmap") traced for an allocation of size. */
static inline int trace_chunks(const char *kind, uint64_t size)
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

static inline uint64_t chunks_for(FIXTURE_DATA(notify) *self, uint64_t size)
{
	return (size + self->info.paging_va_size - 1) / self->info.paging_va_size;
}

/*
 * A CPU-visible allocation in system memory with the given notification
 * flags, mapped at VA: in the aperture segment if physical, else in the
 * system segment.
 */
static inline int create_mapped(FIXTURE_DATA(notify) *self, uint64_t size, uint32_t flags,
			 int physical, vmgpu_bo **bo, uint32_t **cpu)
{
	return vmgpu_test_create_at_va(self->dev, size,
				       flags | (physical ? DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY : 0),
				       1u << self->aperture, self->aperture, VA, bo, (void **)cpu);
}

/* Unmapped from the VA space and closed: nothing keeps it any more. */
static inline void destroy(vmgpu_device *dev, vmgpu_bo *bo)
{
	vmgpu_vm_unmap(dev, VA, vmgpu_bo_size(bo));
	vmgpu_bo_unref(bo);
}

/* Until the system segment's use is at most target: 0, or -1 after 10 s. */
static inline int wait_freed(vmgpu_device *dev, uint64_t target)
{
	return vmgpu_test_used_drops_to(dev, 0, target, 10000) <= target ? 0 : -1;
}

/*
 * Destroy an allocation of the system segment and wait until it is freed:
 * the segment's use has gone down by its size. TTM unpopulates the pages
 * before it frees the backing.
 */
static inline int destroy_and_wait(vmgpu_device *dev, vmgpu_bo *bo)
{
	uint64_t used, size = vmgpu_bo_size(bo);

	if (vmgpu_test_segment_used(dev, 0, &used) || used < size)
		return -1;
	destroy(dev, bo);
	return wait_freed(dev, used - size);
}

static inline int gpu_range(FIXTURE_DATA(notify) *self, uint16_t opcode, uint64_t size)
{
	union vmgpu_cmd c = { 0 };

	c.range.hdr.opcode = opcode;
	c.range.addr = va_addr(VA);
	c.range.size = size;
	return run(self->ctx, vmgpu_device_fd(self->dev), &c, 1);
}

/* The UMD's part on a non-coherent device (seed "I/O coherency"). */
static inline int cache_sync(FIXTURE_DATA(notify) *self, vmgpu_bo *bo, uint32_t dir, uint64_t size)
{
	if (!(self->info.flags & DRM_VMGPU_DEVICE_NONCOHERENT))
		return 0;
	return vmgpu_bo_cache_sync(bo, dir, 0, size);
}

/* The words checked: the first 16 of every page and all of the last page. */
static inline int checked(uint64_t i, uint64_t words)
{
	return (i % (PAGE / 4)) < 16 || i >= words - PAGE / 4;
}

static inline void cpu_fill(uint32_t *cpu, uint64_t size)
{
	uint64_t i, words = size / 4;

	for (i = 0; i < words; i++)
		if (checked(i, words))
			cpu[i] = (uint32_t)vmgpu_test_word(0x0071f1, i);
}

/* Checked words that differ from the pattern XOR xor. */
static inline uint64_t cpu_differs(const uint32_t *cpu, uint64_t size, uint32_t xor)
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
static inline void fill_and_compress(struct __test_metadata *_metadata,
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
static inline int compress_and_evict(struct __test_metadata *_metadata,
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

#endif
