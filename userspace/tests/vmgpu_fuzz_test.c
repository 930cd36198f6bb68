// SPDX-License-Identifier: MIT
/*
 * A seeded, bounded fuzzer of the whole uapi, as a new user's programs
 * would drive it: several processes, each with several threads, issue
 * random ioctls (GEM create/info/mmap/make-resident/evict/wait/destroy,
 * VM_BIND, contexts, EXEC with valid and mutated command streams,
 * LOCK/LOCK2/UNLOCK, CACHE_SYNC, the syncobj ioctls, QUERY, PRIME export
 * and import, GEM_IMPORT) on random allocations of every kind, vgem
 * buffers imported among them, and KMS on the primary node (dumb buffers,
 * ADDFB2/RMFB, SETCRTC, PAGE_FLIP with events, the cursor; one process is
 * master, the others are refused; vmgpu_fuzz_kms.c).
 *
 * Oracles:
 * - every ioctl returns 0 or an errno its documentation allows;
 * - a request with a reserved field or pad set is refused with -EINVAL;
 * - data integrity across processes: each process keeps a sentinel
 *   allocation (CPU-written, moved around by the others' pressure and its
 *   own evictions) and a canary bound at the addresses the other
 *   processes' jobs write in their own spaces; neither may change;
 * - the kernel's log (checked by the report: no WARNING, BUG, Oops, KASAN,
 *   lockdep) and the guest finishing.
 *
 * VMGPU_FUZZ_SEED (default 1), VMGPU_FUZZ_OPS (per thread, default 1500)
 * and VMGPU_FUZZ_SECONDS (default 90) bound a run; the seed and counts are
 * printed so that a failure can be run again.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>
#include <xf86drmMode.h>

#include "kselftest_harness.h"
#include "vmgpu_fuzz.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define NUM_PROCS	3
#define NUM_THREADS	2
#define SCRATCH_VA(p)	(0x100000000ull + (uint64_t)(p) * 0x10000000ull)
#define SCRATCH_SIZE	(256 * 1024ull)
#define SENTINEL_SIZE	(128 * 1024ull)
#define CANARY_KEY(p)	(0xca4a400ull + (p))
#define SENTINEL_KEY(p)	(0x5e471e1ull + (p))

/* Whether an ioctl may answer this fuzzer's requests with -err. */
static int documented_errno(int err)
{
	switch (err) {
	case EINVAL:	/* bad arguments, flags, reserved words */
	case ENOENT:	/* no such handle, context or mapping */
	case ENOSPC:	/* no room in the segments asked for */
	case ENOMEM:
	case EBUSY:	/* do-not-wait, locked by another, pinned */
	case EACCES:	/* CPU access the allocation does not allow; KMS not master */
	case ERANGE:	/* KMS: a mode's clock out of range (DRM core) */
	case E2BIG:
	case ECANCELED:	/* a guilty context */
	case ETIME:	/* a wait's timeout */
	case EEXIST:	/* an address already mapped */
	case EOVERFLOW:
		return 1;
	}
	return 0;
}

static void violation(struct fuzz_thread *t, const char *what, int ret)
{
	fprintf(stderr, "# fuzz: proc %u thread %u call %lu: %s returned %d (%s)\n",
		t->proc->index, t->index, t->calls, what, ret, strerror(-ret));
	__atomic_add_fetch(&t->proc->violations, 1, __ATOMIC_RELAXED);
}

int expect(struct fuzz_thread *t, const char *what, int ret, int may_fail)
{
	t->calls++;
	if (ret) {
		t->failed++;
		if (!may_fail || !documented_errno(-ret))
			violation(t, what, ret);
	}
	return ret;
}

static int ioc(struct fuzz_thread *t, unsigned long req, void *arg)
{
	return vmgpu_test_ioctl(t->proc->dev, req, arg);
}

static uint32_t random_handle(struct fuzz_thread *t)
{
	vmgpu_bo *bo = t->bos[below(t, POOL)];

	if (below(t, 8) == 0 || !bo)
		return (uint32_t)below(t, 64);
	return vmgpu_bo_handle(bo);
}

static uint32_t random_segments(struct fuzz_thread *t)
{
	const struct fuzz_shared *cfg = t->proc->cfg;
	uint32_t set = (uint32_t)below(t, 1u << (cfg->num_segments + 2));

	if (below(t, 4))
		set |= 1u << cfg->aperture;
	return set & ~1u;
}

static void op_create(struct fuzz_thread *t)
{
	static const uint64_t sizes[] = { 4096, 8192, 65536, 200 * 1024, 1 << 20 };
	struct vmgpu_bo_create_info info = {
		.size = sizes[below(t, 5)],
		.flags = (uint32_t)below(t, 1u << 7),
		.segments = random_segments(t),
	};
	unsigned int slot = below(t, POOL);
	vmgpu_bo *bo;
	int ret;

	info.preferred_segment = below(t, t->proc->cfg->num_segments + 2);
	if (below(t, 16) == 0)
		info.flags |= 1u << (7 + below(t, 25));
	ret = expect(t, "GEM_CREATE", vmgpu_bo_create(t->proc->dev, &info, &bo), 1);
	if (ret)
		return;
	if (t->bos[slot])
		vmgpu_bo_unref(t->bos[slot]);
	t->bos[slot] = bo;
}

static void op_destroy(struct fuzz_thread *t)
{
	unsigned int slot = below(t, POOL);
	int ret;

	if (!t->bos[slot])
		return;
	ret = vmgpu_bo_destroy(t->bos[slot],
			       below(t, 2) ? DRM_VMGPU_GEM_DESTROY_ASSUME_NOT_IN_USE : 0);
	expect(t, "GEM_DESTROY", ret, 1);
	if (!ret)
		t->bos[slot] = NULL;
}

static void op_residency(struct fuzz_thread *t)
{
	vmgpu_bo *bo = t->bos[below(t, POOL)];
	struct drm_vmgpu_gem_info info;

	if (!bo)
		return;
	switch (below(t, 4)) {
	case 0:
		expect(t, "GEM_MAKE_RESIDENT", vmgpu_bo_make_resident(bo), 1);
		break;
	case 1:
		expect(t, "GEM_EVICT", vmgpu_bo_evict_flags(bo, below(t, 2) ?
				DRM_VMGPU_EVICT_NONRESIDENT : 0), 1);
		break;
	case 2:
		expect(t, "GEM_INFO", vmgpu_bo_info_flags(bo, below(t, 2) ?
				DRM_VMGPU_GEM_INFO_WAIT : 0, &info), 1);
		break;
	default:
		expect(t, "GEM_WAIT", vmgpu_bo_wait(bo, below(t, 2) ? 0 : 50000000,
				below(t, 2) ? DRM_VMGPU_GEM_WAIT_NO_WAIT : 0), 1);
	}
}

/* The CPU touches an allocation through a lock or its mapping. */
static void op_cpu(struct fuzz_thread *t)
{
	vmgpu_bo *bo = t->bos[below(t, POOL)];
	uint32_t flags = (uint32_t)below(t, 1u << 5);
	void *cpu;
	int ret;

	if (!bo)
		return;
	if (below(t, 2))
		ret = expect(t, "GEM_LOCK2", vmgpu_bo_lock2(bo, &cpu), 1);
	else
		ret = expect(t, "GEM_LOCK", vmgpu_bo_lock(bo, flags, &cpu), 1);
	if (ret)
		return;
	/* Access only what the lock's rules give (no SIGBUS expected). */
	memset(cpu, (int)below(t, 256), 64);
	expect(t, "GEM_CACHE_SYNC", vmgpu_bo_cache_sync(bo, DRM_VMGPU_CACHE_SYNC_TO_DEVICE,
							0, 4096), 1);
	expect(t, "GEM_UNLOCK", vmgpu_bo_unlock(bo), 1);
}

/* Reserved words and pads set: always -EINVAL. */
static void op_must_fail(struct fuzz_thread *t)
{
	union {
		struct drm_vmgpu_gem_info info;
		struct drm_vmgpu_gem_make_resident mr;
		struct drm_vmgpu_gem_destroy destroy;
		struct drm_vmgpu_gem_wait wait;
		struct drm_vmgpu_vm_bind bind;
		struct drm_vmgpu_ctx_create ctx;
		struct drm_vmgpu_gem_lock lock;
		struct drm_vmgpu_gem_unlock unlock;
		struct drm_vmgpu_gem_cache_sync sync;
		struct drm_vmgpu_exec exec;
		struct drm_vmgpu_gem_import import;
	} a;
	vmgpu_bo *bo = t->bos[below(t, POOL)];
	uint32_t handle = bo ? vmgpu_bo_handle(bo) : 1;
	uint64_t junk = rnd(t) | 1;
	const char *what;
	int ret;

	memset(&a, 0, sizeof(a));
	switch (below(t, 11)) {
	case 0:
		a.info = (struct drm_vmgpu_gem_info){ .handle = handle, .reserved = { junk } };
		what = "GEM_INFO reserved";
		ret = ioc(t, DRM_IOCTL_VMGPU_GEM_INFO, &a.info);
		break;
	case 1:
		a.mr = (struct drm_vmgpu_gem_make_resident){ .handle = handle,
							     .reserved = { 0, junk } };
		what = "GEM_MAKE_RESIDENT reserved";
		ret = ioc(t, DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, &a.mr);
		break;
	case 2:
		a.destroy = (struct drm_vmgpu_gem_destroy){ .handle = handle,
							    .reserved = { junk } };
		what = "GEM_DESTROY reserved";
		ret = ioc(t, DRM_IOCTL_VMGPU_GEM_DESTROY, &a.destroy);
		break;
	case 3:
		a.wait = (struct drm_vmgpu_gem_wait){ .handle = handle, .reserved = { junk } };
		what = "GEM_WAIT reserved";
		ret = ioc(t, DRM_IOCTL_VMGPU_GEM_WAIT, &a.wait);
		break;
	case 4:
		a.bind = (struct drm_vmgpu_vm_bind){ .op = DRM_VMGPU_VM_BIND_OP_UNMAP,
						     .addr = 0x700000000ull, .range = 4096,
						     .pad = (uint32_t)junk };
		what = "VM_BIND pad";
		ret = ioc(t, DRM_IOCTL_VMGPU_VM_BIND, &a.bind);
		break;
	case 5:
		a.ctx = (struct drm_vmgpu_ctx_create){ .reserved = { 0, junk } };
		what = "CTX_CREATE reserved";
		ret = ioc(t, DRM_IOCTL_VMGPU_CTX_CREATE, &a.ctx);
		break;
	case 6:
		a.lock = (struct drm_vmgpu_gem_lock){ .handle = handle, .reserved = { junk } };
		what = "GEM_LOCK reserved";
		ret = ioc(t, DRM_IOCTL_VMGPU_GEM_LOCK, &a.lock);
		break;
	case 7:
		a.unlock = (struct drm_vmgpu_gem_unlock){ .handle = handle,
							  .reserved = { 0, junk } };
		what = "GEM_UNLOCK reserved";
		ret = ioc(t, DRM_IOCTL_VMGPU_GEM_UNLOCK, &a.unlock);
		break;
	case 8:
		a.sync = (struct drm_vmgpu_gem_cache_sync){ .reserved = { junk } };
		what = "GEM_CACHE_SYNC reserved";
		ret = ioc(t, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &a.sync);
		break;
	case 9:
		/* Before the fd is looked at: any fd will do. */
		a.import = (struct drm_vmgpu_gem_import){ .fd = t->proc->fd,
							  .pad = (uint32_t)junk };
		what = "GEM_IMPORT pad";
		ret = ioc(t, DRM_IOCTL_VMGPU_GEM_IMPORT, &a.import);
		break;
	default:
		a.exec = (struct drm_vmgpu_exec){ .ctx_id = 1, .num_cmds = 1,
						  .pad = (uint32_t)junk };
		what = "EXEC pad";
		ret = ioc(t, DRM_IOCTL_VMGPU_EXEC, &a.exec);
	}
	t->calls++;
	if (ret != -EINVAL)
		violation(t, what, ret);
}

/*
 * PRIME: a vgem buffer imported, or one of ours exported and imported back
 * (the same allocation, one more reference); what is not a dma-buf is
 * refused.
 */
static void op_prime(struct fuzz_thread *t)
{
	static const uint32_t lines[] = { 1, 2, 16, 64 };
	struct vmgpu_test_fb fb;
	vmgpu_bo *bo = NULL, *from = t->bos[below(t, POOL)];
	unsigned int slot;
	int dmabuf, ret;

	switch (below(t, 3)) {
	case 0:
		/* 4 KiB lines: 4 to 256 KiB. */
		if (expect(t, "vgem buffer", vmgpu_test_vgem_buffer(t->proc->vgem, 1024,
				lines[below(t, 4)], &fb, &dmabuf), 0))
			return;
		/* The import keeps the pages; vgem's handle and mapping go. */
		munmap(fb.map, fb.size);
		drmCloseBufferHandle(t->proc->vgem, fb.handle);
		break;
	case 1:
		if (!from || expect(t, "PRIME_HANDLE_TO_FD", vmgpu_bo_export(from, &dmabuf), 1))
			return;
		break;
	default:
		t->calls++;
		ret = vmgpu_bo_import(t->proc->dev, t->proc->fd, 0, &bo);
		if (ret != -EINVAL)
			violation(t, "PRIME_FD_TO_HANDLE of a DRM fd", ret);
		return;
	}
	/* PRIME, or GEM_IMPORT asking for AccessedPhysically. */
	ret = expect(t, "PRIME_FD_TO_HANDLE / GEM_IMPORT",
		     vmgpu_bo_import(t->proc->dev, dmabuf, below(t, 2) ?
				     DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY : 0, &bo), 1);
	close(dmabuf);
	if (ret)
		return;
	slot = below(t, POOL);
	if (t->bos[slot])
		vmgpu_bo_unref(t->bos[slot]);
	t->bos[slot] = bo;
}

static void op_bind(struct fuzz_thread *t)
{
	vmgpu_bo *bo = t->bos[below(t, POOL)];
	/* Never the scratch or canary addresses: those stay as set up. */
	uint64_t va = 0x800000000ull + below(t, 64) * 0x100000ull;
	uint64_t size = 4096 * (1 + below(t, 32));

	if (below(t, 3) == 0) {
		expect(t, "VM_BIND unmap", vmgpu_vm_unmap(t->proc->dev, va, size), 1);
		return;
	}
	if (!bo)
		return;
	expect(t, "VM_BIND map", vmgpu_vm_map(bo, 4096 * below(t, 4), va, size,
					      below(t, 4) ? 0 : DRM_VMGPU_VM_BIND_READ_ONLY),
	       1);
}

static void op_ctx(struct fuzz_thread *t)
{
	unsigned int slot = below(t, POOL);
	struct drm_vmgpu_ctx_create create = { .engine = (uint32_t)below(t, 4) };
	struct drm_vmgpu_ctx_destroy destroy = { .ctx_id = t->ctx_ids[slot] };

	if (t->ctx_ids[slot] || below(t, 8) == 0) {
		if (!t->ctx_ids[slot])
			destroy.ctx_id = (uint32_t)below(t, 4);
		if (!expect(t, "CTX_DESTROY", ioc(t, DRM_IOCTL_VMGPU_CTX_DESTROY, &destroy),
			    1))
			t->ctx_ids[slot] = 0;
		return;
	}
	if (!expect(t, "CTX_CREATE", ioc(t, DRM_IOCTL_VMGPU_CTX_CREATE, &create), 1)) {
		if (!create.ctx_id)
			violation(t, "CTX_CREATE gave id 0", 0);
		t->ctx_ids[slot] = create.ctx_id;
	}
}

static void op_syncobj(struct fuzz_thread *t)
{
	unsigned int slot = below(t, POOL);
	uint32_t h = t->syncobjs[slot] ?: (uint32_t)below(t, 16);
	int64_t now = 0;

	switch (below(t, 4)) {
	case 0:
		if (!t->syncobjs[slot] && !drmSyncobjCreate(t->proc->fd, below(t, 2) ?
					DRM_SYNCOBJ_CREATE_SIGNALED : 0, &h))
			t->syncobjs[slot] = h;
		t->calls++;
		break;
	case 1:
		t->calls++;
		if (!drmSyncobjDestroy(t->proc->fd, h))
			t->syncobjs[slot] = 0;
		break;
	case 2:
		t->calls++;
		drmSyncobjWait(t->proc->fd, &h, 1, now, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
			       NULL);
		break;
	default:
		t->calls++;
		drmSyncobjReset(t->proc->fd, &h, 1);
	}
}

/* A random, possibly mutated, command on the process's own scratch. */
static union vmgpu_cmd random_cmd(struct fuzz_thread *t)
{
	uint64_t va = SCRATCH_VA(t->proc->index);
	uint64_t off = below(t, SCRATCH_SIZE / 4096) * 4096;
	uint64_t len = 4096 * (1 + below(t, 4));
	union vmgpu_cmd c;

	if (off + len > SCRATCH_SIZE)
		len = SCRATCH_SIZE - off;
	switch (below(t, 5)) {
	case 0:
		c = cmd_fill(va + off, len, (uint32_t)rnd(t));
		break;
	case 1:
		c = cmd_transfer(va + off, va + (SCRATCH_SIZE - len), len);
		break;
	case 2:
		c = cmd_fence(va + off, rnd(t));
		break;
	case 3:
		c = cmd_nop((uint32_t)below(t, 100));
		break;
	default:
		/* Met already: the scratch's first word only grows from zero. */
		c = cmd_wait(va, 0);
	}
	if (below(t, 4) == 0 && le16toh(c.hdr.opcode) != VMGPU_OP_WAIT) {
		/*
		 * A mutation the kernel's checker must catch, or that faults:
		 * the header, sizes and reserved words, never an address (one
		 * could name the process's own canary, a false alarm).
		 */
		unsigned int byte = below(t, 32);

		byte = byte < 8 ? byte : byte + 32;
		c.bytes[byte] ^= (uint8_t)(1u << below(t, 8));
		/* Never an unmet WAIT: it would hang the engine until reset. */
		if (le16toh(c.hdr.opcode) == VMGPU_OP_WAIT)
			c = cmd_nop(0);
	}
	return c;
}

static void op_exec(struct fuzz_thread *t)
{
	struct fuzz_proc *p = t->proc;
	union vmgpu_cmd cmds[4];
	uint32_t n = 1 + below(t, 4), i;
	uint32_t out = t->syncobjs[below(t, POOL)];
	struct vmgpu_sync sync = { .syncobj = out };
	int ret;

	for (i = 0; i < n; i++)
		cmds[i] = random_cmd(t);
	pthread_mutex_lock(&p->scratch_lock);
	if (!p->ctx) {
		pthread_mutex_unlock(&p->scratch_lock);
		return;
	}
	ret = expect(t, "EXEC", vmgpu_context_submit(p->ctx, cmds, n, NULL, 0,
						     out ? &sync : NULL, out ? 1 : 0, NULL),
		     1);
	if (ret == -ECANCELED) {
		/*
		 * A mutated job faulted: the context is guilty, take another.
		 * Another thread may destroy its id (op_ctx's random ids)
		 * before the library maps its seqno page: a documented error.
		 */
		vmgpu_context_unref(p->ctx);
		if (expect(t, "CTX_CREATE", vmgpu_context_create(p->dev,
				DRM_VMGPU_ENGINE_GPU_VA0 + below(t, 2), &p->ctx), 1))
			p->ctx = NULL;
	}
	pthread_mutex_unlock(&p->scratch_lock);
}

/* Handles that may be stale, or were never handed out. */
static void op_raw_handle(struct fuzz_thread *t)
{
	struct drm_vmgpu_gem_mmap_offset mo = { .handle = random_handle(t) };
	struct drm_vmgpu_gem_make_resident mr = { .handle = random_handle(t) };
	struct drm_vmgpu_gem_info info = { .handle = random_handle(t) };

	expect(t, "GEM_MMAP_OFFSET", ioc(t, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, &mo), 1);
	expect(t, "GEM_MAKE_RESIDENT", ioc(t, DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, &mr), 1);
	expect(t, "GEM_INFO", ioc(t, DRM_IOCTL_VMGPU_GEM_INFO, &info), 1);
}

/*
 * The file's fdinfo, read while the other threads move its allocations:
 * it must end with the memory manager's counts.
 */
static int read_fdinfo(int fd)
{
	char path[64], buf[16384];
	size_t len = 0;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -errno;
	while (len < sizeof(buf) - 1 && (n = read(f, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(f);
	buf[len] = 0;
	return strstr(buf, "vmgpu-contents-lost:") ? 0 : -ENOENT;
}

static void op_query(struct fuzz_thread *t)
{
	struct drm_vmgpu_query_device info;

	expect(t, "QUERY", vmgpu_query_device(t->proc->dev, &info), 0);
	expect(t, "fdinfo", read_fdinfo(t->proc->fd), 0);
}

static void *fuzz_thread_main(void *arg)
{
	struct fuzz_thread *t = arg;
	const struct fuzz_shared *cfg = t->proc->cfg;
	uint64_t n;
	unsigned int i;

	for (n = 0; n < cfg->ops && now_ms() < (int64_t)cfg->deadline_ms; n++) {
		switch (below(t, 13)) {
		case 0:
		case 1:
			op_create(t);
			break;
		case 2:
			op_destroy(t);
			break;
		case 3:
		case 4:
			op_residency(t);
			break;
		case 5:
			op_cpu(t);
			break;
		case 6:
			op_bind(t);
			break;
		case 7:
			op_ctx(t);
			break;
		case 8:
			op_syncobj(t);
			break;
		case 9:
			op_exec(t);
			break;
		case 10:
			op_kms(t);
			break;
		case 11:
			op_prime(t);
			break;
		default:
			switch (below(t, 3)) {
			case 0:
				op_must_fail(t);
				break;
			case 1:
				op_raw_handle(t);
				break;
			default:
				op_query(t);
			}
		}
	}
	for (i = 0; i < POOL; i++) {
		struct drm_mode_destroy_dumb d = { .handle = t->dumbs[i] };

		if (t->bos[i])
			vmgpu_bo_unref(t->bos[i]);
		if (t->syncobjs[i])
			drmSyncobjDestroy(t->proc->fd, t->syncobjs[i]);
		if (t->fbs[i])
			drmModeRmFB(t->proc->card_fd, t->fbs[i]);
		if (d.handle)
			drmIoctl(t->proc->card_fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d);
	}
	kms_drain_events(t);
	return NULL;
}

/*
 * One process: its scratch at its own address, its canary at every other
 * process's scratch address, its sentinel nowhere on the GPU. Returns the
 * oracle violations (0: clean), or -1 if it could not set up.
 */
static int fuzz_process(const struct fuzz_shared *cfg, unsigned int index)
{
	struct fuzz_thread threads[NUM_THREADS] = {};
	pthread_t tids[NUM_THREADS];
	struct fuzz_proc p = { .cfg = cfg, .index = index };
	vmgpu_bo *canary, *sentinel;
	void *canary_cpu, *sentinel_cpu, *scratch_cpu;
	uint64_t first, bad_canary, bad_sentinel, calls = 0, failed = 0;
	unsigned int i;

	pthread_mutex_init(&p.scratch_lock, NULL);
	if (vmgpu_device_open(&p.dev) ||
	    vmgpu_context_create(p.dev, DRM_VMGPU_ENGINE_GPU_VA0, &p.ctx) ||
	    make_mapped_in_aperture(p.dev, cfg->aperture, SCRATCH_VA(index), SCRATCH_SIZE,
				    &p.scratch, &scratch_cpu) ||
	    vmgpu_test_create_mappable(p.dev, 1, cfg->aperture, SCRATCH_SIZE, &canary,
				       &canary_cpu) ||
	    vmgpu_test_create_mappable(p.dev, 1, cfg->aperture, SENTINEL_SIZE, &sentinel,
				       &sentinel_cpu))
		return -1;
	p.fd = vmgpu_device_fd(p.dev);
	p.vgem = vmgpu_test_open_vgem();
	if (p.vgem < 0 || kms_setup(&p))
		return -1;
	memset(scratch_cpu, 0, SCRATCH_SIZE);
	vmgpu_test_fill(canary_cpu, SCRATCH_SIZE, CANARY_KEY(index));
	vmgpu_test_fill(sentinel_cpu, SENTINEL_SIZE, SENTINEL_KEY(index));
	for (i = 0; i < NUM_PROCS; i++)
		if (i != index && vmgpu_vm_map(canary, 0, SCRATCH_VA(i), SCRATCH_SIZE, 0))
			return -1;

	for (i = 0; i < NUM_THREADS; i++) {
		threads[i] = (struct fuzz_thread){ .proc = &p, .index = i,
			.rng = cfg->seed * 0x9e3779b97f4a7c15ull + index * 131 + i + 1 };
		if (pthread_create(&tids[i], NULL, fuzz_thread_main, &threads[i]))
			return -1;
	}
	for (i = 0; i < NUM_THREADS; i++) {
		pthread_join(tids[i], NULL);
		calls += threads[i].calls;
		failed += threads[i].failed;
	}

	/* The others' jobs never wrote here; nothing lost the CPU's data. */
	if (vmgpu_bo_wait(canary, WAIT_NS, 0) || vmgpu_bo_wait(sentinel, WAIT_NS, 0))
		return -1;
	if (cfg->device_flags & DRM_VMGPU_DEVICE_NONCOHERENT)
		vmgpu_bo_cache_sync(canary, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, SCRATCH_SIZE);
	bad_canary = vmgpu_test_check(canary_cpu, SCRATCH_SIZE, CANARY_KEY(index), &first);
	bad_sentinel = vmgpu_test_check(sentinel_cpu, SENTINEL_SIZE, SENTINEL_KEY(index),
					&first);
	printf("# fuzz: proc %u: %llu calls, %llu refused, %lu violations, canary %llu and sentinel %llu bytes changed\n",
	       index, (unsigned long long)calls, (unsigned long long)failed, p.violations,
	       (unsigned long long)bad_canary, (unsigned long long)bad_sentinel);
	return p.violations + !!bad_canary + !!bad_sentinel;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

FIXTURE(fuzz) {
	struct fuzz_shared cfg;
};

FIXTURE_SETUP(fuzz)
{
	struct drm_vmgpu_query_device info;
	vmgpu_device *dev;

	int vgem;

	/* Loaded once here, not by each process at once. */
	vgem = vmgpu_test_open_vgem();
	ASSERT_LE(0, vgem) TH_LOG("no vgem device");
	close(vgem);
	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_query_device(dev, &info));
	self->cfg.aperture = vmgpu_test_aperture(dev);
	ASSERT_NE(0, self->cfg.aperture);
	self->cfg.num_segments = info.num_segments;
	self->cfg.device_flags = info.flags;
	self->cfg.seed = env_u64("VMGPU_FUZZ_SEED", 1);
	self->cfg.ops = env_u64("VMGPU_FUZZ_OPS", 1500);
	self->cfg.deadline_ms = now_ms() + 1000 * env_u64("VMGPU_FUZZ_SECONDS", 90);
	vmgpu_device_unref(dev);
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, whole_uapi_from_processes_and_threads, 280)
{
	pid_t pids[NUM_PROCS];
	unsigned int i, clean = 0;
	int status;

	printf("# fuzz: seed %llu, %llu operations per thread, %u processes of %u threads\n",
	       (unsigned long long)self->cfg.seed, (unsigned long long)self->cfg.ops,
	       NUM_PROCS, NUM_THREADS);
	fflush(stdout);
	for (i = 0; i < NUM_PROCS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			int ret = fuzz_process(&self->cfg, i);

			fflush(stdout);
			_exit(ret < 0 ? 255 : ret > 0 ? 1 : 0);
		}
	}
	for (i = 0; i < NUM_PROCS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status)) TH_LOG("process %u died (signal %d)", i,
						      WTERMSIG(status));
		if (WIFEXITED(status)) {
			EXPECT_NE(255, WEXITSTATUS(status)) TH_LOG("process %u: setup failed", i);
			clean += WEXITSTATUS(status) == 0;
		}
	}
	EXPECT_EQ(NUM_PROCS, clean);
}

TEST_HARNESS_MAIN
