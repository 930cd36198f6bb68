// SPDX-License-Identifier: MIT
/*
 * Every CPU path into an allocation waits for its clears and moves, and
 * enforces the CPU-access rule itself:
 * - ptrace-style access (/proc/<pid>/mem, debuggers) waits for a queued
 *   clear before writing and for a queued eviction copy before reading;
 * - an allocation created without CPU access cannot be mapped, neither at
 *   its fake offset on the DRM fd nor through a dma-buf;
 * - a dma-buf mapping follows the allocation when it moves, as the DRM
 *   mapping does, and survives fork().
 * The paging ring is kept busy (inject_paging_delay) so that clears and
 * copies are still queued when the CPU comes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

#define MiB		(1ull << 20)
#define BO_SIZE		MiB
#define BUSY_MS		"1500"

FIXTURE(cpu) {
	vmgpu_device *dev;
	uint32_t aperture;
	int mem;
};

FIXTURE_SETUP(cpu)
{
	struct drm_vmgpu_query_segments *s;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &s));
	self->aperture = vmgpu_aperture_segment_id(s);
	free(s);
	self->mem = open("/proc/self/mem", O_RDWR);
	ASSERT_LE(0, self->mem);
}

FIXTURE_TEARDOWN(cpu)
{
	close(self->mem);
	vmgpu_device_unref(self->dev);
}

/* A write through /proc/self/mem lands after the queued clear, not under it. */
TEST_F(cpu, ptrace_write_waits_for_clear)
{
	static const uint32_t where[] = { 1, 0 };	/* segment 1, system memory */
	uint64_t first = 0, dirty;
	uint8_t page[4096];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		uint32_t id = where[i] ?: self->aperture;
		vmgpu_bo *bo;
		void *cpu;

		ASSERT_EQ(0, vmgpu_test_dirty_segment(self->dev, id, self->aperture, 8 * MiB));
		ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", BUSY_MS));
		/* Mapped, never touched: the clear is queued behind the delay. */
		ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, id, self->aperture,
							BO_SIZE, &bo, &cpu));
		vmgpu_test_fill(page, sizeof(page), 0xabc + i);
		ASSERT_EQ(sizeof(page), pwrite(self->mem, page, sizeof(page), (uintptr_t)cpu))
			TH_LOG("segment %u: %s", id, strerror(errno));

		EXPECT_EQ(0, vmgpu_test_check(cpu, sizeof(page), 0xabc + i, &first))
			TH_LOG("segment %u: the clear overwrote the ptrace write at %#llx", id,
			       (unsigned long long)first);
		dirty = vmgpu_test_nonzero((uint8_t *)cpu + sizeof(page),
					   BO_SIZE - sizeof(page), &first);
		EXPECT_EQ(0, dirty) TH_LOG("segment %u: %llu stale bytes", id,
					   (unsigned long long)dirty);
		vmgpu_bo_unref(bo);
	}
}

/* A read through /proc/self/mem waits for the queued eviction copy. */
TEST_F(cpu, ptrace_read_waits_for_eviction)
{
	uint64_t first = 0, bad;
	uint8_t *copy;
	vmgpu_bo *bo;
	void *cpu;

	copy = malloc(BO_SIZE);
	ASSERT_NE(NULL, copy);
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, self->aperture, BO_SIZE,
						&bo, &cpu));
	vmgpu_test_fill(cpu, BO_SIZE, 0x600d);
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", BUSY_MS));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));

	ASSERT_EQ(BO_SIZE, pread(self->mem, copy, BO_SIZE, (uintptr_t)cpu));
	bad = vmgpu_test_check(copy, BO_SIZE, 0x600d, &first);
	EXPECT_EQ(0, bad) TH_LOG("%llu bytes read before the copy, first at %#llx",
				 (unsigned long long)bad, (unsigned long long)first);
	free(copy);
	vmgpu_bo_unref(bo);
}

static uint64_t mmap_offset(vmgpu_device *dev, vmgpu_bo *bo)
{
	struct drm_vmgpu_gem_mmap_offset args = { .handle = vmgpu_bo_handle(bo) };

	return vmgpu_test_ioctl(dev, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, &args) ? 0 : args.offset;
}

static int export(vmgpu_device *dev, vmgpu_bo *bo)
{
	int fd;

	return drmPrimeHandleToFD(vmgpu_device_fd(dev), vmgpu_bo_handle(bo),
				  DRM_CLOEXEC | DRM_RDWR, &fd) ? -1 : fd;
}

/*
 * An allocation without CPU access is refused by the mmap itself: through
 * a dma-buf, and at its fake offset on the DRM fd. The driver is reloaded
 * first so that fake offsets are handed out in order: the refused
 * allocation's lies between its neighbours', and every page offset there
 * is tried.
 */
TEST(mmap_needs_cpu_access)
{
	struct vmgpu_bo_create_info cpu_info = {
		.size = BO_SIZE,
		.flags = DRM_VMGPU_ALLOC_CPU_ACCESS,
	}, gpu_info = { .size = BO_SIZE };
	struct drm_vmgpu_query_segments *s;
	vmgpu_bo *before, *gpu_only, *after;
	uint64_t lo, hi, off;
	int refused = 0, mapped = 0;
	vmgpu_device *dev;
	uint32_t aperture;
	int dmabuf;

	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu"));
	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_query_segments(dev, &s));
	aperture = vmgpu_aperture_segment_id(s);
	free(s);
	cpu_info.segments = gpu_info.segments = 1u << aperture;
	cpu_info.preferred_segment = gpu_info.preferred_segment = aperture;
	ASSERT_EQ(0, vmgpu_bo_create(dev, &cpu_info, &before));
	ASSERT_EQ(0, vmgpu_bo_create(dev, &gpu_info, &gpu_only));
	ASSERT_EQ(0, vmgpu_bo_create(dev, &cpu_info, &after));

	dmabuf = export(dev, gpu_only);
	ASSERT_LE(0, dmabuf);
	EXPECT_EQ(EACCES, vmgpu_test_try_mmap(dmabuf, BO_SIZE, 0));
	close(dmabuf);
	dmabuf = export(dev, before);
	ASSERT_LE(0, dmabuf);
	EXPECT_EQ(0, vmgpu_test_try_mmap(dmabuf, BO_SIZE, 0)) TH_LOG("a CPU-accessible dma-buf was refused");
	close(dmabuf);

	lo = mmap_offset(dev, before);
	hi = mmap_offset(dev, after);
	ASSERT_NE(0, lo);
	ASSERT_LT(lo, hi);
	EXPECT_EQ(0, vmgpu_test_try_mmap(vmgpu_device_fd(dev), BO_SIZE, lo));
	for (off = lo + BO_SIZE; off < hi; off += 4096) {
		int err = vmgpu_test_try_mmap(vmgpu_device_fd(dev), BO_SIZE, off);

		refused += err == EACCES;
		mapped += !err;
	}
	EXPECT_EQ(0, mapped) TH_LOG("the allocation without CPU access was mapped");
	EXPECT_EQ(1, refused) TH_LOG("its fake offset was never found between %#llx and %#llx",
				     (unsigned long long)lo, (unsigned long long)hi);

	vmgpu_bo_unref(before);
	vmgpu_bo_unref(gpu_only);
	vmgpu_bo_unref(after);
	vmgpu_device_unref(dev);
}

/*
 * A dma-buf mapping sees the allocation wherever it is: after an eviction
 * it reads the moved data, not what the next allocation writes into the
 * VRAM it left; writes through it survive the way back. A forked child
 * reads it too.
 */
TEST_F(cpu, dmabuf_mmap_follows_moves)
{
	vmgpu_bo *bo, *next;
	uint8_t *shared;
	void *cpu, *next_cpu;
	uint64_t first = 0;
	int dmabuf, status;
	pid_t child;

	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, self->aperture, BO_SIZE,
						&bo, &cpu));
	vmgpu_test_fill(cpu, BO_SIZE, 1);
	dmabuf = export(self->dev, bo);
	ASSERT_LE(0, dmabuf);
	shared = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, shared);
	EXPECT_EQ(0, vmgpu_test_check(shared, BO_SIZE, 1, &first));

	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, self->aperture, BO_SIZE,
						&next, &next_cpu));
	vmgpu_test_fill(next_cpu, BO_SIZE, 2);
	EXPECT_EQ(0, vmgpu_test_check(shared, BO_SIZE, 1, &first))
		TH_LOG("the dma-buf mapping still reads the VRAM it left, at %#llx",
		       (unsigned long long)first);

	vmgpu_test_fill(shared, BO_SIZE, 3);
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	EXPECT_EQ(0, vmgpu_test_check(cpu, BO_SIZE, 3, &first))
		TH_LOG("writes through the dma-buf mapping lost at %#llx",
		       (unsigned long long)first);
	EXPECT_EQ(0, vmgpu_test_check(next_cpu, BO_SIZE, 2, &first))
		TH_LOG("writes through the dma-buf mapping landed in another allocation");

	fflush(stdout);
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(vmgpu_test_check(shared, BO_SIZE, 3, &first) ? 1 : 0);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	munmap(shared, BO_SIZE);
	close(dmabuf);
	vmgpu_bo_unref(next);
	vmgpu_bo_unref(bo);
}

TEST_HARNESS_MAIN
