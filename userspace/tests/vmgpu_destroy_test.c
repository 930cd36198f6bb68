// SPDX-License-Identifier: MIT
/*
 * Deferred destruction and AssumeNotInUse (seed: destruction is
 * asynchronous). Destroying an allocation a queued job still uses never
 * blocks; by default the job still reaches it and the memory returns to
 * the segment after the job; with AssumeNotInUse the memory returns at
 * once and a job that did use it faults, never touching the memory's next
 * owner.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define MiB			(1ull << 20)
#define DESTROY_SIZE		MiB
#define VA_A			0x200000000ull
#define VA_B			0x300000000ull
#define JOB_DELAY_US		500000
/* A destroy that returns later than this waited for the job. */
#define DESTROY_MAX_MS		50

FIXTURE(destroy) {
	vmgpu_device *dev;
	int fd;
	vmgpu_context *ctx;
	uint32_t aperture;
	uint32_t segment;	/* a memory segment the CPU sees enough of */
};

FIXTURE_SETUP(destroy)
{
	struct drm_vmgpu_segment seg;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	self->fd = vmgpu_device_fd(self->dev);
	ASSERT_EQ(0, find_segments(self->dev, 4 * DESTROY_SIZE, &self->aperture, &seg));
	self->segment = seg.id;
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

static uint64_t used(FIXTURE_DATA(destroy) *self)
{
	uint64_t bytes = 0;

	vmgpu_test_segment_used(self->dev, self->segment, &bytes);
	return bytes;
}

/* Wait up to a second for the segment's usage to come down to target. */
static uint64_t used_drops_to(FIXTURE_DATA(destroy) *self, uint64_t target)
{
	int i;

	for (i = 0; i < 100 && used(self) > target; i++)
		usleep(10000);
	return used(self);
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

	ASSERT_EQ(0, submit_signal(self->ctx, self->fd, cmds, 3, &syncobj, NULL));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_destroy(a, 0));
	EXPECT_LT(now_ms() - start, DESTROY_MAX_MS);
	/* The job is still to use it: the memory is still the allocation's. */
	EXPECT_EQ(before, used(self));

	ASSERT_EQ(0, wait_syncobj(self->fd, syncobj));
	/* The FILL after the destroy reached it, and the copy read it back. */
	EXPECT_EQ(0, count_not(b_cpu, DESTROY_SIZE, 0x0defe44e));
	EXPECT_LE(used_drops_to(self, before - DESTROY_SIZE), before - DESTROY_SIZE);
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
	vmgpu_device *neighbour;
	uint8_t *a_cpu, *n_cpu;
	vmgpu_bo *a, *n;
	uint64_t before, first;
	uint32_t syncobj;
	int64_t start;

	ASSERT_EQ(0, make_mapped(self->dev, self->segment, self->aperture, VA_A,
				 DESTROY_SIZE, &a, (void **)&a_cpu));
	ASSERT_EQ(self->segment, segment_of(a));
	/* Its clear is done: only the job can hold the memory. */
	ASSERT_EQ(0, vmgpu_bo_wait(a, WAIT_NS, 0));
	before = used(self);

	/* The job does use it: AssumeNotInUse is a lie here. */
	ASSERT_EQ(0, submit_signal(self->ctx, self->fd, cmds, 2, &syncobj, NULL));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_destroy(a, DRM_VMGPU_GEM_DESTROY_ASSUME_NOT_IN_USE));
	EXPECT_LT(now_ms() - start, DESTROY_MAX_MS);
	EXPECT_LE(used(self), before - DESTROY_SIZE);

	/* Another process gets the memory at once and fills it. */
	ASSERT_EQ(0, vmgpu_device_open(&neighbour));
	ASSERT_EQ(0, vmgpu_test_create_mappable(neighbour, self->segment, self->aperture,
						DESTROY_SIZE, &n, (void **)&n_cpu));
	ASSERT_EQ(self->segment, segment_of(n));
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
	vmgpu_bo_unref(n);
	vmgpu_device_unref(neighbour);
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
