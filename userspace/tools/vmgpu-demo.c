// SPDX-License-Identifier: MIT
/*
 * vmgpu-demo: place a few allocations the way the flags ask, show where
 * they live (segment id and physical reference), evict one and bring it
 * back, and print what each segment holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvmgpu.h"

struct demo_alloc {
	const char *what;
	uint64_t size;
	uint32_t flags;
	uint32_t preferred;	/* 0: the aperture segment */
	vmgpu_bo *bo;
};

static void show(const char *when, const struct demo_alloc *a)
{
	struct drm_vmgpu_gem_info info;

	if (vmgpu_bo_info(a->bo, &info)) {
		printf("  %-34s: info failed\n", a->what);
		return;
	}
	printf("  %-34s %4llu MiB  %-8s segment %u", a->what,
	       (unsigned long long)(info.size >> 20), when, info.segment_id);
	if (info.residency & DRM_VMGPU_RESIDENCY_PHYSICAL)
		printf(", physical reference (%u, 0x%llx)", info.segment_id,
		       (unsigned long long)info.offset);
	printf("\n");
}

static void show_usage(vmgpu_device *dev)
{
	struct drm_vmgpu_query_segments *s;
	uint32_t i;

	if (vmgpu_query_segments(dev, &s))
		return;
	for (i = 0; i < s->num_segments; i++)
		printf("  segment %u (%s): %llu KiB used\n", s->segments[i].id,
		       vmgpu_segment_kind_name(s->segments[i].kind),
		       (unsigned long long)(s->segments[i].used >> 10));
	free(s);
}

int main(void)
{
	struct demo_alloc allocs[] = {
		{ .what = "CPU-accessible texture", .size = 32 << 20,
		  .flags = DRM_VMGPU_ALLOC_CPU_ACCESS, .preferred = 1 },
		{ .what = "AccessedPhysically, VRAM", .size = 8 << 20,
		  .flags = DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, .preferred = 2 },
		{ .what = "primary surface", .size = 8 << 20,
		  .flags = DRM_VMGPU_ALLOC_PRIMARY, .preferred = 1 },
		{ .what = "AccessedPhysically, system memory", .size = 4 << 20,
		  .flags = DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY },
		{ .what = "staging buffer, cached", .size = 16 << 20,
		  .flags = DRM_VMGPU_ALLOC_CACHED },
	};
	struct drm_vmgpu_query_segments *s;
	uint32_t aperture, memory = 0, i;
	vmgpu_device *dev;
	int ret;

	ret = vmgpu_device_open(&dev);
	if (!ret)
		ret = vmgpu_query_segments(dev, &s);
	if (ret) {
		fprintf(stderr, "vmgpu-demo: %s\n", strerror(-ret));
		return 1;
	}
	aperture = vmgpu_aperture_segment_id(s);
	for (i = 1; i < aperture; i++)
		memory |= 1u << i;
	free(s);

	printf("\nallocations:\n");
	for (i = 0; i < sizeof(allocs) / sizeof(allocs[0]); i++) {
		struct demo_alloc *a = &allocs[i];
		uint32_t preferred = a->preferred && a->preferred < aperture ?
				     a->preferred : aperture;
		struct vmgpu_bo_create_info info = {
			.size = a->size,
			.flags = a->flags,
			.segments = a->flags & DRM_VMGPU_ALLOC_CACHED ?
				    1u << aperture : memory | 1u << aperture,
			.preferred_segment = preferred,
		};

		ret = vmgpu_bo_create(dev, &info, &a->bo);
		if (ret) {
			fprintf(stderr, "vmgpu-demo: create %s: %s\n", a->what, strerror(-ret));
			return 1;
		}
		show("created", a);
	}

	printf("\nevicting and restoring the texture:\n");
	if (!vmgpu_bo_evict(allocs[0].bo))
		show("evicted", &allocs[0]);
	if (!vmgpu_bo_make_resident(allocs[0].bo))
		show("resident", &allocs[0]);

	printf("\nsegment usage:\n");
	show_usage(dev);
	for (i = 0; i < sizeof(allocs) / sizeof(allocs[0]); i++)
		vmgpu_bo_unref(allocs[i].bo);
	vmgpu_device_unref(dev);
	return 0;
}
