/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_SWIZZLE_H_
#define _VMGPU_SWIZZLE_H_

#include <linux/types.h>

struct ttm_operation_ctx;
struct vmgpu_bo;

u16 vmgpu_swizzle_move_flags(struct vmgpu_bo *vbo, u32 old_type, u32 new_type);
void vmgpu_swizzle_moved(struct vmgpu_bo *vbo, u32 new_type, u16 flags);
int vmgpu_swizzle_validate(struct vmgpu_bo *vbo, struct ttm_operation_ctx *ctx);
int vmgpu_swizzle_to_system(struct vmgpu_bo *vbo);
int vmgpu_swizzle_cpu_reach(struct vmgpu_bo *vbo, bool may_move);

#endif
