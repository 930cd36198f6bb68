// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: building paging operations (seed "GPU segments": Transfer between
 * a memory segment and system memory). A copy pairs source and destination
 * runs page for page, whatever their fragmentation, in whatever space the
 * device reaches each side through; operations split into ring-sized jobs
 * in order; an injected fault replaces an operation's work. Included by
 * vmgpu_migrate.c.
 */

#include <kunit/test.h>
#include <drm/ttm/ttm_tt.h>

#include "../vmgpu_job_types.h"
#include "vmgpu_kunit.h"

/* Pages 0, 1, 3, 4 and 7 of segment 2: runs of 8K, 8K and 4K. */
static struct vmgpu_vram_resource *migrate_vram(struct kunit *test,
						struct vmgpu_device *vdev)
{
	static const u64 pages[] = { 0, 1, 3, 4, 7 };
	struct vmgpu_vram_resource *vres = kunit_kzalloc(test, sizeof(*vres), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, vres);
	INIT_LIST_HEAD(&vres->blocks);
	for (i = 0; i < ARRAY_SIZE(pages); i++)
		vmgpu_kunit_take_page(test, &vdev->vram_mgrs[1], pages[i] * SZ_4K,
				      &vres->blocks);
	vres->base.mem_type = vdev->segments[1].mem_type;
	vres->base.size = ARRAY_SIZE(pages) * SZ_4K;
	return vres;
}

/* Five populated system pages: runs of 8K, 4K and 8K by bus address. */
static struct ttm_tt *migrate_tt(struct kunit *test)
{
	static const dma_addr_t bus[] = { 0x10000, 0x11000, 0x20000, 0x30000, 0x31000 };
	struct ttm_tt *tt = kunit_kzalloc(test, sizeof(*tt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tt);
	tt->num_pages = ARRAY_SIZE(bus);
	tt->dma_address = kunit_kcalloc(test, ARRAY_SIZE(bus), sizeof(*bus), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tt->dma_address);
	memcpy(tt->dma_address, bus, sizeof(bus));
	tt->page_flags = TTM_TT_FLAG_PRIV_POPULATED;
	return tt;
}

struct migrate_expect {
	u32 src_space;
	u64 src;
	u32 dst_space;
	u64 dst;
	u64 size;
};

static void migrate_check_copy(struct kunit *test, struct vmgpu_device *vdev,
			       struct ttm_buffer_object *tbo, struct ttm_resource *from,
			       struct ttm_resource *to, const struct migrate_expect *want,
			       u32 n)
{
	struct vmgpu_paging_op op;
	struct vmgpu_job *job;
	u32 count, i;

	KUNIT_ASSERT_EQ(test, 0, vmgpu_copy_walk(vdev, tbo, from, to, 0, NULL, &count));
	KUNIT_ASSERT_EQ(test, count, n);
	KUNIT_ASSERT_EQ(test, 0, vmgpu_paging_op_init(&op, vdev, count, 0));
	KUNIT_ASSERT_EQ(test, 0, vmgpu_copy_walk(vdev, tbo, from, to, 0, &op, &count));
	job = op.jobs[0];
	KUNIT_ASSERT_EQ(test, job->num_cmds, n);
	for (i = 0; i < n; i++) {
		const struct vmgpu_cmd_transfer *t = &job->cmds[i].transfer;

		KUNIT_EXPECT_EQ(test, le16_to_cpu(t->hdr.opcode), VMGPU_OP_TRANSFER);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(t->src.space), want[i].src_space);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(t->src.addr), want[i].src);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(t->dst.space), want[i].dst_space);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(t->dst.addr), want[i].dst);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(t->size), want[i].size);
	}
	vmgpu_paging_op_discard(&op);
}

/* Scattered VRAM to scattered system pages: one Transfer per overlap. */
static void migrate_copy_pairs_runs(struct kunit *test)
{
	const u32 V = VMGPU_SPACE_VRAM, S = VMGPU_SPACE_SYSTEM;
	const struct migrate_expect want[] = {
		{ V, SZ_16M, S, 0x10000, SZ_8K },
		{ V, SZ_16M + 3 * SZ_4K, S, 0x20000, SZ_4K },
		{ V, SZ_16M + 4 * SZ_4K, S, 0x30000, SZ_4K },
		{ V, SZ_16M + 7 * SZ_4K, S, 0x31000, SZ_4K },
	};
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_resource *vres = migrate_vram(test, vdev);
	struct vmgpu_gart_resource *gres = kunit_kzalloc(test, sizeof(*gres), GFP_KERNEL);
	struct ttm_buffer_object *tbo = kunit_kzalloc(test, sizeof(*tbo), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, gres);
	KUNIT_ASSERT_NOT_NULL(test, tbo);
	gres->base.mem_type = TTM_PL_TT;
	tbo->ttm = migrate_tt(test);
	tbo->base.size = 5 * SZ_4K;
	migrate_check_copy(test, vdev, tbo, &vres->base, &gres->base, want, ARRAY_SIZE(want));
	vmgpu_kunit_vram_res_free(vdev, vres);
}

/*
 * System memory mapped into the aperture is reached through it: one range
 * of GART addresses, whatever the pages' bus addresses.
 */
static void migrate_copy_through_aperture(struct kunit *test)
{
	const u32 V = VMGPU_SPACE_VRAM, G = VMGPU_SPACE_GART;
	const struct migrate_expect want[] = {
		{ G, 5 * SZ_4K, V, SZ_16M, SZ_8K },
		{ G, 7 * SZ_4K, V, SZ_16M + 3 * SZ_4K, SZ_8K },
		{ G, 9 * SZ_4K, V, SZ_16M + 7 * SZ_4K, SZ_4K },
	};
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_resource *vres = migrate_vram(test, vdev);
	struct vmgpu_gart_resource *gres = kunit_kzalloc(test, sizeof(*gres), GFP_KERNEL);
	struct ttm_buffer_object *tbo = kunit_kzalloc(test, sizeof(*tbo), GFP_KERNEL);
	struct drm_mm_node hole = {};

	KUNIT_ASSERT_NOT_NULL(test, gres);
	KUNIT_ASSERT_NOT_NULL(test, tbo);
	KUNIT_ASSERT_EQ(test, 0, drm_mm_insert_node(&vdev->gart.mm, &hole, 5));
	KUNIT_ASSERT_EQ(test, 0, drm_mm_insert_node(&vdev->gart.mm, &gres->node, 5));
	gres->base.mem_type = TTM_PL_TT;
	tbo->ttm = migrate_tt(test);
	tbo->base.size = 5 * SZ_4K;
	migrate_check_copy(test, vdev, tbo, &gres->base, &vres->base, want, ARRAY_SIZE(want));
	drm_mm_remove_node(&gres->node);
	drm_mm_remove_node(&hole);
	vmgpu_kunit_vram_res_free(vdev, vres);
}

/* Commands fill ring-sized jobs in order; the last job takes the rest. */
static void migrate_op_splits_in_order(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	u32 max = vmgpu_job_max_cmds(vmgpu_paging_ring(vdev)), total = 2 * max + 2, i;
	struct vmgpu_paging_op op;
	union vmgpu_cmd cmd = {};

	KUNIT_ASSERT_EQ(test, 0, vmgpu_paging_op_init(&op, vdev, total, 0));
	KUNIT_ASSERT_EQ(test, op.num_jobs, 3);
	cmd.nop.hdr.opcode = cpu_to_le16(VMGPU_OP_NOP);
	for (i = 0; i < total; i++) {
		cmd.nop.delay_us = cpu_to_le32(i);
		KUNIT_ASSERT_EQ(test, 0, vmgpu_paging_op_add(&op, &cmd));
	}
	KUNIT_EXPECT_EQ(test, -ENOSPC, vmgpu_paging_op_add(&op, &cmd));
	KUNIT_EXPECT_EQ(test, op.jobs[0]->num_cmds, max);
	KUNIT_EXPECT_EQ(test, op.jobs[1]->num_cmds, max);
	KUNIT_EXPECT_EQ(test, op.jobs[2]->num_cmds, 2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(op.jobs[1]->cmds[0].nop.delay_us), max);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(op.jobs[2]->cmds[1].nop.delay_us), total - 1);
	vmgpu_paging_op_discard(&op);
}

/* An injected fault makes the next operation one rejected command. */
static void migrate_injected_fault(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_paging_op op;
	union vmgpu_cmd cmd = {};
	const union vmgpu_cmd *bad;

	atomic_set(&vdev->inject.paging_faults, 1);
	KUNIT_ASSERT_EQ(test, 0, vmgpu_paging_op_init(&op, vdev, 40, 0));
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->inject.paging_faults), 0);
	KUNIT_ASSERT_EQ(test, op.num_jobs, 1);
	KUNIT_EXPECT_EQ(test, 0, vmgpu_paging_op_add(&op, &cmd));
	KUNIT_ASSERT_EQ(test, op.jobs[0]->num_cmds, 1);
	bad = &op.jobs[0]->cmds[0];
	KUNIT_EXPECT_EQ(test, le16_to_cpu(bad->hdr.opcode), VMGPU_OP_TRANSFER);
	KUNIT_EXPECT_GE(test, le64_to_cpu(bad->transfer.src.addr), vdev->vram.size);
	vmgpu_paging_op_discard(&op);

	KUNIT_ASSERT_EQ(test, 0, vmgpu_paging_op_init(&op, vdev, 40, 0));
	KUNIT_EXPECT_EQ(test, op.num_jobs, 3);
	vmgpu_paging_op_discard(&op);
}

static struct kunit_case vmgpu_migrate_cases[] = {
	KUNIT_CASE(migrate_copy_pairs_runs),
	KUNIT_CASE(migrate_copy_through_aperture),
	KUNIT_CASE(migrate_op_splits_in_order),
	KUNIT_CASE(migrate_injected_fault),
	{}
};

static struct kunit_suite vmgpu_migrate_suite = {
	.name = "vmgpu_migrate",
	.test_cases = vmgpu_migrate_cases,
};

kunit_test_suite(vmgpu_migrate_suite);
