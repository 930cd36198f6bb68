// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: building paging operations (seed "GPU segments": Transfer between
 * a memory segment and system memory; seed "Allocation notification":
 * through the paging process VA, in chunks of it). A copy maps every page
 * of source and destination, whatever their fragmentation, in whatever
 * space the device reaches each side through, and moves a chunk with one
 * Transfer; operations fill the jobs of the reserve in order; an injected
 * fault replaces an operation's work. Included by vmgpu_migrate.c.
 */

#include <kunit/test.h>
#include <linux/sched/signal.h>
#include <linux/timer.h>
#include <drm/ttm/ttm_tt.h>

#include "../vmgpu_cache.h"
#include "../vmgpu_job.h"
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

/* Jobs an operation queued, kept for the test instead of the ring. */
struct migrate_sink {
	struct vmgpu_paging_op op;
	struct vmgpu_job *jobs[4];
	u32 num_jobs;
};

static void migrate_emit(struct vmgpu_paging_op *op)
{
	struct migrate_sink *sink = container_of(op, struct migrate_sink, op);

	if (sink->num_jobs < ARRAY_SIZE(sink->jobs))
		sink->jobs[sink->num_jobs++] = op->job;
}

static void migrate_free_job(void *job)
{
	vmgpu_job_free(job);
}

/*
 * A reserve of @n jobs without scheduler fences, staging @entries entries
 * each in plain memory at made-up bus addresses: 0x800000, 0x900000, ...
 */
static void migrate_reserve(struct kunit *test, struct vmgpu_device *vdev, u32 n, u32 entries)
{
	struct vmgpu_job_reserve *res = &vdev->job_reserve;
	struct vmgpu_ring *ring = vmgpu_paging_ring(vdev);
	u32 i;

	spin_lock_init(&res->lock);
	INIT_LIST_HEAD(&res->ops.ready);
	INIT_LIST_HEAD(&res->ops.spent);
	init_waitqueue_head(&res->ready_wq);
	for (i = 0; i < n; i++) {
		struct vmgpu_job *job = vmgpu_job_alloc(ring, vmgpu_job_max_cmds(ring));

		KUNIT_ASSERT_FALSE(test, IS_ERR(job));
		KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, migrate_free_job, job));
		job->staging.size = entries;
		job->staging.cpu = kunit_kcalloc(test, entries, sizeof(__le64), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, job->staging.cpu);
		job->staging.bus = 0x800000 + i * 0x100000;
		list_add_tail(&job->reserve_link, &res->ops.ready);
		res->ops.num_ready++;
	}
}

/* Start an operation whose jobs go to @sink. */
static void migrate_start(struct migrate_sink *sink, struct vmgpu_device *vdev)
{
	*sink = (struct migrate_sink){};
	vmgpu_paging_op_start(&sink->op, vdev, NULL, migrate_emit);
}

static void migrate_finish(struct migrate_sink *sink)
{
	sink->op.emit(&sink->op);
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
	struct vmgpu_res_cursor src_cur, dst_cur;
	struct migrate_sink sink;
	struct vmgpu_job *job;
	u32 i;

	migrate_reserve(test, vdev, 1, 64);
	KUNIT_ASSERT_EQ(test, 0, vmgpu_res_first(vdev, from, tbo->ttm, tbo->base.size, &src_cur));
	KUNIT_ASSERT_EQ(test, 0, vmgpu_res_first(vdev, to, tbo->ttm, tbo->base.size, &dst_cur));
	migrate_start(&sink, vdev);
	vmgpu_copy_chunks(vdev, tbo, &src_cur, &dst_cur, 0, notify, &sink.op);
	migrate_finish(&sink);
	KUNIT_ASSERT_EQ(test, sink.num_jobs, 1);
	job = sink.jobs[0];
	KUNIT_ASSERT_EQ(test, job->num_cmds, 5 + notify);
	/* Both sides' entries, one after the other in the job's staging. */
	migrate_expect_transfer(test, &job->cmds[0], S, 0x800000, S, 0x700000, n * 8);
	migrate_expect_transfer(test, &job->cmds[1], S, 0x800000 + n * 8, S, 0x701000, n * 8);
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
	migrate_expect_ptes(test, job->staging.cpu, src_space, src, n, notify);
	migrate_expect_ptes(test, job->staging.cpu + n, dst_space, dst, n, true);
	KUNIT_EXPECT_EQ(test, job->staging.used, 2 * n);
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
 * A copy moves half the paging VA per chunk, a Fill all of it; mapping
 * takes one command per page table it touches, and a command never
 * straddles two tables.
 */
static void migrate_map_splits_by_table(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct vmgpu_res_cursor cur;
	struct migrate_sink sink;
	struct vmgpu_job *job;

	migrate_paging_vm(vdev);
	KUNIT_EXPECT_EQ(test, vmgpu_copy_chunk(vdev), SZ_2M);
	migrate_reserve(test, vdev, 1, 64);
	KUNIT_ASSERT_EQ(test, 0, vmgpu_res_first_tt(migrate_tt(test), 5 * SZ_4K, &cur));
	migrate_start(&sink, vdev);
	vmgpu_paging_op_map(&sink.op, SZ_2M - 2 * SZ_4K, &cur, 5 * SZ_4K, true);
	vmgpu_paging_op_unmap(&sink.op, SZ_2M - 2 * SZ_4K, 5 * SZ_4K);
	migrate_finish(&sink);
	KUNIT_ASSERT_EQ(test, sink.num_jobs, 1);
	job = sink.jobs[0];
	KUNIT_ASSERT_EQ(test, job->num_cmds, 4);
	migrate_expect_transfer(test, &job->cmds[0], VMGPU_SPACE_SYSTEM, 0x800000,
				VMGPU_SPACE_SYSTEM, 0x700000 + 510 * 8, 2 * 8);
	migrate_expect_transfer(test, &job->cmds[1], VMGPU_SPACE_SYSTEM, 0x800000 + 2 * 8,
				VMGPU_SPACE_SYSTEM, 0x701000, 3 * 8);
	migrate_expect_fill(test, &job->cmds[2], 0x700000 + 510 * 8, 2 * 8);
	migrate_expect_fill(test, &job->cmds[3], 0x701000, 3 * 8);
}

/*
 * Commands fill the reserve's jobs in order, the next job taken when one
 * is full of commands or of staged entries.
 */
static void migrate_op_splits_in_order(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	u32 max = vmgpu_job_max_cmds(vmgpu_paging_ring(vdev)), total = 2 * max + 2, i;
	struct vmgpu_res_cursor cur;
	struct migrate_sink sink;
	union vmgpu_cmd cmd = {};

	migrate_paging_vm(vdev);
	migrate_reserve(test, vdev, 5, 4);
	cmd.nop.hdr.opcode = cpu_to_le16(VMGPU_OP_NOP);
	migrate_start(&sink, vdev);
	for (i = 0; i < total; i++) {
		cmd.nop.delay_us = cpu_to_le32(i);
		vmgpu_paging_op_add(&sink.op, &cmd);
	}
	migrate_finish(&sink);
	KUNIT_ASSERT_EQ(test, sink.num_jobs, 3);
	KUNIT_EXPECT_EQ(test, sink.jobs[0]->num_cmds, max);
	KUNIT_EXPECT_EQ(test, sink.jobs[1]->num_cmds, max);
	KUNIT_EXPECT_EQ(test, sink.jobs[2]->num_cmds, 2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(sink.jobs[1]->cmds[0].nop.delay_us), max);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(sink.jobs[2]->cmds[1].nop.delay_us), total - 1);

	/* Five entries, four per job: the second run goes to the next job. */
	KUNIT_ASSERT_EQ(test, 0, vmgpu_res_first_tt(migrate_tt(test), 5 * SZ_4K, &cur));
	migrate_start(&sink, vdev);
	vmgpu_paging_op_map(&sink.op, 0, &cur, 4 * SZ_4K, true);
	vmgpu_paging_op_map(&sink.op, 4 * SZ_4K, &cur, SZ_4K, true);
	migrate_finish(&sink);
	KUNIT_ASSERT_EQ(test, sink.num_jobs, 2);
	KUNIT_EXPECT_EQ(test, sink.op.jobs, 1);
	KUNIT_EXPECT_EQ(test, sink.jobs[0]->staging.used, 4);
	KUNIT_EXPECT_EQ(test, sink.jobs[1]->staging.used, 1);
	migrate_expect_transfer(test, &sink.jobs[1]->cmds[0], VMGPU_SPACE_SYSTEM,
				sink.jobs[1]->staging.bus, VMGPU_SPACE_SYSTEM, 0x700000 + 4 * 8, 8);
}

/* An injected fault makes the next operation's work one rejected command. */
static void migrate_injected_fault(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	union vmgpu_cmd cmd = {}, flush = vmgpu_cache_flush_cmd();
	const union vmgpu_cmd *bad;
	struct migrate_sink sink;

	migrate_reserve(test, vdev, 2, 4);
	atomic_set(&vdev->inject.paging_faults, 1);
	migrate_start(&sink, vdev);
	vmgpu_paging_op_inject(&sink.op);
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->inject.paging_faults), 0);
	vmgpu_paging_op_work(&sink.op, &cmd);
	vmgpu_paging_op_work(&sink.op, &cmd);
	/* What is not the work stays. */
	vmgpu_paging_op_add(&sink.op, &flush);
	migrate_finish(&sink);
	KUNIT_ASSERT_EQ(test, sink.jobs[0]->num_cmds, 2);
	bad = &sink.jobs[0]->cmds[0];
	KUNIT_EXPECT_EQ(test, le16_to_cpu(bad->hdr.opcode), VMGPU_OP_TRANSFER);
	KUNIT_EXPECT_GE(test, le64_to_cpu(bad->transfer.src.addr), vdev->vram.size);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(sink.jobs[0]->cmds[1].hdr.opcode), VMGPU_OP_CACHE_FLUSH);

	/* Used up: the next operation's work goes through. */
	migrate_start(&sink, vdev);
	vmgpu_paging_op_inject(&sink.op);
	vmgpu_paging_op_work(&sink.op, &cmd);
	migrate_finish(&sink);
	KUNIT_ASSERT_EQ(test, sink.jobs[0]->num_cmds, 1);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(sink.jobs[0]->cmds[0].hdr.opcode), 0);
}

/* A move asks the reserve for a ready job as its TTM context allows. */
static void migrate_reserve_wait_follows_the_context(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct ttm_operation_ctx no_wait = { .interruptible = true, .no_wait_gpu = true };
	struct ttm_operation_ctx uninterruptible = {};
	struct dma_resv resv;

	dma_resv_init(&resv);
	dma_resv_lock(&resv, NULL);
	migrate_reserve(test, vdev, 0, 0);
	KUNIT_EXPECT_EQ(test, vmgpu_job_reserve_wait(vdev, &no_wait, &resv), -EBUSY);
	/* Left to the operation, which waits for a job uninterruptibly. */
	KUNIT_EXPECT_EQ(test, vmgpu_job_reserve_wait(vdev, &uninterruptible, &resv), 0);
	KUNIT_EXPECT_EQ(test, vdev->job_reserve.ops.waits, 0);

	migrate_reserve(test, vdev, 1, 1);
	KUNIT_EXPECT_EQ(test, vmgpu_job_reserve_wait(vdev, &no_wait, &resv), 0);
	KUNIT_EXPECT_EQ(test, vdev->job_reserve.ops.num_ready, 1);
	dma_resv_unlock(&resv);
	dma_resv_fini(&resv);
}

static const char *migrate_fence_name(struct dma_fence *f)
{
	return "kunit";
}

static DEFINE_SPINLOCK(migrate_fence_lock);

static const struct dma_fence_ops migrate_fence_ops = {
	.get_driver_name = migrate_fence_name,
	.get_timeline_name = migrate_fence_name,
};

/* A job still running, on timeline @context. */
static struct dma_fence *migrate_pending_fence(struct kunit *test, u64 context)
{
	struct dma_fence *f = kzalloc(sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	dma_fence_init(f, &migrate_fence_ops, &migrate_fence_lock, context, 1);
	return f;
}

/*
 * A move also asks for the gates of its operation: one for each fence of
 * the reservation it waits for but the first, which the operation's own
 * job holds, and not for the paging ring's own work; half the pool, if it
 * needs more.
 */
static void migrate_reserve_wait_counts_gates(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct ttm_operation_ctx no_wait = { .interruptible = true, .no_wait_gpu = true };
	struct vmgpu_job_pool *gates = &vdev->job_reserve.gates;
	struct dma_fence *users[4];
	struct dma_resv resv;
	u32 i;

	migrate_reserve(test, vdev, 1, 1);
	for (i = 0; i < 3; i++)
		users[i] = migrate_pending_fence(test, dma_fence_context_alloc(1));
	users[3] = migrate_pending_fence(test, vmgpu_paging_ring(vdev)->entity.fence_context);
	dma_resv_init(&resv);
	dma_resv_lock(&resv, NULL);
	if (!dma_resv_reserve_fences(&resv, ARRAY_SIZE(users))) {
		for (i = 0; i < ARRAY_SIZE(users); i++)
			dma_resv_add_fence(&resv, users[i], DMA_RESV_USAGE_BOOKKEEP);

		/* Three users, and the paging ring's own work: two gates. */
		gates->jobs = 8;
		gates->num_ready = 1;
		KUNIT_EXPECT_EQ(test, vmgpu_job_reserve_wait(vdev, &no_wait, &resv), -EBUSY);
		gates->num_ready = 2;
		KUNIT_EXPECT_EQ(test, vmgpu_job_reserve_wait(vdev, &no_wait, &resv), 0);

		gates->jobs = 2;
		gates->num_ready = 1;
		KUNIT_EXPECT_EQ(test, vmgpu_job_reserve_wait(vdev, &no_wait, &resv), 0);

		/* A user that has finished needs no gate. */
		gates->jobs = 8;
		dma_fence_signal(users[2]);
		KUNIT_EXPECT_EQ(test, vmgpu_job_reserve_wait(vdev, &no_wait, &resv), 0);
		gates->num_ready = 0;
		KUNIT_EXPECT_EQ(test, vmgpu_job_reserve_wait(vdev, &no_wait, &resv), -EBUSY);
	} else {
		KUNIT_FAIL(test, "no fence slots");
	}
	for (i = 0; i < ARRAY_SIZE(users); i++) {
		dma_fence_signal(users[i]);
		dma_fence_put(users[i]);
	}
	dma_resv_unlock(&resv);
	dma_resv_fini(&resv);
}

struct migrate_user_timers {
	struct timer_list ends, give_up;
	struct dma_fence *user;
	struct task_struct *waiter;
};

static void migrate_user_ends(struct timer_list *t)
{
	struct migrate_user_timers *w = from_timer(w, t, ends);

	dma_fence_signal(w->user);
}

static void migrate_give_up(struct timer_list *t)
{
	struct migrate_user_timers *w = from_timer(w, t, give_up);

	send_sig(SIGKILL, w->waiter, 1);
}

/*
 * A move waiting for a gate counts again when a user of its allocation
 * ends: with one user left it needs none, and goes on although no gate
 * came back. A signal gives up after 2 s.
 */
static void migrate_reserve_wait_recounts_as_users_end(struct kunit *test)
{
	struct vmgpu_device *vdev = vmgpu_kunit_device(test, SZ_16M);
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct migrate_user_timers w = { .waiter = current };
	struct vmgpu_job_pool *gates = &vdev->job_reserve.gates;
	struct dma_fence *users[2];
	struct dma_resv resv;
	int ret = -EINVAL;
	u32 i;

	migrate_reserve(test, vdev, 1, 1);
	gates->jobs = 8;
	for (i = 0; i < ARRAY_SIZE(users); i++)
		users[i] = migrate_pending_fence(test, dma_fence_context_alloc(1));
	dma_resv_init(&resv);
	dma_resv_lock(&resv, NULL);
	if (!dma_resv_reserve_fences(&resv, ARRAY_SIZE(users))) {
		for (i = 0; i < ARRAY_SIZE(users); i++)
			dma_resv_add_fence(&resv, users[i], DMA_RESV_USAGE_BOOKKEEP);
		w.user = users[1];
		allow_signal(SIGKILL);
		timer_setup_on_stack(&w.ends, migrate_user_ends, 0);
		timer_setup_on_stack(&w.give_up, migrate_give_up, 0);
		mod_timer(&w.ends, jiffies + msecs_to_jiffies(50));
		mod_timer(&w.give_up, jiffies + msecs_to_jiffies(2000));
		ret = vmgpu_job_reserve_wait(vdev, &ctx, &resv);
		timer_delete_sync(&w.give_up);
		timer_delete_sync(&w.ends);
		destroy_timer_on_stack(&w.give_up);
		destroy_timer_on_stack(&w.ends);
		flush_signals(current);
		disallow_signal(SIGKILL);
	}
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, vdev->job_reserve.move_waits, 1);
	for (i = 0; i < ARRAY_SIZE(users); i++) {
		dma_fence_signal(users[i]);
		dma_fence_put(users[i]);
	}
	dma_resv_unlock(&resv);
	dma_resv_fini(&resv);
}

static struct kunit_case vmgpu_migrate_cases[] = {
	KUNIT_CASE(migrate_copy_maps_every_page),
	KUNIT_CASE(migrate_copy_through_aperture),
	KUNIT_CASE(migrate_copy_notifies_first),
	KUNIT_CASE(migrate_map_splits_by_table),
	KUNIT_CASE(migrate_op_splits_in_order),
	KUNIT_CASE(migrate_injected_fault),
	KUNIT_CASE(migrate_reserve_wait_follows_the_context),
	KUNIT_CASE(migrate_reserve_wait_counts_gates),
	KUNIT_CASE(migrate_reserve_wait_recounts_as_users_end),
	{}
};

static struct kunit_suite vmgpu_migrate_suite = {
	.name = "vmgpu_migrate",
	.test_cases = vmgpu_migrate_cases,
};

kunit_test_suite(vmgpu_migrate_suite);
