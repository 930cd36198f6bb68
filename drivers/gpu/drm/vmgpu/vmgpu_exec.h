/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_EXEC_H_
#define _VMGPU_EXEC_H_

#include <linux/types.h>

#include "hw/vmgpu_hw.h"

struct drm_device;
struct drm_file;

/**
 * struct vmgpu_cmd_addrs - the addresses a user command names
 */
struct vmgpu_cmd_addrs {
	/** @addr: in the command: src then dst for TRANSFER. */
	struct vmgpu_addr *addr[2];
	/** @size: bytes the command touches from each. */
	u64 size[2];
	/** @count: valid entries. */
	u32 count;
};

int vmgpu_exec_cmd_addrs(union vmgpu_cmd *cmd, struct vmgpu_cmd_addrs *addrs);
bool vmgpu_exec_cmd_compresses(const union vmgpu_cmd *cmd);
int vmgpu_exec_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif
