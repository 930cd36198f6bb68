/* SPDX-License-Identifier: MIT */
/*
 * What vmgpu-bench's files share: its error exits, its clock, allocation,
 * and the CPU-access figures (vmgpu_bench_cpu.c).
 */
#ifndef VMGPU_BENCH_H
#define VMGPU_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "libvmgpu.h"

#define MiB			(1ull << 20)
/* Copies are timed best of this many runs. */
#define MEMCPY_RUNS		3

/* CLOCK_MONOTONIC, in seconds. */
double now(void);
/* Print "bench: error ..." and exit 1. */
void fail(const char *what, int err);
void fail_msg(const char *msg);
/* For qsort() of doubles, ascending. */
int cmp_double(const void *a, const void *b);
/* An allocation, or exit. */
vmgpu_bo *create(vmgpu_device *dev, uint64_t size, uint32_t flags,
		 uint32_t segments, uint32_t preferred);

/* The memory segment wholly beyond the BAR, or 0. */
uint32_t invisible_segment(const struct drm_vmgpu_query_segments *s);
bool has_host_aperture(vmgpu_device *dev);
/* Bandwidth through the BAR, the host aperture and system memory. */
void bench_cpu_bandwidth(vmgpu_device *dev, uint32_t aperture, uint32_t beyond);
/* The latency of locks that find, lend and move. */
void bench_lock(vmgpu_device *dev, uint32_t aperture, uint32_t beyond, bool hap);

#endif
