/* SPDX-License-Identifier: MIT */
/*
 * The UMD tests' fixture: a queue of libvmgpu's on a GPU-VA context, and
 * a gate that keeps its GPU work waiting (vmgpu_umd_test.c says how).
 */
#ifndef VMGPU_UMD_H
#define VMGPU_UMD_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define KiB			(1ull << 10)
#define MiB			(1ull << 20)
#define MS			1000000ull
#define SMALL			(4 * KiB)
#define MEDIUM			(64 * KiB)	/* VMGPU_SUBALLOC_MAX */
#define LARGE			(256 * KiB)	/* an allocation of its own */
#define OLD			0x01d01d00u
#define NEW			0x0e00e00eu

FIXTURE(umd) {
	vmgpu_device *dev;
	vmgpu_queue *q;
	vmgpu_buffer *sem;		/* the gate's semaphore */
	vmgpu_buffer *scratch;		/* LARGE: where busy_reading() copies */
	uint64_t gate_value;
	vmgpu_buffer *owned[16];	/* BUF()'s, released at teardown */
	int num_owned;
	int noncoherent;
};

static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#define now_ns()		clock_ns(CLOCK_MONOTONIC)

static inline struct vmgpu_queue_stats stats_of(vmgpu_queue *q)
{
	struct vmgpu_queue_stats s = { 0 };

	vmgpu_queue_stats(q, &s);
	return s;
}

static inline vmgpu_buffer *buf_new(vmgpu_queue *q, uint64_t size)
{
	vmgpu_buffer *b = NULL;

	return vmgpu_buffer_create(q, size, 0, &b) ? NULL : b;
}

/* A buffer of the fixture's queue; if owned, the teardown releases it. */
static inline vmgpu_buffer *buf(struct __test_metadata *_metadata, FIXTURE_DATA(umd) *self,
			 uint64_t size, int owned)
{
	vmgpu_buffer *b = buf_new(self->q, size);

	ASSERT_NE(NULL, b);
	ASSERT_LT(self->num_owned, 16);
	if (owned)
		self->owned[self->num_owned++] = b;
	return b;
}

#define BUF(size)		buf(_metadata, self, size, 1)
#define BUF_UNOWNED(size)	buf(_metadata, self, size, 0)

enum { KEY, WORD, BYTE };

/*
 * Write [off, off + size) through a map of this mode: the pattern of key
 * w (KEY), the 32-bit word w (WORD) or the byte w (BYTE) all over.
 */
static inline int write_pat(vmgpu_buffer *b, uint32_t mode, uint64_t off, uint64_t size, int what,
		     uint64_t w)
{
	uint32_t *p;
	uint64_t i;
	int ret = vmgpu_buffer_map(b, mode, 0, off, size, (void **)&p);

	if (ret)
		return ret;
	if (what == KEY)
		vmgpu_test_fill(p, size, w);
	else if (what == WORD)
		for (i = 0; i < size / 4; i++)
			p[i] = w;
	else
		memset(p, (int)w, size);
	return vmgpu_buffer_unmap(b);
}

#define write_key(b, mode, off, size, key)	write_pat(b, mode, off, size, KEY, key)

/*
 * How [off, off + size) reads through a READ map: bytes that differ from
 * the pattern of key (KEY) or from the word w (WORD), or bytes equal to
 * the byte w (BYTE). A failed map or unmap: its -errno.
 */
static inline int64_t check(vmgpu_buffer *b, uint64_t off, uint64_t size, int what, uint64_t w)
{
	const uint8_t *p;
	uint64_t first, i;
	int64_t bad = 0;
	int ret = vmgpu_buffer_map(b, VMGPU_MAP_READ, 0, off, size, (void **)&p);

	if (ret)
		return ret;
	if (what == KEY)
		bad = vmgpu_test_check(p, size, w, &first);
	else if (what == WORD)
		bad = count_not(p, size, (uint32_t)w);
	else
		for (i = 0; i < size; i++)
			bad += p[i] == (uint8_t)w;
	ret = vmgpu_buffer_unmap(b);
	return ret ? ret : bad;
}

#define check_key(b, off, size, key)	check(b, off, size, KEY, key)

/* Map and unmap again: the map's result. */
static inline int try_map(vmgpu_buffer *b, uint32_t mode, uint32_t flags, uint64_t off, uint64_t size)
{
	void *p;
	int ret = vmgpu_buffer_map(b, mode, flags, off, size, &p);

	if (!ret)
		vmgpu_buffer_unmap(b);
	return ret;
}

/*
 * A DO_NOT_WAIT map of the whole buffer, tried 3 times unless it succeeds:
 * its result, the fastest try in *ns and the ioctls all the tries issued.
 */
static inline int map_dnw(vmgpu_device *dev, vmgpu_buffer *b, uint32_t mode, uint64_t *ns,
		   uint64_t *ioctls)
{
	uint64_t before = vmgpu_device_ioctl_count(dev), t;
	int i, ret = 0;
	void *p;

	*ns = UINT64_MAX;
	for (i = 0; i < 3; i++) {
		t = now_ns();
		ret = vmgpu_buffer_map(b, mode, VMGPU_MAP_DO_NOT_WAIT, 0, vmgpu_buffer_size(b), &p);
		t = now_ns() - t;
		*ns = t < *ns ? t : *ns;
		if (!ret)
			break;
	}
	*ioctls = vmgpu_device_ioctl_count(dev) - before;
	if (!ret)
		vmgpu_buffer_unmap(b);
	return ret;
}

/* Later commands of the queue wait until gate_open(). */
static inline int gate_close(FIXTURE_DATA(umd) *self)
{
	return vmgpu_queue_wait_value(self->q, self->sem, 0, ++self->gate_value);
}

static inline int gate_open(FIXTURE_DATA(umd) *self)
{
	uint64_t *p;
	int ret = vmgpu_buffer_map(self->sem, VMGPU_MAP_WRITE_NO_OVERWRITE, 0, 0, 8, (void **)&p);

	if (ret)
		return ret;
	*p = self->gate_value;
	return vmgpu_buffer_unmap(self->sem);
}

/* Behind a closed gate, copy size bytes of src to dst; submit. */
static inline int gated_copy(FIXTURE_DATA(umd) *self, vmgpu_buffer *dst, vmgpu_buffer *src,
		      uint64_t size)
{
	int ret = gate_close(self);

	if (!ret)
		ret = vmgpu_queue_copy(self->q, dst, 0, src, 0, size);
	if (!ret)
		ret = vmgpu_queue_flush(self->q);
	return ret;
}

/* Keep b busy: the GPU reads it behind the gate. */
static inline int busy_reading(FIXTURE_DATA(umd) *self, vmgpu_buffer *b)
{
	return gated_copy(self, self->scratch, b, vmgpu_buffer_size(b));
}

static inline int open_and_finish(FIXTURE_DATA(umd) *self)
{
	int ret = gate_open(self);

	return ret ? ret : vmgpu_queue_finish(self->q, WAIT_NS);
}

static inline void close_queue(FIXTURE_DATA(umd) *self)
{
	if (!self->q)
		return;
	if (self->sem) {
		open_and_finish(self);
		vmgpu_buffer_unref(self->sem);
	}
	while (self->num_owned)
		vmgpu_buffer_unref(self->owned[--self->num_owned]);
	if (self->scratch)
		vmgpu_buffer_unref(self->scratch);
	vmgpu_queue_unref(self->q);
	self->q = NULL;
	self->sem = self->scratch = NULL;
	self->gate_value = 0;
}

/* (Re)create the queue with this budget and expiry (0: defaults). */
static inline int open_queue(FIXTURE_DATA(umd) *self, uint64_t flush, uint64_t wait, uint64_t expiry)
{
	const struct vmgpu_queue_info info = {
		.engine = DRM_VMGPU_ENGINE_GPU_VA0,
		.rename_flush_bytes = flush,
		.rename_wait_bytes = wait,
		.recycle_expiry_ns = expiry,
	};
	int ret;

	close_queue(self);
	ret = vmgpu_queue_create(self->dev, &info, &self->q);
	if (ret) {
		self->q = NULL;
		return ret;
	}
	self->sem = buf_new(self->q, 64);
	self->scratch = buf_new(self->q, LARGE);
	return self->sem && self->scratch ? 0 : -ENOMEM;
}

FIXTURE_SETUP(umd)
{
	const char *env = getenv("VMGPU_NONCOHERENT");
	struct drm_vmgpu_query_device info;

	ASSERT_NE(NULL, env) TH_LOG("VMGPU_NONCOHERENT not set by the configuration");
	ASSERT_TRUE(!strcmp(env, "on") || !strcmp(env, "off")) TH_LOG("VMGPU_NONCOHERENT=%s", env);
	self->noncoherent = !strcmp(env, "on");
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_device(self->dev, &info));
	ASSERT_EQ(self->noncoherent, !!(info.flags & DRM_VMGPU_DEVICE_NONCOHERENT));
	ASSERT_EQ(0, open_queue(self, 0, 0, 0));
}

FIXTURE_TEARDOWN(umd)
{
	close_queue(self);
	vmgpu_device_unref(self->dev);
}

#endif
