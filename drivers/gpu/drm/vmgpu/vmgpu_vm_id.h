/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_VM_ID_H_
#define _VMGPU_VM_ID_H_

#include <linux/types.h>

struct dma_fence;
struct vmgpu_device;
struct vmgpu_vm;

int vmgpu_vm_id_init(struct vmgpu_device *vdev);
void vmgpu_vm_id_program(struct vmgpu_device *vdev, u32 id, dma_addr_t root, u32 asid);
int vmgpu_vm_id_get(struct vmgpu_vm *vm, u32 *generation);
void vmgpu_vm_id_put(struct vmgpu_vm *vm);
void vmgpu_vm_id_release(struct vmgpu_vm *vm);

#endif
