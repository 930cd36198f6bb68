/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_BO_H_
#define _VMGPU_BO_H_

#include <linux/list.h>
#include <linux/workqueue.h>

#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_placement.h>

#include "vmgpu_device.h"

struct vmgpu_stats;

/**
 * struct vmgpu_bo - an allocation
 */
struct vmgpu_bo {
	/** @tbo: the TTM object, its GEM object inside. */
	struct ttm_buffer_object tbo;
	/** @placement: where it may live, preferred segment first. */
	struct ttm_placement placement;
	/** @places: entries of @placement. */
	struct ttm_place places[VMGPU_MAX_DRIVER_SEGMENTS + 2];
	/**
	 * @evict_places: where an eviction sends it (vmgpu_bo_evict_placement()).
	 * Under the reservation.
	 */
	struct ttm_place evict_places[2];
	/** @flags: DRM_VMGPU_ALLOC_* creation flags. */
	u32 flags;
	/** @segments: supported segment set, bit n for id n. */
	u32 segments;
	/** @preferred: preferred segment id. */
	u32 preferred;
	/**
	 * @num_preferred: the first places, in the preferred segment; 0 if
	 * that segment can never hold the allocation.
	 */
	u32 num_preferred;
	/** @cleared: its first backing is clear (a Fill, or zeroed pages). */
	bool cleared;
	/**
	 * @paging_fence: the last paging operation that wrote the current
	 * backing (a clear or a copy), until its outcome is looked at. Under
	 * the reservation.
	 */
	struct dma_fence *paging_fence;
	/**
	 * @paging_copied: a copy is among the operations @paging_fence
	 * stands for, so their failure loses data. Under the reservation.
	 */
	bool paging_copied;
	/**
	 * @has_contents: userspace may have written the allocation: a CPU
	 * access was granted. Before that, losing a copy loses nothing but
	 * zeros. Under the reservation.
	 */
	bool has_contents;
	/**
	 * @needs_scrub: a paging operation that wrote the backing failed,
	 * and it was not cleared since. Under the reservation.
	 */
	bool needs_scrub;
	/**
	 * @contents_lost: a move failed and the data is gone; the backing
	 * was cleared instead. Sticky. Under the reservation.
	 */
	bool contents_lost;
	/**
	 * @vm_stale: GPU VA mappings of it have invalid entries, until its
	 * backing is resident and settled (vmgpu_vm_bo_revalidate()). Under
	 * the reservation.
	 */
	bool vm_stale;
	/**
	 * @locked_by: the file holding a Lock on it, or NULL (the pointer is
	 * only compared). Under the reservation.
	 */
	struct drm_file *locked_by;
	/**
	 * @unswizzled: a swizzled allocation whose backing out of a memory
	 * segment holds its bytes in linear order, unswizzled for the CPU;
	 * the GPU cannot use it there. Under the reservation.
	 */
	bool unswizzled;
	/**
	 * @unswizzle_next_move: the next move out of a memory segment is for
	 * the CPU: unswizzle on the way. Under the reservation.
	 */
	bool unswizzle_next_move;
	/**
	 * @hap_slots: for each page of its VRAM backing, the host-aperture
	 * page mapping it, or VMGPU_HAP_NO_SLOT for pages the VRAM BAR
	 * reaches; NULL while it holds none. Under the reservation and
	 * &vmgpu_hap.lock.
	 */
	u32 *hap_slots;
	/** @hap_count: host-aperture pages it holds. Same locking. */
	u32 hap_count;
	/**
	 * @display_pins: planes showing it (vmgpu_plane.c); while non-zero a
	 * primary in system memory is mapped into the aperture. Written
	 * under the reservation, read without by the aperture manager.
	 */
	u32 display_pins;
	/**
	 * @stats: the creating file's statistics (vmgpu_stats.c), or NULL
	 * for the kernel's own allocations.
	 */
	struct vmgpu_stats *stats;
	/**
	 * @import_sgt: an import's pages as its attachment maps them for the
	 * device, while its backing is in TT (vmgpu_prime.c); NULL otherwise.
	 * Under the reservation (the exporter's).
	 */
	struct sg_table *import_sgt;
	/** @import_dmabuf: an import's dma-buf, referenced until it is freed. */
	struct dma_buf *import_dmabuf;
	/**
	 * @import_moved: its exporter moved it while it could not be evicted;
	 * the device does not reach it, and its next use evicts it first.
	 * Under the reservation.
	 */
	bool import_moved;
	/** @import_release: detaches and frees an import (vmgpu_prime.c). */
	struct work_struct import_release;
	/** @moves: moves of its backing so far. Under the reservation. */
	u64 moves;
	/** @hap_link: in &vmgpu_hap.lru while it holds pages unlocked. */
	struct list_head hap_link;
	/** @link: in &vmgpu_device.bos. */
	struct list_head link;
};

static inline struct vmgpu_bo *to_vmgpu_bo(struct ttm_buffer_object *tbo)
{
	return container_of(tbo, struct vmgpu_bo, tbo);
}

static inline struct vmgpu_bo *gem_to_vmgpu_bo(struct drm_gem_object *obj)
{
	return to_vmgpu_bo(container_of(obj, struct ttm_buffer_object, base));
}

/* A dma-buf of another device, imported (vmgpu_prime.c). */
static inline bool vmgpu_bo_is_import(struct vmgpu_bo *vbo)
{
	return vbo->tbo.type == ttm_bo_type_sg;
}

static inline struct vmgpu_device *vmgpu_bo_device(struct vmgpu_bo *vbo)
{
	return container_of(vbo->tbo.base.dev, struct vmgpu_device, drm);
}

struct vmgpu_bo *vmgpu_bo_alloc(struct vmgpu_device *vdev, u64 size, u32 flags,
				u32 segments, u32 preferred);
void vmgpu_bo_free_unplaced(struct vmgpu_bo *vbo);
void vmgpu_bo_add_flags(struct vmgpu_bo *vbo, u32 flags);
int vmgpu_bo_place(struct vmgpu_bo *vbo, enum ttm_bo_type type, struct vmgpu_stats *stats);
struct vmgpu_bo *vmgpu_bo_create(struct vmgpu_device *vdev, u64 size, u32 flags,
				 u32 segments, u32 preferred, struct vmgpu_stats *stats);
int vmgpu_bo_make_resident(struct vmgpu_bo *vbo);
int vmgpu_bo_evict(struct vmgpu_bo *vbo, u32 flags);
bool vmgpu_bo_in_memory_segment(struct vmgpu_bo *vbo);
bool vmgpu_bo_cpu_fits_beyond_bar(struct vmgpu_device *vdev, u64 size);
int vmgpu_bo_move_to_system(struct vmgpu_bo *vbo);
int vmgpu_bo_validate(struct vmgpu_bo *vbo, struct ttm_operation_ctx *ctx);
bool vmgpu_bo_is_vmgpu(struct ttm_buffer_object *tbo);
void vmgpu_bo_destroy(struct ttm_buffer_object *tbo);
bool vmgpu_bo_needs_aperture(struct ttm_buffer_object *tbo,
			     const struct ttm_place *place);
bool vmgpu_bo_gives_back_aperture(struct ttm_buffer_object *tbo);
void vmgpu_bo_evict_placement(struct ttm_buffer_object *tbo,
			      struct ttm_placement *placement);
u64 vmgpu_bo_residency(struct vmgpu_bo *vbo, u64 *offset);
int vmgpu_bo_physical_address(struct vmgpu_bo *vbo, u32 *space, u64 *addr);
int vmgpu_bo_wait_idle(struct vmgpu_bo *vbo, long timeout);
u32 vmgpu_bo_segment_id(struct vmgpu_bo *vbo);
bool vmgpu_bo_is_resident(struct ttm_buffer_object *tbo);
void vmgpu_bo_set_paging(struct vmgpu_bo *vbo, struct dma_fence *fence, bool copy);
void vmgpu_bo_queue_paging(struct vmgpu_bo *vbo, struct dma_fence *fence, bool copy);
void vmgpu_bo_lose_contents(struct vmgpu_bo *vbo, const char *what, int error);
bool vmgpu_bo_needs_scrub(struct vmgpu_bo *vbo);
int vmgpu_bo_scrub(struct vmgpu_bo *vbo);

#endif
