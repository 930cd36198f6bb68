/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_CONTEXT_H_
#define _VMGPU_CONTEXT_H_

#include "vmgpu_context_types.h"

struct drm_device;
struct drm_file;
struct drm_printer;
struct vmgpu_hw_fence;
struct vmgpu_job;

int vmgpu_file_open(struct drm_device *drm, struct drm_file *file);
void vmgpu_file_postclose(struct drm_device *drm, struct drm_file *file);
struct vmgpu_vm *vmgpu_file_vm(struct drm_file *file);
struct vmgpu_vm *vmgpu_file_vm_if_made(struct drm_file *file);
struct vmgpu_context *vmgpu_context_lookup(struct drm_file *file, u32 id);
void vmgpu_context_put(struct vmgpu_context *ctx);
void vmgpu_context_job_running(struct vmgpu_job *job);
void vmgpu_context_job_dropped(struct vmgpu_job *job);
void vmgpu_context_job_done(struct vmgpu_hw_fence *fence, u64 busy_ns);
void vmgpu_context_show_fdinfo(struct drm_printer *p, struct drm_file *file);

int vmgpu_ctx_create_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file);
int vmgpu_ctx_destroy_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file);
int vmgpu_vm_bind_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);

#endif
