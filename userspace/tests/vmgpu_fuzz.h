/* SPDX-License-Identifier: MIT */
/*
 * The uapi fuzzer's state, shared by its files: vmgpu_fuzz_test.c (the
 * processes, threads, vmgpu ioctls and oracles) and vmgpu_fuzz_kms.c (the
 * KMS ioctls on the primary node).
 */
#ifndef VMGPU_FUZZ_H
#define VMGPU_FUZZ_H

#include <stdint.h>
#include <pthread.h>

#include <xf86drmMode.h>

#include "libvmgpu.h"

#define POOL		8

struct fuzz_shared {
	uint64_t seed, ops, deadline_ms;
	uint32_t aperture, num_segments;
	uint32_t device_flags;
};

struct fuzz_proc {
	const struct fuzz_shared *cfg;
	unsigned int index;
	vmgpu_device *dev;
	int fd;
	/* Protects ctx, which a guilty job's context is replaced with. */
	pthread_mutex_t scratch_lock;
	vmgpu_bo *scratch;
	vmgpu_context *ctx;
	unsigned long violations;
	/* vgem's card: buffers of another device to import. */
	int vgem;
	/* The primary node, for KMS: its CRTC, connector and a mode. */
	int card_fd;
	uint32_t crtc, connector;
	drmModeModeInfo mode;
};

struct fuzz_thread {
	struct fuzz_proc *proc;
	unsigned int index;
	uint64_t rng;
	vmgpu_bo *bos[POOL];
	uint32_t ctx_ids[POOL];
	uint32_t syncobjs[POOL];
	uint32_t dumbs[POOL];
	uint32_t fbs[POOL];
	unsigned long calls, failed;
};

static inline uint64_t rnd(struct fuzz_thread *t)
{
	/* xorshift64*: the run follows from the seed alone. */
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545f4914f6cdd1dull;
}

static inline uint64_t below(struct fuzz_thread *t, uint64_t n)
{
	return n ? rnd(t) % n : 0;
}

/* ret must be 0, or if may_fail a documented errno; returns ret. */
int expect(struct fuzz_thread *t, const char *what, int ret, int may_fail);

void op_kms(struct fuzz_thread *t);
void kms_drain_events(struct fuzz_thread *t);
int kms_setup(struct fuzz_proc *p);

#endif
