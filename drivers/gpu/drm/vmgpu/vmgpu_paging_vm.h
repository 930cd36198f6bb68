/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_PAGING_VM_H_
#define _VMGPU_PAGING_VM_H_

#include <linux/types.h>

struct vmgpu_device;

u64 vmgpu_paging_va_rule(u64 requested, u64 largest_segment);
int vmgpu_paging_vm_init(struct vmgpu_device *vdev);
void vmgpu_paging_vm_map(struct vmgpu_device *vdev, const dma_addr_t *pages, u64 count);
void vmgpu_paging_vm_unmap(struct vmgpu_device *vdev, u64 count);

#endif
