// SPDX-License-Identifier: MIT
/*
 * libvmgpu: device discovery, queries, allocations, GPU VA and submission.
 * The UMD layer on top (queues, buffers, renaming) is in vmgpu_queue.c,
 * vmgpu_buffer.c and vmgpu_storage.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "hw/vmgpu_hw.h"
#include "libvmgpu_internal.h"

struct vmgpu_bo {
	int refcount;
	vmgpu_device *dev;
	uint32_t handle;
	uint64_t size;
	void *cpu;		/* the mapping, NULL until vmgpu_bo_map() */
	vmgpu_bo *next;		/* in dev->bos */
};

int vmgpu_ioctl(vmgpu_device *dev, unsigned long request, void *arg)
{
	vmgpu_count_ioctl(dev);
	return drmIoctl(dev->fd, request, arg) ? -errno : 0;
}

void vmgpu_count_ioctl(vmgpu_device *dev)
{
	__atomic_add_fetch(&dev->ioctls, 1, __ATOMIC_RELAXED);
}

uint64_t vmgpu_device_ioctl_count(const vmgpu_device *dev)
{
	return __atomic_load_n(&dev->ioctls, __ATOMIC_RELAXED);
}

int vmgpu_device_create(int fd, vmgpu_device **out)
{
	drmVersionPtr version = drmGetVersion(fd);
	vmgpu_device *dev;
	int is_vmgpu;

	if (!version)
		return -errno ?: -ENODEV;
	is_vmgpu = !strcmp(version->name, "vmgpu");
	drmFreeVersion(version);
	if (!is_vmgpu)
		return -ENODEV;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dev->fd < 0) {
		free(dev);
		return -errno;
	}
	dev->refcount = 1;
	pthread_mutex_init(&dev->bo_lock, NULL);
	*out = dev;
	return 0;
}

static int vmgpu_is_vmgpu_pci(const drmDevicePtr d)
{
	return d->bustype == DRM_BUS_PCI &&
	       d->deviceinfo.pci->vendor_id == VMGPU_PCI_VENDOR_ID &&
	       d->deviceinfo.pci->device_id == VMGPU_PCI_DEVICE_ID &&
	       (d->available_nodes & (1 << DRM_NODE_RENDER));
}

int vmgpu_device_open(vmgpu_device **out)
{
	drmDevicePtr devices[16];
	int count, i, ret = -ENODEV;

	count = drmGetDevices2(0, devices, 16);
	if (count < 0)
		return count;
	for (i = 0; i < count && ret; i++) {
		int fd;

		if (!vmgpu_is_vmgpu_pci(devices[i]))
			continue;
		fd = open(devices[i]->nodes[DRM_NODE_RENDER], O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		ret = vmgpu_device_create(fd, out);
		close(fd);
	}
	drmFreeDevices(devices, count);
	return ret;
}

vmgpu_device *vmgpu_device_ref(vmgpu_device *dev)
{
	__atomic_add_fetch(&dev->refcount, 1, __ATOMIC_RELAXED);
	return dev;
}

void vmgpu_device_unref(vmgpu_device *dev)
{
	if (!dev || __atomic_sub_fetch(&dev->refcount, 1, __ATOMIC_ACQ_REL))
		return;
	close(dev->fd);
	pthread_mutex_destroy(&dev->bo_lock);
	free(dev);
}

int vmgpu_device_fd(const vmgpu_device *dev)
{
	return dev->fd;
}

int vmgpu_query_raw(vmgpu_device *dev, struct drm_vmgpu_query *query)
{
	return vmgpu_ioctl(dev, DRM_IOCTL_VMGPU_QUERY, query);
}

/* Ask for the answer's size, check it, then fetch the answer. */
static int vmgpu_query_sized(vmgpu_device *dev, uint32_t id, void **out,
			     uint32_t *size)
{
	struct drm_vmgpu_query query = { .query = id };
	void *data;
	int ret;

	ret = vmgpu_query_raw(dev, &query);
	if (ret)
		return ret;
	data = calloc(1, query.size);
	if (!data)
		return -ENOMEM;
	query.data = (uintptr_t)data;
	ret = vmgpu_query_raw(dev, &query);
	if (ret) {
		free(data);
		return ret;
	}
	*out = data;
	*size = query.size;
	return 0;
}

int vmgpu_query_device(vmgpu_device *dev, struct drm_vmgpu_query_device *out)
{
	struct drm_vmgpu_query query = {
		.query = DRM_VMGPU_QUERY_DEVICE,
		.size = sizeof(*out),
		.data = (uintptr_t)out,
	};

	return vmgpu_query_raw(dev, &query);
}

int vmgpu_query_segments(vmgpu_device *dev,
			 struct drm_vmgpu_query_segments **out)
{
	struct drm_vmgpu_query_segments *segments;
	uint32_t size;
	void *data;
	int ret;

	ret = vmgpu_query_sized(dev, DRM_VMGPU_QUERY_SEGMENTS, &data, &size);
	if (ret)
		return ret;
	segments = data;
	if (size < sizeof(*segments) ||
	    size != sizeof(*segments) +
		    segments->num_segments * sizeof(segments->segments[0])) {
		free(data);
		return -EPROTO;
	}
	*out = segments;
	return 0;
}

const char *vmgpu_segment_kind_name(uint32_t kind)
{
	switch (kind) {
	case DRM_VMGPU_SEGMENT_SYSTEM:
		return "system";
	case DRM_VMGPU_SEGMENT_MEMORY:
		return "memory";
	case DRM_VMGPU_SEGMENT_APERTURE:
		return "aperture";
	}
	return "unknown";
}

uint32_t vmgpu_aperture_segment_id(const struct drm_vmgpu_query_segments *s)
{
	uint32_t i;

	for (i = 0; i < s->num_segments; i++)
		if (s->segments[i].kind == DRM_VMGPU_SEGMENT_APERTURE)
			return s->segments[i].id;
	return 0;
}

static void vmgpu_gem_close(vmgpu_device *dev, uint32_t handle)
{
	struct drm_gem_close args = { .handle = handle };

	/* Only fails for a handle that is not ours; nothing to undo then. */
	vmgpu_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &args);
}

/* A new allocation for handle, listed in dev->bos; the caller holds bo_lock. */
static int vmgpu_bo_wrap(vmgpu_device *dev, uint32_t handle, vmgpu_bo **out)
{
	struct drm_vmgpu_gem_info gem_info;
	vmgpu_bo *bo;
	int ret;

	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	bo->dev = dev;
	bo->handle = handle;
	/* The kernel rounds the size up to the set's page size: ask it. */
	ret = vmgpu_bo_info(bo, &gem_info);
	if (ret) {
		free(bo);
		return ret;
	}
	bo->size = gem_info.size;
	bo->refcount = 1;
	vmgpu_device_ref(dev);
	bo->next = dev->bos;
	dev->bos = bo;
	*out = bo;
	return 0;
}

/* Take bo off dev->bos; the caller holds bo_lock. */
static void vmgpu_bo_unlist(vmgpu_bo *bo)
{
	vmgpu_bo **link = &bo->dev->bos;

	while (*link != bo)
		link = &(*link)->next;
	*link = bo->next;
}

int vmgpu_bo_create(vmgpu_device *dev, const struct vmgpu_bo_create_info *info,
		    vmgpu_bo **out)
{
	struct drm_vmgpu_gem_create create = {
		.size = info->size,
		.flags = info->flags,
		.segments = info->segments,
		.preferred_segment = info->preferred_segment,
	};
	int ret;

	ret = vmgpu_ioctl(dev, DRM_IOCTL_VMGPU_GEM_CREATE, &create);
	if (ret)
		return ret;
	pthread_mutex_lock(&dev->bo_lock);
	ret = vmgpu_bo_wrap(dev, create.handle, out);
	pthread_mutex_unlock(&dev->bo_lock);
	if (ret)
		vmgpu_gem_close(dev, create.handle);
	return ret;
}

int vmgpu_bo_import(vmgpu_device *dev, int dmabuf_fd, uint32_t flags, vmgpu_bo **out)
{
	struct drm_vmgpu_gem_import args = { .fd = dmabuf_fd, .flags = flags };
	uint32_t handle;
	vmgpu_bo *bo;
	int ret;

	/* Under the lock: a racing last unref must not close the handle we get. */
	pthread_mutex_lock(&dev->bo_lock);
	if (flags) {
		ret = vmgpu_ioctl(dev, DRM_IOCTL_VMGPU_GEM_IMPORT, &args);
		handle = args.handle;
	} else {
		vmgpu_count_ioctl(dev);
		ret = drmPrimeFDToHandle(dev->fd, dmabuf_fd, &handle) ? -errno : 0;
	}
	if (ret)
		goto unlock;
	for (bo = dev->bos; bo && bo->handle != handle; bo = bo->next)
		;
	if (bo) {
		*out = vmgpu_bo_ref(bo);
		goto unlock;
	}
	ret = vmgpu_bo_wrap(dev, handle, out);
	if (ret)
		vmgpu_gem_close(dev, handle);
unlock:
	pthread_mutex_unlock(&dev->bo_lock);
	return ret;
}

int vmgpu_bo_export(vmgpu_bo *bo, int *dmabuf_fd)
{
	vmgpu_count_ioctl(bo->dev);
	return drmPrimeHandleToFD(bo->dev->fd, bo->handle, DRM_CLOEXEC | DRM_RDWR,
				  dmabuf_fd) ? -errno : 0;
}

vmgpu_bo *vmgpu_bo_ref(vmgpu_bo *bo)
{
	__atomic_add_fetch(&bo->refcount, 1, __ATOMIC_RELAXED);
	return bo;
}

void vmgpu_bo_unref(vmgpu_bo *bo)
{
	vmgpu_device *dev;

	if (!bo)
		return;
	/* vmgpu_bo_import() looks allocations up by handle under the lock. */
	dev = bo->dev;
	pthread_mutex_lock(&dev->bo_lock);
	if (__atomic_sub_fetch(&bo->refcount, 1, __ATOMIC_ACQ_REL)) {
		pthread_mutex_unlock(&dev->bo_lock);
		return;
	}
	vmgpu_bo_unlist(bo);
	pthread_mutex_unlock(&dev->bo_lock);
	if (bo->cpu)
		munmap(bo->cpu, bo->size);
	vmgpu_gem_close(bo->dev, bo->handle);
	vmgpu_device_unref(bo->dev);
	free(bo);
}

int vmgpu_bo_destroy(vmgpu_bo *bo, uint32_t flags)
{
	struct drm_vmgpu_gem_destroy args = { .handle = bo->handle, .flags = flags };
	int ret;

	pthread_mutex_lock(&bo->dev->bo_lock);
	if (__atomic_load_n(&bo->refcount, __ATOMIC_ACQUIRE) != 1) {
		pthread_mutex_unlock(&bo->dev->bo_lock);
		return -EBUSY;
	}
	if (bo->cpu)
		munmap(bo->cpu, bo->size);
	bo->cpu = NULL;
	ret = vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_GEM_DESTROY, &args);
	if (!ret)
		vmgpu_bo_unlist(bo);
	pthread_mutex_unlock(&bo->dev->bo_lock);
	if (ret)
		return ret;
	vmgpu_device_unref(bo->dev);
	free(bo);
	return 0;
}

uint32_t vmgpu_bo_handle(const vmgpu_bo *bo)
{
	return bo->handle;
}

uint64_t vmgpu_bo_size(const vmgpu_bo *bo)
{
	return bo->size;
}

int vmgpu_bo_info_flags(vmgpu_bo *bo, uint32_t flags, struct drm_vmgpu_gem_info *out)
{
	memset(out, 0, sizeof(*out));
	out->handle = bo->handle;
	out->info_flags = flags;
	return vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_GEM_INFO, out);
}

int vmgpu_bo_info(vmgpu_bo *bo, struct drm_vmgpu_gem_info *out)
{
	return vmgpu_bo_info_flags(bo, 0, out);
}

int vmgpu_bo_map(vmgpu_bo *bo, void **cpu)
{
	struct drm_vmgpu_gem_mmap_offset args = { .handle = bo->handle };
	void *ptr = __atomic_load_n(&bo->cpu, __ATOMIC_ACQUIRE);
	void *first = NULL;
	int ret;

	if (ptr) {
		*cpu = ptr;
		return 0;
	}
	ret = vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, &args);
	if (ret)
		return ret;
	ptr = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   bo->dev->fd, args.offset);
	if (ptr == MAP_FAILED)
		return -errno;
	/* Another thread may have mapped it meanwhile: keep its mapping. */
	if (!__atomic_compare_exchange_n(&bo->cpu, &first, ptr, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(ptr, bo->size);
		ptr = first;
	}
	*cpu = ptr;
	return 0;
}

int vmgpu_bo_make_resident(vmgpu_bo *bo)
{
	struct drm_vmgpu_gem_make_resident args = { .handle = bo->handle };

	return vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, &args);
}

int vmgpu_bo_evict(vmgpu_bo *bo)
{
	return vmgpu_bo_evict_flags(bo, 0);
}

int vmgpu_bo_evict_flags(vmgpu_bo *bo, uint32_t flags)
{
	struct drm_vmgpu_gem_make_resident args = { .handle = bo->handle, .flags = flags };

	return vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_GEM_EVICT, &args);
}

int vmgpu_bo_wait(vmgpu_bo *bo, uint64_t timeout_ns, uint32_t flags)
{
	struct drm_vmgpu_gem_wait args = {
		.handle = bo->handle,
		.flags = flags,
		.timeout_ns = timeout_ns,
	};

	return vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_GEM_WAIT, &args);
}

int vmgpu_vm_map(vmgpu_bo *bo, uint64_t offset, uint64_t va, uint64_t size,
		 uint32_t flags)
{
	struct drm_vmgpu_vm_bind args = {
		.op = DRM_VMGPU_VM_BIND_OP_MAP,
		.flags = flags,
		.handle = bo->handle,
		.addr = va,
		.range = size,
		.offset = offset,
	};

	return vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_VM_BIND, &args);
}

int vmgpu_vm_unmap(vmgpu_device *dev, uint64_t va, uint64_t size)
{
	struct drm_vmgpu_vm_bind args = {
		.op = DRM_VMGPU_VM_BIND_OP_UNMAP,
		.addr = va,
		.range = size,
	};

	return vmgpu_ioctl(dev, DRM_IOCTL_VMGPU_VM_BIND, &args);
}

struct vmgpu_context {
	int refcount;
	vmgpu_device *dev;
	uint32_t id;
	const volatile uint64_t *seqno;	/* the kernel's seqno page */
};

int vmgpu_context_create(vmgpu_device *dev, uint32_t engine,
			 vmgpu_context **out)
{
	struct drm_vmgpu_ctx_create args = { .engine = engine };
	struct drm_vmgpu_ctx_destroy destroy = { 0 };
	vmgpu_context *ctx;
	void *page;
	int ret;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ret = vmgpu_ioctl(dev, DRM_IOCTL_VMGPU_CTX_CREATE, &args);
	if (ret) {
		free(ctx);
		return ret;
	}
	page = mmap(NULL, VMGPU_PAGE_SIZE, PROT_READ, MAP_SHARED, dev->fd,
		    args.seqno_offset);
	if (page == MAP_FAILED) {
		ret = -errno;
		destroy.ctx_id = args.ctx_id;
		vmgpu_ioctl(dev, DRM_IOCTL_VMGPU_CTX_DESTROY, &destroy);
		free(ctx);
		return ret;
	}
	ctx->refcount = 1;
	ctx->dev = vmgpu_device_ref(dev);
	ctx->id = args.ctx_id;
	ctx->seqno = page;
	*out = ctx;
	return 0;
}

vmgpu_context *vmgpu_context_ref(vmgpu_context *ctx)
{
	__atomic_add_fetch(&ctx->refcount, 1, __ATOMIC_RELAXED);
	return ctx;
}

void vmgpu_context_unref(vmgpu_context *ctx)
{
	struct drm_vmgpu_ctx_destroy args;

	if (!ctx || __atomic_sub_fetch(&ctx->refcount, 1, __ATOMIC_ACQ_REL))
		return;
	munmap((void *)ctx->seqno, VMGPU_PAGE_SIZE);
	args = (struct drm_vmgpu_ctx_destroy){ .ctx_id = ctx->id };
	vmgpu_ioctl(ctx->dev, DRM_IOCTL_VMGPU_CTX_DESTROY, &args);
	vmgpu_device_unref(ctx->dev);
	free(ctx);
}

uint32_t vmgpu_context_id(const vmgpu_context *ctx)
{
	return ctx->id;
}

static int vmgpu_exec(vmgpu_context *ctx, struct drm_vmgpu_exec *args,
		      const struct vmgpu_sync *in, const struct vmgpu_sync *out)
{
	struct drm_vmgpu_sync in_syncs[DRM_VMGPU_EXEC_MAX_SYNCS];
	struct drm_vmgpu_sync out_syncs[DRM_VMGPU_EXEC_MAX_SYNCS];
	uint32_t i;

	if (args->num_in_syncs > DRM_VMGPU_EXEC_MAX_SYNCS ||
	    args->num_out_syncs > DRM_VMGPU_EXEC_MAX_SYNCS)
		return -EINVAL;
	for (i = 0; i < args->num_in_syncs; i++)
		in_syncs[i] = (struct drm_vmgpu_sync){ .handle = in[i].syncobj,
						       .point = in[i].point };
	for (i = 0; i < args->num_out_syncs; i++)
		out_syncs[i] = (struct drm_vmgpu_sync){ .handle = out[i].syncobj,
							.point = out[i].point };
	args->ctx_id = ctx->id;
	args->in_syncs = (uintptr_t)in_syncs;
	args->out_syncs = (uintptr_t)out_syncs;
	return vmgpu_ioctl(ctx->dev, DRM_IOCTL_VMGPU_EXEC, args);
}

int vmgpu_context_submit(vmgpu_context *ctx, const union vmgpu_cmd *cmds,
			 uint32_t num_cmds, const struct vmgpu_sync *in,
			 uint32_t num_in, const struct vmgpu_sync *out,
			 uint32_t num_out, uint64_t *seqno)
{
	struct drm_vmgpu_exec args = {
		.num_cmds = num_cmds,
		.cmds = (uintptr_t)cmds,
		.num_in_syncs = num_in,
		.num_out_syncs = num_out,
	};
	int ret = vmgpu_exec(ctx, &args, in, out);

	if (!ret && seqno)
		*seqno = args.seqno;
	return ret;
}

int vmgpu_context_submit_physical(vmgpu_context *ctx, const union vmgpu_cmd *cmds,
				  uint32_t num_cmds, vmgpu_bo *const *allocs,
				  uint32_t num_allocs,
				  const struct drm_vmgpu_patch *patches,
				  uint32_t num_patches, const struct vmgpu_sync *out,
				  uint32_t num_out, uint64_t *seqno)
{
	struct drm_vmgpu_alloc_ref refs[DRM_VMGPU_EXEC_MAX_ALLOCS];
	struct drm_vmgpu_exec args = {
		.num_cmds = num_cmds,
		.cmds = (uintptr_t)cmds,
		.num_out_syncs = num_out,
		.allocs = (uintptr_t)refs,
		.num_allocs = num_allocs,
		.patches = (uintptr_t)patches,
		.num_patches = num_patches,
	};
	uint32_t i;
	int ret;

	if (num_allocs > DRM_VMGPU_EXEC_MAX_ALLOCS)
		return -EINVAL;
	for (i = 0; i < num_allocs; i++)
		refs[i] = (struct drm_vmgpu_alloc_ref){ .handle = allocs[i]->handle };
	ret = vmgpu_exec(ctx, &args, NULL, out);
	if (!ret && seqno)
		*seqno = args.seqno;
	return ret;
}

uint64_t vmgpu_context_completed(const vmgpu_context *ctx)
{
	return __atomic_load_n(ctx->seqno, __ATOMIC_ACQUIRE);
}

int vmgpu_context_busy(const vmgpu_context *ctx, uint64_t seqno)
{
	return vmgpu_context_completed(ctx) < seqno;
}

static int vmgpu_bo_lock_ioctl(vmgpu_bo *bo, unsigned long request, uint32_t flags,
			       void **cpu)
{
	struct drm_vmgpu_gem_lock args = { .handle = bo->handle, .flags = flags };
	int ret = vmgpu_ioctl(bo->dev, request, &args);

	if (ret || !cpu)
		return ret;
	if (!bo->cpu) {
		void *map = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
				 bo->dev->fd, args.offset);

		if (map == MAP_FAILED) {
			struct drm_vmgpu_gem_unlock unlock = { .handle = bo->handle };

			ret = -errno;
			vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_GEM_UNLOCK, &unlock);
			return ret;
		}
		bo->cpu = map;
	}
	*cpu = bo->cpu;
	return 0;
}

int vmgpu_bo_lock(vmgpu_bo *bo, uint32_t flags, void **cpu)
{
	return vmgpu_bo_lock_ioctl(bo, DRM_IOCTL_VMGPU_GEM_LOCK, flags, cpu);
}

int vmgpu_bo_lock2(vmgpu_bo *bo, void **cpu)
{
	return vmgpu_bo_lock_ioctl(bo, DRM_IOCTL_VMGPU_GEM_LOCK2, 0, cpu);
}

int vmgpu_bo_unlock(vmgpu_bo *bo)
{
	struct drm_vmgpu_gem_unlock args = { .handle = bo->handle };

	return vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_GEM_UNLOCK, &args);
}

int vmgpu_bo_cache_sync(vmgpu_bo *bo, uint32_t flags, uint64_t offset, uint64_t size)
{
	struct drm_vmgpu_cache_op op = {
		.handle = bo->handle,
		.flags = flags,
		.offset = offset,
		.size = size,
	};
	struct drm_vmgpu_gem_cache_sync args = {
		.ops = (uintptr_t)&op,
		.num_ops = 1,
	};

	return vmgpu_ioctl(bo->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args);
}
