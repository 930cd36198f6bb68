// SPDX-License-Identifier: MIT
/*
 * Module unload and reload: refused while a file is open, clean otherwise,
 * and the reloaded driver reports the same device.
 */
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

static int query(struct drm_vmgpu_query_device *info)
{
	vmgpu_device *dev;
	int ret = vmgpu_device_open(&dev);

	if (ret)
		return ret;
	ret = vmgpu_query_device(dev, info);
	vmgpu_device_unref(dev);
	return ret;
}

TEST(busy_while_open)
{
	vmgpu_device *dev;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	EXPECT_NE(0, vmgpu_test_run("rmmod vmgpu 2>/dev/null"));
	vmgpu_device_unref(dev);
	ASSERT_EQ(0, access("/sys/bus/pci/drivers/vmgpu", F_OK));
}

TEST(reload)
{
	struct drm_vmgpu_query_device before, after;
	int i;

	ASSERT_EQ(0, query(&before));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu"));
		EXPECT_NE(0, access("/sys/bus/pci/drivers/vmgpu", F_OK));
		ASSERT_EQ(0, vmgpu_test_run("modprobe vmgpu"));
		ASSERT_EQ(0, query(&after));
		EXPECT_EQ(before.vram_size, after.vram_size);
		EXPECT_EQ(before.vram_bar_size, after.vram_bar_size);
		EXPECT_EQ(before.num_segments, after.num_segments);
		EXPECT_EQ(before.host_aperture_size, after.host_aperture_size);
	}
}

/*
 * The driver may ask for the paging process GPU VA size itself (module
 * parameter paging_va_mb): it overrides the device's and the default.
 */
TEST(paging_va_size_from_the_driver)
{
	struct drm_vmgpu_query_device before, asked, after;

	ASSERT_EQ(0, query(&before));
	ASSERT_NE(2ull << 20, before.paging_va_size);
	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu"));
	ASSERT_EQ(0, vmgpu_test_run("modprobe vmgpu paging_va_mb=2"));
	EXPECT_EQ(0, query(&asked));
	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu"));
	ASSERT_EQ(0, vmgpu_test_run("modprobe vmgpu"));
	EXPECT_EQ(2ull << 20, asked.paging_va_size);
	ASSERT_EQ(0, query(&after));
	EXPECT_EQ(before.paging_va_size, after.paging_va_size);
}

TEST_HARNESS_MAIN
