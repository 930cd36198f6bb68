// SPDX-License-Identifier: MIT
/*
 * Probe: the driver binds the device, exposes a render node and sets up
 * its MSI-X vectors.
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "hw/vmgpu_hw.h"
#include "vmgpu_testlib.h"

static int count_entries(const char *path, const char *prefix)
{
	struct dirent *e;
	int n = 0;
	DIR *d = opendir(path);

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    !strncmp(e->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

TEST(driver_bound)
{
	/* Entries like 0000:00:03.0 are the bound devices. */
	ASSERT_EQ(1, count_entries("/sys/bus/pci/drivers/vmgpu", "0000:"));
}

TEST(render_node)
{
	drmVersionPtr version;
	vmgpu_device *dev;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	version = drmGetVersion(vmgpu_device_fd(dev));
	ASSERT_NE(NULL, version);
	EXPECT_STREQ("vmgpu", version->name);
	drmFreeVersion(version);
	/* A render node: not the primary node, no master needed. */
	EXPECT_EQ(DRM_NODE_RENDER, drmGetNodeTypeFromFd(vmgpu_device_fd(dev)));
	vmgpu_device_unref(dev);
}

TEST(msix_vectors)
{
	char path[256], irqs[300];
	vmgpu_device *dev;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_test_pci_path(dev, path, sizeof(path)));
	snprintf(irqs, sizeof(irqs), "%s/msi_irqs", path);
	EXPECT_EQ(VMGPU_MSIX_NUM_VECTORS, count_entries(irqs, ""));
	vmgpu_device_unref(dev);
}

TEST(handle_refcount)
{
	vmgpu_device *dev, *again;
	int fd;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	fd = vmgpu_device_fd(dev);
	again = vmgpu_device_ref(dev);
	ASSERT_EQ(dev, again);
	vmgpu_device_unref(dev);
	/* Still referenced once: the fd must still be open. */
	EXPECT_NE(-1, fcntl(fd, F_GETFD));
	vmgpu_device_unref(again);
	EXPECT_EQ(-1, fcntl(fd, F_GETFD));
}

TEST_HARNESS_MAIN
