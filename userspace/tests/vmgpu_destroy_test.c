// SPDX-License-Identifier: MIT
/*
 * Deferred destruction and AssumeNotInUse (seed: destruction is
 * asynchronous). Destroying an allocation a queued job still uses never
 * blocks; by default the job still reaches it and the memory returns to
 * the segment after the job; with AssumeNotInUse the memory returns at
 * once and a job that did use it faults, never touching the memory's next
 * owner.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define MiB			(1ull << 20)
#define DESTROY_SIZE		MiB
#define VA_A			0x200000000ull
#define VA_B			0x300000000ull
#define JOB_DELAY_US		500000
/* The paging ring's busy time in the no-wait test, in ms. */
#define PAGING_BUSY_MS		"1000"
/*
 * A destroy that returns later than this waited for the job: half the
 * shortest wait told apart (JOB_DELAY_US), room for a loaded host.
 */
#define DESTROY_MAX_MS		250
/* How long the memory of a destroyed allocation may take to come back. */
#define FREED_MS		1000

FIXTURE(destroy) {
	vmgpu_device *dev;
	int fd;
	vmgpu_context *ctx;
	uint32_t aperture;
	uint32_t segment;	/* a memory segment the CPU sees enough of */
	uint64_t segment_size;
};

FIXTURE_SETUP(destroy)
{
	struct drm_vmgpu_segment seg;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	self->fd = vmgpu_device_fd(self->dev);
	ASSERT_EQ(0, find_segments(self->dev, 4 * DESTROY_SIZE, &self->aperture, &seg));
	self->segment = seg.id;
	self->segment_size = seg.size;
	ASSERT_NE(0, self->aperture);
	ASSERT_NE(0, self->segment);
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0,
					  &self->ctx));
}

FIXTURE_TEARDOWN(destroy)
{
	vmgpu_context_unref(self->ctx);
	vmgpu_device_unref(self->dev);
}

/* The segment's use, or UINT64_MAX, which no check below accepts, on error. */
static uint64_t used(FIXTURE_DATA(destroy) *self)
{
	uint64_t bytes;

	if (vmgpu_test_segment_used(self->dev, self->segment, &bytes))
		return UINT64_MAX;
	return bytes;
}

/*
 * A contiguous CPU-visible allocation in the segment (the aperture in its
 * set, as the seed requires where the BAR does not cover the segment):
 * *offset is where.
 */
static int create_physical(vmgpu_device *dev, uint32_t segment, uint32_t aperture,
			   vmgpu_bo **bo, void **cpu, uint64_t *offset)
{
	struct drm_vmgpu_gem_info info;
	int ret = vmgpu_test_create_mapped(dev, DESTROY_SIZE, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
					   1u << segment | 1u << aperture, segment, bo, cpu);

	if (ret)
		return ret;
	ret = vmgpu_bo_info_flags(*bo, DRM_VMGPU_GEM_INFO_WAIT, &info);
	if (!ret && (info.segment_id != segment ||
		     !(info.residency & DRM_VMGPU_RESIDENCY_PHYSICAL)))
		ret = -EFAULT;
	if (ret) {
		vmgpu_bo_unref(*bo);
		return ret;
	}
	*offset = info.offset;
	return 0;
}

TEST_F(destroy, deferred_until_queued_jobs_finish)
{
	union vmgpu_cmd cmds[3] = {
		cmd_nop(JOB_DELAY_US),
		cmd_fill(VA_A, DESTROY_SIZE, 0x0defe44e),
		cmd_transfer(VA_A, VA_B, DESTROY_SIZE),
	};
	uint8_t *a_cpu, *b_cpu;
	uint64_t before;
	vmgpu_bo *a, *b;
	uint32_t syncobj;
	int64_t start;

	ASSERT_EQ(0, make_mapped(self->dev, self->segment, self->aperture, VA_A,
				 DESTROY_SIZE, &a, (void **)&a_cpu));
	ASSERT_EQ(self->segment, segment_of(a));
	ASSERT_EQ(0, make_mapped_in_aperture(self->dev, self->aperture, VA_B,
					     DESTROY_SIZE, &b, (void **)&b_cpu));
	memset(b_cpu, 0, DESTROY_SIZE);
	before = used(self);
	ASSERT_NE(UINT64_MAX, before);

	ASSERT_EQ(0, submit_signal(self->ctx, self->fd, cmds, 3, &syncobj, NULL));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_destroy(a, 0));
	EXPECT_LT(now_ms() - start, DESTROY_MAX_MS);
	/* The job is still to use it: the memory is still the allocation's. */
	EXPECT_EQ(before, used(self));

	ASSERT_EQ(0, wait_syncobj(self->fd, syncobj));
	/* The FILL after the destroy reached it, and the copy read it back. */
	EXPECT_EQ(0, count_not(b_cpu, DESTROY_SIZE, 0x0defe44e));
	EXPECT_LE(vmgpu_test_used_drops_to(self->dev, self->segment, before - DESTROY_SIZE,
					   FREED_MS),
		  before - DESTROY_SIZE);
	/* The context did nothing wrong. */
	cmds[0] = cmd_nop(0);
	EXPECT_EQ(0, vmgpu_context_submit(self->ctx, cmds, 1, NULL, 0, NULL, 0, NULL));

	drmSyncobjDestroy(self->fd, syncobj);
	vmgpu_bo_unref(b);
}

TEST_F(destroy, assume_not_in_use_frees_at_once)
{
	union vmgpu_cmd cmds[2] = {
		cmd_nop(JOB_DELAY_US),
		cmd_fill(VA_A, DESTROY_SIZE, 0x11a511a5),
	};
	unsigned int tries = self->segment_size / DESTROY_SIZE;
	vmgpu_bo *a, **n = calloc(tries, sizeof(*n));
	uint64_t before, first, a_offset, n_offset;
	vmgpu_device *neighbour;
	unsigned int i, got = 0;
	uint8_t *a_cpu, *n_cpu;
	uint32_t syncobj;
	int64_t start;

	ASSERT_NE(NULL, n);
	ASSERT_EQ(0, create_physical(self->dev, self->segment, self->aperture, &a,
				     (void **)&a_cpu, &a_offset));
	ASSERT_EQ(0, vmgpu_vm_map(a, 0, VA_A, DESTROY_SIZE, 0));
	/* Its clear is done: only the job can hold the memory. */
	ASSERT_EQ(0, vmgpu_bo_wait(a, WAIT_NS, 0));
	before = used(self);
	ASSERT_NE(UINT64_MAX, before);

	/* The job does use it: AssumeNotInUse is a lie here. */
	ASSERT_EQ(0, submit_signal(self->ctx, self->fd, cmds, 2, &syncobj, NULL));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_destroy(a, DRM_VMGPU_GEM_DESTROY_ASSUME_NOT_IN_USE));
	EXPECT_LT(now_ms() - start, DESTROY_MAX_MS);
	EXPECT_LE(used(self), before - DESTROY_SIZE);

	/* Another process gets those very pages at once and fills them. */
	ASSERT_EQ(0, vmgpu_device_open(&neighbour));
	for (i = 0; i < tries; i++) {
		ASSERT_EQ(0, create_physical(neighbour, self->segment, self->aperture, &n[i],
					     (void **)&n_cpu, &n_offset));
		if (n_offset == a_offset) {
			got = 1;
			break;
		}
	}
	ASSERT_EQ(1, got) TH_LOG("the neighbour never got the freed pages");
	vmgpu_test_fill(n_cpu, DESTROY_SIZE, 0x4e1);

	ASSERT_EQ(0, wait_syncobj(self->fd, syncobj));
	EXPECT_EQ(0, vmgpu_test_check(n_cpu, DESTROY_SIZE, 0x4e1, &first))
		TH_LOG("the liar's job wrote the neighbour's memory at 0x%llx",
		       (unsigned long long)first);
	/* The liar faulted: its context is guilty. */
	cmds[0] = cmd_nop(0);
	EXPECT_EQ(-ECANCELED, vmgpu_context_submit(self->ctx, cmds, 1, NULL, 0, NULL, 0,
						   NULL));

	drmSyncobjDestroy(self->fd, syncobj);
	for (i = 0; i < tries && n[i]; i++)
		vmgpu_bo_unref(n[i]);
	free(n);
	vmgpu_device_unref(neighbour);
}

/*
 * Seed: "commands queued prior to the destruction request might
 * potentially access the allocation". A job queued before the allocation
 * was even bound at the address it uses, still queued at the destroy,
 * reaches it: the destruction waits for every job of the VM.
 */
TEST_F(destroy, deferred_for_jobs_queued_before_the_bind)
{
	union vmgpu_cmd cmds[3] = {
		cmd_nop(JOB_DELAY_US),
		cmd_fill(VA_A, DESTROY_SIZE, 0x0b1dfee1),
		cmd_transfer(VA_A, VA_B, DESTROY_SIZE),
	};
	uint8_t *a_cpu, *b_cpu;
	uint64_t before;
	vmgpu_bo *a, *b;
	uint32_t syncobj;

	ASSERT_EQ(0, make_mapped_in_aperture(self->dev, self->aperture, VA_B,
					     DESTROY_SIZE, &b, (void **)&b_cpu));
	memset(b_cpu, 0, DESTROY_SIZE);
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->segment, self->aperture,
						DESTROY_SIZE, &a, (void **)&a_cpu));
	ASSERT_EQ(self->segment, segment_of(a));
	before = used(self);
	ASSERT_NE(UINT64_MAX, before);

	ASSERT_EQ(0, submit_signal(self->ctx, self->fd, cmds, 3, &syncobj, NULL));
	ASSERT_EQ(0, vmgpu_vm_map(a, 0, VA_A, DESTROY_SIZE, 0));
	ASSERT_EQ(0, vmgpu_bo_destroy(a, 0));
	EXPECT_EQ(before, used(self));

	ASSERT_EQ(0, wait_syncobj(self->fd, syncobj));
	EXPECT_EQ(0, count_not(b_cpu, DESTROY_SIZE, 0x0b1dfee1));
	EXPECT_LE(vmgpu_test_used_drops_to(self->dev, self->segment, before - DESTROY_SIZE,
					   FREED_MS),
		  before - DESTROY_SIZE);
	/* It did not fault. */
	cmds[0] = cmd_nop(0);
	EXPECT_EQ(0, vmgpu_context_submit(self->ctx, cmds, 1, NULL, 0, NULL, 0, NULL));

	drmSyncobjDestroy(self->fd, syncobj);
	vmgpu_bo_unref(b);
}

/*
 * Seed: with AssumeNotInUse VidMm processes the request "without waiting".
 * Neither it nor an unmap waits for the paging ring, here held busy with
 * the allocations' evictions queued on it. A new mapping at the same
 * address waits for those instead, so the evictions' invalidations never
 * land on it: a job through it works.
 */
TEST_F(destroy, assume_not_in_use_and_unmap_do_not_wait_for_paging)
{
	union vmgpu_cmd fill = cmd_fill(VA_A, DESTROY_SIZE, 0x0a1ce);
	uint8_t *a_cpu, *b_cpu, *c_cpu;
	vmgpu_bo *a, *b, *c;
	int64_t start;

	ASSERT_EQ(0, make_mapped(self->dev, self->segment, self->aperture, VA_A,
				 DESTROY_SIZE, &a, (void **)&a_cpu));
	ASSERT_EQ(0, make_mapped(self->dev, self->segment, self->aperture, VA_B,
				 DESTROY_SIZE, &b, (void **)&b_cpu));
	ASSERT_EQ(self->segment, segment_of(a));
	ASSERT_EQ(self->segment, segment_of(b));
	/*
	 * Cleared and idle before the paging ring gets busy: mapping it waits
	 * for nothing of its own, only for the queued invalidations.
	 */
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->segment, self->aperture,
						DESTROY_SIZE, &c, (void **)&c_cpu));
	ASSERT_EQ(0, vmgpu_bo_wait(c, UINT64_MAX, 0));
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", PAGING_BUSY_MS));
	/* Queued behind the delay, with the Fills that invalidate the mappings. */
	ASSERT_EQ(0, vmgpu_bo_evict(a));
	ASSERT_EQ(0, vmgpu_bo_evict(b));

	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_destroy(a, DRM_VMGPU_GEM_DESTROY_ASSUME_NOT_IN_USE));
	EXPECT_LT(now_ms() - start, DESTROY_MAX_MS);
	start = now_ms();
	ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, VA_B, DESTROY_SIZE));
	EXPECT_LT(now_ms() - start, DESTROY_MAX_MS);

	ASSERT_EQ(0, vmgpu_vm_map(c, 0, VA_A, DESTROY_SIZE, 0));
	/* The evictions done, invalidations included: none undid the map. */
	ASSERT_EQ(0, vmgpu_bo_wait(b, UINT64_MAX, 0));
	ASSERT_EQ(0, run(self->ctx, self->fd, &fill, 1));
	EXPECT_EQ(0, count_not(c_cpu, DESTROY_SIZE, 0x0a1ce));
	vmgpu_bo_unref(c);
	vmgpu_bo_unref(b);
}

/*
 * A mapping only this test's file has, in a 512 GiB range of its own: the
 * space whose debugfs vms entry lists it is the file's.
 */
#define VA_SENTINEL		0x700000000000ull
#define SENTINEL_TABLES		3

/*
 * Page tables of the space that maps VA_SENTINEL (debugfs vms): all of
 * them, those no mapping needs any more but kept for queued paging
 * writes, and the most it may have.
 */
static int page_tables_max(unsigned int *all, unsigned int *unused, unsigned int *max)
{
	/* A line per mapping: thousands of them in the test of the limit. */
	static char buf[1 << 20];
	unsigned int vm_all = 0, vm_unused = 0, vm_max = 0, found = 0;
	char sentinel[32], *line;
	int id;

	if (vmgpu_test_debugfs_read("vms", buf, sizeof(buf)))
		return -1;
	snprintf(sentinel, sizeof(sentinel), "0x%llx-", VA_SENTINEL);
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "vm ", 3) &&
		    sscanf(line, "vm %d: %u page tables, %u unused, at most %u", &id,
			   &vm_all, &vm_unused, &vm_max) != 4)
			return -1;
		if (strstr(line, sentinel)) {
			*all = vm_all;
			*unused = vm_unused;
			*max = vm_max;
			found++;
		}
	}
	return found == 1 ? 0 : -1;
}

static int page_tables(unsigned int *all, unsigned int *unused)
{
	unsigned int max;

	return page_tables_max(all, unused, &max);
}

/*
 * A mapping's page tables go with it: over its life a space may use many
 * more addresses than it may have tables at once (a VM_BIND beyond gets
 * -ENOSPC), here twice as many last-level tables, one after the other.
 */
#define TABLE_SPAN		(2 * MiB)
#define VA_TABLES		0x400000000ull

TEST_F_TIMEOUT(destroy, unmap_frees_page_tables, 120)
{
	unsigned int all = 0, unused = 0, max = 0, i;
	vmgpu_bo *bo;
	void *cpu;

	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->segment, self->aperture,
						4096, &bo, &cpu));
	ASSERT_EQ(0, vmgpu_bo_wait(bo, UINT64_MAX, 0));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, VA_SENTINEL, 4096, 0));
	ASSERT_EQ(0, page_tables_max(&all, &unused, &max));
	for (i = 0; i < 2 * max; i++) {
		uint64_t va = VA_TABLES + i * TABLE_SPAN;

		ASSERT_EQ(0, vmgpu_vm_map(bo, 0, va, 4096, 0))
			TH_LOG("round %u: the space ran out of page tables", i);
		if (!i) {
			/* The root; one table per level below it for each mapping. */
			ASSERT_EQ(0, page_tables(&all, &unused));
			EXPECT_EQ(1 + 2 * SENTINEL_TABLES, all);
		}
		ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, va, 4096));
	}
	ASSERT_EQ(0, page_tables(&all, &unused));
	EXPECT_EQ(1 + SENTINEL_TABLES, all)
		TH_LOG("%u tables left of mappings that are gone",
		       all - 1 - SENTINEL_TABLES);
	EXPECT_EQ(0, unused);
	vmgpu_bo_unref(bo);
}

/*
 * A space maps at once, in 4 KiB pages, all the device holds (its VRAM and
 * the limit on resident system memory), one last-level table each 2 MiB;
 * then VM_BIND stops with -ENOSPC at the limit debugfs vms gives.
 */
TEST_F_TIMEOUT(destroy, page_tables_cover_the_device_memory, 120)
{
	struct drm_vmgpu_query_device info;
	unsigned int all = 0, unused = 0, max = 0, n, leaves, tries;
	vmgpu_bo *bo;
	void *cpu;
	int ret;

	ASSERT_EQ(0, vmgpu_query_device(self->dev, &info));
	leaves = (info.vram_size + info.resident_system_size) / TABLE_SPAN;
	tries = 4 * leaves + 1024;
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->segment, self->aperture,
						4096, &bo, &cpu));
	ASSERT_EQ(0, vmgpu_bo_wait(bo, UINT64_MAX, 0));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, VA_SENTINEL, 4096, 0));
	for (n = 0, ret = 0; n < tries; n++) {
		ret = vmgpu_vm_map(bo, 0, VA_TABLES + n * TABLE_SPAN, 4096, 0);
		if (ret)
			break;
	}
	EXPECT_EQ(-ENOSPC, ret) TH_LOG("%u mappings, no limit met", n);
	EXPECT_LE(leaves, n) TH_LOG("the space could not map all the device holds");
	ASSERT_EQ(0, page_tables_max(&all, &unused, &max));
	/* At the limit: the next mapping needed one more table, or two. */
	EXPECT_LE(max - 1, all);
	EXPECT_GE(max, all);
	printf("# %u tables at most, %u mappings of their own table each (the device: %u)\n",
	       max, n, leaves);
	while (n--)
		ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, VA_TABLES + n * TABLE_SPAN, 4096));
	ASSERT_EQ(0, page_tables(&all, &unused));
	EXPECT_EQ(1 + SENTINEL_TABLES, all);
	vmgpu_bo_unref(bo);
}

/* 1 if a job writing through va ran, 0 if it faulted, or -errno. */
static int job_reaches(FIXTURE_DATA(destroy) *self, uint64_t va)
{
	const union vmgpu_cmd write = cmd_fill(va, 4, 0x4ea7), nop = cmd_nop(0);
	vmgpu_context *probe;
	int ret;

	ret = vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &probe);
	if (ret)
		return ret;
	ret = run(probe, self->fd, &write, 1);
	if (!ret) {
		/* A fault made the context guilty: it takes nothing more. */
		ret = vmgpu_context_submit(probe, &nop, 1, NULL, 0, NULL, 0, NULL);
		ret = ret == -ECANCELED ? 0 : ret ?: 1;
	}
	vmgpu_context_unref(probe);
	return ret;
}

/*
 * A table stays while another mapping needs it, without the entries of
 * the one removed; a mapping across last-level tables and a 1 GiB
 * boundary (a table of the level above) takes all of them with it.
 */
#define VA_SHARED		(VA_TABLES + 1024 * MiB)

TEST_F(destroy, unmap_keeps_tables_other_mappings_need)
{
	unsigned int all = 0, unused = 0;
	uint8_t *a_cpu, *b_cpu;
	vmgpu_bo *a, *b;

	ASSERT_EQ(0, make_mapped(self->dev, self->segment, self->aperture, VA_SHARED,
				 DESTROY_SIZE, &a, (void **)&a_cpu));
	ASSERT_EQ(0, make_mapped(self->dev, self->segment, self->aperture,
				 VA_SHARED + DESTROY_SIZE, DESTROY_SIZE, &b, (void **)&b_cpu));
	ASSERT_EQ(0, vmgpu_vm_map(b, 0, VA_SENTINEL, 4096, 0));
	ASSERT_EQ(0, vmgpu_bo_wait(a, UINT64_MAX, 0));
	ASSERT_EQ(0, vmgpu_bo_wait(b, UINT64_MAX, 0));
	/* Both in one last-level table. */
	ASSERT_EQ(0, page_tables(&all, &unused));
	ASSERT_EQ(1 + 2 * SENTINEL_TABLES, all);

	ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, VA_SHARED, DESTROY_SIZE));
	ASSERT_EQ(0, page_tables(&all, &unused));
	EXPECT_EQ(1 + 2 * SENTINEL_TABLES, all);
	EXPECT_EQ(0, unused);
	EXPECT_EQ(0, job_reaches(self, VA_SHARED + DESTROY_SIZE - 4))
		TH_LOG("a job reached the unmapped range in the table kept");
	EXPECT_EQ(1, job_reaches(self, VA_SHARED + DESTROY_SIZE));
	EXPECT_EQ(0x4ea7, *(volatile uint32_t *)b_cpu);

	/* 1 MiB either side of a 1 GiB boundary, and 1 MiB more. */
	ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, VA_SHARED + DESTROY_SIZE, DESTROY_SIZE));
	ASSERT_EQ(0, vmgpu_vm_map(a, 0, VA_SHARED - DESTROY_SIZE, DESTROY_SIZE, 0));
	ASSERT_EQ(0, vmgpu_vm_map(b, 0, VA_SHARED, DESTROY_SIZE, 0));
	ASSERT_EQ(0, vmgpu_vm_map(a, 0, VA_SHARED + 2 * MiB, DESTROY_SIZE, 0));
	ASSERT_EQ(0, page_tables(&all, &unused));
	/* Above the root: one shared table, two of the level below, three leaves. */
	EXPECT_EQ(1 + SENTINEL_TABLES + 6, all);
	ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, VA_SHARED, DESTROY_SIZE));
	ASSERT_EQ(0, page_tables(&all, &unused));
	EXPECT_EQ(1 + SENTINEL_TABLES + 5, all);
	ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, VA_SHARED - DESTROY_SIZE, DESTROY_SIZE));
	ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, VA_SHARED + 2 * MiB, DESTROY_SIZE));
	ASSERT_EQ(0, page_tables(&all, &unused));
	EXPECT_EQ(1 + SENTINEL_TABLES, all);
	EXPECT_EQ(0, unused);
	vmgpu_bo_unref(b);
	vmgpu_bo_unref(a);
}

/*
 * A queued eviction's Fills still write the entries of a mapping removed
 * after it was queued: its tables leave the tree at the unmap but keep
 * their pages until it has run, or the Fills would write pages given to
 * someone else. The next map frees them, and builds its own.
 */
#define TABLES_BUSY_MS		"3000"

TEST_F(destroy, page_tables_outlive_queued_invalidations)
{
	union vmgpu_cmd fill = cmd_fill(VA_B, DESTROY_SIZE, 0x7ab1e5);
	unsigned int all = 0, unused = 0;
	uint8_t *a_cpu, *c_cpu;
	vmgpu_bo *a, *c;

	ASSERT_EQ(0, make_mapped(self->dev, self->segment, self->aperture, VA_A,
				 DESTROY_SIZE, &a, (void **)&a_cpu));
	ASSERT_EQ(self->segment, segment_of(a));
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->segment, self->aperture,
						DESTROY_SIZE, &c, (void **)&c_cpu));
	ASSERT_EQ(0, vmgpu_bo_wait(c, UINT64_MAX, 0));
	ASSERT_EQ(0, vmgpu_vm_map(c, 0, VA_SENTINEL, 4096, 0));
	ASSERT_EQ(0, page_tables(&all, &unused));
	ASSERT_EQ(1 + 2 * SENTINEL_TABLES, all);
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", TABLES_BUSY_MS));
	ASSERT_EQ(0, vmgpu_bo_evict(a));

	ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, VA_A, DESTROY_SIZE));
	ASSERT_EQ(0, page_tables(&all, &unused));
	ASSERT_EQ(-EBUSY, vmgpu_bo_wait(a, 0, DRM_VMGPU_GEM_WAIT_NO_WAIT))
		TH_LOG("the eviction was not held by the paging delay throughout");
	EXPECT_EQ(1 + 2 * SENTINEL_TABLES, all);
	/* The last-level table and the two above it, out of the tree. */
	EXPECT_EQ(3, unused) TH_LOG("tables freed before the Fills that write them ran");

	ASSERT_EQ(0, vmgpu_vm_map(c, 0, VA_B, DESTROY_SIZE, 0));
	ASSERT_EQ(0, vmgpu_bo_wait(a, 0, DRM_VMGPU_GEM_WAIT_NO_WAIT));
	ASSERT_EQ(0, page_tables(&all, &unused));
	EXPECT_EQ(1 + 2 * SENTINEL_TABLES, all);
	EXPECT_EQ(0, unused);
	ASSERT_EQ(0, run(self->ctx, self->fd, &fill, 1));
	EXPECT_EQ(0, count_not(c_cpu, DESTROY_SIZE, 0x7ab1e5));
	vmgpu_bo_unref(c);
	vmgpu_bo_unref(a);
}

TEST_F(destroy, bad_arguments)
{
	struct drm_vmgpu_gem_destroy args = { 0 };
	vmgpu_bo *bo;
	void *cpu;

	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->segment, self->aperture,
						4096, &bo, &cpu));
	args.handle = vmgpu_bo_handle(bo);
	args.flags = 1u << 5;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_DESTROY, &args));
	args.flags = 0;
	args.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_DESTROY, &args));
	args = (struct drm_vmgpu_gem_destroy){ .handle = 0x7fffff };
	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_DESTROY, &args));
	/* The handle survived the failed calls. */
	EXPECT_EQ(0, vmgpu_bo_destroy(bo, 0));
}

TEST_HARNESS_MAIN
