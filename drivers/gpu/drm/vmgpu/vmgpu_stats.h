/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_STATS_H_
#define _VMGPU_STATS_H_

#include <linux/types.h>

#include "vmgpu_stats_types.h"

struct drm_file;
struct drm_printer;
struct vmgpu_device;
struct vmgpu_stats;

struct vmgpu_stats *vmgpu_stats_create(void);
struct vmgpu_stats *vmgpu_stats_get(struct vmgpu_stats *stats);
void vmgpu_stats_put(struct vmgpu_stats *stats);
void vmgpu_stats_move(struct vmgpu_stats *stats, int from, int to, u64 bytes);
void vmgpu_stats_region_name(struct vmgpu_device *vdev, u32 id, char *buf, size_t len);
void vmgpu_stats_show_fdinfo(struct drm_printer *p, struct drm_file *file);

/* One more @event for @stats, if anyone counts. */
static inline void vmgpu_stats_count(struct vmgpu_stats *stats, enum vmgpu_stats_event event)
{
	if (stats)
		atomic64_inc(&stats->events[event]);
}

#endif
