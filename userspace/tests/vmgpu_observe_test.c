// SPDX-License-Identifier: MIT
/*
 * Observability: fdinfo reports memory per segment the way standard tools
 * read it, the vmgpu tracepoints record moves and paging operations, and
 * debugfs lists allocations with their residency.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

#define TRACING "/sys/kernel/tracing"

static vmgpu_bo *create_in(vmgpu_device *dev, uint32_t aperture, uint32_t segment,
			   uint64_t size)
{
	struct vmgpu_bo_create_info info = {
		.size = size,
		.flags = DRM_VMGPU_ALLOC_CPU_ACCESS,
		.segments = 1u << 1 | 1u << aperture,
		.preferred_segment = segment,
	};
	vmgpu_bo *bo;

	return vmgpu_bo_create(dev, &info, &bo) ? NULL : bo;
}

/* "drm-<what>-<region>:\t<n> <unit>" in bytes, or -1 if absent. */
static long long fdinfo_value(int fd, const char *what, const char *region)
{
	char path[64], key[64], line[256], unit[8];
	long long value = -1, n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(key, sizeof(key), "drm-%s-%s:", what, region);
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

TEST(debugfs_lists_allocations)
{
	char line[256], want[64], path[300];
	vmgpu_device *dev;
	vmgpu_bo *bo;
	int found = 0;
	FILE *f;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	/* An odd size that no other allocation of this test has. */
	bo = create_in(dev, vmgpu_test_aperture(dev), 1, 3 << 20);
	ASSERT_NE(NULL, bo);
	ASSERT_EQ(0, vmgpu_test_debugfs_path("segments", path, sizeof(path)));
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	snprintf(want, sizeof(want), "size %d ", 3 << 20);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want) && strstr(line, ": segment 1"))
			found++;
	fclose(f);
	EXPECT_EQ(1, found);
	vmgpu_bo_unref(bo);
	vmgpu_device_unref(dev);
}

TEST_HARNESS_MAIN
