// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: what a GPU-VA job may contain. Each allowed command passes and
 * gets the submitter's VM; each way out of the process's VA space or into
 * the kernel's commands is refused. Included by vmgpu_exec.c.
 */

#include <kunit/test.h>
#include <linux/sizes.h>

#define EXEC_TEST_VM	5

static union vmgpu_cmd exec_test_fill(void)
{
	union vmgpu_cmd cmd = {};

	cmd.fill.hdr.opcode = cpu_to_le16(VMGPU_OP_FILL);
	cmd.fill.dst.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	cmd.fill.dst.addr = cpu_to_le64(0x10000);
	cmd.fill.size = cpu_to_le64(4096);
	return cmd;
}

static void exec_allows_user_commands(struct kunit *test)
{
	union vmgpu_cmd cmd = exec_test_fill();

	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.fill.dst.vm), EXEC_TEST_VM);

	cmd = (union vmgpu_cmd){};
	cmd.transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
	cmd.transfer.hdr.flags = cpu_to_le16(VMGPU_TRANSFER_FLAG_SWIZZLE);
	cmd.transfer.src.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	cmd.transfer.dst.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.transfer.src.vm), EXEC_TEST_VM);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.transfer.dst.vm), EXEC_TEST_VM);

	cmd = (union vmgpu_cmd){};
	cmd.wait.hdr.opcode = cpu_to_le16(VMGPU_OP_WAIT);
	cmd.wait.addr.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.wait.addr.vm), EXEC_TEST_VM);

	cmd = (union vmgpu_cmd){};
	cmd.nop.delay_us = cpu_to_le32(VMGPU_NOP_MAX_DELAY_US);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), 0);

	/* Device-only state on the job's own pages (allocation notification). */
	cmd = (union vmgpu_cmd){};
	cmd.range.hdr.opcode = cpu_to_le16(VMGPU_OP_COMPRESS);
	cmd.range.addr.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	cmd.range.size = cpu_to_le64(SZ_64K);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cmd.range.addr.vm), EXEC_TEST_VM);
	cmd.range.addr.vm = 0;
	cmd.range.hdr.opcode = cpu_to_le16(VMGPU_OP_DECOMPRESS);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), 0);
	cmd.range.addr.vm = 0;
	cmd.range.hdr.flags = cpu_to_le16(1);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), -EINVAL);
	cmd.range.hdr.flags = 0;
	cmd.range.reserved[3] = cpu_to_le64(1);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), -EINVAL);
}

static void exec_refuses_escapes(struct kunit *test)
{
	static const u16 privileged[] = {
		VMGPU_OP_DISCARD, VMGPU_OP_NOTIFY, VMGPU_OP_CACHE_FLUSH,
		VMGPU_OP_COUNT,
	};
	union vmgpu_cmd cmd;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(privileged); i++) {
		cmd = exec_test_fill();
		cmd.hdr.opcode = cpu_to_le16(privileged[i]);
		KUNIT_EXPECT_EQ_MSG(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM),
				    -EINVAL, "opcode %u", privileged[i]);
	}
	for (i = VMGPU_SPACE_VRAM; i < VMGPU_SPACE_VIRTUAL; i++) {
		cmd = exec_test_fill();
		cmd.fill.dst.space = cpu_to_le32(i);
		KUNIT_EXPECT_EQ_MSG(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM),
				    -EINVAL, "space %u", i);
	}
	cmd = exec_test_fill();
	cmd.fill.dst.vm = cpu_to_le32(1);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), -EINVAL);
	cmd = exec_test_fill();
	cmd.hdr.reserved = cpu_to_le32(1);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), -EINVAL);
	cmd = exec_test_fill();
	cmd.fill.reserved[6] = cpu_to_le32(1);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), -EINVAL);

	/* The kernel's own fence flags. */
	cmd = (union vmgpu_cmd){};
	cmd.fence.hdr.opcode = cpu_to_le16(VMGPU_OP_FENCE);
	cmd.fence.dst.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), 0);
	cmd.fence.dst.vm = 0;
	cmd.fence.hdr.flags = cpu_to_le16(VMGPU_FENCE_FLAG_RING);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), -EINVAL);
	cmd.fence.hdr.flags = cpu_to_le16(VMGPU_FENCE_FLAG_IRQ);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), -EINVAL);

	/* Both swizzle directions at once mean nothing. */
	cmd = (union vmgpu_cmd){};
	cmd.transfer.hdr.opcode = cpu_to_le16(VMGPU_OP_TRANSFER);
	cmd.transfer.hdr.flags = cpu_to_le16(VMGPU_TRANSFER_FLAG_SWIZZLE |
					     VMGPU_TRANSFER_FLAG_UNSWIZZLE);
	cmd.transfer.src.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	cmd.transfer.dst.space = cpu_to_le32(VMGPU_SPACE_VIRTUAL);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), -EINVAL);

	cmd = (union vmgpu_cmd){};
	cmd.nop.delay_us = cpu_to_le32(VMGPU_NOP_MAX_DELAY_US + 1);
	KUNIT_EXPECT_EQ(test, vmgpu_exec_check_cmd(&cmd, EXEC_TEST_VM), -EINVAL);
}

static struct kunit_case vmgpu_exec_cases[] = {
	KUNIT_CASE(exec_allows_user_commands),
	KUNIT_CASE(exec_refuses_escapes),
	{}
};

static struct kunit_suite vmgpu_exec_suite = {
	.name = "vmgpu_exec",
	.test_cases = vmgpu_exec_cases,
};

kunit_test_suite(vmgpu_exec_suite);
