/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_PAGING_VM_H_
#define _VMGPU_PAGING_VM_H_

#include <linux/types.h>

#include "hw/vmgpu_hw.h"

struct vmgpu_device;
struct vmgpu_res_cursor;

u64 vmgpu_paging_va_rule(u64 requested, u64 largest_segment);
int vmgpu_paging_vm_init(struct vmgpu_device *vdev);
u64 vmgpu_paging_vm_run(u64 va, u64 size);
void vmgpu_paging_vm_entries(__le64 *entries, struct vmgpu_res_cursor *cur, u64 size,
			     bool writable);
union vmgpu_cmd vmgpu_paging_vm_map_cmd(struct vmgpu_device *vdev, u64 va,
					dma_addr_t entries_bus, u64 size);
union vmgpu_cmd vmgpu_paging_vm_unmap_cmd(struct vmgpu_device *vdev, u64 va, u64 size);

#endif
