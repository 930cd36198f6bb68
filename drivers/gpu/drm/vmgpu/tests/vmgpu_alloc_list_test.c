// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: the allocation-list checker of the physical engine. A submission
 * passes only if every address of every command is zero and named by
 * exactly one patch whose bytes lie inside its allocation; each way out
 * (an overrun, a bad index, a second patch, a missing one) fails it.
 * Included by vmgpu_alloc_list.c.
 */

#include <kunit/test.h>
#include <linux/sizes.h>

#define ALLOC_TEST_OBJS	2

struct alloc_list_test {
	struct drm_gem_object objs[ALLOC_TEST_OBJS];
	struct drm_gem_object *obj_ptrs[ALLOC_TEST_OBJS];
	struct drm_vmgpu_patch patches[4];
	struct vmgpu_alloc_list list;
	struct drm_vmgpu_exec args;
	struct vmgpu_job *job;
};

/*
 * Two allocations (64 KiB, 4 KiB) and a job of two commands: a FILL of
 * 4 KiB and a TRANSFER of 4 KiB, their three addresses zero, patched
 * FILL -> object 0 at 0, TRANSFER src -> object 0 at 60 KiB, TRANSFER dst
 * -> object 1 at 0: a valid submission each case then breaks.
 */
static struct alloc_list_test *alloc_test_init(struct kunit *test)
{
	struct alloc_list_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct vmgpu_job *job;

	KUNIT_ASSERT_NOT_NULL(test, t);
	job = kunit_kzalloc(test, struct_size(job, cmds, 2), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, job);
	t->objs[0].size = SZ_64K;
	t->objs[1].size = SZ_4K;
	t->obj_ptrs[0] = &t->objs[0];
	t->obj_ptrs[1] = &t->objs[1];
	t->list.objs = t->obj_ptrs;
	t->list.num_objs = ALLOC_TEST_OBJS;
	t->list.patches = t->patches;
	job->num_cmds = 2;
	job->cmds[0].fill.hdr.opcode = cpu_to_le16(VMGPU_OP_FILL);
	job->cmds[0].fill.size = cpu_to_le64(SZ_4K);
	job->cmds[1].transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
	job->cmds[1].transfer.size = cpu_to_le64(SZ_4K);
	t->job = job;
	t->patches[0] = (struct drm_vmgpu_patch){ .cmd = 0, .which = 0, .alloc = 0 };
	t->patches[1] = (struct drm_vmgpu_patch){ .cmd = 1, .which = 0, .alloc = 0,
						  .offset = SZ_64K - SZ_4K };
	t->patches[2] = (struct drm_vmgpu_patch){ .cmd = 1, .which = 1, .alloc = 1 };
	t->args.num_patches = 3;
	return t;
}

static int alloc_test_check(struct alloc_list_test *t)
{
	return vmgpu_alloc_list_check(&t->list, t->job, &t->args);
}

static void alloc_list_accepts_exact_patching(struct kunit *test)
{
	struct alloc_list_test *t = alloc_test_init(test);

	/* Both patches of the TRANSFER end on their allocation's last byte. */
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), 0);
}

/* Compression state is a GPU VA space's (DOC: compression owners). */
static void alloc_list_refuses_compression(struct kunit *test)
{
	struct alloc_list_test *t = alloc_test_init(test);

	t->job->cmds[0].range.hdr.opcode = cpu_to_le16(VMGPU_OP_COMPRESS);
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	t->job->cmds[0].range.hdr.opcode = cpu_to_le16(VMGPU_OP_DECOMPRESS);
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
}

static void alloc_list_refuses_overruns(struct kunit *test)
{
	struct alloc_list_test *t = alloc_test_init(test);

	t->patches[1].offset = SZ_64K - SZ_4K + 4;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	t = alloc_test_init(test);
	t->patches[2].offset = 4;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	/* The command's size, not the patch's, makes it overrun. */
	t = alloc_test_init(test);
	t->job->cmds[1].transfer.size = cpu_to_le64(SZ_4K + 4);
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	/* An offset whose end wraps past 2^64. */
	t = alloc_test_init(test);
	t->patches[0].offset = U64_MAX - 16;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
}

static void alloc_list_refuses_bad_indices(struct kunit *test)
{
	struct alloc_list_test *t = alloc_test_init(test);

	t->patches[0].alloc = ALLOC_TEST_OBJS;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	t = alloc_test_init(test);
	t->patches[0].cmd = 2;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	/* A FILL has one address: which = 1 names none. */
	t = alloc_test_init(test);
	t->patches[0].which = 1;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	t = alloc_test_init(test);
	t->patches[0].pad = 1;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
}

static void alloc_list_refuses_unpatched_and_doubles(struct kunit *test)
{
	struct alloc_list_test *t = alloc_test_init(test);

	/* One address left unpatched. */
	t->args.num_patches = 2;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	/* One address patched twice, another not at all. */
	t = alloc_test_init(test);
	t->patches[2] = t->patches[1];
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	/* The same address patched twice on top of the full set. */
	t = alloc_test_init(test);
	t->patches[3] = t->patches[0];
	t->args.num_patches = 4;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	/* An address the user filled in instead of leaving to a patch. */
	t = alloc_test_init(test);
	t->job->cmds[0].fill.dst.addr = cpu_to_le64(SZ_4K);
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
	/* A command no user job may contain. */
	t = alloc_test_init(test);
	t->job->cmds[0].hdr.opcode = cpu_to_le16(VMGPU_OP_SET_VM);
	t->patches[0] = t->patches[2];
	t->args.num_patches = 2;
	KUNIT_EXPECT_EQ(test, alloc_test_check(t), -EINVAL);
}

static struct kunit_case vmgpu_alloc_list_cases[] = {
	KUNIT_CASE(alloc_list_accepts_exact_patching),
	KUNIT_CASE(alloc_list_refuses_compression),
	KUNIT_CASE(alloc_list_refuses_overruns),
	KUNIT_CASE(alloc_list_refuses_bad_indices),
	KUNIT_CASE(alloc_list_refuses_unpatched_and_doubles),
	{}
};

static struct kunit_suite vmgpu_alloc_list_suite = {
	.name = "vmgpu_alloc_list",
	.test_cases = vmgpu_alloc_list_cases,
};

kunit_test_suite(vmgpu_alloc_list_suite);
