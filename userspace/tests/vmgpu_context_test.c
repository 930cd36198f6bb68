// SPDX-License-Identifier: MIT
/*
 * Contexts and the submission ioctls' arguments: VM_BIND and EXEC refuse
 * what is malformed with the errno the uapi documents, a context id is
 * never 0, and a context destroyed the moment CTX_CREATE publishes it is
 * not touched again (vmgpu_submit_test.c runs the jobs themselves).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define BO_SIZE			(256 * 1024ull)
#define VA_BASE			0x100000000ull

FIXTURE(context) {
	vmgpu_device *dev;
	uint32_t aperture;
	vmgpu_context *ctx;
};

FIXTURE_SETUP(context)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	self->aperture = vmgpu_test_aperture(self->dev);
	ASSERT_NE(0, self->aperture);
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &self->ctx));
}

FIXTURE_TEARDOWN(context)
{
	vmgpu_context_unref(self->ctx);
	vmgpu_device_unref(self->dev);
}

/* Bad VM_BIND and EXEC arguments. */
TEST_F(context, bad_arguments)
{
	struct drm_vmgpu_exec exec = { 0 };
	struct drm_vmgpu_vm_bind bind = { 0 };
	union vmgpu_cmd cmd = cmd_nop(0);
	vmgpu_bo *bo;
	void *cpu;

	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->aperture, self->aperture,
						BO_SIZE, &bo, &cpu));
	EXPECT_EQ(-EINVAL, vmgpu_vm_map(bo, 0, VA_BASE + 1, BO_SIZE, 0));
	EXPECT_EQ(-EINVAL, vmgpu_vm_map(bo, 0, VA_BASE, BO_SIZE + 4096, 0));
	EXPECT_EQ(-EINVAL, vmgpu_vm_map(bo, 0, 1ull << 48, 4096, 0));
	EXPECT_EQ(-EINVAL, vmgpu_vm_map(bo, 0, VA_BASE, BO_SIZE, 1u << 7));
	ASSERT_EQ(0, vmgpu_vm_map(bo, 0, VA_BASE, BO_SIZE, 0));
	EXPECT_EQ(-EEXIST, vmgpu_vm_map(bo, 0, VA_BASE + 4096, 4096, 0));
	EXPECT_EQ(-ENOENT, vmgpu_vm_unmap(self->dev, VA_BASE, 4096));
	bind = (struct drm_vmgpu_vm_bind){ .op = 2, .addr = VA_BASE, .range = 4096 };
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_VM_BIND, &bind));
	bind = (struct drm_vmgpu_vm_bind){ .op = DRM_VMGPU_VM_BIND_OP_UNMAP,
					   .addr = VA_BASE, .range = BO_SIZE,
					   .reserved = { 1 } };
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_VM_BIND, &bind));
	EXPECT_EQ(0, vmgpu_vm_unmap(self->dev, VA_BASE, BO_SIZE));

	exec.ctx_id = vmgpu_context_id(self->ctx);
	exec.cmds = (uintptr_t)&cmd;
	exec.num_cmds = DRM_VMGPU_EXEC_MAX_CMDS + 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_EXEC, &exec));
	exec.num_cmds = 1;
	exec.pad = 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_EXEC, &exec));
	exec.pad = 0;
	exec.ctx_id = 0x7fff;
	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_EXEC, &exec));
	exec.ctx_id = vmgpu_context_id(self->ctx);
	exec.num_in_syncs = 1;
	exec.in_syncs = (uintptr_t)&(struct drm_vmgpu_sync){ .handle = 0x7fff };
	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_EXEC, &exec));
	exec.num_in_syncs = 0;
	EXPECT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_EXEC, &exec));
	vmgpu_bo_unref(bo);
}

struct ctx_race {
	vmgpu_device *dev;
	volatile int stop;
	unsigned long destroyed;
};

/* Destroys whatever context ids the other thread is being handed. */
static void *ctx_race_destroyer(void *arg)
{
	struct ctx_race *r = arg;
	uint32_t id = 1;

	while (!r->stop) {
		struct drm_vmgpu_ctx_destroy destroy = { .ctx_id = id };

		r->destroyed += !vmgpu_test_ioctl(r->dev, DRM_IOCTL_VMGPU_CTX_DESTROY, &destroy);
		id = id % 8 + 1;
	}
	return NULL;
}

/*
 * A context another thread destroys the moment its id exists: CTX_CREATE
 * must not touch it after publishing it (KASAN, on the debug kernel, saw
 * a use after free the fuzzer found).
 */
TEST_F(context, context_create_races_destroy)
{
	struct ctx_race race = { .dev = self->dev };
	int64_t end = now_ms() + 2000;
	unsigned long created = 0;
	pthread_t destroyer;

	ASSERT_EQ(0, pthread_create(&destroyer, NULL, ctx_race_destroyer, &race));
	while (now_ms() < end) {
		struct drm_vmgpu_ctx_create create = { .engine = DRM_VMGPU_ENGINE_GPU_VA1 };

		if (!vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_CTX_CREATE, &create)) {
			created++;
			EXPECT_NE(0, create.ctx_id);
		}
	}
	race.stop = 1;
	pthread_join(destroyer, NULL);
	EXPECT_NE(0, created);
	EXPECT_NE(0, race.destroyed) TH_LOG("the race never happened");
}

/* Id 0 names no context: destroying it frees nothing, creating never returns it. */
TEST_F(context, context_id_zero_never_exists)
{
	struct drm_vmgpu_ctx_destroy destroy = { .ctx_id = 0 };
	struct drm_vmgpu_ctx_create create = { .engine = DRM_VMGPU_ENGINE_GPU_VA0 };
	unsigned int i;

	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_CTX_DESTROY, &destroy));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_CTX_CREATE, &create));
		EXPECT_NE(0, create.ctx_id);
		destroy.ctx_id = create.ctx_id;
		EXPECT_EQ(0, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_CTX_DESTROY, &destroy));
		EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_CTX_DESTROY,
						    &destroy));
		destroy.ctx_id = 0;
		EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_CTX_DESTROY,
						    &destroy));
	}
}

TEST_HARNESS_MAIN
