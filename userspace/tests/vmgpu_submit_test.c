// SPDX-License-Identifier: MIT
/*
 * User submission on GPU-VA engines: VM_BIND, EXEC with syncobj points,
 * the seqno page, GEM_WAIT, the command checks, faults charged to their
 * own context, and hang recovery by the job timeout.
 *
 * Every data check reads what the GPU wrote through the CPU, so a job
 * that did not run, ran too early or wrote the wrong place shows.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define MiB			(1ull << 20)
#define BO_SIZE			(256 * 1024ull)
#define VA_BASE			0x100000000ull
#define VA_STRIDE		0x10000000ull
/* The module's job_timeout_ms default, and slack for the reset. */
#define HANG_TIMEOUT_MS		2000
#define HANG_SLACK_MS		3000

FIXTURE(submit) {
	vmgpu_device *dev;
	int fd;
	struct drm_vmgpu_query_segments *s;
	uint32_t aperture;
	vmgpu_context *ctx;
};

FIXTURE_SETUP(submit)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	self->fd = vmgpu_device_fd(self->dev);
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &self->s));
	self->aperture = vmgpu_aperture_segment_id(self->s);
	ASSERT_NE(0, self->aperture);
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0,
					  &self->ctx));
}

FIXTURE_TEARDOWN(submit)
{
	vmgpu_context_unref(self->ctx);
	free(self->s);
	vmgpu_device_unref(self->dev);
}

/* GPU FILL and TRANSFER through the VM land in every segment. */
TEST_F(submit, fill_and_transfer_every_segment)
{
	uint32_t i, tested = 0;

	for (i = 0; i < self->s->num_segments; i++) {
		const struct drm_vmgpu_segment *seg = &self->s->segments[i];
		uint64_t va = VA_BASE + i * VA_STRIDE;
		uint32_t pattern = 0x5e600000 | seg->id;
		union vmgpu_cmd cmds[2];
		vmgpu_bo *bo;
		uint64_t first;
		uint8_t *cpu;
		int ret;

		/*
		 * Memory segments and the aperture; the system segment
		 * is covered by page_tables_follow_moves.
		 */
		if (seg->kind == DRM_VMGPU_SEGMENT_SYSTEM ||
		    seg->cpu_visible_size < BO_SIZE)
			continue;
		if (seg->id == self->aperture)
			ret = make_mapped_in_aperture(self->dev, self->aperture, va,
						      BO_SIZE, &bo, (void **)&cpu);
		else
			ret = make_mapped(self->dev, seg->id, self->aperture, va,
					  BO_SIZE, &bo, (void **)&cpu);
		ASSERT_EQ(0, ret);
		ASSERT_EQ(seg->id, segment_of(bo));
		vmgpu_test_fill(cpu + BO_SIZE / 2, BO_SIZE / 2, seg->id);
		/* The first quarter gets the pattern, the second a CPU-written copy. */
		cmds[0] = cmd_fill(va, BO_SIZE / 2, pattern);
		cmds[1] = cmd_transfer(va + BO_SIZE / 2, va + BO_SIZE / 4, BO_SIZE / 4);
		ASSERT_EQ(0, run(self->ctx, self->fd, cmds, 2));
		EXPECT_EQ(0, count_not(cpu, BO_SIZE / 4, pattern)) TH_LOG("segment %u", seg->id);
		EXPECT_EQ(0, vmgpu_test_check(cpu + BO_SIZE / 4, BO_SIZE / 4, seg->id, &first))
			TH_LOG("segment %u: transfer wrong from 0x%llx", seg->id,
			       (unsigned long long)first);
		ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, va, BO_SIZE));
		vmgpu_bo_unref(bo);
		tested++;
	}
	ASSERT_GE(tested, 2);
}

/*
 * The page tables follow the allocation: evicted out of its segment, then
 * made resident again elsewhere, GPU accesses through the same VA reach
 * its current backing, never the memory it left.
 */
TEST_F(submit, page_tables_follow_moves)
{
	const struct drm_vmgpu_segment *seg = NULL;
	uint8_t *a_cpu, *b_cpu, *f_cpu;
	vmgpu_bo *a, *b, *filler;
	union vmgpu_cmd cmd;
	uint64_t first;
	uint32_t home;

	seg = visible_memory_segment(self->s, BO_SIZE);
	ASSERT_NE(NULL, seg);
	ASSERT_EQ(0, make_mapped(self->dev, seg->id, self->aperture, VA_BASE,
				 BO_SIZE, &a, (void **)&a_cpu));
	ASSERT_EQ(0, make_mapped_in_aperture(self->dev, self->aperture,
					     VA_BASE + VA_STRIDE, BO_SIZE, &b,
					     (void **)&b_cpu));
	home = segment_of(a);
	ASSERT_EQ(seg->id, home);
	vmgpu_test_fill(a_cpu, BO_SIZE, 0xa11ce);

	/* Out to the implicit system segment, reached by bus address. */
	ASSERT_EQ(0, vmgpu_bo_evict(a));
	ASSERT_EQ(0, segment_of(a));
	/* New contents there: the VRAM it left still holds the old ones. */
	vmgpu_test_fill(a_cpu, BO_SIZE, 0xb0b);
	cmd = cmd_transfer(VA_BASE, VA_BASE + VA_STRIDE, BO_SIZE);
	ASSERT_EQ(0, run(self->ctx, self->fd, &cmd, 1));
	EXPECT_EQ(0, vmgpu_test_check(b_cpu, BO_SIZE, 0xb0b, &first))
		TH_LOG("copy from the evicted allocation wrong at 0x%llx",
		       (unsigned long long)first);

	/* Someone else takes the VRAM it left; it comes back elsewhere. */
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, home, self->aperture,
						BO_SIZE, &filler, (void **)&f_cpu));
	ASSERT_EQ(home, segment_of(filler));
	vmgpu_test_fill(f_cpu, BO_SIZE, 0xf111e5);
	ASSERT_EQ(0, vmgpu_bo_make_resident(a));
	ASSERT_EQ(home, segment_of(a));
	cmd = cmd_fill(VA_BASE, BO_SIZE, 0x600d600d);
	ASSERT_EQ(0, run(self->ctx, self->fd, &cmd, 1));
	EXPECT_EQ(0, count_not(a_cpu, BO_SIZE, 0x600d600d));
	EXPECT_EQ(0, vmgpu_test_check(f_cpu, BO_SIZE, 0xf111e5, &first))
		TH_LOG("another allocation written at 0x%llx", (unsigned long long)first);
	vmgpu_bo_unref(filler);
	vmgpu_bo_unref(a);
	vmgpu_bo_unref(b);
}

/*
 * An unmap takes effect at once, even in the middle of a long FILL whose
 * runs the device copies beside the CPU (contract 1.10: the driver's
 * invalidation read of MAGIC waits for them): once VM_BIND returns, no
 * byte of the allocation changes any more, and the job faults on its own
 * context. The unmaps come at fractions of a whole FILL's time, measured
 * first. Right after VM_BIND, one word per 64 KiB is read across the
 * buffer, then one per page: a copy still going on meets words it has not
 * yet written. A sweep whose unmaps all came before or after the FILL (a
 * loaded host's jitter can exceed the FILL) is run again, up to
 * UNMAP_FILL_SWEEPS times; the first unmap that lands midway ends it. The
 * rounds are fine-grained: on a fast host the copy is a small part of the
 * job's time, and sweeps of 16 rounds saw every FILL either not begun or
 * done, three times over.
 */
#define UNMAP_FILL_SIZE		(32 * MiB)
#define UNMAP_FILL_PAGES	(UNMAP_FILL_SIZE / 4096)
#define UNMAP_FILL_COARSE	(UNMAP_FILL_SIZE / (64 * 1024))
#define UNMAP_FILL_PATTERN	0x5ca1ab1e
#define UNMAP_FILL_ROUNDS	48
#define UNMAP_FILL_SWEEPS	4

TEST_F_TIMEOUT(submit, unmap_stops_a_fill_in_progress, 180)
{
	static uint32_t page_snap[UNMAP_FILL_PAGES], coarse_snap[UNMAP_FILL_COARSE];
	const struct drm_vmgpu_segment *seg;
	unsigned int n, round, midway = 0;
	int64_t whole_us = 0;

	seg = visible_memory_segment(self->s, UNMAP_FILL_SIZE);
	ASSERT_NE(NULL, seg);
	for (n = 0; n <= UNMAP_FILL_SWEEPS * UNMAP_FILL_ROUNDS; n++) {
		uint64_t va, written = 0, changed = 0;
		const volatile uint32_t *words;
		union vmgpu_cmd cmd;
		int64_t delay_us = 0, start;
		vmgpu_context *ctx;
		uint32_t syncobj;
		vmgpu_bo *bo;
		void *cpu;
		long i;

		/* Round 0 once, then sweeps of rounds 1 to UNMAP_FILL_ROUNDS. */
		round = n ? (n - 1) % UNMAP_FILL_ROUNDS + 1 : 0;
		if (midway)
			break;
		va = VA_BASE + round * VA_STRIDE;
		cmd = cmd_fill(va, UNMAP_FILL_SIZE, UNMAP_FILL_PATTERN);
		ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &ctx));
		ASSERT_EQ(0, make_mapped(self->dev, seg->id, self->aperture, va,
					 UNMAP_FILL_SIZE, &bo, &cpu));
		/* Cleared, and every page faulted in before the job. */
		ASSERT_EQ(0, count_not(cpu, UNMAP_FILL_SIZE, 0));
		words = cpu;
		start = now_us();
		ASSERT_EQ(0, submit_signal(ctx, self->fd, &cmd, 1, &syncobj, NULL));
		if (!round) {
			/* Round 0 times a whole FILL for the others' delays. */
			ASSERT_EQ(0, wait_syncobj(self->fd, syncobj));
			whole_us = now_us() - start;
			EXPECT_EQ(0, count_not(cpu, UNMAP_FILL_SIZE, UNMAP_FILL_PATTERN));
			goto next;
		}
		delay_us = whole_us * (round - 1) / (UNMAP_FILL_ROUNDS - 4);
		while (now_us() - start < delay_us)
			;
		ASSERT_EQ(0, vmgpu_vm_unmap(self->dev, va, UNMAP_FILL_SIZE));
		for (i = 0; i < UNMAP_FILL_COARSE; i++)
			coarse_snap[i] = words[i * 16384];
		for (i = UNMAP_FILL_PAGES - 1; i >= 0; i--)
			page_snap[i] = words[i * 1024];
		ASSERT_EQ(0, wait_syncobj(self->fd, syncobj));
		for (i = 0; i < UNMAP_FILL_COARSE; i++)
			changed += words[i * 16384] != coarse_snap[i];
		for (i = 0; i < UNMAP_FILL_PAGES; i++) {
			written += page_snap[i] == UNMAP_FILL_PATTERN;
			changed += words[i * 1024] != page_snap[i];
		}
		EXPECT_EQ(0, changed)
			TH_LOG("round %u: %llu words written after the unmap returned",
			       round, (unsigned long long)changed);
		printf("# round %u: unmapped after %lld of %lld us, %llu of %u pages written\n",
		       round, (long long)delay_us, (long long)whole_us,
		       (unsigned long long)written, (unsigned int)UNMAP_FILL_PAGES);
		if (written && written < UNMAP_FILL_PAGES) {
			midway++;
			/* It faulted on the unmapped rest: its context is done. */
			cmd = cmd_nop(0);
			EXPECT_EQ(-ECANCELED, vmgpu_context_submit(ctx, &cmd, 1, NULL, 0,
								   NULL, 0, NULL));
		}
next:
		drmSyncobjDestroy(self->fd, syncobj);
		vmgpu_bo_unref(bo);
		vmgpu_context_unref(ctx);
	}
	/* Else the test said nothing: every unmap came before or after the FILL. */
	EXPECT_LT(0, midway);
	printf("# %u of %u rounds unmapped in the middle of the FILL\n", midway, n - 1);
}

/*
 * A job queued before a bind, and released after it, never reads what the
 * new allocation's memory held before its clear: the bind waits for the
 * clear (held up here behind a busy paging ring).
 */
TEST_F(submit, bind_never_exposes_uncleared_memory)
{
	const struct drm_vmgpu_segment *seg = NULL;
	struct vmgpu_sync point = { 0 };
	vmgpu_context *producer;
	union vmgpu_cmd cmd;
	uint8_t *r_cpu, *x_cpu;
	vmgpu_bo *r, *x;
	uint32_t done;
	uint64_t first;

	seg = visible_memory_segment(self->s, BO_SIZE);
	ASSERT_NE(NULL, seg);
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA1, &producer));
	ASSERT_EQ(0, make_mapped_in_aperture(self->dev, self->aperture, VA_BASE + VA_STRIDE,
					     BO_SIZE, &r, (void **)&r_cpu));
	memset(r_cpu, 0, BO_SIZE);
	ASSERT_EQ(0, vmgpu_test_dirty_segment(self->dev, seg->id, self->aperture, 8 * MiB));

	/* The job: copy whatever VA_BASE maps, once the producer is done. */
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &point.syncobj));
	point.point = 1;
	cmd = cmd_nop(300000);
	ASSERT_EQ(0, vmgpu_context_submit(producer, &cmd, 1, NULL, 0, &point, 1, NULL));
	cmd = cmd_transfer(VA_BASE, VA_BASE + VA_STRIDE, BO_SIZE);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &done));
	ASSERT_EQ(0, vmgpu_context_submit(self->ctx, &cmd, 1, &point, 1,
					  &(struct vmgpu_sync){ .syncobj = done }, 1, NULL));

	/* A new allocation on that dirty memory, its clear held up. */
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "1000"));
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, seg->id, self->aperture, BO_SIZE,
						&x, (void **)&x_cpu));
	ASSERT_EQ(0, vmgpu_vm_map(x, 0, VA_BASE, BO_SIZE, 0));

	ASSERT_EQ(0, wait_syncobj(self->fd, done));
	/* Zeros if it ran after the clear, untouched if it faulted. */
	EXPECT_EQ(0, vmgpu_test_nonzero(r_cpu, BO_SIZE, &first))
		TH_LOG("the job read uncleared memory at 0x%llx", (unsigned long long)first);

	drmSyncobjDestroy(self->fd, done);
	drmSyncobjDestroy(self->fd, point.syncobj);
	vmgpu_bo_unref(x);
	vmgpu_bo_unref(r);
	vmgpu_context_unref(producer);
}

/*
 * Eviction of an allocation a queued job still uses waits for that job on
 * the GPU: the ioctl returns at once, and the job's writes travel with the
 * data.
 */
TEST_F(submit, eviction_waits_for_jobs_on_the_gpu)
{
	const struct drm_vmgpu_segment *seg = NULL;
	union vmgpu_cmd cmds[2] = { cmd_nop(500000), cmd_fill(VA_BASE, BO_SIZE, 0xe1c7e1c7) };
	uint32_t done;
	int64_t start;
	uint8_t *cpu;
	vmgpu_bo *a;

	seg = visible_memory_segment(self->s, BO_SIZE);
	ASSERT_NE(NULL, seg);
	ASSERT_EQ(0, make_mapped(self->dev, seg->id, self->aperture, VA_BASE, BO_SIZE,
				 &a, (void **)&cpu));
	ASSERT_EQ(seg->id, segment_of(a));

	ASSERT_EQ(0, submit_signal(self->ctx, self->fd, cmds, 2, &done, NULL));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_evict(a));
	EXPECT_LT(now_ms() - start, 100) TH_LOG("the eviction waited for the job");
	ASSERT_EQ(0, wait_syncobj(self->fd, done));
	/* The CPU view waits for the move: the job's FILL came along. */
	EXPECT_EQ(0, count_not(cpu, BO_SIZE, 0xe1c7e1c7));
	EXPECT_EQ(0, segment_of(a));

	/* The same VA reaches the new backing. */
	cmds[0] = cmd_fill(VA_BASE, BO_SIZE, 0x2e2e2e2e);
	ASSERT_EQ(0, run(self->ctx, self->fd, cmds, 1));
	EXPECT_EQ(0, count_not(cpu, BO_SIZE, 0x2e2e2e2e));
	drmSyncobjDestroy(self->fd, done);
	vmgpu_bo_unref(a);
}

/* Checked at submission: -EINVAL, and nothing of the job runs. */
TEST_F(submit, bad_commands_rejected_whole)
{
	union vmgpu_cmd cmds[2], bad;
	uint8_t *cpu;
	vmgpu_bo *bo;
	int i;

	ASSERT_EQ(0, make_mapped(self->dev, self->aperture, self->aperture,
				 VA_BASE, BO_SIZE, &bo, (void **)&cpu));
	memset(cpu, 0x77, BO_SIZE);
	for (i = 0; i < 7; i++) {
		cmds[0] = cmd_fill(VA_BASE, BO_SIZE, 0xbad0bad0);
		bad = cmd_fill(VA_BASE, 4096, 0);
		switch (i) {
		case 0: /* a paging-only command */
			bad.range.hdr.opcode = VMGPU_OP_DISCARD;
			break;
		case 1: /* a physical address */
			bad.fill.dst.space = VMGPU_SPACE_VRAM;
			break;
		case 2: /* someone else's VM */
			bad.fill.dst.vm = 1;
			break;
		case 3: /* a reserved field */
			bad.fill.reserved[3] = 1;
			break;
		case 4: /* the kernel's fence flags */
			bad = cmd_fence(VA_BASE, 1);
			bad.fence.hdr.flags = VMGPU_FENCE_FLAG_IRQ;
			break;
		case 5: /* an unknown opcode */
			bad.hdr.opcode = VMGPU_OP_COUNT;
			break;
		case 6: /* the header's reserved word */
			bad.hdr.reserved = 1;
			break;
		}
		cmds[1] = bad;
		EXPECT_EQ(-EINVAL, vmgpu_context_submit(self->ctx, cmds, 2, NULL, 0,
							NULL, 0, NULL)) TH_LOG("case %d", i);
	}
	/* A job queued after them has completed: they would have too. */
	cmds[0] = cmd_nop(0);
	ASSERT_EQ(0, run(self->ctx, self->fd, cmds, 1));
	EXPECT_EQ(0, count_not(cpu, BO_SIZE, 0x77777777));
	/* The negative case: the same FILL alone does run. */
	cmds[0] = cmd_fill(VA_BASE, BO_SIZE, 0xbad0bad0);
	ASSERT_EQ(0, run(self->ctx, self->fd, cmds, 1));
	EXPECT_EQ(0, count_not(cpu, BO_SIZE, 0xbad0bad0));
	vmgpu_bo_unref(bo);
}

/*
 * Faults are the faulting context's: its job fails and later submissions
 * are refused, while another process's context keeps working.
 */
static void fault_case(struct __test_metadata *_metadata, FIXTURE_DATA(submit) *self,
		       uint64_t fault_va, uint32_t bind_flags)
{
	vmgpu_device *other_dev;
	vmgpu_context *other;
	uint8_t *cpu, *other_cpu;
	vmgpu_bo *bo, *other_bo;
	union vmgpu_cmd cmds[2];
	uint32_t syncobj;
	uint64_t seqno;

	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->aperture, self->aperture,
						BO_SIZE, &bo, (void **)&cpu));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, VA_BASE, BO_SIZE, bind_flags));
	memset(cpu, 0x11, BO_SIZE);

	/* The neighbour: its own file, so its own VM, on the same engine. */
	ASSERT_EQ(0, vmgpu_device_open(&other_dev));
	ASSERT_EQ(0, vmgpu_context_create(other_dev, DRM_VMGPU_ENGINE_GPU_VA0, &other));
	ASSERT_EQ(0, make_mapped(other_dev, self->aperture, self->aperture, VA_BASE,
				 BO_SIZE, &other_bo, (void **)&other_cpu));

	cmds[0] = cmd_nop(100000);
	cmds[1] = cmd_fill(fault_va, BO_SIZE, 0xdeadbeef);
	ASSERT_EQ(0, submit_signal(self->ctx, self->fd, cmds, 2, &syncobj, &seqno));
	/* Queued behind the faulting job on the same ring. */
	cmds[0] = cmd_fill(VA_BASE, BO_SIZE, 0x0e1e0e1e);
	ASSERT_EQ(0, run(other, vmgpu_device_fd(other_dev), cmds, 1));
	EXPECT_EQ(0, count_not(other_cpu, BO_SIZE, 0x0e1e0e1e));

	ASSERT_EQ(0, wait_syncobj(self->fd, syncobj));
	EXPECT_GE(vmgpu_context_completed(self->ctx), seqno);
	cmds[0] = cmd_nop(0);
	EXPECT_EQ(-ECANCELED, vmgpu_context_submit(self->ctx, cmds, 1, NULL, 0,
						   NULL, 0, NULL));
	/* Nothing of the fault reached memory the VM maps. */
	EXPECT_EQ(0, count_not(cpu, BO_SIZE, 0x11111111));
	/* The neighbour goes on. */
	cmds[0] = cmd_fill(VA_BASE, BO_SIZE, 0x0e2e0e2e);
	ASSERT_EQ(0, run(other, vmgpu_device_fd(other_dev), cmds, 1));
	EXPECT_EQ(0, count_not(other_cpu, BO_SIZE, 0x0e2e0e2e));

	drmSyncobjDestroy(self->fd, syncobj);
	vmgpu_bo_unref(other_bo);
	vmgpu_context_unref(other);
	vmgpu_device_unref(other_dev);
	vmgpu_bo_unref(bo);
}

TEST_F(submit, unmapped_va_faults_own_context)
{
	fault_case(_metadata, self, VA_BASE + VA_STRIDE, 0);
}

TEST_F(submit, read_only_mapping_write_faults)
{
	fault_case(_metadata, self, VA_BASE, DRM_VMGPU_VM_BIND_READ_ONLY);
}

/* The negative case of the two above: the same job, mapped writable, works. */
TEST_F(submit, writable_mapping_does_not_fault)
{
	union vmgpu_cmd cmd = cmd_fill(VA_BASE, BO_SIZE, 0x12345678);
	uint8_t *cpu;
	vmgpu_bo *bo;

	ASSERT_EQ(0, make_mapped(self->dev, self->aperture, self->aperture, VA_BASE,
				 BO_SIZE, &bo, (void **)&cpu));
	ASSERT_EQ(0, run(self->ctx, self->fd, &cmd, 1));
	EXPECT_EQ(0, count_not(cpu, BO_SIZE, 0x12345678));
	cmd = cmd_nop(0);
	EXPECT_EQ(0, vmgpu_context_submit(self->ctx, &cmd, 1, NULL, 0, NULL, 0, NULL));
	vmgpu_bo_unref(bo);
}

/* A job on one engine waits for a timeline point of a job on the other. */
TEST_F(submit, timeline_orders_contexts)
{
	vmgpu_context *second;
	uint8_t *x_cpu, *y_cpu;
	vmgpu_bo *x, *y;
	struct vmgpu_sync point1, point2;
	union vmgpu_cmd cmds[2];
	uint32_t timeline;
	uint64_t value = 0, seqno;

	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA1, &second));
	ASSERT_EQ(0, make_mapped(self->dev, self->aperture, self->aperture, VA_BASE,
				 BO_SIZE, &x, (void **)&x_cpu));
	ASSERT_EQ(0, make_mapped(self->dev, self->aperture, self->aperture,
				 VA_BASE + VA_STRIDE, BO_SIZE, &y, (void **)&y_cpu));
	memset(x_cpu, 0, BO_SIZE);
	memset(y_cpu, 0, BO_SIZE);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &timeline));
	point1 = (struct vmgpu_sync){ .syncobj = timeline, .point = 1 };
	point2 = (struct vmgpu_sync){ .syncobj = timeline, .point = 2 };

	/* Slow producer on engine 0... */
	cmds[0] = cmd_nop(300000);
	cmds[1] = cmd_fill(VA_BASE, BO_SIZE, 0xfeedf00d);
	ASSERT_EQ(0, vmgpu_context_submit(self->ctx, cmds, 2, NULL, 0, &point1, 1, NULL));
	/* ... and a consumer on the idle engine 1 that must wait for it. */
	cmds[0] = cmd_transfer(VA_BASE, VA_BASE + VA_STRIDE, BO_SIZE);
	ASSERT_EQ(0, vmgpu_context_submit(second, cmds, 1, &point1, 1, &point2, 1, &seqno));
	EXPECT_TRUE(vmgpu_context_busy(second, seqno));

	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &timeline, &(uint64_t){ 2 }, 1,
					    INT64_MAX, 0, NULL));
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &timeline, &value, 1));
	EXPECT_EQ(2, value);
	EXPECT_FALSE(vmgpu_context_busy(second, seqno));
	EXPECT_EQ(0, count_not(y_cpu, BO_SIZE, 0xfeedf00d));

	drmSyncobjDestroy(self->fd, timeline);
	vmgpu_bo_unref(x);
	vmgpu_bo_unref(y);
	vmgpu_context_unref(second);
}

struct waiter {
	int fd;
	uint32_t syncobj;
	int ret;
	int64_t woke_ms;
};

static void *wait_for_submit(void *arg)
{
	struct waiter *w = arg;
	uint64_t point = 5;

	w->ret = drmSyncobjTimelineWait(w->fd, &w->syncobj, &point, 1, INT64_MAX,
					DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL) ? -errno : 0;
	w->woke_ms = now_ms();
	return NULL;
}

/* Wait-before-signal: a waiter for a point nobody submitted yet. */
TEST_F(submit, wait_before_submit)
{
	struct waiter w = { .fd = self->fd };
	union vmgpu_cmd cmd = cmd_nop(200000);
	struct vmgpu_sync point;
	int64_t submitted;
	pthread_t thread;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &w.syncobj));
	ASSERT_EQ(0, pthread_create(&thread, NULL, wait_for_submit, &w));
	usleep(100000);
	point = (struct vmgpu_sync){ .syncobj = w.syncobj, .point = 5 };
	ASSERT_EQ(0, vmgpu_context_submit(self->ctx, &cmd, 1, NULL, 0, &point, 1, NULL));
	submitted = now_ms();
	pthread_join(thread, NULL);
	EXPECT_EQ(0, w.ret);
	/* It woke for the job's fence, after the job's 200 ms. */
	EXPECT_GE(w.woke_ms - submitted, 150);
	drmSyncobjDestroy(self->fd, w.syncobj);
}

/* The seqno page agrees with the fence, and nobody can write it. */
TEST_F(submit, seqno_page)
{
	union vmgpu_cmd cmd = cmd_nop(300000);
	struct drm_vmgpu_ctx_create args = { 0 };
	uint32_t syncobj;
	uint64_t seqno, first;
	void *page;

	ASSERT_EQ(0, submit_signal(self->ctx, self->fd, &cmd, 1, &syncobj, &first));
	cmd = cmd_nop(0);
	ASSERT_EQ(0, vmgpu_context_submit(self->ctx, &cmd, 1, NULL, 0, NULL, 0, &seqno));
	EXPECT_EQ(first + 1, seqno);
	EXPECT_TRUE(vmgpu_context_busy(self->ctx, first));
	ASSERT_EQ(0, wait_syncobj(self->fd, syncobj));
	EXPECT_GE(vmgpu_context_completed(self->ctx), first);
	EXPECT_FALSE(vmgpu_context_busy(self->ctx, first));
	drmSyncobjDestroy(self->fd, syncobj);

	ASSERT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_CTX_CREATE, &args));
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		    args.seqno_offset);
	EXPECT_EQ(MAP_FAILED, page);
	page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, args.seqno_offset);
	ASSERT_NE(MAP_FAILED, page);
	EXPECT_NE(0, mprotect(page, 4096, PROT_READ | PROT_WRITE));
	EXPECT_EQ(0, *(volatile uint64_t *)page);
	munmap(page, 4096);
}

/* GEM_WAIT: WasStillDrawing at once, a timeout, and a real wait. */
TEST_F(submit, gem_wait)
{
	union vmgpu_cmd cmds[2] = { cmd_nop(300000), cmd_fill(VA_BASE, BO_SIZE, 7) };
	int64_t start;
	uint8_t *cpu;
	vmgpu_bo *bo;

	ASSERT_EQ(0, make_mapped(self->dev, self->aperture, self->aperture, VA_BASE,
				 BO_SIZE, &bo, (void **)&cpu));
	/* Its clear is done. */
	ASSERT_EQ(0, vmgpu_bo_wait(bo, WAIT_NS, 0));
	ASSERT_EQ(0, vmgpu_bo_wait(bo, 0, DRM_VMGPU_GEM_WAIT_NO_WAIT));
	ASSERT_EQ(0, vmgpu_context_submit(self->ctx, cmds, 2, NULL, 0, NULL, 0, NULL));
	start = now_ms();
	EXPECT_EQ(-EBUSY, vmgpu_bo_wait(bo, 0, DRM_VMGPU_GEM_WAIT_NO_WAIT));
	EXPECT_LT(now_ms() - start, 50);
	EXPECT_EQ(-ETIME, vmgpu_bo_wait(bo, 10000000, 0));
	EXPECT_EQ(0, vmgpu_bo_wait(bo, WAIT_NS, 0));
	EXPECT_EQ(0, count_not(cpu, BO_SIZE, 7));
	EXPECT_EQ(0, vmgpu_bo_wait(bo, 0, DRM_VMGPU_GEM_WAIT_NO_WAIT));
	vmgpu_bo_unref(bo);
}

/* A GPU WAIT on memory another context's FENCE writes. */
TEST_F(submit, gpu_wait_on_monitored_fence)
{
	vmgpu_context *second;
	uint8_t *cpu, *flag_cpu;
	vmgpu_bo *bo, *flag;
	union vmgpu_cmd cmds[2];
	uint64_t seqno;

	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA1, &second));
	ASSERT_EQ(0, make_mapped(self->dev, self->aperture, self->aperture, VA_BASE,
				 BO_SIZE, &bo, (void **)&cpu));
	ASSERT_EQ(0, make_mapped(self->dev, self->aperture, self->aperture,
				 VA_BASE + VA_STRIDE, 4096, &flag, (void **)&flag_cpu));
	memset(cpu, 0, BO_SIZE);
	memset(flag_cpu, 0, 4096);

	cmds[0] = cmd_wait(VA_BASE + VA_STRIDE, 3);
	cmds[1] = cmd_fill(VA_BASE, BO_SIZE, 0x3a3a3a3a);
	ASSERT_EQ(0, vmgpu_context_submit(self->ctx, cmds, 2, NULL, 0, NULL, 0, &seqno));
	usleep(200000);
	/* Not yet: the value is below the target. */
	EXPECT_TRUE(vmgpu_context_busy(self->ctx, seqno));
	EXPECT_EQ(0, count_not(cpu, BO_SIZE, 0));
	cmds[0] = cmd_fence(VA_BASE + VA_STRIDE, 2);
	ASSERT_EQ(0, run(second, self->fd, cmds, 1));
	usleep(200000);
	EXPECT_TRUE(vmgpu_context_busy(self->ctx, seqno));
	cmds[0] = cmd_fence(VA_BASE + VA_STRIDE, 3);
	ASSERT_EQ(0, run(second, self->fd, cmds, 1));
	ASSERT_EQ(0, vmgpu_bo_wait(bo, WAIT_NS, 0));
	EXPECT_FALSE(vmgpu_context_busy(self->ctx, seqno));
	EXPECT_EQ(0, count_not(cpu, BO_SIZE, 0x3a3a3a3a));

	vmgpu_bo_unref(flag);
	vmgpu_bo_unref(bo);
	vmgpu_context_unref(second);
}

/*
 * A WAIT that is never satisfied hangs its engine: the job timeout resets
 * that engine, the hung context is guilty, a neighbour queued behind it
 * runs after the reset and the other engine is never held up.
 */
TEST_F(submit, hang_is_reset)
{
	vmgpu_context *behind, *other_engine;
	uint8_t *cpu, *flag_cpu;
	vmgpu_bo *bo, *flag;
	union vmgpu_cmd cmd;
	uint32_t hung, queued;
	int64_t start, other_done;

	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &behind));
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA1,
					  &other_engine));
	ASSERT_EQ(0, make_mapped(self->dev, self->aperture, self->aperture, VA_BASE,
				 BO_SIZE, &bo, (void **)&cpu));
	ASSERT_EQ(0, make_mapped(self->dev, self->aperture, self->aperture,
				 VA_BASE + VA_STRIDE, 4096, &flag, (void **)&flag_cpu));
	memset(flag_cpu, 0, 4096);
	memset(cpu, 0, BO_SIZE);

	start = now_ms();
	cmd = cmd_wait(VA_BASE + VA_STRIDE, 1);
	ASSERT_EQ(0, submit_signal(self->ctx, self->fd, &cmd, 1, &hung, NULL));
	cmd = cmd_fill(VA_BASE, BO_SIZE / 2, 0x5a5a5a5a);
	ASSERT_EQ(0, submit_signal(behind, self->fd, &cmd, 1, &queued, NULL));
	cmd = cmd_fill(VA_BASE + BO_SIZE / 2, BO_SIZE / 2, 0x6b6b6b6b);
	ASSERT_EQ(0, run(other_engine, self->fd, &cmd, 1));
	other_done = now_ms();
	EXPECT_LT(other_done - start, HANG_TIMEOUT_MS / 2);
	EXPECT_EQ(0, count_not(cpu + BO_SIZE / 2, BO_SIZE / 2, 0x6b6b6b6b));

	ASSERT_EQ(0, wait_syncobj(self->fd, queued));
	EXPECT_GE(now_ms() - start, HANG_TIMEOUT_MS - 100);
	EXPECT_LT(now_ms() - start, HANG_TIMEOUT_MS + HANG_SLACK_MS);
	EXPECT_EQ(0, count_not(cpu, BO_SIZE / 2, 0x5a5a5a5a));
	ASSERT_EQ(0, wait_syncobj(self->fd, hung));
	cmd = cmd_nop(0);
	EXPECT_EQ(-ECANCELED, vmgpu_context_submit(self->ctx, &cmd, 1, NULL, 0, NULL, 0,
						   NULL));
	EXPECT_EQ(0, vmgpu_context_submit(behind, &cmd, 1, NULL, 0, NULL, 0, NULL));

	drmSyncobjDestroy(self->fd, hung);
	drmSyncobjDestroy(self->fd, queued);
	vmgpu_bo_unref(flag);
	vmgpu_bo_unref(bo);
	vmgpu_context_unref(behind);
	vmgpu_context_unref(other_engine);
}

#define MANY_FILES	24

/*
 * More GPU VA spaces than the device has VMs (15 for users): each file
 * gets one while it has work in flight, and all their jobs run, with
 * their own data, when all of them are queued at once.
 */
TEST_F(submit, more_spaces_than_device_vms)
{
	vmgpu_device *devs[MANY_FILES];
	vmgpu_context *ctxs[MANY_FILES];
	uint32_t done[MANY_FILES];
	uint8_t *cpus[MANY_FILES];
	vmgpu_bo *bos[MANY_FILES];
	union vmgpu_cmd cmds[2];
	int i;

	for (i = 0; i < MANY_FILES; i++) {
		ASSERT_EQ(0, vmgpu_device_open(&devs[i]));
		ASSERT_EQ(0, vmgpu_context_create(devs[i], i % 2 ? DRM_VMGPU_ENGINE_GPU_VA1 :
						  DRM_VMGPU_ENGINE_GPU_VA0, &ctxs[i]))
			TH_LOG("file %d", i);
		ASSERT_EQ(0, make_mapped_in_aperture(devs[i], self->aperture, VA_BASE,
						     4096, &bos[i], (void **)&cpus[i]));
		memset(cpus[i], 0, 4096);
	}
	/* All queued at once: later files wait for earlier files' slots. */
	for (i = 0; i < MANY_FILES; i++) {
		cmds[0] = cmd_nop(20000);
		cmds[1] = cmd_fill(VA_BASE, 4096, 0x51070000 + i);
		ASSERT_EQ(0, submit_signal(ctxs[i], vmgpu_device_fd(devs[i]), cmds, 2,
					   &done[i], NULL)) TH_LOG("file %d", i);
	}
	for (i = 0; i < MANY_FILES; i++) {
		ASSERT_EQ(0, wait_syncobj(vmgpu_device_fd(devs[i]), done[i]));
		EXPECT_EQ(0, count_not(cpus[i], 4096, 0x51070000 + i)) TH_LOG("file %d", i);
	}
	for (i = 0; i < MANY_FILES; i++) {
		drmSyncobjDestroy(vmgpu_device_fd(devs[i]), done[i]);
		vmgpu_bo_unref(bos[i]);
		vmgpu_context_unref(ctxs[i]);
		vmgpu_device_unref(devs[i]);
	}
}

TEST_HARNESS_MAIN
