// SPDX-License-Identifier: MIT
/*
 * vmgpu-info: print the vmgpu device and its segment table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvmgpu.h"

static void print_size(const char *label, uint64_t bytes)
{
	if (bytes >= (1ull << 20) && !(bytes & ((1ull << 20) - 1)))
		printf("%s%llu MiB", label, (unsigned long long)(bytes >> 20));
	else
		printf("%s%llu KiB", label, (unsigned long long)(bytes >> 10));
}

static const char *cpu_access(const struct drm_vmgpu_segment *seg)
{
	if (seg->flags & DRM_VMGPU_SEGMENT_CPU_VISIBLE)
		return "direct";
	if (seg->flags & DRM_VMGPU_SEGMENT_HOST_APERTURE)
		return seg->cpu_visible_size ? "BAR + host aperture" : "host aperture";
	return seg->cpu_visible_size ? "BAR (partial)" : "none";
}

int main(void)
{
	struct drm_vmgpu_query_segments *segments;
	struct drm_vmgpu_query_device info;
	vmgpu_device *dev;
	uint32_t i;
	int ret;

	ret = vmgpu_device_open(&dev);
	if (ret) {
		fprintf(stderr, "vmgpu-info: no vmgpu device: %s\n", strerror(-ret));
		return 1;
	}
	ret = vmgpu_query_device(dev, &info);
	if (!ret)
		ret = vmgpu_query_segments(dev, &segments);
	if (ret) {
		fprintf(stderr, "vmgpu-info: query failed: %s\n", strerror(-ret));
		vmgpu_device_unref(dev);
		return 1;
	}

	printf("vmgpu %04x:%04x, hardware contract %u.%u\n", info.pci_vendor,
	       info.pci_device, info.hw_version >> 16, info.hw_version & 0xffff);
	print_size("VRAM ", info.vram_size);
	print_size(", VRAM BAR ", info.vram_bar_size);
	print_size(" (", info.vram_bar_probe_size);
	printf(" at probe, %s)", info.flags & DRM_VMGPU_DEVICE_REBAR ?
	       "resizable" : "not resizable");
	if (info.host_aperture_size) {
		print_size(", host aperture ", info.host_aperture_size);
		printf(info.flags & DRM_VMGPU_DEVICE_HOST_APERTURE ? "" :
		       " (not used by the driver)");
	}
	print_size("\npaging process GPU VA ", info.paging_va_size);
	if (info.contents_lost)
		printf(", %llu allocations lost their contents",
		       (unsigned long long)info.contents_lost);
	printf("\n\n%3s  %-8s  %10s  %10s  %6s  %11s  %s\n", "id", "kind", "size",
	       "used", "page", "cpu-visible", "cpu access");
	for (i = 0; i < segments->num_segments; i++) {
		const struct drm_vmgpu_segment *seg = &segments->segments[i];

		printf("%3u  %-8s  %6llu MiB  %6llu KiB  %2u KiB  %7llu MiB  %s\n", seg->id,
		       vmgpu_segment_kind_name(seg->kind),
		       (unsigned long long)(seg->size >> 20),
		       (unsigned long long)(seg->used >> 10), seg->page_size >> 10,
		       (unsigned long long)(seg->cpu_visible_size >> 20),
		       cpu_access(seg));
	}
	free(segments);
	vmgpu_device_unref(dev);
	return 0;
}
