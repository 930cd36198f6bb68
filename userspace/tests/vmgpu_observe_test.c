// SPDX-License-Identifier: MIT
/*
 * Observability: fdinfo reports memory per segment the way standard tools
 * read it, engine time, and what the memory manager did to the file's
 * allocations (moves per region, notifications, moving locks, lost
 * contents, host-aperture pages); the vmgpu tracepoints record moves, paging
 * operations and user submission; debugfs lists allocations with their
 * residency, and each file's GPU VA space (whether it has compressed) and
 * mappings.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define TRACING "/sys/kernel/tracing"

/* CPU-accessible, in segment 1 or the aperture segment, preferring segment. */
static vmgpu_bo *create_in(vmgpu_device *dev, uint32_t aperture, uint32_t segment,
			   uint64_t size)
{
	vmgpu_bo *bo;

	return vmgpu_test_create(dev, size, DRM_VMGPU_ALLOC_CPU_ACCESS,
				 1u << 1 | 1u << aperture, segment, &bo) ? NULL : bo;
}

/* "<key>:\t<n> [KiB|MiB]" in bytes (or a count), or -1 if absent. */
static long long fdinfo_key(int fd, const char *name)
{
	char path[64], key[80], line[256], unit[8];
	long long value = -1, n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(key, sizeof(key), "%s:", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)))
			continue;
		unit[0] = 0;
		if (sscanf(line + strlen(key), "%lld %7s", &n, unit) < 1)
			break;
		value = n << (!strcmp(unit, "KiB") ? 10 : !strcmp(unit, "MiB") ? 20 : 0);
	}
	fclose(f);
	return value;
}

/* "drm-<what>-<region>", in bytes. */
static long long fdinfo_value(int fd, const char *what, const char *region)
{
	char key[64];

	snprintf(key, sizeof(key), "drm-%s-%s", what, region);
	return fdinfo_key(fd, key);
}

/* "vmgpu-<what>[-<region>]": the memory manager's counts for the file. */
static long long fdinfo_vmgpu(int fd, const char *what, const char *region)
{
	char key[64];

	snprintf(key, sizeof(key), "vmgpu-%s%s%s", what, region ? "-" : "", region ?: "");
	return fdinfo_key(fd, key);
}

static long long fdinfo_total(int fd, const char *region)
{
	return fdinfo_value(fd, "total", region);
}

TEST(fdinfo_per_segment)
{
	vmgpu_device *dev;
	vmgpu_bo *bo;
	int fd;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	fd = vmgpu_device_fd(dev);
	EXPECT_EQ(0, fdinfo_total(fd, "vram1"));
	bo = create_in(dev, vmgpu_test_aperture(dev), 1, 2 << 20);
	ASSERT_NE(NULL, bo);
	EXPECT_EQ(2 << 20, fdinfo_total(fd, "vram1"));
	EXPECT_EQ(2 << 20, fdinfo_value(fd, "resident", "vram1"));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	EXPECT_EQ(0, fdinfo_total(fd, "vram1"));
	EXPECT_EQ(2 << 20, fdinfo_total(fd, "system"));
	/* In system memory the device reaches: still resident. */
	EXPECT_EQ(2 << 20, fdinfo_value(fd, "resident", "system"));
	vmgpu_bo_unref(bo);
	EXPECT_EQ(0, fdinfo_total(fd, "system"));
	vmgpu_device_unref(dev);
}

/* Evicted out of the device's reach: memory still used, but not resident. */
TEST(fdinfo_evicted_not_resident)
{
	struct vmgpu_bo_create_info info = {
		.size = 2 << 20,
		.segments = 1u << 1,
		.preferred_segment = 1,
	};
	vmgpu_device *dev;
	vmgpu_bo *bo;
	int fd;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	fd = vmgpu_device_fd(dev);
	ASSERT_EQ(0, vmgpu_bo_create(dev, &info, &bo));
	EXPECT_EQ(2 << 20, fdinfo_value(fd, "resident", "vram1"));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	EXPECT_EQ(2 << 20, fdinfo_total(fd, "system"));
	EXPECT_EQ(0, fdinfo_value(fd, "resident", "system"));
	EXPECT_EQ(0, fdinfo_value(fd, "resident", "vram1"));
	vmgpu_bo_unref(bo);
	vmgpu_device_unref(dev);
}

/*
 * Per-client paging statistics: every move of the file's allocation
 * counts out of one region and into another, exactly, and only for the
 * file that created it. A first backing is not paged in; the temporary
 * system pages of an eviction out of the device's reach are not a region.
 */
TEST(fdinfo_paging_per_client)
{
	static const char *const keys[] = { "paged-out", "paged-in" };
	const long long size = 2 << 20;
	vmgpu_device *dev, *other;
	int fd, other_fd, k;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_device_open(&other));
	fd = vmgpu_device_fd(dev);
	other_fd = vmgpu_device_fd(other);
	bo = create_in(dev, vmgpu_test_aperture(dev), 1, size);
	ASSERT_NE(NULL, bo);
	ASSERT_EQ(1, segment_of(bo));
	EXPECT_EQ(0, fdinfo_vmgpu(fd, "paged-out", "vram1"));
	EXPECT_EQ(0, fdinfo_vmgpu(fd, "paged-in", "vram1")) TH_LOG("a first backing counted");

	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, segment_of(bo));
	EXPECT_EQ(size, fdinfo_vmgpu(fd, "paged-out", "vram1"));
	EXPECT_EQ(size, fdinfo_vmgpu(fd, "paged-in", "system"));
	EXPECT_EQ(0, fdinfo_vmgpu(fd, "paged-out", "system"));

	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	ASSERT_EQ(1, segment_of(bo));
	EXPECT_EQ(size, fdinfo_vmgpu(fd, "paged-in", "vram1"));
	EXPECT_EQ(size, fdinfo_vmgpu(fd, "paged-out", "system"));

	/* Through temporary system pages, out of the device's reach. */
	ASSERT_EQ(0, vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT));
	EXPECT_EQ(2 * size, fdinfo_vmgpu(fd, "paged-out", "vram1"));
	EXPECT_EQ(2 * size, fdinfo_vmgpu(fd, "paged-in", "system"));
	EXPECT_EQ(size, fdinfo_vmgpu(fd, "paged-out", "system"));

	/* Nothing for the file that only watched. */
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(0, fdinfo_vmgpu(other_fd, keys[k], "vram1"));
		EXPECT_EQ(0, fdinfo_vmgpu(other_fd, keys[k], "system"));
		EXPECT_EQ(0, fdinfo_vmgpu(other_fd, keys[k], "aperture"));
	}
	vmgpu_bo_unref(bo);
	vmgpu_device_unref(other);
	vmgpu_device_unref(dev);
}

/* Until the file's count of what reaches want, for up to 5 s. */
static long long fdinfo_vmgpu_wait(int fd, const char *what, long long want)
{
	long long n = fdinfo_vmgpu(fd, what, NULL);
	int i;

	for (i = 0; i < 500 && n != want; i++) {
		usleep(10000);
		n = fdinfo_vmgpu(fd, what, NULL);
	}
	return n;
}

/*
 * NotifyEviction when the allocation leaves the aperture segment, and on
 * an IOMMU model device NotifyIoMmuUnmap when its pages go: one each.
 */
TEST(fdinfo_notifications)
{
	struct drm_vmgpu_query_device dinfo;
	struct vmgpu_bo_create_info create = {
		.size = 1 << 20,
		.flags = DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY | DRM_VMGPU_ALLOC_NOTIFY_EVICTION |
			 DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP,
	};
	vmgpu_device *dev;
	uint32_t iommu;
	vmgpu_bo *bo;
	int fd;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_query_device(dev, &dinfo));
	iommu = !!(dinfo.flags & DRM_VMGPU_DEVICE_IOMMU_DMA);
	fd = vmgpu_device_fd(dev);
	create.preferred_segment = vmgpu_test_aperture(dev);
	create.segments = 1u << create.preferred_segment;
	EXPECT_EQ(0, fdinfo_vmgpu(fd, "notify-eviction", NULL));
	EXPECT_EQ(0, fdinfo_vmgpu(fd, "notify-iommu-unmap", NULL));

	ASSERT_EQ(0, vmgpu_bo_create(dev, &create, &bo));
	ASSERT_EQ(create.preferred_segment, segment_of(bo));
	ASSERT_EQ(0, vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT));
	EXPECT_EQ(1, fdinfo_vmgpu(fd, "notify-eviction", NULL));
	EXPECT_EQ(1 << 20, fdinfo_vmgpu(fd, "paged-out", "aperture"));
	vmgpu_bo_unref(bo);
	EXPECT_EQ(iommu, fdinfo_vmgpu_wait(fd, "notify-iommu-unmap", iommu));
	vmgpu_device_unref(dev);
}

/*
 * A Lock of an allocation the CPU may not reach in VRAM moves it; one
 * that finds it where the CPU reaches it moves nothing.
 */
TEST(fdinfo_lock_moves)
{
	vmgpu_device *dev;
	vmgpu_bo *bo;
	void *cpu;
	int fd;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	fd = vmgpu_device_fd(dev);
	EXPECT_EQ(0, fdinfo_vmgpu(fd, "lock-moves", NULL));
	ASSERT_EQ(0, vmgpu_test_create(dev, 1 << 20, 0, 1u << 1 | 1u << vmgpu_test_aperture(dev),
				       1, &bo));
	ASSERT_EQ(1, segment_of(bo));
	ASSERT_EQ(0, vmgpu_bo_lock(bo, 0, &cpu));
	EXPECT_NE(1, segment_of(bo));
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));
	EXPECT_EQ(1, fdinfo_vmgpu(fd, "lock-moves", NULL));
	ASSERT_EQ(0, vmgpu_bo_lock(bo, 0, &cpu));
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));
	EXPECT_EQ(1, fdinfo_vmgpu(fd, "lock-moves", NULL)) TH_LOG("a lock in place counted");
	vmgpu_bo_unref(bo);
	vmgpu_device_unref(dev);
}

/* A move whose paging operation fails loses the written contents: one. */
TEST(fdinfo_contents_lost)
{
	struct drm_vmgpu_gem_info info;
	vmgpu_device *dev;
	vmgpu_bo *bo;
	void *cpu;
	int fd;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	fd = vmgpu_device_fd(dev);
	EXPECT_EQ(0, fdinfo_vmgpu(fd, "contents-lost", NULL));
	ASSERT_EQ(0, vmgpu_test_create_mappable(dev, 1, vmgpu_test_aperture(dev), 1 << 20,
						&bo, &cpu));
	vmgpu_test_fill(cpu, 1 << 20, 7);
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_fault", "1"));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info));
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_CONTENTS_LOST,
		  info.residency & DRM_VMGPU_RESIDENCY_CONTENTS_LOST);
	EXPECT_EQ(1, fdinfo_vmgpu(fd, "contents-lost", NULL));
	vmgpu_bo_unref(bo);
	vmgpu_device_unref(dev);
}

/*
 * vmgpu-host-aperture: the pages the file's allocations hold in the host
 * aperture, which an allocation beyond the VRAM BAR gets as the CPU
 * touches it; none for one the BAR reaches.
 */
TEST(fdinfo_host_aperture_pages)
{
	const uint64_t size = 256 << 10;
	struct drm_vmgpu_query_segments *s;
	struct drm_vmgpu_query_device dinfo;
	uint32_t i, beyond = 0, aperture;
	uint64_t lent;
	vmgpu_device *dev;
	vmgpu_bo *bo;
	void *cpu;
	int fd;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_query_device(dev, &dinfo));
	ASSERT_EQ(0, vmgpu_query_segments(dev, &s));
	for (i = 0; i < s->num_segments && !beyond; i++)
		if (s->segments[i].kind == DRM_VMGPU_SEGMENT_MEMORY &&
		    !s->segments[i].cpu_visible_size)
			beyond = s->segments[i].id;
	free(s);
	fd = vmgpu_device_fd(dev);
	aperture = vmgpu_test_aperture(dev);

	ASSERT_EQ(0, vmgpu_test_create_mappable(dev, 1, aperture, size, &bo, &cpu));
	vmgpu_test_fill(cpu, size, 3);
	EXPECT_EQ(0, fdinfo_vmgpu(fd, "host-aperture", NULL));
	vmgpu_bo_unref(bo);
	if (!beyond || dinfo.host_aperture_size < size)
		SKIP(goto out, "no memory segment beyond the BAR with a host aperture");

	ASSERT_EQ(0, vmgpu_query_device(dev, &dinfo));
	lent = dinfo.host_aperture_used;
	ASSERT_EQ(0, vmgpu_test_create_mappable(dev, beyond, aperture, size, &bo, &cpu));
	vmgpu_test_fill(cpu, size, 4);
	ASSERT_EQ(beyond, segment_of(bo));
	EXPECT_EQ(size, fdinfo_vmgpu(fd, "host-aperture", NULL));
	/* The query's count of the pages lent grew by as much. */
	ASSERT_EQ(0, vmgpu_query_device(dev, &dinfo));
	EXPECT_EQ(lent + size, dinfo.host_aperture_used);
	vmgpu_bo_unref(bo);
	EXPECT_EQ(0, fdinfo_vmgpu(fd, "host-aperture", NULL));
out:
	vmgpu_device_unref(dev);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
	close(fd);
	return ret;
}

TEST(tracepoints_record_moves)
{
	struct drm_vmgpu_gem_info info;
	char line[512];
	int moves = 0, transfers = 0;
	vmgpu_device *dev;
	vmgpu_bo *bo;
	FILE *trace;

	/* A missing tracefs or event is a failure: the feature is not there. */
	ASSERT_EQ(0, access(TRACING "/events/vmgpu", F_OK));
	ASSERT_EQ(0, write_file(TRACING "/trace", ""));
	ASSERT_EQ(0, write_file(TRACING "/events/vmgpu/enable", "1"));

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	bo = create_in(dev, vmgpu_test_aperture(dev), 1, 1 << 20);
	ASSERT_NE(NULL, bo);
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	/* Queued is not run: the commands are traced as they enter the ring. */
	ASSERT_EQ(0, vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info));
	vmgpu_bo_unref(bo);
	vmgpu_device_unref(dev);
	ASSERT_EQ(0, write_file(TRACING "/events/vmgpu/enable", "0"));

	trace = fopen(TRACING "/trace", "r");
	ASSERT_NE(NULL, trace);
	while (fgets(line, sizeof(line), trace)) {
		if (strstr(line, "vmgpu_bo_move:") && strstr(line, "segment 1 -> 0"))
			moves++;
		if (strstr(line, "vmgpu_bo_move:") && strstr(line, "-> 1"))
			moves++;
		if (strstr(line, "vmgpu_cmd:") && strstr(line, "op 3 "))
			transfers++;
	}
	fclose(trace);
	EXPECT_LE(2, moves) TH_LOG("eviction and restore moves not traced");
	EXPECT_LE(2, transfers) TH_LOG("Transfer paging operations not traced");
}

#define OBSERVE_ODD_SIZE	((3 << 20) + (5 << 16))

TEST(debugfs_lists_allocations)
{
	char line[256], want[64], path[300];
	vmgpu_device *dev;
	vmgpu_bo *bo;
	int found = 0;
	FILE *f;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	/*
	 * An odd size that no other allocation has (fbdev's framebuffer is
	 * 3 MiB, in segment 1 too).
	 */
	bo = create_in(dev, vmgpu_test_aperture(dev), 1, OBSERVE_ODD_SIZE);
	ASSERT_NE(NULL, bo);
	ASSERT_EQ(0, vmgpu_test_debugfs_path("segments", path, sizeof(path)));
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	snprintf(want, sizeof(want), "size %d ", OBSERVE_ODD_SIZE);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want) && strstr(line, ": segment 1"))
			found++;
	fclose(f);
	EXPECT_EQ(1, found);
	vmgpu_bo_unref(bo);
	vmgpu_device_unref(dev);
}

/* Submission observability: a file with a GPU-VA context. */
#define OBSERVE_VA		0x100000000ull
#define OBSERVE_SIZE		0x40000ull

struct user_file {
	vmgpu_device *dev;
	int fd;
	uint32_t aperture;
	vmgpu_context *ctx;
};

static int user_file_open(struct user_file *f)
{
	int ret = vmgpu_device_open(&f->dev);

	if (ret)
		return ret;
	f->fd = vmgpu_device_fd(f->dev);
	f->aperture = vmgpu_test_aperture(f->dev);
	ret = vmgpu_context_create(f->dev, DRM_VMGPU_ENGINE_GPU_VA0, &f->ctx);
	if (ret)
		vmgpu_device_unref(f->dev);
	return ret;
}

static void user_file_close(struct user_file *f)
{
	vmgpu_context_unref(f->ctx);
	vmgpu_device_unref(f->dev);
}

static uint64_t fdinfo_engine_ns(int fd, const char *engine)
{
	char path[64], key[64], line[256];
	unsigned long long ns = ~0ull;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(key, sizeof(key), "drm-engine-%s:", engine);
	f = fopen(path, "r");
	if (!f)
		return ~0ull;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			sscanf(line + strlen(key), "%llu", &ns);
	fclose(f);
	return ns;
}

/* fdinfo drm-engine-*: the time the file's jobs kept each engine busy. */
TEST(fdinfo_engine_busy_time)
{
	union vmgpu_cmd cmd = cmd_nop(200000);
	uint64_t before0, before1, after0, after1;
	struct user_file f;

	ASSERT_EQ(0, user_file_open(&f));

	before0 = fdinfo_engine_ns(f.fd, "gpuva0");
	before1 = fdinfo_engine_ns(f.fd, "gpuva1");
	ASSERT_NE(~0ull, before0);
	ASSERT_NE(~0ull, before1);
	ASSERT_NE(~0ull, fdinfo_engine_ns(f.fd, "physical"));
	ASSERT_EQ(0, run(f.ctx, f.fd, &cmd, 1));
	after0 = fdinfo_engine_ns(f.fd, "gpuva0");
	after1 = fdinfo_engine_ns(f.fd, "gpuva1");
	EXPECT_GE(after0 - before0, 150000000ull);
	EXPECT_LT(after0 - before0, 2000000000ull);
	/* The other engine did nothing for this file. */
	EXPECT_EQ(before1, after1);
	user_file_close(&f);
}

/* debugfs vms lists the file's mappings, and forgets them on unmap. */
TEST(debugfs_lists_mappings)
{
	char buf[16384], line[64];
	struct user_file f;
	uint8_t *cpu;
	vmgpu_bo *bo;

	ASSERT_EQ(0, user_file_open(&f));

	snprintf(line, sizeof(line), "0x%llx-0x%llx", OBSERVE_VA,
		 OBSERVE_VA + OBSERVE_SIZE);
	ASSERT_EQ(0, make_mapped_in_aperture(f.dev, f.aperture,
					     OBSERVE_VA, OBSERVE_SIZE, &bo,
					     (void **)&cpu));
	ASSERT_EQ(0, vmgpu_test_debugfs_read("vms", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, line)) TH_LOG("%s not in:\n%s", line, buf);
	ASSERT_EQ(0, vmgpu_vm_unmap(f.dev, OBSERVE_VA, OBSERVE_SIZE));
	ASSERT_EQ(0, vmgpu_test_debugfs_read("vms", buf, sizeof(buf)));
	EXPECT_EQ(NULL, strstr(buf, line));
	vmgpu_bo_unref(bo);
	user_file_close(&f);
}

/* Tracepoints: bind, page tables, submit, completion with its error, fault. */
TEST(tracepoints_record_submission)
{
	int binds = 0, ptes = 0, submits = 0, failed = 0, faults = 0;
	struct user_file f;
	union vmgpu_cmd cmd;
	vmgpu_context *doomed;
	char line[512];
	uint8_t *cpu;
	vmgpu_bo *bo;
	FILE *trace;

	ASSERT_EQ(0, user_file_open(&f));
	/* A missing tracefs or event is a failure: the feature is not there. */
	ASSERT_EQ(0, access(TRACING "/events/vmgpu/vmgpu_ring_fault", F_OK));
	ASSERT_EQ(0, vmgpu_test_write_file(TRACING "/trace", ""));
	ASSERT_EQ(0, vmgpu_test_write_file(TRACING "/events/vmgpu/enable", "1"));
	ASSERT_EQ(0, vmgpu_context_create(f.dev, DRM_VMGPU_ENGINE_GPU_VA0, &doomed));
	ASSERT_EQ(0, make_mapped_in_aperture(f.dev, f.aperture, OBSERVE_VA, OBSERVE_SIZE,
					     &bo, (void **)&cpu));
	cmd = cmd_fill(OBSERVE_VA, OBSERVE_SIZE, 1);
	ASSERT_EQ(0, run(f.ctx, f.fd, &cmd, 1));
	cmd = cmd_fill(OBSERVE_VA + 0x10000000ull, OBSERVE_SIZE, 1);
	ASSERT_EQ(0, run(doomed, f.fd, &cmd, 1));
	ASSERT_EQ(0, vmgpu_test_write_file(TRACING "/events/vmgpu/enable", "0"));

	trace = fopen(TRACING "/trace", "r");
	ASSERT_NE(NULL, trace);
	while (fgets(line, sizeof(line), trace)) {
		binds += strstr(line, "vmgpu_vm_bind:") && strstr(line, " map 0x100000000+0x40000");
		ptes += strstr(line, "vmgpu_vm_ptes:") && strstr(line, "0x100000000+0x40000 -> space 1");
		submits += !!strstr(line, "vmgpu_job_submit:");
		failed += strstr(line, "vmgpu_ctx_job_done:") && strstr(line, "error -5");
		faults += strstr(line, "vmgpu_ring_fault:") && strstr(line, "ring gpuva0");
	}
	fclose(trace);
	EXPECT_EQ(1, binds);
	EXPECT_EQ(1, ptes) TH_LOG("aperture-segment entries not traced");
	EXPECT_LE(2, submits);
	EXPECT_EQ(1, failed);
	EXPECT_EQ(1, faults);
	vmgpu_bo_unref(bo);
	vmgpu_context_unref(doomed);
	user_file_close(&f);
}

/* Spaces of open files that debugfs vms says have compressed, or -1. */
static int spaces_compressing(void)
{
	static char buf[65536];
	char *line;
	int n = 0;

	if (vmgpu_test_debugfs_read("vms", buf, sizeof(buf)))
		return -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		n += !strncmp(line, "vm ", 3) && strstr(line, ", compresses") != NULL;
	return n;
}

/*
 * A space that has compressed makes every new system allocation cost a
 * device clear for as long as it lives (memory-management.rst): an EXEC
 * refused for its last command must not have marked it, since nothing of
 * it was queued. The same COMPRESS queued on its own does mark it.
 */
TEST(failed_exec_does_not_compress)
{
	union vmgpu_cmd cmds[2] = { 0 };
	struct user_file f;
	uint8_t *cpu;
	vmgpu_bo *bo;
	int before;

	ASSERT_EQ(0, user_file_open(&f));
	ASSERT_EQ(0, make_mapped_in_aperture(f.dev, f.aperture, OBSERVE_VA, OBSERVE_SIZE,
					     &bo, (void **)&cpu));
	before = spaces_compressing();
	ASSERT_LE(0, before) TH_LOG("no debugfs vms");

	cmds[0].range.hdr.opcode = VMGPU_OP_COMPRESS;
	cmds[0].range.addr = va_addr(OBSERVE_VA);
	cmds[0].range.size = OBSERVE_SIZE;
	/* No such opcode: the whole EXEC is refused. */
	cmds[1].hdr.opcode = 0xffff;
	EXPECT_EQ(-EINVAL, vmgpu_context_submit(f.ctx, cmds, 2, NULL, 0, NULL, 0, NULL));
	EXPECT_EQ(before, spaces_compressing()) TH_LOG("a refused EXEC marked its space");
	/* Valid commands, an in-sync on no syncobj: refused after the checks. */
	EXPECT_EQ(-ENOENT, vmgpu_context_submit(f.ctx, cmds, 1,
						&(struct vmgpu_sync){ .syncobj = 0x7fff }, 1,
						NULL, 0, NULL));
	EXPECT_EQ(before, spaces_compressing()) TH_LOG("an EXEC with a bad sync marked its space");

	ASSERT_EQ(0, run(f.ctx, f.fd, cmds, 1));
	EXPECT_EQ(before + 1, spaces_compressing()) TH_LOG("a queued COMPRESS did not");
	vmgpu_bo_unref(bo);
	user_file_close(&f);
}

TEST_HARNESS_MAIN
