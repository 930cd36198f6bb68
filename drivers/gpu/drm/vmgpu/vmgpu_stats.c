// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/slab.h>

#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "vmgpu_context_types.h"
#include "vmgpu_device.h"
#include "vmgpu_stats.h"
#include "vmgpu_stats_types.h"

/**
 * DOC: per-client statistics
 *
 * What the video memory manager did to each client, in fdinfo next to the
 * standard drm-* keys (Documentation/gpu/drm-usage-stats.rst), as keys
 * prefixed "vmgpu-" the way amdgpu prefixes its own with "amd-"; all but
 * the last are running totals (amdgpu's amd-evicted-* are current sizes,
 * hence other names). A client
 * is the DRM file that created the allocations; the counts follow the
 * allocations wherever they are shared, and keep counting work done after
 * the file closed (nobody reads them then). They are counted where the
 * work is done:
 *
 * - vmgpu-paged-out-<region>, vmgpu-paged-in-<region> (KiB): bytes moved out
 *   of and into each region (the regions of drm-total-*) by any move, be
 *   it an eviction for room, Evict, MakeResident, a Lock, or a move for
 *   the display. A first backing is not paged in, and the system pages an
 *   eviction from VRAM passes through on its way out are not a region
 *   (the move counts from VRAM to its destination). Moves inside one
 *   region do not count. A move counts once TTM has it; if its paging
 *   operation fails, the contents are lost and counted below.
 * - vmgpu-notify-eviction, vmgpu-notify-iommu-unmap: notifications queued
 *   for the client's allocations, one per allocation and move (not per
 *   chunk of the paging VA).
 * - vmgpu-lock-moves: Lock and Lock2 calls that moved the allocation.
 * - vmgpu-contents-lost: allocations whose contents were lost.
 * - vmgpu-host-aperture (KiB): host-aperture pages the file's allocations
 *   hold now, counted like drm-total-* (vmgpu_gem_show_fdinfo()).
 */

static const char *const vmgpu_stats_event_keys[VMGPU_STATS_EVENTS] = {
	[VMGPU_STATS_NOTIFY_EVICTION] = "notify-eviction",
	[VMGPU_STATS_NOTIFY_IOMMU_UNMAP] = "notify-iommu-unmap",
	[VMGPU_STATS_LOCK_MOVES] = "lock-moves",
	[VMGPU_STATS_CONTENTS_LOST] = "contents-lost",
};

/**
 * vmgpu_stats_create() - the statistics of a new client
 *
 * Return: zeroed statistics with one reference, or NULL.
 */
struct vmgpu_stats *vmgpu_stats_create(void)
{
	struct vmgpu_stats *stats = kzalloc(sizeof(*stats), GFP_KERNEL);

	if (stats)
		kref_init(&stats->ref);
	return stats;
}

/**
 * vmgpu_stats_get() - a new reference
 * @stats: statistics, or NULL (kernel allocations count for nobody)
 *
 * Return: @stats.
 */
struct vmgpu_stats *vmgpu_stats_get(struct vmgpu_stats *stats)
{
	if (stats)
		kref_get(&stats->ref);
	return stats;
}

static void vmgpu_stats_release(struct kref *ref)
{
	kfree(container_of(ref, struct vmgpu_stats, ref));
}

/**
 * vmgpu_stats_put() - drop a reference
 * @stats: statistics, or NULL
 */
void vmgpu_stats_put(struct vmgpu_stats *stats)
{
	if (stats)
		kref_put(&stats->ref, vmgpu_stats_release);
}

/**
 * vmgpu_stats_move() - count a move of an allocation's backing
 * @stats: the owner's statistics, or NULL
 * @from: the region left, or -1 for a temporary placement
 * @to: the region entered, or -1 for a temporary placement
 * @bytes: the allocation's size
 *
 * Not for a first backing: it is not paged in.
 */
void vmgpu_stats_move(struct vmgpu_stats *stats, int from, int to, u64 bytes)
{
	if (!stats || from == to)
		return;
	if (from >= 0)
		atomic64_add(bytes, &stats->paged_out[from]);
	if (to >= 0)
		atomic64_add(bytes, &stats->paged_in[to]);
}

/**
 * vmgpu_stats_region_name() - the fdinfo name of a region
 * @vdev: the device
 * @id: segment id: 0 for system memory, the aperture segment's, or a
 *	memory segment's
 * @buf: where the name goes
 * @len: its size
 */
void vmgpu_stats_region_name(struct vmgpu_device *vdev, u32 id, char *buf, size_t len)
{
	if (id == 0)
		strscpy(buf, "system", len);
	else if (id == vmgpu_aperture_segment(vdev))
		strscpy(buf, "aperture", len);
	else
		snprintf(buf, len, "vram%u", id);
}

/**
 * vmgpu_stats_show_fdinfo() - the memory manager's counts for one file
 * @p: the fdinfo printer
 * @file: the file
 */
void vmgpu_stats_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct vmgpu_device *vdev = to_vmgpu_device(file->minor->dev);
	struct vmgpu_stats *stats = ((struct vmgpu_file *)file->driver_priv)->stats;
	char region[16];
	u32 id, i;

	for (id = 0; id <= vmgpu_aperture_segment(vdev); id++) {
		vmgpu_stats_region_name(vdev, id, region, sizeof(region));
		drm_printf(p, "vmgpu-paged-out-%s:\t%llu KiB\n", region,
			   atomic64_read(&stats->paged_out[id]) >> 10);
		drm_printf(p, "vmgpu-paged-in-%s:\t%llu KiB\n", region,
			   atomic64_read(&stats->paged_in[id]) >> 10);
	}
	for (i = 0; i < VMGPU_STATS_EVENTS; i++)
		drm_printf(p, "vmgpu-%s:\t%llu\n", vmgpu_stats_event_keys[i],
			   atomic64_read(&stats->events[i]));
}
