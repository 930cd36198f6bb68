/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The vmgpu authors
 *
 * The test exporter's ioctls on /dev/vmgpu-test-exporter (debug kernel).
 */
#ifndef _VMGPU_TEST_EXPORTER_H_
#define _VMGPU_TEST_EXPORTER_H_

#include <linux/ioctl.h>
#include <linux/types.h>

struct vmgpu_test_exporter_create {
	/* in: bytes, whole pages, at most 64 MiB */
	__u64 size;
	/* out: the dma-buf */
	__s32 fd;
	/* in: VMGPU_TEST_EXPORTER_MOVE_ON_PIN, else 0 */
	__u32 flags;
};

/*
 * The first pin of the buffer moves it first, as an exporter migrating a
 * buffer to where it can stay pinned would (the move may fail: the pin
 * then keeps the old pages).
 */
#define VMGPU_TEST_EXPORTER_MOVE_ON_PIN	(1u << 0)

struct vmgpu_test_exporter_move {
	/* in: a dma-buf of the test exporter */
	__s32 fd;
	/* out: importers' mappings still there after move_notify and the wait */
	__u32 mappings_left;
	/* out: moves of the buffer so far */
	__u32 moves;
	__u32 pad;
};

#define VMGPU_TEST_EXPORTER_CREATE	_IOWR('V', 0x00, struct vmgpu_test_exporter_create)
#define VMGPU_TEST_EXPORTER_MOVE	_IOWR('V', 0x01, struct vmgpu_test_exporter_move)

#endif
