/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_FENCE_H_
#define _VMGPU_FENCE_H_

#include <linux/types.h>

struct dma_fence;
struct vmgpu_hw_fence;
struct vmgpu_ring;

struct vmgpu_hw_fence *vmgpu_fence_alloc(void);
void vmgpu_fence_free(struct vmgpu_hw_fence *fence);
void vmgpu_fence_init(struct vmgpu_hw_fence *fence, struct vmgpu_ring *ring,
		      struct dma_fence *prev, u64 seqno, u32 first_slot,
		      u32 end_slot);
unsigned int vmgpu_fence_process(struct vmgpu_ring *ring);
u64 vmgpu_fence_blame_slot(struct vmgpu_ring *ring, u32 slot, int error);
void vmgpu_fence_fail(struct vmgpu_hw_fence *fence, int error);
void vmgpu_fence_fail_all(struct vmgpu_ring *ring, int error);
void vmgpu_fence_ring_init(struct vmgpu_ring *ring);

#endif
