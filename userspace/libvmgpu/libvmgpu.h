/* SPDX-License-Identifier: MIT */
/*
 * libvmgpu: the user-mode side of vmgpu.
 *
 * Handles are opaque and reference counted. Functions return 0 or a
 * negative errno.
 */
#ifndef LIBVMGPU_H
#define LIBVMGPU_H

#include <stdint.h>

#include "vmgpu_drm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vmgpu_device vmgpu_device;

/* Open the render node of the first vmgpu device. */
int vmgpu_device_open(vmgpu_device **out);
/* Wrap an already open vmgpu DRM fd; the handle keeps its own dup. */
int vmgpu_device_create(int fd, vmgpu_device **out);
vmgpu_device *vmgpu_device_ref(vmgpu_device *dev);
void vmgpu_device_unref(vmgpu_device *dev);
int vmgpu_device_fd(const vmgpu_device *dev);

/* Issue DRM_IOCTL_VMGPU_QUERY as is; for tests and new queries. */
int vmgpu_query_raw(vmgpu_device *dev, struct drm_vmgpu_query *query);
int vmgpu_query_device(vmgpu_device *dev, struct drm_vmgpu_query_device *out);
/* On success *out is malloc()ed; release it with free(). */
int vmgpu_query_segments(vmgpu_device *dev,
			 struct drm_vmgpu_query_segments **out);

const char *vmgpu_segment_kind_name(uint32_t kind);

#ifdef __cplusplus
}
#endif

#endif
