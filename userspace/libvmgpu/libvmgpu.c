// SPDX-License-Identifier: MIT
/*
 * libvmgpu: device discovery and queries.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "hw/vmgpu_hw.h"
#include "libvmgpu.h"

struct vmgpu_device {
	int refcount;
	int fd;
};

int vmgpu_device_create(int fd, vmgpu_device **out)
{
	drmVersionPtr version = drmGetVersion(fd);
	vmgpu_device *dev;
	int is_vmgpu;

	if (!version)
		return -errno ?: -ENODEV;
	is_vmgpu = !strcmp(version->name, "vmgpu");
	drmFreeVersion(version);
	if (!is_vmgpu)
		return -ENODEV;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dev->fd < 0) {
		free(dev);
		return -errno;
	}
	dev->refcount = 1;
	*out = dev;
	return 0;
}

static int vmgpu_is_vmgpu_pci(const drmDevicePtr d)
{
	return d->bustype == DRM_BUS_PCI &&
	       d->deviceinfo.pci->vendor_id == VMGPU_PCI_VENDOR_ID &&
	       d->deviceinfo.pci->device_id == VMGPU_PCI_DEVICE_ID &&
	       (d->available_nodes & (1 << DRM_NODE_RENDER));
}

int vmgpu_device_open(vmgpu_device **out)
{
	drmDevicePtr devices[16];
	int count, i, ret = -ENODEV;

	count = drmGetDevices2(0, devices, 16);
	if (count < 0)
		return count;
	for (i = 0; i < count && ret; i++) {
		int fd;

		if (!vmgpu_is_vmgpu_pci(devices[i]))
			continue;
		fd = open(devices[i]->nodes[DRM_NODE_RENDER], O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		ret = vmgpu_device_create(fd, out);
		close(fd);
	}
	drmFreeDevices(devices, count);
	return ret;
}

vmgpu_device *vmgpu_device_ref(vmgpu_device *dev)
{
	__atomic_add_fetch(&dev->refcount, 1, __ATOMIC_RELAXED);
	return dev;
}

void vmgpu_device_unref(vmgpu_device *dev)
{
	if (!dev || __atomic_sub_fetch(&dev->refcount, 1, __ATOMIC_ACQ_REL))
		return;
	close(dev->fd);
	free(dev);
}

int vmgpu_device_fd(const vmgpu_device *dev)
{
	return dev->fd;
}

int vmgpu_query_raw(vmgpu_device *dev, struct drm_vmgpu_query *query)
{
	return drmIoctl(dev->fd, DRM_IOCTL_VMGPU_QUERY, query) ? -errno : 0;
}

/* Ask for the answer's size, check it, then fetch the answer. */
static int vmgpu_query_sized(vmgpu_device *dev, uint32_t id, void **out,
			     uint32_t *size)
{
	struct drm_vmgpu_query query = { .query = id };
	void *data;
	int ret;

	ret = vmgpu_query_raw(dev, &query);
	if (ret)
		return ret;
	data = calloc(1, query.size);
	if (!data)
		return -ENOMEM;
	query.data = (uintptr_t)data;
	ret = vmgpu_query_raw(dev, &query);
	if (ret) {
		free(data);
		return ret;
	}
	*out = data;
	*size = query.size;
	return 0;
}

int vmgpu_query_device(vmgpu_device *dev, struct drm_vmgpu_query_device *out)
{
	struct drm_vmgpu_query query = {
		.query = DRM_VMGPU_QUERY_DEVICE,
		.size = sizeof(*out),
		.data = (uintptr_t)out,
	};

	return vmgpu_query_raw(dev, &query);
}

int vmgpu_query_segments(vmgpu_device *dev,
			 struct drm_vmgpu_query_segments **out)
{
	struct drm_vmgpu_query_segments *segments;
	uint32_t size;
	void *data;
	int ret;

	ret = vmgpu_query_sized(dev, DRM_VMGPU_QUERY_SEGMENTS, &data, &size);
	if (ret)
		return ret;
	segments = data;
	if (size < sizeof(*segments) ||
	    size != sizeof(*segments) +
		    segments->num_segments * sizeof(segments->segments[0])) {
		free(data);
		return -EPROTO;
	}
	*out = segments;
	return 0;
}

const char *vmgpu_segment_kind_name(uint32_t kind)
{
	switch (kind) {
	case DRM_VMGPU_SEGMENT_SYSTEM:
		return "system";
	case DRM_VMGPU_SEGMENT_MEMORY:
		return "memory";
	case DRM_VMGPU_SEGMENT_APERTURE:
		return "aperture";
	}
	return "unknown";
}
