/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_FENCE_H_
#define _VMGPU_FENCE_H_

#include <linux/types.h>

struct dma_fence;
struct vmgpu_ring;

void vmgpu_fence_init(struct vmgpu_ring *ring);
struct dma_fence *vmgpu_fence_emit(struct vmgpu_ring *ring, u64 *seqno);
void vmgpu_fence_process(struct vmgpu_ring *ring);
void vmgpu_fence_fail_oldest(struct vmgpu_ring *ring, int error);
void vmgpu_fence_fail_all(struct vmgpu_ring *ring, int error);

#endif
