// SPDX-License-Identifier: MIT
/*
 * PRIME import (memory-management.rst, "PRIME import"): dma-bufs of vgem
 * and udmabuf are allocations of the implicit system segment whose pages
 * stay the exporter's. GPU jobs read and write them where the exporter
 * sees it, without a clear or a copy on the way; evicted out of the
 * device's reach and used again, they keep their bytes; the CPU reaches
 * them through the exporter only; jobs synchronise implicitly with the
 * exporter's work both ways; an import asked for AccessedPhysically is
 * what the physical engine writes; and a dma-buf vmgpu exported comes back
 * as the same allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/udmabuf.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"
#include "../../tests/exporter/vmgpu_test_exporter.h"

#define SIZE		(64 * 1024ull)
#define HALF		(SIZE / 2)
#define IMPORT_VA	0x400000000ull
#define NATIVE_VA	0x500000000ull
#define KEY		0x5eed0f1e5eed0f1eull
#define NEW		0x1b0071a1u
#define GATE_VA		0x600000000ull

/* A udmabuf of SIZE over a sealed memfd, the memfd's pages mapped at *map. */
static int udmabuf_buffer(int *dmabuf, void **map)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = SIZE };
	int dev, memfd, ret = 0;

	memfd = memfd_create("vmgpu-prime", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0)
		return -errno;
	if (ftruncate(memfd, SIZE) || fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		ret = -errno;
		goto close_memfd;
	}
	*map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (*map == MAP_FAILED) {
		ret = -errno;
		goto close_memfd;
	}
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		ret = -errno;
		goto close_memfd;
	}
	create.memfd = memfd;
	*dmabuf = ioctl(dev, UDMABUF_CREATE, &create);
	if (*dmabuf < 0)
		ret = -errno;
	close(dev);
close_memfd:
	close(memfd);
	return ret;
}

FIXTURE(prime) {
	vmgpu_device *dev;
	vmgpu_context *ctx;
	uint32_t aperture;
	int vgem;
	struct vmgpu_test_fb vgem_buf;
	void *vgem_map;
	int dmabuf;
};

FIXTURE_SETUP(prime)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	self->aperture = vmgpu_test_aperture(self->dev);
	ASSERT_NE(0, self->aperture);
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &self->ctx));
	self->vgem = vmgpu_test_open_vgem();
	ASSERT_LE(0, self->vgem) TH_LOG("no vgem device: %s", strerror(-self->vgem));
	/* 4 KiB lines: SIZE bytes exactly. */
	ASSERT_EQ(0, vmgpu_test_vgem_buffer(self->vgem, 1024, SIZE / 4096, &self->vgem_buf,
					    &self->dmabuf));
	ASSERT_EQ(SIZE, self->vgem_buf.size);
	self->vgem_map = self->vgem_buf.map;
	vmgpu_test_fill(self->vgem_map, SIZE, KEY);
}

FIXTURE_TEARDOWN(prime)
{
	close(self->dmabuf);
	munmap(self->vgem_map, SIZE);
	close(self->vgem);
	vmgpu_context_unref(self->ctx);
	vmgpu_device_unref(self->dev);
}

static int gpu(FIXTURE_DATA(prime) *self, union vmgpu_cmd cmd)
{
	return run(self->ctx, vmgpu_device_fd(self->dev), &cmd, 1);
}

/* What GEM_INFO says of an import that is resident. */
static void expect_import_info(struct __test_metadata *_metadata, vmgpu_bo *bo,
			       uint32_t aperture, uint32_t residency)
{
	struct drm_vmgpu_gem_info info;

	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(SIZE, info.size);
	EXPECT_EQ(DRM_VMGPU_ALLOC_PRIMARY, info.flags);
	EXPECT_EQ(1u << aperture, info.segments);
	EXPECT_EQ(0, info.segment_id);
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_IMPORTED | residency, info.residency);
}

/*
 * A GPU job writes half of a vgem buffer, and vgem's own mapping sees it
 * next to the other half, untouched: the import was neither cleared nor
 * copied.
 */
TEST_F(prime, gpu_writes_a_vgem_buffer_the_exporter_reads)
{
	uint64_t first;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_bo_import(self->dev, self->dmabuf, 0, &bo));
	expect_import_info(_metadata, bo, self->aperture, DRM_VMGPU_RESIDENCY_RESIDENT);
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, IMPORT_VA, SIZE, 0));
	ASSERT_EQ(0, gpu(self, cmd_fill(IMPORT_VA + HALF, HALF, NEW)));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	EXPECT_EQ(0, vmgpu_test_check(self->vgem_map, HALF, KEY, &first))
		TH_LOG("the import's first half changed at %llu", (unsigned long long)first);
	EXPECT_EQ(0, count_not((uint8_t *)self->vgem_map + HALF, HALF, NEW));
	vmgpu_bo_unref(bo);
}

/*
 * A GPU job copies a udmabuf the CPU wrote into a vmgpu allocation, and
 * writes the udmabuf: the memfd's pages are what the GPU read and wrote.
 */
TEST_F(prime, gpu_reads_and_writes_a_udmabuf)
{
	vmgpu_bo *bo, *native;
	void *memfd_map, *native_cpu;
	uint64_t first;
	int dmabuf;

	ASSERT_EQ(0, udmabuf_buffer(&dmabuf, &memfd_map))
		TH_LOG("no udmabuf (/dev/udmabuf)");
	vmgpu_test_fill(memfd_map, SIZE, ~KEY);
	ASSERT_EQ(0, vmgpu_bo_import(self->dev, dmabuf, 0, &bo));
	close(dmabuf);
	expect_import_info(_metadata, bo, self->aperture, DRM_VMGPU_RESIDENCY_RESIDENT);
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, IMPORT_VA, SIZE, 0));
	ASSERT_EQ(0, make_mapped(self->dev, 1, self->aperture, NATIVE_VA, SIZE, &native,
				 &native_cpu));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, SIZE));
	ASSERT_EQ(0, gpu(self, cmd_transfer(IMPORT_VA, NATIVE_VA, SIZE)));
	EXPECT_EQ(0, vmgpu_test_check(native_cpu, SIZE, ~KEY, &first))
		TH_LOG("the GPU read something else at %llu", (unsigned long long)first);

	ASSERT_EQ(0, gpu(self, cmd_fill(IMPORT_VA, SIZE, NEW)));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	EXPECT_EQ(0, count_not(memfd_map, SIZE, NEW));
	vmgpu_bo_unref(native);
	vmgpu_bo_unref(bo);
	munmap(memfd_map, SIZE);
}

/*
 * Out of the device's reach an import is not resident and not mapped for
 * it; the next job maps it again, where its bytes still are.
 */
TEST_F(prime, evicted_import_comes_back_with_its_bytes)
{
	uint8_t *kept = malloc(HALF);
	vmgpu_bo *bo;

	ASSERT_NE(NULL, kept);
	memcpy(kept, (uint8_t *)self->vgem_map + HALF, HALF);
	ASSERT_EQ(0, vmgpu_bo_import(self->dev, self->dmabuf, 0, &bo));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, IMPORT_VA, SIZE, 0));
	ASSERT_EQ(0, vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT));
	expect_import_info(_metadata, bo, self->aperture, 0);

	ASSERT_EQ(0, gpu(self, cmd_fill(IMPORT_VA, HALF, NEW)));
	expect_import_info(_metadata, bo, self->aperture, DRM_VMGPU_RESIDENCY_RESIDENT);
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	EXPECT_EQ(0, count_not(self->vgem_map, HALF, NEW));
	EXPECT_EQ(0, memcmp(kept, (uint8_t *)self->vgem_map + HALF, HALF));
	vmgpu_bo_unref(bo);
	free(kept);
}

/*
 * The import holds the dma-buf: with vgem's handle and the fd closed, a
 * GPU write still lands in the pages, and vmgpu's mapping, which is
 * vgem's, shows it.
 */
TEST_F(prime, import_outlives_the_exporters_handles)
{
	uint32_t *cpu;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_bo_import(self->dev, self->dmabuf, 0, &bo));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, IMPORT_VA, SIZE, 0));
	close(self->dmabuf);
	self->dmabuf = -1;
	ASSERT_EQ(0, drmCloseBufferHandle(self->vgem, self->vgem_buf.handle));
	munmap(self->vgem_map, SIZE);
	self->vgem_map = MAP_FAILED;

	ASSERT_EQ(0, gpu(self, cmd_fill(IMPORT_VA, SIZE, NEW)));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	ASSERT_EQ(0, vmgpu_bo_map(bo, (void **)&cpu));
	EXPECT_EQ(0, count_not(cpu, SIZE, NEW));
	vmgpu_bo_unref(bo);
}

/*
 * The CPU reaches an import through its exporter only: vmgpu's mapping is
 * vgem's (a write through one shows in the other), Lock and Lock2 refuse.
 */
TEST_F(prime, cpu_reaches_an_import_through_its_exporter)
{
	uint64_t first;
	uint32_t *cpu;
	void *locked;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_bo_import(self->dev, self->dmabuf, 0, &bo));
	ASSERT_EQ(0, vmgpu_bo_map(bo, (void **)&cpu));
	EXPECT_EQ(0, vmgpu_test_check(cpu, SIZE, KEY, &first));
	cpu[7] = NEW;
	EXPECT_EQ(NEW, ((uint32_t *)self->vgem_map)[7]);
	EXPECT_EQ(-EINVAL, vmgpu_bo_lock(bo, 0, &locked));
	EXPECT_EQ(-EINVAL, vmgpu_bo_lock2(bo, &locked));
	vmgpu_bo_unref(bo);
}

/*
 * A dma-buf vmgpu exported is not imported: another file gets the same
 * allocation (not flagged an import, same flags), and a GPU write from
 * that file shows in the first one's CPU mapping. The same file gets its
 * own handle back.
 */
TEST_F(prime, self_import_is_the_same_allocation)
{
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *bo, *again, *other_bo;
	vmgpu_context *other_ctx;
	vmgpu_device *other;
	uint32_t *cpu;
	int fd;

	ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, SIZE, 0, 1u << self->aperture,
					      self->aperture, &bo, (void **)&cpu));
	ASSERT_EQ(0, vmgpu_bo_export(bo, &fd));
	ASSERT_EQ(0, vmgpu_bo_import(self->dev, fd, 0, &again));
	EXPECT_EQ(bo, again);
	vmgpu_bo_unref(again);

	ASSERT_EQ(0, vmgpu_device_open(&other));
	ASSERT_EQ(0, vmgpu_bo_import(other, fd, 0, &other_bo));
	close(fd);
	ASSERT_EQ(0, vmgpu_bo_info(other_bo, &info));
	EXPECT_EQ(DRM_VMGPU_ALLOC_CPU_ACCESS, info.flags);
	EXPECT_EQ(0, info.residency & DRM_VMGPU_RESIDENCY_IMPORTED);
	ASSERT_EQ(0, vmgpu_context_create(other, DRM_VMGPU_ENGINE_GPU_VA0, &other_ctx));
	ASSERT_EQ(0, vmgpu_vm_map(other_bo, 0, IMPORT_VA, SIZE, 0));
	{
		union vmgpu_cmd fill = cmd_fill(IMPORT_VA, SIZE, NEW);

		ASSERT_EQ(0, run(other_ctx, vmgpu_device_fd(other), &fill, 1));
	}
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	EXPECT_EQ(0, count_not(cpu, SIZE, NEW));
	vmgpu_context_unref(other_ctx);
	vmgpu_bo_unref(other_bo);
	vmgpu_device_unref(other);
	vmgpu_bo_unref(bo);
}

/*
 * A job on an import waits for the exporter's write: vgem's fence holds it
 * (its write does not land) until vgem signals.
 */
TEST_F(prime, job_waits_for_the_exporters_write)
{
	struct vgem_fence_attach attach = { .handle = self->vgem_buf.handle,
					    .flags = VGEM_FENCE_WRITE };
	struct vgem_fence_signal signal = { 0 };
	union vmgpu_cmd fill = cmd_fill(IMPORT_VA, SIZE, NEW);
	int fd = vmgpu_device_fd(self->dev);
	uint32_t syncobj;
	uint64_t first;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_bo_import(self->dev, self->dmabuf, 0, &bo));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, IMPORT_VA, SIZE, 0));
	ASSERT_EQ(0, drmIoctl(self->vgem, DRM_IOCTL_VGEM_FENCE_ATTACH, &attach));
	ASSERT_EQ(0, submit_signal(self->ctx, fd, &fill, 1, &syncobj, NULL));
	usleep(300 * 1000);
	EXPECT_NE(0, drmSyncobjWait(fd, &syncobj, 1, 0, 0, NULL))
		TH_LOG("the job ran before the exporter's write was done");
	EXPECT_EQ(0, vmgpu_test_check(self->vgem_map, SIZE, KEY, &first));
	signal.fence = attach.out_fence;
	ASSERT_EQ(0, drmIoctl(self->vgem, DRM_IOCTL_VGEM_FENCE_SIGNAL, &signal));
	ASSERT_EQ(0, wait_syncobj(fd, syncobj));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	EXPECT_EQ(0, count_not(self->vgem_map, SIZE, NEW));
	drmSyncobjDestroy(fd, syncobj);
	vmgpu_bo_unref(bo);
}

/*
 * Once the job's fence has signalled, the exporter reads what it wrote,
 * with no cache-sync call: on the non-coherent configuration the kernel
 * brackets a job that uses an import with flushes of the device's cache.
 * The job also reads what the exporter wrote after an earlier job read
 * the same pages.
 */
TEST_F(prime, exporter_and_job_see_each_other_without_cache_sync)
{
	vmgpu_bo *bo, *native;
	void *native_cpu;
	uint64_t first;

	ASSERT_EQ(0, vmgpu_bo_import(self->dev, self->dmabuf, 0, &bo));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, IMPORT_VA, SIZE, 0));
	ASSERT_EQ(0, make_mapped(self->dev, 1, self->aperture, NATIVE_VA, SIZE, &native,
				 &native_cpu));
	ASSERT_EQ(0, gpu(self, cmd_transfer(IMPORT_VA, NATIVE_VA, SIZE)));
	EXPECT_EQ(0, vmgpu_test_check(native_cpu, SIZE, KEY, &first));

	vmgpu_test_fill(self->vgem_map, SIZE, ~KEY);
	ASSERT_EQ(0, gpu(self, cmd_transfer(IMPORT_VA, NATIVE_VA, SIZE)));
	EXPECT_EQ(0, vmgpu_test_check(native_cpu, SIZE, ~KEY, &first))
		TH_LOG("the job read a stale line at %llu", (unsigned long long)first);

	ASSERT_EQ(0, gpu(self, cmd_fill(IMPORT_VA, SIZE, NEW)));
	EXPECT_EQ(0, count_not(self->vgem_map, SIZE, NEW)) TH_LOG("the write is still cached");
	vmgpu_bo_unref(native);
	vmgpu_bo_unref(bo);
}

/*
 * The exporter sees a job on an import as a writer: its dma-buf polls busy
 * for readers while the job is held at a gate, and idle once it is done.
 */
TEST_F(prime, exporter_sees_the_job_as_a_writer)
{
	union vmgpu_cmd cmds[2] = { cmd_wait(GATE_VA, 1), cmd_fill(IMPORT_VA, SIZE, NEW) };
	struct pollfd readers = { .fd = self->dmabuf, .events = POLLIN };
	int fd = vmgpu_device_fd(self->dev);
	uint64_t *gate_word;
	uint32_t syncobj;
	vmgpu_bo *bo, *gate;

	ASSERT_EQ(0, make_mapped_in_aperture(self->dev, self->aperture, GATE_VA, 4096, &gate,
					     (void **)&gate_word));
	*gate_word = 0;
	ASSERT_EQ(0, vmgpu_bo_cache_sync(gate, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, 4096));
	ASSERT_EQ(0, vmgpu_bo_import(self->dev, self->dmabuf, 0, &bo));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, IMPORT_VA, SIZE, 0));
	ASSERT_EQ(0, submit_signal(self->ctx, fd, cmds, 2, &syncobj, NULL));
	EXPECT_EQ(0, poll(&readers, 1, 300)) TH_LOG("the dma-buf is idle under a queued job");

	*gate_word = 1;
	ASSERT_EQ(0, vmgpu_bo_cache_sync(gate, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, 4096));
	ASSERT_EQ(0, wait_syncobj(fd, syncobj));
	EXPECT_EQ(1, poll(&readers, 1, 10000));
	drmSyncobjDestroy(fd, syncobj);
	vmgpu_bo_unref(bo);
	vmgpu_bo_unref(gate);
}

/*
 * Asked for AccessedPhysically (GEM_IMPORT), an import is mapped into the
 * aperture segment with a physical reference, and a physical engine's job
 * patched to it writes vgem's pages.
 */
TEST_F(prime, physical_engine_writes_an_import_asked_for)
{
	union vmgpu_cmd fill = { 0 };
	struct drm_vmgpu_patch patch = { .cmd = 0, .which = DRM_VMGPU_PATCH_FIRST };
	struct drm_vmgpu_gem_info info;
	struct vmgpu_sync out = { 0 };
	vmgpu_context *physical;
	int fd = vmgpu_device_fd(self->dev);
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_bo_import(self->dev, self->dmabuf,
				     DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, &bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(DRM_VMGPU_ALLOC_PRIMARY | DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, info.flags);
	EXPECT_EQ(self->aperture, info.segment_id);
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_IMPORTED | DRM_VMGPU_RESIDENCY_RESIDENT |
		  DRM_VMGPU_RESIDENCY_PHYSICAL, info.residency);

	fill.fill.hdr.opcode = VMGPU_OP_FILL;
	fill.fill.size = HALF;
	fill.fill.pattern = NEW;
	patch.offset = HALF;
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_PHYSICAL, &physical));
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &out.syncobj));
	ASSERT_EQ(0, vmgpu_context_submit_physical(physical, &fill, 1, &bo, 1, &patch, 1,
						   &out, 1, NULL));
	ASSERT_EQ(0, wait_syncobj(fd, out.syncobj));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	EXPECT_EQ(0, count_not((uint8_t *)self->vgem_map + HALF, HALF, NEW));
	{
		uint64_t first;

		EXPECT_EQ(0, vmgpu_test_check(self->vgem_map, HALF, KEY, &first));
	}
	drmSyncobjDestroy(fd, out.syncobj);
	vmgpu_context_unref(physical);
	vmgpu_bo_unref(bo);
}

/*
 * GEM_IMPORT's refusals: bad flags, a pad or reserved word, no dma-buf,
 * and AccessedPhysically for one of vmgpu's own allocations without it.
 */
TEST_F(prime, gem_import_refuses_what_it_cannot_give)
{
	struct drm_vmgpu_gem_import args = { .fd = self->dmabuf };
	vmgpu_bo *own;
	int fd;

	args.flags = DRM_VMGPU_ALLOC_CPU_ACCESS;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_IMPORT, &args));
	args.flags = 0;
	args.pad = 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_IMPORT, &args));
	args.pad = 0;
	args.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_IMPORT, &args));
	args.reserved[1] = 0;
	args.fd = vmgpu_device_fd(self->dev);
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_IMPORT, &args));

	ASSERT_EQ(0, vmgpu_test_create(self->dev, SIZE, 0, 1u << self->aperture, self->aperture,
				       &own));
	ASSERT_EQ(0, vmgpu_bo_export(own, &fd));
	args.fd = fd;
	args.flags = DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_IMPORT, &args));
	args.flags = 0;
	EXPECT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_IMPORT, &args));
	EXPECT_EQ(vmgpu_bo_handle(own), args.handle);
	close(fd);
	vmgpu_bo_unref(own);
}

/*
 * A buffer of the debug kernel's test exporter (its module is built for
 * that kernel only), imported and mapped at IMPORT_VA: the exporter's fd,
 * or -EOPNOTSUPP on Debian's kernel, whose dma-buf pins dynamic mappings.
 */
static int import_from_test_exporter(struct __test_metadata *_metadata,
				     FIXTURE_DATA(prime) *self,
				     struct vmgpu_test_exporter_create *create, vmgpu_bo **bo)
{
	const char *kernel = getenv("VMGPU_KERNEL");
	int exporter;

	ASSERT_NE(NULL, kernel) TH_LOG("VMGPU_KERNEL not set by the configuration");
	if (strcmp(kernel, "debug"))
		return -EOPNOTSUPP;
	exporter = vmgpu_test_open_exporter();
	ASSERT_LE(0, exporter) TH_LOG("no /dev/vmgpu-test-exporter");
	create->size = SIZE;
	ASSERT_EQ(0, ioctl(exporter, VMGPU_TEST_EXPORTER_CREATE, create));
	ASSERT_EQ(0, vmgpu_bo_import(self->dev, create->fd, 0, bo));
	ASSERT_EQ(0, vmgpu_vm_map(*bo, 0, IMPORT_VA, SIZE, 0));
	return exporter;
}

/*
 * A dynamic exporter moves the buffer an import has mapped: move_notify
 * takes the import out of the device's reach and unmaps it (the exporter
 * refuses to move while a mapping is left), and the next job maps the
 * new pages, which hold what the first job wrote.
 */
TEST_F(prime, dynamic_exporter_moves_the_buffer)
{
	struct vmgpu_test_exporter_create create = { 0 };
	struct vmgpu_test_exporter_move move = { 0 };
	struct drm_vmgpu_gem_info info;
	uint8_t *cpu;
	vmgpu_bo *bo;
	int exporter;

	exporter = import_from_test_exporter(_metadata, self, &create, &bo);
	if (exporter == -EOPNOTSUPP)
		SKIP(return, "Debian's kernel pins dynamic mappings (no CONFIG_DMABUF_MOVE_NOTIFY)");
	ASSERT_EQ(0, gpu(self, cmd_fill(IMPORT_VA, HALF, NEW)));

	move.fd = create.fd;
	EXPECT_EQ(0, ioctl(exporter, VMGPU_TEST_EXPORTER_MOVE, &move))
		TH_LOG("%u mappings left after move_notify", move.mappings_left);
	EXPECT_EQ(1, move.moves);
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_IMPORTED, info.residency) TH_LOG("still resident");

	ASSERT_EQ(0, gpu(self, cmd_fill(IMPORT_VA + HALF, HALF, ~NEW)));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	cpu = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, create.fd, 0);
	ASSERT_NE(MAP_FAILED, cpu);
	EXPECT_EQ(0, count_not(cpu, HALF, NEW));
	EXPECT_EQ(0, count_not(cpu + HALF, HALF, ~NEW)) TH_LOG("the job wrote the old pages");
	munmap(cpu, SIZE);
	vmgpu_bo_unref(bo);
	close(create.fd);
	close(exporter);
}

/*
 * The eviction move_notify asks for fails (inject_import_evict_fault): the
 * import keeps its mapping of pages its exporter may move, out of the
 * device's reach. A VM_BIND then must not point entries at them: a job
 * queued before the bind (its EXEC saw no import to evict) faults instead
 * of writing them, and the next EXEC evicts the import and maps it again.
 * The test exporter refuses to move while a mapping is left, so the pages
 * written here are still the buffer's: what the test sees is the write.
 */
TEST_F(prime, bind_after_a_failed_eviction_for_the_exporter_maps_nothing)
{
	struct vmgpu_test_exporter_create create = { 0 };
	struct vmgpu_test_exporter_move move = { 0 };
	union vmgpu_cmd queued[2] = { cmd_wait(GATE_VA, 1), cmd_fill(IMPORT_VA, SIZE, ~NEW) };
	union vmgpu_cmd nop = cmd_nop(0);
	int fd = vmgpu_device_fd(self->dev);
	vmgpu_context *early;
	vmgpu_bo *bo, *gate;
	uint64_t *gate_word;
	uint32_t syncobj;
	uint8_t *cpu;
	int exporter;

	exporter = import_from_test_exporter(_metadata, self, &create, &bo);
	if (exporter == -EOPNOTSUPP)
		SKIP(return, "Debian's kernel pins dynamic mappings (no CONFIG_DMABUF_MOVE_NOTIFY)");
	ASSERT_EQ(0, gpu(self, cmd_fill(IMPORT_VA, SIZE, NEW)));
	ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, IMPORT_VA, SIZE));

	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_import_evict_fault", "1"));
	move.fd = create.fd;
	EXPECT_EQ(-1, ioctl(exporter, VMGPU_TEST_EXPORTER_MOVE, &move));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(1, move.mappings_left) TH_LOG("the injected eviction failure did not happen");

	ASSERT_EQ(0, make_mapped_in_aperture(self->dev, self->aperture, GATE_VA, 4096, &gate,
					     (void **)&gate_word));
	*gate_word = 0;
	ASSERT_EQ(0, vmgpu_bo_cache_sync(gate, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, 4096));
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &early));
	ASSERT_EQ(0, submit_signal(early, fd, queued, 2, &syncobj, NULL));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, IMPORT_VA, SIZE, 0));
	*gate_word = 1;
	ASSERT_EQ(0, vmgpu_bo_cache_sync(gate, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, 4096));
	ASSERT_EQ(0, wait_syncobj(fd, syncobj));
	drmSyncobjDestroy(fd, syncobj);

	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	cpu = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, create.fd, 0);
	ASSERT_NE(MAP_FAILED, cpu);
	EXPECT_EQ(0, count_not(cpu, SIZE, NEW)) TH_LOG("the bind mapped the moved import");
	EXPECT_EQ(-ECANCELED, run(early, fd, &nop, 1)) TH_LOG("the queued job did not fault");

	/* The next EXEC evicts the import and maps it again. */
	ASSERT_EQ(0, gpu(self, cmd_fill(IMPORT_VA, HALF, ~NEW)));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	EXPECT_EQ(0, count_not(cpu, HALF, ~NEW));
	EXPECT_EQ(0, count_not(cpu + HALF, HALF, NEW));
	munmap(cpu, SIZE);
	vmgpu_context_unref(early);
	vmgpu_bo_unref(gate);
	vmgpu_bo_unref(bo);
	close(create.fd);
	close(exporter);
}

/* What is not a dma-buf is refused. */
TEST_F(prime, import_of_a_file_that_is_no_dmabuf_fails)
{
	int memfd = memfd_create("vmgpu-prime", MFD_CLOEXEC);
	vmgpu_bo *bo;

	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, SIZE));
	EXPECT_EQ(-EINVAL, vmgpu_bo_import(self->dev, memfd, 0, &bo));
	close(memfd);
}

TEST_HARNESS_MAIN
