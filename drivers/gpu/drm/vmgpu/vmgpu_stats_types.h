/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_STATS_TYPES_H_
#define _VMGPU_STATS_TYPES_H_

#include <linux/atomic.h>
#include <linux/kref.h>

#include "vmgpu_device_types.h"

/* fdinfo regions: "system", "vram1".."vramN", "aperture" (the last id). */
#define VMGPU_STATS_REGIONS	(VMGPU_MAX_DRIVER_SEGMENTS + 2)

/**
 * enum vmgpu_stats_event - what &struct vmgpu_stats counts one by one
 * @VMGPU_STATS_NOTIFY_EVICTION: NotifyEviction sent, one per allocation
 *	and move
 * @VMGPU_STATS_NOTIFY_IOMMU_UNMAP: NotifyIoMmuUnmap sent, one per set of
 *	pages
 * @VMGPU_STATS_LOCK_MOVES: Lock and Lock2 calls that moved the allocation
 * @VMGPU_STATS_CONTENTS_LOST: allocations whose contents were lost
 * @VMGPU_STATS_EVENTS: how many there are
 */
enum vmgpu_stats_event {
	VMGPU_STATS_NOTIFY_EVICTION,
	VMGPU_STATS_NOTIFY_IOMMU_UNMAP,
	VMGPU_STATS_LOCK_MOVES,
	VMGPU_STATS_CONTENTS_LOST,
	VMGPU_STATS_EVENTS
};

/**
 * struct vmgpu_stats - what the memory manager did to one client's
 * allocations
 *
 * Shared by the DRM file that created the allocations and by each of
 * them, so that work done after the file closed still finds it. Indexes
 * are segment ids as fdinfo names them (vmgpu_stats_region_name()).
 */
struct vmgpu_stats {
	/** @ref: the file's reference and one per allocation. */
	struct kref ref;
	/** @paged_out: bytes moved out of each region. */
	atomic64_t paged_out[VMGPU_STATS_REGIONS];
	/** @paged_in: bytes moved into each region with their contents. */
	atomic64_t paged_in[VMGPU_STATS_REGIONS];
	/** @events: by &enum vmgpu_stats_event. */
	atomic64_t events[VMGPU_STATS_EVENTS];
};

#endif
