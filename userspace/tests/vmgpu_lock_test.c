// SPDX-License-Identifier: MIT
/*
 * Lock, Lock2 and Unlock (seed: Lock2 rules): a lock waits for the GPU
 * unless told not to, DO_NOT_WAIT says WasStillDrawing at once,
 * IGNORE_SYNC does not wait, Lock2 takes no flags and waits only for the
 * kernel's work, and a lock has one
 * holder from the lock to its unlock or the close of its handle.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define LOCK_SIZE		(64 * 1024ull)
#define LOCK_VA			0x400000000ull
#define JOB_DELAY_US		300000
/* A lock that took less than this did not wait for the 300 ms job. */
#define WAITED_MS		200
/* One that took more than this waited when it should not have. */
#define AT_ONCE_MS		50

FIXTURE(lock) {
	vmgpu_device *dev;
	vmgpu_context *ctx;
	uint32_t aperture;
	vmgpu_bo *bo;
	uint8_t *cpu;
};

FIXTURE_SETUP(lock)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	self->aperture = vmgpu_test_aperture(self->dev);
	ASSERT_NE(0, self->aperture);
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &self->ctx));
	ASSERT_EQ(0, make_mapped_in_aperture(self->dev, self->aperture, LOCK_VA, LOCK_SIZE,
					     &self->bo, (void **)&self->cpu));
	memset(self->cpu, 0, LOCK_SIZE);
}

FIXTURE_TEARDOWN(lock)
{
	vmgpu_bo_unref(self->bo);
	vmgpu_context_unref(self->ctx);
	vmgpu_device_unref(self->dev);
}

/* Keep the GPU on the allocation for 300 ms, then fill it. */
static int busy_fill(FIXTURE_DATA(lock) *self, uint32_t pattern)
{
	union vmgpu_cmd cmds[2] = { cmd_nop(JOB_DELAY_US),
				    cmd_fill(LOCK_VA, LOCK_SIZE, pattern) };

	return vmgpu_context_submit(self->ctx, cmds, 2, NULL, 0, NULL, 0, NULL);
}

TEST_F(lock, waits_for_the_gpu_unless_told_not_to)
{
	int64_t start;
	void *cpu;

	ASSERT_EQ(0, busy_fill(self, 0x10c4ed));
	start = now_ms();
	EXPECT_EQ(-EBUSY, vmgpu_bo_lock(self->bo, DRM_VMGPU_LOCK_DO_NOT_WAIT, &cpu));
	EXPECT_LT(now_ms() - start, AT_ONCE_MS);

	ASSERT_EQ(0, vmgpu_bo_lock(self->bo, DRM_VMGPU_LOCK_READ_ONLY, &cpu));
	EXPECT_GE(now_ms() - start, WAITED_MS);
	/* Locked means the GPU's writes are there. */
	EXPECT_EQ(0, count_not(cpu, LOCK_SIZE, 0x10c4ed));
	EXPECT_EQ(0, vmgpu_bo_unlock(self->bo));
	/* Idle now: do-not-wait succeeds. */
	EXPECT_EQ(0, vmgpu_bo_lock(self->bo, DRM_VMGPU_LOCK_DO_NOT_WAIT, NULL));
	EXPECT_EQ(0, vmgpu_bo_unlock(self->bo));
}

TEST_F(lock, ignore_sync_does_not_wait)
{
	int64_t start;
	void *cpu;

	ASSERT_EQ(0, busy_fill(self, 0x5eed));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_lock(self->bo, DRM_VMGPU_LOCK_IGNORE_SYNC, &cpu));
	EXPECT_LT(now_ms() - start, AT_ONCE_MS);
	EXPECT_EQ(0, vmgpu_bo_unlock(self->bo));
	ASSERT_EQ(0, vmgpu_bo_wait(self->bo, WAIT_NS, 0));
	EXPECT_EQ(0, count_not(self->cpu, LOCK_SIZE, 0x5eed));
}

/*
 * Seed: Lock2 is "a simple method for obtaining a virtual address"; the
 * UMD synchronizes with its jobs itself. It does not wait for a user job.
 */
TEST_F(lock, lock2_leaves_user_jobs_to_the_umd)
{
	struct drm_vmgpu_gem_lock args = { .handle = vmgpu_bo_handle(self->bo) };
	int64_t start;
	void *cpu;
	int bit;

	for (bit = 0; bit < 32; bit++) {
		args.flags = 1u << bit;
		EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_LOCK2, &args))
			TH_LOG("flag bit %d", bit);
	}
	ASSERT_EQ(0, busy_fill(self, 0x2222));
	start = now_ms();
	ASSERT_EQ(0, vmgpu_bo_lock2(self->bo, &cpu));
	EXPECT_LT(now_ms() - start, AT_ONCE_MS);
	/* The job is still queued: the UMD's own wait is what orders it. */
	EXPECT_EQ(-EBUSY, vmgpu_bo_wait(self->bo, 0, DRM_VMGPU_GEM_WAIT_NO_WAIT));
	ASSERT_EQ(0, vmgpu_bo_wait(self->bo, WAIT_NS, 0));
	EXPECT_EQ(0, count_not(cpu, LOCK_SIZE, 0x2222));
	EXPECT_EQ(0, vmgpu_bo_unlock(self->bo));
}

/* One holder, from the lock to its unlock or the holder's handle close. */
TEST_F(lock, one_holder)
{
	struct drm_vmgpu_gem_unlock unlock = { 0 };
	struct drm_vmgpu_gem_lock lock = { 0 };
	vmgpu_device *other;
	uint32_t handle;
	int prime;

	EXPECT_EQ(-EINVAL, vmgpu_bo_unlock(self->bo));
	ASSERT_EQ(0, vmgpu_bo_lock(self->bo, 0, NULL));
	EXPECT_EQ(-EINVAL, vmgpu_bo_lock(self->bo, 0, NULL));

	/* Another file, the same allocation through a dma-buf. */
	ASSERT_EQ(0, drmPrimeHandleToFD(vmgpu_device_fd(self->dev), vmgpu_bo_handle(self->bo),
					DRM_CLOEXEC, &prime));
	ASSERT_EQ(0, vmgpu_device_open(&other));
	ASSERT_EQ(0, drmPrimeFDToHandle(vmgpu_device_fd(other), prime, &handle));
	close(prime);
	lock.handle = handle;
	unlock.handle = handle;

	EXPECT_EQ(-EBUSY, vmgpu_test_ioctl(other, DRM_IOCTL_VMGPU_GEM_LOCK, &lock));
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(other, DRM_IOCTL_VMGPU_GEM_UNLOCK, &unlock));
	EXPECT_EQ(0, vmgpu_bo_unlock(self->bo));
	EXPECT_EQ(-EINVAL, vmgpu_bo_unlock(self->bo));

	/* The other file's lock ends when it closes its handle. */
	EXPECT_EQ(0, vmgpu_test_ioctl(other, DRM_IOCTL_VMGPU_GEM_LOCK, &lock));
	EXPECT_EQ(-EBUSY, vmgpu_bo_lock(self->bo, 0, NULL));
	drmCloseBufferHandle(vmgpu_device_fd(other), handle);
	EXPECT_EQ(0, vmgpu_bo_lock(self->bo, 0, NULL));
	EXPECT_EQ(0, vmgpu_bo_unlock(self->bo));
	vmgpu_device_unref(other);
}

struct lock_call {
	vmgpu_device *dev;
	uint32_t handle;
	pid_t tid;
	int ret;
};

static void *lock_in_thread(void *arg)
{
	struct lock_call *call = arg;
	struct drm_vmgpu_gem_lock args = { .handle = call->handle };

	__atomic_store_n(&call->tid, gettid(), __ATOMIC_RELEASE);
	call->ret = vmgpu_test_ioctl(call->dev, DRM_IOCTL_VMGPU_GEM_LOCK, &args);
	return NULL;
}

/* Whether thread tid sleeps inside an ioctl (x86-64's syscall 16). */
static int asleep_in_ioctl(pid_t tid)
{
	char path[64], buf[256], *state;
	int fd, n, asleep;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	state = strrchr(buf, ')');
	asleep = state && state[1] == ' ' && state[2] == 'S';
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	return asleep && n > 3 && !strncmp(buf, "16 ", 3);
}

/*
 * A lock waiting for the GPU while its handle is closed must not be
 * installed when the wait ends: with no handle, nothing could end it, and
 * every other holder of the allocation would find it locked for good. The
 * job it waits for is held by vgem's fence (not on the ring: no timeout).
 */
TEST_F(lock, handle_closed_while_waiting_leaves_no_lock)
{
	union vmgpu_cmd fill = cmd_fill(LOCK_VA, LOCK_SIZE, 0xc105ed);
	struct lock_call call = { .tid = 0 };
	struct vgem_fence_signal signal = { 0 };
	struct vmgpu_sync in = { 0 };
	struct vmgpu_test_fb buf;
	int vgem, dmabuf, sync_file, prime, i;
	int fd = vmgpu_device_fd(self->dev);
	pthread_t thread;

	vgem = vmgpu_test_open_vgem();
	ASSERT_LE(0, vgem) TH_LOG("no vgem device");
	ASSERT_EQ(0, vmgpu_test_vgem_buffer(vgem, 64, 64, &buf, &dmabuf));
	ASSERT_EQ(0, vmgpu_test_vgem_fence(vgem, buf.handle, dmabuf, &signal.fence, &sync_file));
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &in.syncobj));
	ASSERT_EQ(0, drmSyncobjImportSyncFile(fd, in.syncobj, sync_file));
	ASSERT_EQ(0, vmgpu_context_submit(self->ctx, &fill, 1, &in, 1, NULL, 0, NULL));

	/* Another file's handle of the same allocation locks, and waits. */
	ASSERT_EQ(0, drmPrimeHandleToFD(fd, vmgpu_bo_handle(self->bo), DRM_CLOEXEC, &prime));
	ASSERT_EQ(0, vmgpu_device_open(&call.dev));
	ASSERT_EQ(0, drmPrimeFDToHandle(vmgpu_device_fd(call.dev), prime, &call.handle));
	close(prime);
	ASSERT_EQ(0, pthread_create(&thread, NULL, lock_in_thread, &call));
	for (i = 0; i < 5000; i++) {
		pid_t tid = __atomic_load_n(&call.tid, __ATOMIC_ACQUIRE);

		if (tid && asleep_in_ioctl(tid))
			break;
		usleep(1000);
	}
	/* Its handle goes while it waits; then the job runs. */
	drmCloseBufferHandle(vmgpu_device_fd(call.dev), call.handle);
	ASSERT_EQ(0, drmIoctl(vgem, DRM_IOCTL_VGEM_FENCE_SIGNAL, &signal));
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_LT(i, 5000) TH_LOG("the lock never slept in its wait for the GPU");
	EXPECT_EQ(-ENOENT, call.ret);

	/* Nothing holds a lock: the allocation's owner takes one. */
	EXPECT_EQ(0, vmgpu_bo_lock(self->bo, 0, NULL));
	EXPECT_EQ(0, count_not(self->cpu, LOCK_SIZE, 0xc105ed));
	EXPECT_EQ(0, vmgpu_bo_unlock(self->bo));
	vmgpu_device_unref(call.dev);
	drmSyncobjDestroy(fd, in.syncobj);
	close(sync_file);
	munmap(buf.map, buf.size);
	close(dmabuf);
	close(vgem);
}

TEST_F(lock, bad_arguments)
{
	struct drm_vmgpu_gem_lock args = { .handle = vmgpu_bo_handle(self->bo) };
	struct drm_vmgpu_gem_unlock unlock = { .handle = vmgpu_bo_handle(self->bo) };
	vmgpu_bo *hidden;

	args.flags = 1u << 5;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_LOCK, &args));
	args.flags = DRM_VMGPU_LOCK_READ_ONLY | DRM_VMGPU_LOCK_WRITE_ONLY;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_LOCK, &args));
	args.flags = 0;
	args.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_LOCK, &args));
	unlock.flags = 1;
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_UNLOCK, &unlock));
	args = (struct drm_vmgpu_gem_lock){ .handle = 0x7fffff };
	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_LOCK, &args));
	/* Not CPU-accessible, in VRAM, never allowed into system memory. */
	ASSERT_EQ(0, vmgpu_test_create(self->dev, 64 * 1024, 0, 1u << 1, 1, &hidden));
	EXPECT_EQ(-EINVAL, vmgpu_bo_lock(hidden, 0, NULL));
	vmgpu_bo_unref(hidden);
	/* None of the failed calls left a lock behind. */
	EXPECT_EQ(0, vmgpu_bo_lock(self->bo, DRM_VMGPU_LOCK_DO_NOT_EVICT, NULL));
	EXPECT_EQ(0, vmgpu_bo_unlock(self->bo));
}

TEST_HARNESS_MAIN
