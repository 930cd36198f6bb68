// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/gpu_buddy.h>

#include <drm/ttm/ttm_resource.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_device.h"
#include "vmgpu_gart.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: resource cursor
 *
 * Paging operations address an allocation's backing in whatever space the
 * device reaches it through (seed "GPU segments": a physical reference is
 * a segment and an offset): VRAM offsets for a memory segment, aperture
 * offsets for system memory mapped into the aperture segment, bus
 * addresses for system memory that is not. The cursor hands out the
 * backing as runs of contiguous device addresses, so a move or a clear
 * needs one command per run and no per-page array.
 */

static u64 vmgpu_res_block_size(struct vmgpu_res_cursor *cur,
				struct gpu_buddy_block *block)
{
	return gpu_buddy_block_size(cur->mm, block);
}

/* The VRAM run from the cursor's block and position: adjacent blocks merged. */
static void vmgpu_res_vram_run(struct vmgpu_res_cursor *cur)
{
	struct gpu_buddy_block *block = cur->block;
	u64 end = gpu_buddy_block_offset(block) + vmgpu_res_block_size(cur, block);

	cur->start = cur->vram_base + gpu_buddy_block_offset(block) + cur->block_pos;
	cur->size = end - gpu_buddy_block_offset(block) - cur->block_pos;
	while (!list_is_last(&block->link, cur->blocks)) {
		block = list_next_entry(block, link);
		if (gpu_buddy_block_offset(block) != end)
			break;
		end += vmgpu_res_block_size(cur, block);
		cur->size += vmgpu_res_block_size(cur, block);
	}
	cur->size = min(cur->size, cur->remaining);
}

/* The run of system pages from the cursor's page: consecutive addresses merged. */
static void vmgpu_res_dma_run(struct vmgpu_res_cursor *cur)
{
	unsigned long page = cur->page;
	dma_addr_t next = cur->dma[page] + PAGE_SIZE;

	cur->start = cur->dma[page] + cur->page_pos;
	cur->size = PAGE_SIZE - cur->page_pos;
	while (cur->size < cur->remaining && cur->dma[++page] == next) {
		cur->size += PAGE_SIZE;
		next += PAGE_SIZE;
	}
	cur->size = min(cur->size, cur->remaining);
}

/**
 * vmgpu_res_first() - start walking a backing
 * @vdev: the device
 * @res: a resource of a memory segment or of TT
 * @tt: the allocation's pages, populated and DMA-mapped, for TT
 * @size: bytes to walk from the start of the backing
 * @cur: the cursor
 *
 * Return: 0, or -EINVAL for a resource the device cannot reach (TTM
 * system memory, or TT without pages).
 */
int vmgpu_res_first(struct vmgpu_device *vdev, struct ttm_resource *res,
		    struct ttm_tt *tt, u64 size, struct vmgpu_res_cursor *cur)
{
	u64 offset;

	*cur = (struct vmgpu_res_cursor){ .remaining = size };
	if (res->mem_type >= VMGPU_TTM_FIRST_SEGMENT) {
		vmgpu_vram_res_cursor_init(vdev, res, cur);
		cur->space = VMGPU_SPACE_VRAM;
		vmgpu_res_vram_run(cur);
		return 0;
	}
	if (res->mem_type != TTM_PL_TT || !tt || !ttm_tt_is_populated(tt) ||
	    !tt->dma_address)
		return -EINVAL;
	if (vmgpu_gart_res_offset(res, &offset)) {
		cur->space = VMGPU_SPACE_GART;
		cur->start = offset;
		cur->size = size;
		return 0;
	}
	return vmgpu_res_first_tt(tt, size, cur);
}

/**
 * vmgpu_res_first_tt() - start walking system pages by bus address
 * @tt: populated pages, DMA-mapped
 * @size: bytes to walk, at most the pages'
 * @cur: the cursor
 *
 * Return: 0, or -EINVAL if @tt has no bus addresses.
 */
int vmgpu_res_first_tt(struct ttm_tt *tt, u64 size, struct vmgpu_res_cursor *cur)
{
	if (!ttm_tt_is_populated(tt) || !tt->dma_address)
		return -EINVAL;
	*cur = (struct vmgpu_res_cursor){ .remaining = size };
	cur->space = VMGPU_SPACE_SYSTEM;
	cur->dma = tt->dma_address;
	vmgpu_res_dma_run(cur);
	return 0;
}

/* Step the position that the next run starts from. */
static void vmgpu_res_advance(struct vmgpu_res_cursor *cur, u64 bytes)
{
	switch (cur->space) {
	case VMGPU_SPACE_VRAM:
		cur->block_pos += bytes;
		while (cur->block_pos >= vmgpu_res_block_size(cur, cur->block)) {
			cur->block_pos -= vmgpu_res_block_size(cur, cur->block);
			cur->block = list_next_entry(cur->block, link);
		}
		break;
	case VMGPU_SPACE_SYSTEM:
		cur->page_pos += bytes;
		cur->page += cur->page_pos >> PAGE_SHIFT;
		cur->page_pos &= ~PAGE_MASK;
		break;
	}
}

/**
 * vmgpu_res_next() - advance the cursor
 * @cur: the cursor
 * @bytes: at most @cur->size
 */
void vmgpu_res_next(struct vmgpu_res_cursor *cur, u64 bytes)
{
	cur->remaining -= bytes;
	if (!cur->remaining)
		return;
	vmgpu_res_advance(cur, bytes);
	if (bytes < cur->size) {
		cur->start += bytes;
		cur->size -= bytes;
	} else if (cur->space == VMGPU_SPACE_VRAM) {
		vmgpu_res_vram_run(cur);
	} else {
		vmgpu_res_dma_run(cur);
	}
}
