// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: building paging operations (seed "GPU segments": Transfer between
 * a memory segment and system memory; seed "Allocation notification":
 * through the paging process VA, in chunks of it). A copy maps every page
 * of source and destination, whatever their fragmentation, in whatever
 * space the device reaches each side through, and moves a chunk with one
 * Transfer; operations split into ring-sized jobs in order; an injected
 * fault replaces an operation's work. Included by vmgpu_migrate.c.
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

/* The KUnit device's paging VA: 4 MiB, its two tables at made-up addresses. */
static void migrate_paging_vm(struct vmgpu_device *vdev)
{
	static dma_addr_t leaves[] = { 0x700000, 0x701000 };

	vdev->paging_vm.size = SZ_4M;
	vdev->paging_vm.leaf_bus = leaves;
}

/* Staging pages in plain memory, at made-up bus addresses. */
static struct vmgpu_pte_staging *migrate_staging(struct kunit *test, u32 count)
{
	struct vmgpu_pte_staging *st;
	u32 i;

	st = kunit_kzalloc(test, struct_size(st, pages, count), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	for (i = 0; i < count; i++) {
		st->pages[i].cpu = kunit_kzalloc(test, SZ_4K, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, st->pages[i].cpu);
		st->pages[i].bus = 0x800000 + i * SZ_4K;
	}
	st->count = count;
	return st;
}

static void migrate_expect_transfer(struct kunit *test, const union vmgpu_cmd *cmd,
				    u32 src_space, u64 src, u32 dst_space, u64 dst, u64 size)
{
	KUNIT_EXPECT_EQ(test, le16_to_cpu(cmd->hdr.opcode), VMGPU_OP_TRANSFER);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd->transfer.src.space), src_space);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(cmd->transfer.src.addr), src);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd->transfer.dst.space), dst_space);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(cmd->transfer.dst.addr), dst);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(cmd->transfer.size), size);
}

static void migrate_expect_fill(struct kunit *test, const union vmgpu_cmd *cmd, u64 dst,
				u64 size)
{
	KUNIT_EXPECT_EQ(test, le16_to_cpu(cmd->hdr.opcode), VMGPU_OP_FILL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd->fill.dst.space), VMGPU_SPACE_SYSTEM);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(cmd->fill.dst.addr), dst);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(cmd->fill.size), size);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd->fill.pattern), 0);
}

/* A source is mapped read-only, so that a Transfer the wrong way faults. */
static void migrate_expect_ptes(struct kunit *test, const __le64 *ptes, u32 space,
				const u64 *pages, u32 n, bool writable)
{
	u64 flags = VMGPU_PTE_VALID | (writable ? VMGPU_PTE_WRITE : 0);
	u32 i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, le64_to_cpu(ptes[i]),
				    flags | (u64)space << VMGPU_PTE_SPACE_SHIFT | pages[i],
				    "page %u", i);
}

/*
 * A copy of @n pages between @from (@src_space, @src pages) and @to
 * (@dst_space, @dst pages), well inside one chunk: the source's entries
 * into the first table, the destination's into the table at half the
 * space, then one Transfer between the two windows, however scattered
 * the pages. With @notify, NotifyEviction on the source window comes
 * just before the Transfer, and the source is mapped writable for it.
 */
static void migrate_check_copy(struct kunit *test, struct vmgpu_device *vdev,
			       struct ttm_buffer_object *tbo, struct ttm_resource *from,
			       struct ttm_resource *to, u32 src_space, const u64 *src,
			       u32 dst_space, const u64 *dst, u32 n, bool notify)
{
	const u32 S = VMGPU_SPACE_SYSTEM, VA = VMGPU_SPACE_VIRTUAL;
	struct vmgpu_paging_op op;
	struct vmgpu_job *job;
	u32 count, staging, i;

	count = vmgpu_op_cmds(vdev, tbo->base.size, vmgpu_copy_chunk(vdev), 2, &staging);
	KUNIT_ASSERT_EQ(test, count, 5);
	KUNIT_ASSERT_EQ(test, staging, 2);
	KUNIT_ASSERT_EQ(test, 0, vmgpu_paging_op_init(&op, vdev, count + notify, 0));
	op.staging = migrate_staging(test, staging);
	KUNIT_ASSERT_EQ(test, 0, vmgpu_copy_chunks(vdev, tbo, from, to, 0, notify, &op));
	job = op.jobs[0];
	KUNIT_ASSERT_EQ(test, job->num_cmds, count + notify);
	migrate_expect_transfer(test, &job->cmds[0], S, 0x800000, S, 0x700000, n * 8);
	migrate_expect_transfer(test, &job->cmds[1], S, 0x801000, S, 0x701000, n * 8);
	i = 2;
	if (notify) {
		const struct vmgpu_cmd_range *c = &job->cmds[i++].range;

		KUNIT_EXPECT_EQ(test, le16_to_cpu(c->hdr.opcode), VMGPU_OP_NOTIFY);
		KUNIT_EXPECT_EQ(test, le16_to_cpu(c->hdr.flags), VMGPU_NOTIFY_FLAG_EVICTION);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(c->addr.space), VA);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(c->addr.vm), VMGPU_VM_PAGING);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(c->addr.addr), 0);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(c->size), n * SZ_4K);
	}
	migrate_expect_transfer(test, &job->cmds[i++], VA, 0, VA, SZ_2M, n * SZ_4K);
	/* Then both windows' entries are cleared. */
	migrate_expect_fill(test, &job->cmds[i++], 0x700000, n * 8);
	migrate_expect_fill(test, &job->cmds[i++], 0x701000, n * 8);
	migrate_expect_ptes(test, op.staging->pages[0].cpu, src_space, src, n, notify);
	migrate_expect_ptes(test, op.staging->pages[1].cpu, dst_space, dst, n, true);
	op.staging = NULL;
	vmgpu_paging_op_discard(&op);
}

/* Scattered VRAM to scattered system pages: each page's entry, in order. */
static void migrate_copy_maps_every_page(struct kunit *test)
{
	static const u64 vram[] = {
		SZ_16M, SZ_16M + SZ_4K, SZ_16M + 3 * SZ_4K, SZ_16M + 4 * SZ_4K,
		SZ_16M + 7 * SZ_4K,
	};
	static const u64 sys[] = { 0x10000, 0x11000, 0x20000, 0x30000, 0x31000 };
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_resource *vres = migrate_vram(test, vdev);
	struct vmgpu_gart_resource *gres = kunit_kzalloc(test, sizeof(*gres), GFP_KERNEL);
	struct ttm_buffer_object *tbo = kunit_kzalloc(test, sizeof(*tbo), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, gres);
	KUNIT_ASSERT_NOT_NULL(test, tbo);
	migrate_paging_vm(vdev);
	gres->base.mem_type = TTM_PL_TT;
	tbo->ttm = migrate_tt(test);
	tbo->base.size = 5 * SZ_4K;
	migrate_check_copy(test, vdev, tbo, &vres->base, &gres->base, VMGPU_SPACE_VRAM, vram,
			   VMGPU_SPACE_SYSTEM, sys, ARRAY_SIZE(sys), false);
	vmgpu_kunit_vram_res_free(vdev, vres);
}

/*
 * System memory mapped into the aperture is reached through it: its
 * entries name aperture pages, whatever the pages' bus addresses.
 */
static void migrate_aperture_to_vram(struct kunit *test, bool notify)
{
	static const u64 gart[] = { 5 * SZ_4K, 6 * SZ_4K, 7 * SZ_4K, 8 * SZ_4K, 9 * SZ_4K };
	static const u64 vram[] = {
		SZ_16M, SZ_16M + SZ_4K, SZ_16M + 3 * SZ_4K, SZ_16M + 4 * SZ_4K,
		SZ_16M + 7 * SZ_4K,
	};
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_vram_resource *vres = migrate_vram(test, vdev);
	struct vmgpu_gart_resource *gres = kunit_kzalloc(test, sizeof(*gres), GFP_KERNEL);
	struct ttm_buffer_object *tbo = kunit_kzalloc(test, sizeof(*tbo), GFP_KERNEL);
	struct drm_mm_node hole = {};

	KUNIT_ASSERT_NOT_NULL(test, gres);
	KUNIT_ASSERT_NOT_NULL(test, tbo);
	migrate_paging_vm(vdev);
	KUNIT_ASSERT_EQ(test, 0, drm_mm_insert_node(&vdev->gart.mm, &hole, 5));
	KUNIT_ASSERT_EQ(test, 0, drm_mm_insert_node(&vdev->gart.mm, &gres->node, 5));
	gres->base.mem_type = TTM_PL_TT;
	tbo->ttm = migrate_tt(test);
	tbo->base.size = 5 * SZ_4K;
	migrate_check_copy(test, vdev, tbo, &gres->base, &vres->base, VMGPU_SPACE_GART, gart,
			   VMGPU_SPACE_VRAM, vram, ARRAY_SIZE(vram), notify);
	drm_mm_remove_node(&gres->node);
	drm_mm_remove_node(&hole);
	vmgpu_kunit_vram_res_free(vdev, vres);
}

static void migrate_copy_through_aperture(struct kunit *test)
{
	migrate_aperture_to_vram(test, false);
}

/* Into a memory segment: NotifyEviction in the move's own operation. */
static void migrate_copy_notifies_first(struct kunit *test)
{
	migrate_aperture_to_vram(test, true);
}

/*
 * Operations larger than the paging VA go in chunks: a Fill of the whole
 * space, a Transfer of half of it; each chunk has one entry-writing
 * command per page table per side, and in non-coherent mode a flush.
 */
static void migrate_chunks_by_paging_va(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	u32 staging;

	migrate_paging_vm(vdev);
	KUNIT_EXPECT_EQ(test, vmgpu_copy_chunk(vdev), SZ_2M);
	/* 2 + 2 + 1 MiB: 2 maps, the Transfer, 2 clears each. */
	KUNIT_EXPECT_EQ(test, vmgpu_op_cmds(vdev, 5 * SZ_1M, SZ_2M, 2, &staging), 15);
	KUNIT_EXPECT_EQ(test, staging, 6);
	/* 4 + 1 MiB filled: the first chunk spans both tables. */
	KUNIT_EXPECT_EQ(test, vmgpu_op_cmds(vdev, 5 * SZ_1M, SZ_4M, 1, &staging), 8);
	KUNIT_EXPECT_EQ(test, staging, 3);
	vdev->noncoherent = true;
	KUNIT_EXPECT_EQ(test, vmgpu_op_cmds(vdev, 5 * SZ_1M, SZ_4M, 1, &staging), 10);
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
	KUNIT_CASE(migrate_copy_maps_every_page),
	KUNIT_CASE(migrate_copy_through_aperture),
	KUNIT_CASE(migrate_copy_notifies_first),
	KUNIT_CASE(migrate_chunks_by_paging_va),
	KUNIT_CASE(migrate_op_splits_in_order),
	KUNIT_CASE(migrate_injected_fault),
	{}
};

static struct kunit_suite vmgpu_migrate_suite = {
	.name = "vmgpu_migrate",
	.test_cases = vmgpu_migrate_cases,
};

kunit_test_suite(vmgpu_migrate_suite);
