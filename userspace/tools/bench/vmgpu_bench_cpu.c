// SPDX-License-Identifier: MIT
/*
 * vmgpu-bench's CPU-access figures: write and read bandwidth through the
 * VRAM BAR, the CPU host aperture (plain and detiling a swizzled
 * allocation) and system memory, and the latency of a lock that finds the
 * allocation visible, that lends it host-aperture pages, and that moves it
 * to system memory.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvmgpu.h"
#include "vmgpu_bench.h"

#define CPU_SIZE		(4 * MiB)
#define LOCK_SIZE		(64 * 1024)
#define LOCK_ROUNDS		50

/* Best-of-runs write and read MiB/s through @cpu, 8 bytes at a time. */
static void cpu_bandwidth(const char *name, void *cpu, double *write, double *read)
{
	volatile uint64_t *w = cpu;
	double start, t;
	uint64_t i, sum = 0;
	int r;

	*write = *read = 0;
	for (r = 0; r < MEMCPY_RUNS; r++) {
		start = now();
		for (i = 0; i < CPU_SIZE / 8; i++)
			w[i] = i;
		t = now() - start;
		if (CPU_SIZE / MiB / t > *write)
			*write = CPU_SIZE / MiB / t;
		start = now();
		for (i = 0; i < CPU_SIZE / 8; i++)
			sum += w[i];
		t = now() - start;
		if (CPU_SIZE / MiB / t > *read)
			*read = CPU_SIZE / MiB / t;
	}
	if (sum != (uint64_t)MEMCPY_RUNS * (CPU_SIZE / 8) * (CPU_SIZE / 8 - 1) / 2)
		fail_msg("CPU access read back the wrong bytes");
	printf("bench: cpu_%s_write %.1f MiB/s\n", name, *write);
	printf("bench: cpu_%s_read %.1f MiB/s\n", name, *read);
}

/* Lock an allocation and measure through the lock's mapping. */
static bool locked_bandwidth(vmgpu_device *dev, const char *name, uint32_t flags,
			     uint32_t segments, uint32_t preferred, uint32_t expect_residency,
			     double *write, double *read)
{
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *bo = create(dev, CPU_SIZE, DRM_VMGPU_ALLOC_CPU_ACCESS | flags, segments,
			      preferred);
	void *cpu;
	int ret;

	ret = vmgpu_bo_lock(bo, 0, &cpu);
	if (ret)
		fail("lock", ret);
	ret = vmgpu_bo_info(bo, &info);
	if (ret)
		fail("info", ret);
	if ((info.residency & expect_residency) != expect_residency) {
		printf("bench: cpu_%s skipped (residency %#x)\n", name, info.residency);
		vmgpu_bo_unref(bo);
		return false;
	}
	cpu_bandwidth(name, cpu, write, read);
	vmgpu_bo_unlock(bo);
	vmgpu_bo_unref(bo);
	return true;
}

/* A memory segment wholly beyond the BAR, or 0. */
uint32_t invisible_segment(const struct drm_vmgpu_query_segments *s)
{
	uint32_t i;

	for (i = 0; i < s->num_segments; i++)
		if (s->segments[i].kind == DRM_VMGPU_SEGMENT_MEMORY &&
		    !s->segments[i].cpu_visible_size && s->segments[i].size >= CPU_SIZE)
			return s->segments[i].id;
	return 0;
}

void bench_cpu_bandwidth(vmgpu_device *dev, uint32_t aperture, uint32_t beyond)
{
	const uint32_t resident = DRM_VMGPU_RESIDENCY_RESIDENT;
	const uint32_t hap = DRM_VMGPU_RESIDENCY_HOST_APERTURE;
	double sys_w, sys_r, bar_w, bar_r, hap_w, hap_r, det_w, det_r;

	locked_bandwidth(dev, "system", 0, 1u << aperture, aperture, resident, &sys_w, &sys_r);
	locked_bandwidth(dev, "bar", 0, 1u << 1 | 1u << aperture, 1, resident, &bar_w, &bar_r);
	printf("ratio: cpu_bar_vs_system_write %.3f\n", bar_w / sys_w);
	printf("ratio: cpu_bar_vs_system_read %.3f\n", bar_r / sys_r);
	if (!locked_bandwidth(dev, "hap_detiled", DRM_VMGPU_ALLOC_SWIZZLED,
			      1u << 1 | 1u << aperture, 1, hap, &det_w, &det_r))
		return;
	printf("ratio: cpu_hap_detiled_vs_bar_write %.3f\n", det_w / bar_w);
	printf("ratio: cpu_hap_detiled_vs_bar_read %.3f\n", det_r / bar_r);
	if (!beyond || !locked_bandwidth(dev, "hap", 0, 1u << beyond | 1u << aperture, beyond,
					 hap, &hap_w, &hap_r))
		return;
	printf("ratio: cpu_hap_vs_bar_write %.3f\n", hap_w / bar_w);
	printf("ratio: cpu_hap_vs_bar_read %.3f\n", hap_r / bar_r);
	printf("ratio: cpu_hap_detiled_vs_hap_read %.3f\n", det_r / hap_r);
}

/*
 * Median lock latency of an idle allocation; before each lock it is made
 * resident again (untimed), so that each lock does the same work.
 */
static double lock_latency(vmgpu_device *dev, uint32_t flags, uint32_t segments,
			   uint32_t preferred)
{
	vmgpu_bo *bo = create(dev, LOCK_SIZE, flags, segments, preferred);
	struct drm_vmgpu_gem_info info;
	double t[LOCK_ROUNDS], start;
	int i, ret;

	for (i = 0; i < LOCK_ROUNDS; i++) {
		ret = vmgpu_bo_make_resident(bo);
		if (!ret)
			ret = vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info);
		if (ret)
			fail("make resident", ret);
		start = now();
		ret = vmgpu_bo_lock(bo, 0, NULL);
		t[i] = now() - start;
		if (ret)
			fail("lock", ret);
		vmgpu_bo_unlock(bo);
		/* Lend its host-aperture pages again next time. */
		if (vmgpu_bo_evict(bo))
			fail_msg("evict");
	}
	vmgpu_bo_unref(bo);
	qsort(t, LOCK_ROUNDS, sizeof(t[0]), cmp_double);
	return t[LOCK_ROUNDS / 2];
}

bool has_host_aperture(vmgpu_device *dev)
{
	struct drm_vmgpu_query_device info;
	int ret = vmgpu_query_device(dev, &info);

	if (ret)
		fail("query device", ret);
	return info.flags & DRM_VMGPU_DEVICE_HOST_APERTURE;
}

void bench_lock(vmgpu_device *dev, uint32_t aperture, uint32_t beyond, bool hap)
{
	const uint32_t set = 1u << 1 | 1u << aperture;
	double visible, lent = 0, moved;

	visible = lock_latency(dev, DRM_VMGPU_ALLOC_CPU_ACCESS, set, 1);
	/* Without CPU access a lock in VRAM moves it to system memory. */
	moved = lock_latency(dev, 0, set, 1);
	if (hap)
		lent = lock_latency(dev, DRM_VMGPU_ALLOC_CPU_ACCESS |
				    (beyond ? 0 : DRM_VMGPU_ALLOC_SWIZZLED),
				    beyond ? 1u << beyond | 1u << aperture : set, beyond ?: 1);
	printf("bench: lock_visible %.1f us\n", visible * 1e6);
	printf("bench: lock_moved_to_system %.1f us\n", moved * 1e6);
	printf("ratio: lock_moved_vs_visible %.2f\n", moved / visible);
	if (!hap)
		return;
	printf("bench: lock_host_aperture %.1f us\n", lent * 1e6);
	printf("ratio: lock_host_aperture_vs_visible %.2f\n", lent / visible);
}
