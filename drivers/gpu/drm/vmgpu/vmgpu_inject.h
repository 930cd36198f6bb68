/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_INJECT_H_
#define _VMGPU_INJECT_H_

#include <linux/types.h>

struct vmgpu_device;
union vmgpu_cmd;

int vmgpu_inject_init(struct vmgpu_device *vdev);
bool vmgpu_inject_paging_fault(struct vmgpu_device *vdev, union vmgpu_cmd *cmd);
bool vmgpu_inject_scrub_fault(struct vmgpu_device *vdev, union vmgpu_cmd *cmd);
bool vmgpu_inject_import_evict_fault(struct vmgpu_device *vdev);
u32 vmgpu_inject_scrub_delay(struct vmgpu_device *vdev);
void vmgpu_inject_vm_free_delay(struct vmgpu_device *vdev);
void vmgpu_inject_reset_delay(struct vmgpu_device *vdev);
void vmgpu_inject_free_job_delay(struct vmgpu_device *vdev);

#endif
