// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: the size of the paging process GPU VA (seed "Allocation
 * notification"): what the driver or device asks for, else the greater of
 * a quarter of the largest memory segment and the hardware scheduling log
 * buffers. Included by vmgpu_paging_vm.c.
 */

#include <kunit/test.h>
#include <linux/sizes.h>

static void paging_va_requested_wins(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vmgpu_paging_va_rule(SZ_2M, SZ_1G), SZ_2M);
	KUNIT_EXPECT_EQ(test, vmgpu_paging_va_rule(SZ_1G, SZ_64M), SZ_1G);
}

/* Resident page tables: never more than 4 GiB of VA, however asked. */
static void paging_va_capped(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vmgpu_paging_va_rule(4096ull * SZ_1G, 0), SZ_4G);
	KUNIT_EXPECT_EQ(test, vmgpu_paging_va_rule(0, 64ull * SZ_1G), SZ_4G);
}

static void paging_va_quarter_of_largest(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vmgpu_paging_va_rule(0, SZ_256M), SZ_64M);
	KUNIT_EXPECT_EQ(test, vmgpu_paging_va_rule(0, 192 * SZ_1M), 48 * SZ_1M);
	/* Whole pages: a quarter of 64 MiB + 4 KiB rounds down. */
	KUNIT_EXPECT_EQ(test, vmgpu_paging_va_rule(0, SZ_64M + SZ_4K), SZ_16M);
}

static void paging_va_sched_log_floor(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vmgpu_paging_va_rule(0, SZ_32M), VMGPU_SCHED_LOG_SIZE);
	/* No memory segment: the log buffers alone. */
	KUNIT_EXPECT_EQ(test, vmgpu_paging_va_rule(0, 0), VMGPU_SCHED_LOG_SIZE);
}

static struct kunit_case vmgpu_paging_vm_cases[] = {
	KUNIT_CASE(paging_va_requested_wins),
	KUNIT_CASE(paging_va_capped),
	KUNIT_CASE(paging_va_quarter_of_largest),
	KUNIT_CASE(paging_va_sched_log_floor),
	{}
};

static struct kunit_suite vmgpu_paging_vm_suite = {
	.name = "vmgpu_paging_vm",
	.test_cases = vmgpu_paging_vm_cases,
};

kunit_test_suite(vmgpu_paging_vm_suite);
