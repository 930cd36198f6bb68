// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: the memory segment manager on a real buddy allocator (seed "GPU
 * segments": a segment is a pool of pages; physical references need
 * contiguous allocations), and the resource cursor's walk over its blocks.
 * Included by vmgpu_vram_mgr.c.
 */

#include <kunit/test.h>

#include "../vmgpu_res_cursor.h"
#include "vmgpu_kunit.h"

/* Take every other page of [0, end) of a segment into @taken. */
static void vram_fragment(struct kunit *test, struct vmgpu_vram_mgr *mgr, u64 end,
			  struct list_head *taken)
{
	u32 page = mgr->segment->page_size;
	u64 offset;

	for (offset = page; offset < end; offset += 2 * page)
		vmgpu_kunit_take_page(test, mgr, offset, taken);
}

static struct vmgpu_vram_resource *vram_res(struct kunit *test, struct vmgpu_vram_mgr *mgr,
					    struct list_head *blocks, u64 size)
{
	struct vmgpu_vram_resource *vres = kunit_kzalloc(test, sizeof(*vres), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, vres);
	INIT_LIST_HEAD(&vres->blocks);
	list_splice_init(blocks, &vres->blocks);
	vres->base.mem_type = mgr->segment->mem_type;
	vres->base.size = size;
	vmgpu_vram_res_set_start(vres);
	return vres;
}

/* A contiguous allocation is one range, found where the segment has one. */
static void vram_contiguous_is_one_range(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[0];
	const struct ttm_place contiguous = { .flags = TTM_PL_FLAG_CONTIGUOUS };
	struct vmgpu_vram_resource *vres;
	LIST_HEAD(taken);
	LIST_HEAD(blocks);

	vram_fragment(test, mgr, SZ_8M, &taken);
	KUNIT_ASSERT_EQ(test, 0,
			vmgpu_vram_mgr_alloc_blocks(mgr, &contiguous, SZ_1M, &blocks, NULL));
	vres = vram_res(test, mgr, &blocks, SZ_1M);
	KUNIT_EXPECT_TRUE(test, vmgpu_vram_mgr_compatible(&mgr->manager, &vres->base,
							  &contiguous, SZ_1M));
	KUNIT_EXPECT_GE(test, (u64)vres->base.start << PAGE_SHIFT, (u64)SZ_8M);
	gpu_buddy_free_list(&mgr->mm, &vres->blocks, 0);
	gpu_buddy_free_list(&mgr->mm, &taken, 0);
}

/*
 * Without contiguity an allocation is a set of pages: it fits in holes no
 * contiguous one could use, and is then not compatible with a contiguous
 * place.
 */
static void vram_pages_fill_holes(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[0];
	const struct ttm_place contiguous = { .flags = TTM_PL_FLAG_CONTIGUOUS };
	const struct ttm_place any = {};
	struct vmgpu_vram_resource *vres;
	LIST_HEAD(taken);
	LIST_HEAD(blocks);

	vram_fragment(test, mgr, SZ_16M, &taken);
	KUNIT_EXPECT_EQ(test, -ENOSPC, vmgpu_vram_mgr_alloc_blocks(mgr, &contiguous,
								   SZ_128K, &blocks, NULL));
	KUNIT_ASSERT_EQ(test, 0, vmgpu_vram_mgr_alloc_blocks(mgr, &any, SZ_1M, &blocks, NULL));
	vres = vram_res(test, mgr, &blocks, SZ_1M);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&vres->blocks), SZ_1M / SZ_64K);
	KUNIT_EXPECT_FALSE(test, vmgpu_vram_mgr_compatible(&mgr->manager, &vres->base,
							   &contiguous, SZ_1M));
	gpu_buddy_free_list(&mgr->mm, &vres->blocks, 0);
	gpu_buddy_free_list(&mgr->mm, &taken, 0);
}

/* CPU-visible limit (lpfn) and top-down placement hold for every page. */
static void vram_range_and_top_down(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[0];
	const struct ttm_place visible = { .lpfn = SZ_4M >> PAGE_SHIFT };
	const struct ttm_place top = { .flags = TTM_PL_FLAG_TOPDOWN };
	const struct ttm_place high = { .fpfn = SZ_8M >> PAGE_SHIFT };
	struct vmgpu_vram_resource *low_res, *top_res;
	LIST_HEAD(low);
	LIST_HEAD(up);

	KUNIT_ASSERT_EQ(test, 0, vmgpu_vram_mgr_alloc_blocks(mgr, &visible, SZ_2M, &low, NULL));
	KUNIT_ASSERT_EQ(test, 0, vmgpu_vram_mgr_alloc_blocks(mgr, &top, SZ_2M, &up, NULL));
	low_res = vram_res(test, mgr, &low, SZ_2M);
	top_res = vram_res(test, mgr, &up, SZ_2M);
	KUNIT_EXPECT_TRUE(test, vmgpu_vram_mgr_compatible(&mgr->manager, &low_res->base,
							  &visible, SZ_2M));
	KUNIT_EXPECT_TRUE(test, vmgpu_vram_mgr_compatible(&mgr->manager, &top_res->base,
							  &high, SZ_2M));
	KUNIT_EXPECT_EQ(test, (u64)top_res->base.start << PAGE_SHIFT, (u64)SZ_16M - SZ_2M);
	/* Eviction for a place only considers what lies in it. */
	KUNIT_EXPECT_TRUE(test, vmgpu_vram_mgr_intersects(&mgr->manager, &low_res->base,
							  &visible, SZ_2M));
	KUNIT_EXPECT_FALSE(test, vmgpu_vram_mgr_intersects(&mgr->manager, &top_res->base,
							   &visible, SZ_2M));
	gpu_buddy_free_list(&mgr->mm, &low_res->blocks, 0);
	gpu_buddy_free_list(&mgr->mm, &top_res->blocks, 0);
}

/*
 * Top-down stays out of the CPU-visible part however the free blocks' clear
 * state is split: with the upper half cleared and a freed block low down
 * dirty, the buddy allocator's own top-down takes the highest dirty block.
 */
static void vram_top_down_beyond_the_bar_whatever_is_clear(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[0];
	const struct ttm_place visible = { .lpfn = SZ_8M >> PAGE_SHIFT };
	const struct ttm_place top = { .flags = TTM_PL_FLAG_TOPDOWN };
	struct gpu_buddy_block *block;
	LIST_HEAD(low);
	LIST_HEAD(up);

	mgr->cpu_visible = SZ_8M;
	gpu_buddy_reset_clear(&mgr->mm, true);
	KUNIT_ASSERT_EQ(test, 0, vmgpu_vram_mgr_alloc_blocks(mgr, &visible, SZ_2M, &low, NULL));
	gpu_buddy_free_list(&mgr->mm, &low, 0);
	KUNIT_ASSERT_EQ(test, 0, vmgpu_vram_mgr_alloc_blocks(mgr, &top, SZ_2M, &up, NULL));
	list_for_each_entry(block, &up, link)
		KUNIT_EXPECT_GE(test, gpu_buddy_block_offset(block), (u64)SZ_8M);
	gpu_buddy_free_list(&mgr->mm, &up, 0);
}

/*
 * Top-down asking for cleared pages (a new backing while the scrub is on):
 * the highest cleared blocks beyond the BAR, not a dirty one freed lower
 * down; and with nothing cleared beyond the BAR, pages there anyway, the
 * cleared ones of the CPU-visible part left as they were.
 */
static void vram_top_down_takes_cleared_beyond_the_bar(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[0];
	const struct ttm_place top = { .flags = TTM_PL_FLAG_TOPDOWN };
	struct gpu_buddy *mm = &mgr->mm;
	u64 page = mgr->segment->page_size;
	struct dma_fence *clear_fence;
	struct gpu_buddy_block *block;
	u64 clear_avail;
	LIST_HEAD(visible);
	LIST_HEAD(dirty);
	LIST_HEAD(got);

	mgr->cpu_visible = SZ_8M;
	gpu_buddy_reset_clear(mm, true);
	KUNIT_ASSERT_EQ(test, 0, gpu_buddy_alloc_blocks(mm, 0, SZ_2M, SZ_2M, page, &visible, 0));
	KUNIT_ASSERT_EQ(test, 0, gpu_buddy_alloc_blocks(mm, SZ_8M, SZ_8M + SZ_2M, SZ_2M, page,
							&dirty, 0));
	gpu_buddy_free_list(mm, &dirty, 0);

	KUNIT_ASSERT_EQ(test, 0, vmgpu_vram_mgr_alloc_blocks(mgr, &top, SZ_2M, &got, &clear_fence));
	list_for_each_entry(block, &got, link) {
		KUNIT_EXPECT_GE(test, gpu_buddy_block_offset(block), (u64)SZ_8M);
		KUNIT_EXPECT_TRUE(test, gpu_buddy_block_is_clear(block));
	}
	/* No scrub fence to stand for the clear: there was no scrub. */
	KUNIT_EXPECT_NULL(test, clear_fence);
	gpu_buddy_free_list(mm, &got, GPU_BUDDY_CLEARED);

	KUNIT_ASSERT_EQ(test, 0, gpu_buddy_alloc_blocks(mm, SZ_8M, SZ_16M, SZ_8M, page,
							&dirty, 0));
	gpu_buddy_free_list(mm, &dirty, 0);
	clear_avail = mm->clear_avail;
	KUNIT_ASSERT_EQ(test, 0, vmgpu_vram_mgr_alloc_blocks(mgr, &top, SZ_2M, &got, &clear_fence));
	list_for_each_entry(block, &got, link) {
		KUNIT_EXPECT_GE(test, gpu_buddy_block_offset(block), (u64)SZ_8M);
		KUNIT_EXPECT_FALSE(test, gpu_buddy_block_is_clear(block));
	}
	KUNIT_EXPECT_EQ(test, clear_avail, mm->clear_avail);
	gpu_buddy_free_list(mm, &got, 0);
	gpu_buddy_free_list(mm, &visible, 0);
}

/* -ENOSPC where TTM should try elsewhere, -EINVAL for a malformed request. */
static void vram_errors(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[0];
	const struct ttm_place visible = { .lpfn = SZ_1M >> PAGE_SHIFT };
	const struct ttm_place any = {};
	LIST_HEAD(blocks);

	KUNIT_EXPECT_EQ(test, -ENOSPC,
			vmgpu_vram_mgr_alloc_blocks(mgr, &visible, SZ_2M, &blocks, NULL));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			vmgpu_vram_mgr_alloc_blocks(mgr, &any, SZ_32M, &blocks, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			vmgpu_vram_mgr_alloc_blocks(mgr, &any, SZ_4K, &blocks, NULL));
	KUNIT_EXPECT_TRUE(test, list_empty(&blocks));
}

/*
 * The cursor walks a backing as runs of contiguous VRAM: scattered pages
 * one run each, adjacent blocks merged, offsets from the segment's base,
 * and partial steps land on the right page.
 */
static void vram_cursor_runs(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_mgr *mgr = &vdev->vram_mgrs[1];
	struct vmgpu_res_cursor cur;
	struct vmgpu_vram_resource *vres;
	u64 pos, runs = 0, bytes = 0;
	LIST_HEAD(a);
	LIST_HEAD(b);
	LIST_HEAD(c);

	/* Pages 0 and 1 adjacent, page 3 apart: two runs. */
	vmgpu_kunit_take_page(test, mgr, 0, &a);
	vmgpu_kunit_take_page(test, mgr, SZ_4K, &a);
	vmgpu_kunit_take_page(test, mgr, SZ_8K, &b);
	vmgpu_kunit_take_page(test, mgr, 3 * SZ_4K, &a);
	vres = vram_res(test, mgr, &a, 3 * SZ_4K);

	KUNIT_ASSERT_EQ(test, 0, vmgpu_res_first(vdev, &vres->base, NULL, 3 * SZ_4K, &cur));
	for (; cur.remaining; vmgpu_res_next(&cur, cur.size)) {
		KUNIT_EXPECT_EQ(test, cur.space, VMGPU_SPACE_VRAM);
		KUNIT_EXPECT_EQ(test, cur.start, runs ? (u64)SZ_16M + 3 * SZ_4K : (u64)SZ_16M);
		KUNIT_EXPECT_EQ(test, cur.size, runs ? (u64)SZ_4K : (u64)SZ_8K);
		bytes += cur.size;
		runs++;
	}
	KUNIT_EXPECT_EQ(test, runs, 2);
	KUNIT_EXPECT_EQ(test, bytes, 3 * SZ_4K);

	/* Page by page. */
	KUNIT_ASSERT_EQ(test, 0, vmgpu_res_first(vdev, &vres->base, NULL, 3 * SZ_4K, &cur));
	for (pos = 0; cur.remaining; pos += SZ_4K, vmgpu_res_next(&cur, SZ_4K))
		KUNIT_EXPECT_EQ(test, cur.start, (u64)SZ_16M + (pos < SZ_8K ? pos : 3 * SZ_4K));
	KUNIT_EXPECT_EQ(test, pos, 3 * SZ_4K);

	list_splice_init(&vres->blocks, &c);
	gpu_buddy_free_list(&mgr->mm, &c, 0);
	gpu_buddy_free_list(&mgr->mm, &b, 0);
}

static struct kunit_case vmgpu_vram_mgr_cases[] = {
	KUNIT_CASE(vram_contiguous_is_one_range),
	KUNIT_CASE(vram_pages_fill_holes),
	KUNIT_CASE(vram_range_and_top_down),
	KUNIT_CASE(vram_top_down_beyond_the_bar_whatever_is_clear),
	KUNIT_CASE(vram_top_down_takes_cleared_beyond_the_bar),
	KUNIT_CASE(vram_errors),
	KUNIT_CASE(vram_cursor_runs),
	{}
};

static struct kunit_suite vmgpu_vram_mgr_suite = {
	.name = "vmgpu_vram_mgr",
	.test_cases = vmgpu_vram_mgr_cases,
};

kunit_test_suite(vmgpu_vram_mgr_suite);
