// SPDX-License-Identifier: MIT
/*
 * I/O coherency (seed: "I/O coherency"). On the device's non-coherent mode
 * (the noncoherent configuration) a UMD that skips the cache-sync ioctl
 * reads stale data both ways: the CPU does not see a GPU write until
 * DRM_VMGPU_CACHE_SYNC_TO_CPU, the GPU does not see a CPU write to memory
 * it read before until DRM_VMGPU_CACHE_SYNC_TO_DEVICE. On coherent
 * configurations both are seen at once. Which one this is comes from the
 * configuration (VMGPU_NONCOHERENT), and the query must agree.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define SIZE		(64 * 1024ull)
#define SYS_VA		0x400000000ull
#define VRAM_VA		0x500000000ull
#define OLD		0x01d01d00u
#define NEW		0x0e00e00eu

FIXTURE(coh) {
	vmgpu_device *dev;
	vmgpu_context *ctx;
	int noncoherent;
	vmgpu_bo *sys, *vram;
	uint32_t *sys_cpu, *vram_cpu;
};

FIXTURE_SETUP(coh)
{
	const char *env = getenv("VMGPU_NONCOHERENT");
	struct drm_vmgpu_query_device info;
	uint32_t aperture;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_device(self->dev, &info));
	ASSERT_NE(NULL, env) TH_LOG("VMGPU_NONCOHERENT not set by the configuration");
	self->noncoherent = !strcmp(env, "on");
	ASSERT_EQ(self->noncoherent, !!(info.flags & DRM_VMGPU_DEVICE_NONCOHERENT));
	aperture = vmgpu_test_aperture(self->dev);
	ASSERT_NE(0, aperture);
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &self->ctx));
	ASSERT_EQ(0, make_mapped_in_aperture(self->dev, aperture, SYS_VA, SIZE, &self->sys,
					     (void **)&self->sys_cpu));
	ASSERT_EQ(0, make_mapped(self->dev, 1, aperture, VRAM_VA, SIZE, &self->vram,
				 (void **)&self->vram_cpu));
	/*
	 * Every paging operation writes back and drops the whole device
	 * cache (non-coherent mode): no scrub of freed VRAM (an earlier
	 * test's, the boot's) may run behind the tests' backs.
	 */
	for (uint32_t id = 1; id < aperture; id++) {
		uint64_t scrubs, failed;

		ASSERT_EQ(0, vmgpu_test_vram_scrubbed(id, 1, &scrubs, &failed))
			TH_LOG("segment %u: freed VRAM still being scrubbed", id);
	}
}

FIXTURE_TEARDOWN(coh)
{
	vmgpu_bo_unref(self->vram);
	vmgpu_bo_unref(self->sys);
	vmgpu_context_unref(self->ctx);
	vmgpu_device_unref(self->dev);
}

static void cpu_fill(uint32_t *cpu, uint32_t pattern)
{
	uint64_t i;

	for (i = 0; i < SIZE / 4; i++)
		cpu[i] = pattern;
}

static int gpu(FIXTURE_DATA(coh) *self, union vmgpu_cmd cmd)
{
	return run(self->ctx, vmgpu_device_fd(self->dev), &cmd, 1);
}

/* GPU write, then CPU read: stale until the sync for the CPU. */
TEST_F(coh, gpu_write_then_cpu_read)
{
	cpu_fill(self->sys_cpu, OLD);
	ASSERT_EQ(0, gpu(self, cmd_fill(SYS_VA, SIZE, NEW)));
	if (self->noncoherent) {
		EXPECT_EQ(0, count_not(self->sys_cpu, SIZE, OLD))
			TH_LOG("the CPU saw the GPU's write without a sync");
	} else {
		EXPECT_EQ(0, count_not(self->sys_cpu, SIZE, NEW));
	}
	ASSERT_EQ(0, vmgpu_bo_cache_sync(self->sys, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SIZE));
	EXPECT_EQ(0, count_not(self->sys_cpu, SIZE, NEW));
}

/* CPU write, then GPU read of memory the GPU read before: stale until the sync. */
TEST_F(coh, cpu_write_then_gpu_read)
{
	cpu_fill(self->sys_cpu, OLD);
	ASSERT_EQ(0, vmgpu_bo_cache_sync(self->sys, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, SIZE));
	ASSERT_EQ(0, gpu(self, cmd_transfer(SYS_VA, VRAM_VA, SIZE)));
	EXPECT_EQ(0, count_not(self->vram_cpu, SIZE, OLD));

	cpu_fill(self->sys_cpu, NEW);
	ASSERT_EQ(0, gpu(self, cmd_transfer(SYS_VA, VRAM_VA, SIZE)));
	if (self->noncoherent) {
		EXPECT_EQ(0, count_not(self->vram_cpu, SIZE, OLD))
			TH_LOG("the GPU saw the CPU's write without a sync");
	} else {
		EXPECT_EQ(0, count_not(self->vram_cpu, SIZE, NEW));
	}
	ASSERT_EQ(0, vmgpu_bo_cache_sync(self->sys, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, SIZE));
	ASSERT_EQ(0, gpu(self, cmd_transfer(SYS_VA, VRAM_VA, SIZE)));
	EXPECT_EQ(0, count_not(self->vram_cpu, SIZE, NEW));
}


/*
 * Made non-resident, the system pages keep what the GPU wrote without a
 * sync: the kernel's flush before they leave the device is queued behind
 * the paging ring's work (held busy for 1.5 s), the eviction returns at
 * once and the CPU's next access waits for the flush.
 */
TEST_F(coh, nonresident_eviction_writes_back)
{
	int64_t held, start, took;
	uint64_t stale;

	cpu_fill(self->sys_cpu, OLD);
	ASSERT_EQ(0, vmgpu_bo_cache_sync(self->sys, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, SIZE));
	ASSERT_EQ(0, gpu(self, cmd_fill(SYS_VA, SIZE, NEW)));
	held = now_ms();
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "1500"));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_evict_flags(self->sys, DRM_VMGPU_EVICT_NONRESIDENT));
	took = now_ms() - start;
	EXPECT_GT(750, took) TH_LOG("the eviction waited %lld ms", (long long)took);
	stale = count_not(self->sys_cpu, SIZE, NEW);
	took = now_ms() - held;
	EXPECT_EQ(0, stale) TH_LOG("the GPU's write stayed in the device cache");
	/* Non-coherent: the flush waited behind the ring, held 1.5 s. */
	if (self->noncoherent)
		EXPECT_LE(1400, took) TH_LOG("the CPU read before the flush (%lld ms)",
					     (long long)took);
}

#define LATE_SIZE	(32ull << 20)
#define LATE_VA		0x800000000ull
#define GATE_VA		(LATE_VA - 0x10000)
#define LATE_ROUNDS	8
/* Other spaces mapping the allocation: its eviction invalidates them first. */
#define LATE_SPACES	8

/*
 * One round of late_bound_job_leaves_no_line_behind: the words of the
 * allocation that a whole-cache flush changed after its eviction
 * returned (0 when none), or -1 if a step failed.
 */
static int64_t late_bound_round(struct __test_metadata *_metadata, FIXTURE_DATA(coh) *self,
				uint32_t aperture)
{
	union vmgpu_cmd cmds[2] = { cmd_wait(GATE_VA, 1), cmd_fill(LATE_VA, LATE_SIZE, NEW) };
	vmgpu_device *others[LATE_SPACES] = { NULL };
	vmgpu_bo *gate, *bo, *imports[LATE_SPACES] = { NULL };
	uint32_t *gate_cpu, *cpu;
	int64_t changed = -1;
	uint64_t seen, again;
	vmgpu_context *ctx;
	int i, dmabuf;

	if (vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &ctx))
		return -1;
	if (vmgpu_test_create_at_va(self->dev, 4096, 0, 1u << aperture, aperture, GATE_VA,
				    &gate, (void **)&gate_cpu))
		goto out_ctx;
	gate_cpu[0] = 0;
	gate_cpu[1] = 0;
	if (vmgpu_bo_cache_sync(gate, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, 8) ||
	    vmgpu_context_submit(ctx, cmds, 2, NULL, 0, NULL, 0, NULL))
		goto out_gate;
	if (vmgpu_test_create_mapped(self->dev, LATE_SIZE, 0, 1u << aperture, aperture, &bo,
				     (void **)&cpu))
		goto out_gate;
	/*
	 * Mapped in other spaces first, so that its eviction invalidates
	 * the job's space last: the window in which the job still writes.
	 */
	for (i = 0; i < LATE_SPACES; i++) {
		if (vmgpu_device_open(&others[i]) || vmgpu_bo_export(bo, &dmabuf))
			goto out_others;
		if (vmgpu_bo_import(others[i], dmabuf, 0, &imports[i])) {
			close(dmabuf);
			goto out_others;
		}
		close(dmabuf);
		if (vmgpu_vm_map(imports[i], 0, LATE_VA, LATE_SIZE, 0))
			goto out_others;
	}
	/* Bound after the job was queued: the job's fence is not on it. */
	if (vmgpu_vm_map(bo, 0, LATE_VA, LATE_SIZE, 0))
		goto out_others;
	/* The job starts filling (new memory reads zero); the allocation leaves the device meanwhile. */
	gate_cpu[0] = 1;
	if (vmgpu_bo_cache_sync(gate, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, 8) ||
	    vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT))
		goto out_unmap;
	seen = LATE_SIZE - count_not(cpu, LATE_SIZE, NEW);
	/* Any line the device still held of these pages lands now. */
	if (vmgpu_bo_cache_sync(self->sys, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, SIZE))
		goto out_unmap;
	again = LATE_SIZE - count_not(cpu, LATE_SIZE, NEW);
	changed = (int64_t)(again - seen) / 4;
	TH_LOG("the job had filled %llu of %llu bytes when the allocation left",
	       (unsigned long long)seen, LATE_SIZE);
out_unmap:
	vmgpu_vm_unmap(self->dev, LATE_VA, LATE_SIZE);
out_others:
	for (i = 0; i < LATE_SPACES; i++) {
		if (imports[i])
			vmgpu_bo_unref(imports[i]);
		if (others[i])
			vmgpu_device_unref(others[i]);
	}
	vmgpu_bo_unref(bo);
out_gate:
	vmgpu_vm_unmap(self->dev, GATE_VA, 4096);
	vmgpu_bo_unref(gate);
out_ctx:
	/* The job faults where the allocation was: its context is done. */
	vmgpu_context_unref(ctx);
	return changed;
}

/*
 * A job queued before an allocation was bound writes it without its fence
 * on the allocation, so an eviction does not wait for it. Leaving the
 * device, the allocation's mappings must go before the cache is flushed:
 * if the flush came first, the job would go on filling lines of pages
 * that are no longer the device's, and a later flush would write them
 * into pages that may have another owner by then. Here the pages stay the
 * allocation's, so that the late write shows: nothing may change them
 * once the eviction is done.
 */
TEST_F_TIMEOUT(coh, late_bound_job_leaves_no_line_behind, 180)
{
	uint32_t aperture = vmgpu_test_aperture(self->dev);
	int round;

	if (!self->noncoherent)
		SKIP(return, "only a non-coherent device caches lines");
	for (round = 0; round < LATE_ROUNDS; round++) {
		int64_t changed = late_bound_round(_metadata, self, aperture);

		ASSERT_LE(0, changed) TH_LOG("round %d failed", round);
		EXPECT_EQ(0, changed) TH_LOG("round %d: a flush wrote %lld words after the eviction",
					     round, (long long)changed);
	}
}

/*
 * The kernel's own moves need no sync: an eviction leaves the GPU's write
 * in memory, and a move back reads the CPU's write even where the device
 * had read the pages before.
 */
TEST_F(coh, moves_need_no_sync)
{
	ASSERT_EQ(0, gpu(self, cmd_fill(VRAM_VA, SIZE, NEW)));
	ASSERT_EQ(0, vmgpu_bo_evict(self->vram));
	EXPECT_NE(1, segment_of(self->vram));
	EXPECT_EQ(0, count_not(self->vram_cpu, SIZE, NEW));

	/* The device reads the evicted pages, then the CPU rewrites them. */
	ASSERT_EQ(0, gpu(self, cmd_transfer(VRAM_VA, SYS_VA, SIZE)));
	cpu_fill(self->vram_cpu, OLD);
	ASSERT_EQ(0, vmgpu_bo_make_resident(self->vram));
	EXPECT_EQ(1, segment_of(self->vram));
	EXPECT_EQ(0, count_not(self->vram_cpu, SIZE, OLD));
}

TEST_F(coh, bad_arguments)
{
	struct drm_vmgpu_cache_op op = {
		.handle = vmgpu_bo_handle(self->sys),
		.flags = DRM_VMGPU_CACHE_SYNC_TO_CPU,
		.size = SIZE,
	};
	struct drm_vmgpu_gem_cache_sync args = { .ops = (uintptr_t)&op, .num_ops = 1 };
	struct drm_vmgpu_cache_op good = op;

	EXPECT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	op.flags = 0;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	op.flags = DRM_VMGPU_CACHE_SYNC_TO_CPU | DRM_VMGPU_CACHE_SYNC_TO_DEVICE;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	op.flags = 1u << 2;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	op = good;
	op.size = 0;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	op = good;
	op.offset = 4096;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	op = good;
	op.reserved = 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	op = good;
	op.handle = 0x7fffff;
	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	op = good;
	args.num_ops = 0;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	args.num_ops = DRM_VMGPU_CACHE_SYNC_MAX_OPS + 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
	args.num_ops = 1;
	args.flags = 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args));
}

/*
 * Issue 17, item 3: the paging ring's invalidation of a user page table
 * must never go through the non-coherent cache. If it did, its line of
 * the whole table page would hold the entries as they were, and writing
 * it back would bring back an entry the CPU cleared in between: a job
 * through an unmapped address would reach the pages that were there.
 *
 * The window is stretched: the allocation evicted (moved) is mapped at
 * RACE_LEAVES addresses, one leaf table each, the first in the leaf that
 * also maps the victim, so that its move starts with that many
 * invalidation Fills, the victim's leaf first. Each round opens the gate
 * that held the move and unmaps the victim a little later each time; a
 * job through the victim's address must then fault.
 */
/* Within one level-1 table and 512 tables, the least a VM may have; fewer than cache lines. */
#define RACE_LEAVES	480
#define RACE_ROUNDS	24
#define LEAF_SPAN	(2ull << 20)
#define RACE_VA		0x700000000ull
#define VICTIM_VA	(RACE_VA + SIZE)

/*
 * A job reading through the victim's address: 1 if it did, 0 if it
 * faulted (its context is then guilty: the next submission is refused).
 */
static int probe_reaches(FIXTURE_DATA(coh) *self)
{
	const union vmgpu_cmd read = cmd_transfer(VICTIM_VA, SYS_VA + 128, 4);
	const union vmgpu_cmd nop = cmd_nop(0);
	vmgpu_context *probe;
	int ret;

	ret = vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &probe);
	if (ret)
		return ret;
	ret = run(probe, vmgpu_device_fd(self->dev), &read, 1);
	if (!ret) {
		ret = vmgpu_context_submit(probe, &nop, 1, NULL, 0, NULL, 0, NULL);
		ret = ret == -ECANCELED ? 0 : ret ?: 1;
	}
	vmgpu_context_unref(probe);
	return ret;
}

TEST_F_TIMEOUT(coh, unmapped_entries_stay_unmapped_under_moves, 240)
{
	int fd = vmgpu_device_fd(self->dev);
	vmgpu_bo *moved, *victim;
	vmgpu_context *gate;
	uint32_t round, k;
	void *victim_cpu;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, SIZE, 0,
				       1u << 1 | 1u << vmgpu_test_aperture(self->dev), 1, &moved));
	for (k = 0; k < RACE_LEAVES; k++) {
		ASSERT_EQ(0, vmgpu_vm_map(moved, 0, RACE_VA + k * LEAF_SPAN, SIZE, 0));
	}
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, vmgpu_test_aperture(self->dev),
						SIZE, &victim, &victim_cpu));
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &gate));

	for (round = 1; round <= RACE_ROUNDS; round++) {
		union vmgpu_cmd held[2] = {
			cmd_wait(SYS_VA, round),
			cmd_fill(RACE_VA, 4, round),
		};
		const struct timespec later = { .tv_nsec = (round - 1) * 250 * 1000 };
		uint32_t syncobj;

		ASSERT_EQ(0, vmgpu_bo_make_resident(moved));
		ASSERT_EQ(0, vmgpu_bo_wait(moved, UINT64_MAX, 0));
		ASSERT_EQ(0, vmgpu_vm_map(victim, 0, VICTIM_VA, SIZE, 0));
		/* The move waits for the held job, which maps it everywhere. */
		ASSERT_EQ(0, submit_signal(gate, fd, held, 2, &syncobj, NULL));
		ASSERT_EQ(0, vmgpu_bo_evict(moved));
		*(volatile uint64_t *)self->sys_cpu = round;
		nanosleep(&later, NULL);
		ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, VICTIM_VA, SIZE));
		ASSERT_EQ(0, wait_syncobj(fd, syncobj));
		drmSyncobjDestroy(fd, syncobj);
		ASSERT_EQ(0, vmgpu_bo_wait(moved, UINT64_MAX, 0));
		ASSERT_EQ(0, probe_reaches(self))
			TH_LOG("round %u: a job reached the unmapped address", round);
	}
	vmgpu_context_unref(gate);
	vmgpu_bo_unref(victim);
	vmgpu_bo_unref(moved);
}

TEST_HARNESS_MAIN
