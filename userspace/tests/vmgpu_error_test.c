// SPDX-License-Identifier: MIT
/*
 * Paging failures are reported and survived, through the driver's
 * fault-injection files:
 * - a Transfer that reads past VRAM: the job's fence carries -EIO, the
 *   kernel log the device's error;
 * - a job that outlasts the scheduler timeout: the ring is declared hung
 *   and reset, the job's fence carries -ETIMEDOUT.
 * Either way the paging ring goes on working (allocations are still
 * cleared and moved).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

static int inject(const char *path)
{
	int fd = open(path, O_WRONLY);
	int ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, "1", 1) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/* A fresh allocation in memory segment 1 is cleared and survives a move. */
static int ring_still_works(vmgpu_device *dev, uint32_t aperture)
{
	struct vmgpu_bo_create_info info = {
		.size = 1 << 20,
		.flags = DRM_VMGPU_ALLOC_CPU_ACCESS,
		.segments = (1u << 1) | (1u << aperture),
		.preferred_segment = 1,
	};
	uint32_t *cpu;
	vmgpu_bo *bo;
	size_t i;
	int ret;

	ret = vmgpu_bo_create(dev, &info, &bo);
	if (ret)
		return ret;
	ret = vmgpu_bo_map(bo, (void **)&cpu);
	for (i = 0; !ret && i < info.size / 4; i++)
		if (cpu[i])
			ret = -EILSEQ;
	vmgpu_bo_unref(bo);
	return ret;
}

TEST(rejected_command_fails_its_job_only)
{
	struct drm_vmgpu_query_segments *segments;
	vmgpu_device *dev;
	uint32_t aperture;
	char path[300];
	int i;

	ASSERT_EQ(0, vmgpu_test_debugfs_path("inject_paging_error", path, sizeof(path)));
	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_query_segments(dev, &segments));
	aperture = vmgpu_aperture_segment_id(segments);
	free(segments);

	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-EIO, inject(path));
		EXPECT_EQ(0, ring_still_works(dev, aperture));
	}
	EXPECT_EQ(0, vmgpu_test_run("dmesg | grep -q 'ring 0 command [0-9]* failed: error 3'"))
		TH_LOG("the device's range error is not in the kernel log");
	vmgpu_device_unref(dev);
}

/* Reloads the driver with a 1 s paging timeout, and back after. */
TEST(hung_ring_is_reset)
{
	struct drm_vmgpu_query_segments *segments;
	vmgpu_device *dev;
	uint32_t aperture;
	char path[300];

	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu paging_timeout_ms=1000"));
	ASSERT_EQ(0, vmgpu_test_debugfs_path("inject_paging_hang", path, sizeof(path)));
	EXPECT_EQ(-ETIMEDOUT, inject(path));
	EXPECT_EQ(0, vmgpu_test_run("dmesg | grep -q 'paging ring hung'"))
		TH_LOG("the hang is not in the kernel log");

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_query_segments(dev, &segments));
	aperture = vmgpu_aperture_segment_id(segments);
	free(segments);
	EXPECT_EQ(0, ring_still_works(dev, aperture));
	vmgpu_device_unref(dev);
	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu"));
}

TEST_HARNESS_MAIN
