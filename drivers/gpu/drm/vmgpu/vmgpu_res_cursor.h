/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_RES_CURSOR_H_
#define _VMGPU_RES_CURSOR_H_

#include <linux/types.h>

struct gpu_buddy;
struct gpu_buddy_block;
struct list_head;
struct ttm_resource;
struct ttm_tt;
struct vmgpu_device;

/**
 * struct vmgpu_res_cursor - walks an allocation's backing as the device
 * addresses it, one contiguous run at a time
 *
 * Memory segments are walked by buddy block (adjacent blocks merged), the
 * aperture segment as the single range of the allocation's entries, and
 * system pages not mapped into the aperture by bus address (consecutive
 * addresses merged). Nothing is allocated: the walk costs O(runs).
 */
struct vmgpu_res_cursor {
	/** @space: the VMGPU_SPACE_* of @start. */
	u32 space;
	/** @start: device address of the current run. */
	u64 start;
	/** @size: bytes of the current run from @start. */
	u64 size;
	/** @remaining: bytes from @start to the end of the walk. */
	u64 remaining;

	/* private: VRAM */
	struct gpu_buddy *mm;
	struct list_head *blocks;
	struct gpu_buddy_block *block;
	u64 block_pos;
	u64 vram_base;
	/* private: system pages by bus address */
	const dma_addr_t *dma;
	unsigned long page;
	u64 page_pos;
};

int vmgpu_res_first(struct vmgpu_device *vdev, struct ttm_resource *res,
		    struct ttm_tt *tt, u64 size, struct vmgpu_res_cursor *cur);
int vmgpu_res_first_tt(struct ttm_tt *tt, u64 size, struct vmgpu_res_cursor *cur);
void vmgpu_res_next(struct vmgpu_res_cursor *cur, u64 bytes);

#endif
