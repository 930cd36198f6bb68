// SPDX-License-Identifier: MIT
/*
 * vmgpu-pressure: keep the memory manager evicting for a while, for
 * vmgpu-top to watch. Fills the first memory segment one and a half times
 * over with allocations that may also live in system memory, then makes
 * them resident in turn: each one brought back evicts another.
 *
 *   vmgpu-pressure [SECONDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libvmgpu.h"

#define MIN_ALLOC_SIZE	(4ull << 20)
#define MAX_ALLOCS	256

static void check(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "vmgpu-pressure: %s: %s\n", what, strerror(-ret));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	struct drm_vmgpu_query_segments *s;
	struct vmgpu_bo_create_info info = {
		.size = MIN_ALLOC_SIZE,
		.preferred_segment = 1,
	};
	uint64_t fill;
	vmgpu_bo *bos[MAX_ALLOCS];
	unsigned int n, i;
	vmgpu_device *dev;
	time_t end;

	check(vmgpu_device_open(&dev), "open");
	check(vmgpu_query_segments(dev, &s), "query");
	if (s->num_segments < 3 || s->segments[1].kind != DRM_VMGPU_SEGMENT_MEMORY) {
		fprintf(stderr, "vmgpu-pressure: no memory segment 1\n");
		return 1;
	}
	info.segments = 1u << 1 | 1u << vmgpu_aperture_segment_id(s);
	fill = s->segments[1].size * 3 / 2;
	free(s);
	/* Larger allocations for a large segment: MAX_ALLOCS overfill it. */
	while (fill / info.size > MAX_ALLOCS)
		info.size *= 2;
	n = fill / info.size;
	if (n < 2) {
		fprintf(stderr, "vmgpu-pressure: segment 1 holds less than one allocation\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		check(vmgpu_bo_create(dev, &info, &bos[i]), "create");
	printf("vmgpu-pressure: %u allocations of %llu MiB for %.0f s\n", n,
	       (unsigned long long)(info.size >> 20), seconds);
	fflush(stdout);
	end = time(NULL) + (time_t)seconds;
	for (i = 0; time(NULL) < end; i++)
		check(vmgpu_bo_make_resident(bos[i % n]), "make resident");
	for (i = 0; i < n; i++)
		vmgpu_bo_unref(bos[i]);
	vmgpu_device_unref(dev);
	return 0;
}
