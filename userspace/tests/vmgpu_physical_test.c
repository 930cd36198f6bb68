// SPDX-License-Identifier: MIT
/*
 * The physical engine (seed: engines in physical addressing mode): jobs
 * name their allocations in an allocation list and their addresses in
 * patch locations; the kernel makes the allocations resident and patches
 * their physical references in. Only AccessedPhysically allocations may
 * be listed, and a job that breaks a rule is refused whole.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define PHYS_SIZE		(64 * 1024ull)

FIXTURE(physical) {
	vmgpu_device *dev;
	int fd;
	vmgpu_context *ctx;
	uint32_t aperture;
	uint32_t segment;	/* a memory segment the CPU sees enough of */
	bool fully_visible;	/* ... all of it */
	uint32_t set;		/* that segment and the aperture */
};

FIXTURE_SETUP(physical)
{
	struct drm_vmgpu_segment seg;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	self->fd = vmgpu_device_fd(self->dev);
	ASSERT_EQ(0, find_segments(self->dev, 16 * PHYS_SIZE, &self->aperture, &seg));
	self->segment = seg.id;
	self->fully_visible = seg.id && seg.cpu_visible_size == seg.size;
	ASSERT_NE(0, self->aperture);
	ASSERT_NE(0, self->segment);
	self->set = 1u << self->segment | 1u << self->aperture;
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_PHYSICAL,
					  &self->ctx));
}

FIXTURE_TEARDOWN(physical)
{
	vmgpu_context_unref(self->ctx);
	vmgpu_device_unref(self->dev);
}

static union vmgpu_cmd phys_fill(uint64_t size, uint32_t pattern)
{
	union vmgpu_cmd c = { 0 };

	c.fill.hdr.opcode = VMGPU_OP_FILL;
	c.fill.size = size;
	c.fill.pattern = pattern;
	return c;
}

static union vmgpu_cmd phys_transfer(uint64_t size)
{
	union vmgpu_cmd c = { 0 };

	c.transfer.hdr.opcode = VMGPU_OP_TRANSFER;
	c.transfer.size = size;
	return c;
}

static struct drm_vmgpu_patch patch(uint32_t cmd, uint32_t which, uint32_t alloc,
				    uint64_t offset)
{
	return (struct drm_vmgpu_patch){ .cmd = cmd, .which = which, .alloc = alloc,
					 .offset = offset };
}

static int run_physical(FIXTURE_DATA(physical) *self, const union vmgpu_cmd *cmds,
			uint32_t n, vmgpu_bo *const *allocs, uint32_t num_allocs,
			const struct drm_vmgpu_patch *patches, uint32_t num_patches)
{
	struct vmgpu_sync out;
	uint32_t syncobj;
	int ret;

	if (drmSyncobjCreate(self->fd, 0, &syncobj))
		return -errno;
	out = (struct vmgpu_sync){ .syncobj = syncobj };
	ret = vmgpu_context_submit_physical(self->ctx, cmds, n, allocs, num_allocs,
					    patches, num_patches, &out, 1, NULL);
	if (!ret)
		ret = wait_syncobj(self->fd, syncobj);
	drmSyncobjDestroy(self->fd, syncobj);
	return ret;
}

/* Patched references reach a memory segment and the aperture segment. */
TEST_F(physical, patched_references_reach_both_kinds_of_segment)
{
	union vmgpu_cmd cmds[2] = { phys_fill(PHYS_SIZE, 0x9a7c4ed0),
				    phys_transfer(PHYS_SIZE / 2) };
	struct drm_vmgpu_patch patches[3] = {
		patch(0, DRM_VMGPU_PATCH_FIRST, 0, 0),
		patch(1, DRM_VMGPU_PATCH_FIRST, 0, PHYS_SIZE / 4),
		patch(1, DRM_VMGPU_PATCH_SECOND, 1, PHYS_SIZE / 2),
	};
	uint8_t *x_cpu, *y_cpu;
	vmgpu_bo *list[2];

	ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, PHYS_SIZE,
					      DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, self->set,
					      self->segment, &list[0], (void **)&x_cpu));
	ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, PHYS_SIZE,
					      DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
					      1u << self->aperture, self->aperture, &list[1],
					      (void **)&y_cpu));
	ASSERT_EQ(self->segment, segment_of(list[0]));
	ASSERT_EQ(self->aperture, segment_of(list[1]));
	memset(y_cpu, 0, PHYS_SIZE);

	ASSERT_EQ(0, run_physical(self, cmds, 2, list, 2, patches, 3));
	EXPECT_EQ(0, count_not(x_cpu, PHYS_SIZE, 0x9a7c4ed0));
	EXPECT_EQ(0, count_not(y_cpu, PHYS_SIZE / 2, 0));
	EXPECT_EQ(0, count_not(y_cpu + PHYS_SIZE / 2, PHYS_SIZE / 2, 0x9a7c4ed0));
	vmgpu_bo_unref(list[0]);
	vmgpu_bo_unref(list[1]);
}

/* Evicted out of the device's reach before the job: brought back, patched. */
TEST_F(physical, evicted_allocation_made_resident_and_patched)
{
	union vmgpu_cmd cmd = phys_transfer(PHYS_SIZE);
	struct drm_vmgpu_patch patches[2] = {
		patch(0, DRM_VMGPU_PATCH_FIRST, 0, 0),
		patch(0, DRM_VMGPU_PATCH_SECOND, 1, 0),
	};
	struct drm_vmgpu_gem_info info;
	uint8_t *x_cpu, *y_cpu;
	vmgpu_bo *list[2];
	uint64_t first;

	/*
	 * Only the memory segment in its set: Evict leaves the GPU's reach.
	 * A segment the BAR does not cover wholly needs the aperture in the
	 * set of a CPU-accessible allocation: Evict then maps it there.
	 */
	ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, PHYS_SIZE,
					      DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
					      self->fully_visible ? 1u << self->segment : self->set,
					      self->segment, &list[0], (void **)&x_cpu));
	ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, PHYS_SIZE,
					      DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
					      1u << self->aperture, self->aperture, &list[1],
					      (void **)&y_cpu));
	vmgpu_test_fill(x_cpu, PHYS_SIZE, 0xe71c7ed);
	ASSERT_EQ(0, vmgpu_bo_evict(list[0]));
	ASSERT_EQ(0, vmgpu_bo_info_flags(list[0], DRM_VMGPU_GEM_INFO_WAIT, &info));
	if (self->fully_visible) {
		ASSERT_EQ(0, info.residency & DRM_VMGPU_RESIDENCY_RESIDENT);
	} else {
		ASSERT_EQ(self->aperture, info.segment_id);
	}

	ASSERT_EQ(0, run_physical(self, &cmd, 1, list, 2, patches, 2));
	EXPECT_EQ(0, vmgpu_test_check(y_cpu, PHYS_SIZE, 0xe71c7ed, &first))
		TH_LOG("copy wrong from 0x%llx", (unsigned long long)first);
	ASSERT_EQ(0, vmgpu_bo_info_flags(list[0], DRM_VMGPU_GEM_INFO_WAIT, &info));
	EXPECT_EQ(self->fully_visible ? self->segment : self->aperture, info.segment_id);
	EXPECT_NE(0, info.residency & DRM_VMGPU_RESIDENCY_PHYSICAL);
	vmgpu_bo_unref(list[0]);
	vmgpu_bo_unref(list[1]);
}

/*
 * Refused whole, nothing runs: an allocation that is not AccessedPhysically
 * on the list, an address the user wrote, an unpatched address, a patch
 * past the allocation, a second patch of one address.
 */
TEST_F(physical, bad_submissions_refused_whole)
{
	union vmgpu_cmd cmds[2] = { phys_fill(PHYS_SIZE, 0xbad), phys_fill(4096, 0xbad) };
	struct drm_vmgpu_patch patches[3];
	uint8_t *x_cpu, *z_cpu;
	vmgpu_bo *list[2];
	int i;

	ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, PHYS_SIZE,
					      DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, self->set,
					      self->segment, &list[0], (void **)&x_cpu));
	ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, PHYS_SIZE, 0, self->set, self->segment,
					      &list[1], (void **)&z_cpu));
	memset(x_cpu, 0x3c, PHYS_SIZE);

	for (i = 0; i < 6; i++) {
		uint32_t num_allocs = 1, num_patches = 2;

		cmds[1] = phys_fill(4096, 0xbad);
		patches[0] = patch(0, DRM_VMGPU_PATCH_FIRST, 0, 0);
		patches[1] = patch(1, DRM_VMGPU_PATCH_FIRST, 0, 0);
		switch (i) {
		case 0: /* not AccessedPhysically, even if only listed */
			num_allocs = 2;
			break;
		case 1: /* a physical address of the user's own */
			cmds[1].fill.dst.addr = 0x1000;
			break;
		case 2: /* an address nobody patches */
			num_patches = 1;
			break;
		case 3: /* past the allocation's end */
			patches[1].offset = PHYS_SIZE - 4096 + 4;
			break;
		case 4: /* one address patched twice */
			patches[2] = patches[1];
			num_patches = 3;
			break;
		case 5: /* a FILL has one address */
			patches[1].which = 2;
			break;
		}
		EXPECT_EQ(-EINVAL, vmgpu_context_submit_physical(self->ctx, cmds, 2, list,
								 num_allocs, patches,
								 num_patches, NULL, 0, NULL))
			TH_LOG("case %d", i);
	}
	/* A later job completed: the refused ones would have too. */
	cmds[0] = cmd_nop(0);
	ASSERT_EQ(0, run_physical(self, cmds, 1, NULL, 0, NULL, 0));
	EXPECT_EQ(0, count_not(x_cpu, PHYS_SIZE, 0x3c3c3c3c));
	/* The negative case: the same job, well formed, runs. */
	cmds[0] = phys_fill(PHYS_SIZE, 0xbad);
	patches[0] = patch(0, DRM_VMGPU_PATCH_FIRST, 0, 0);
	ASSERT_EQ(0, run_physical(self, cmds, 1, list, 1, patches, 1));
	EXPECT_EQ(0, count_not(x_cpu, PHYS_SIZE, 0xbad));
	vmgpu_bo_unref(list[0]);
	vmgpu_bo_unref(list[1]);
}

/* An allocation list on a GPU-VA engine means nothing: refused. */
TEST_F(physical, gpu_va_engine_takes_no_list)
{
	union vmgpu_cmd cmd = cmd_nop(0);
	struct drm_vmgpu_patch p = patch(0, 0, 0, 0);
	vmgpu_context *gpuva;
	uint8_t *x_cpu;
	vmgpu_bo *x;

	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &gpuva));
	ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, PHYS_SIZE,
					      DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, self->set,
					      self->segment, &x, (void **)&x_cpu));
	EXPECT_EQ(-EINVAL, vmgpu_context_submit_physical(gpuva, &cmd, 1, &x, 1, &p, 0,
							 NULL, 0, NULL));
	EXPECT_EQ(0, vmgpu_context_submit_physical(gpuva, &cmd, 1, NULL, 0, NULL, 0,
						   NULL, 0, NULL));
	vmgpu_bo_unref(x);
	vmgpu_context_unref(gpuva);
}

TEST_HARNESS_MAIN
