// SPDX-License-Identifier: MIT
/*
 * Every CPU path into an allocation waits for its clears and moves, and
 * enforces the CPU-access rule itself:
 * - ptrace-style access (/proc/<pid>/mem, debuggers) waits for a queued
 *   clear before writing and for a queued eviction copy before reading;
 * - an allocation created without CPU access cannot be mapped, neither at
 *   its fake offset on the DRM fd nor through a dma-buf;
 * - a dma-buf mapping follows the allocation when it moves, as the DRM
 *   mapping does, and survives fork();
 * - a fault whose move must evict allocations that concurrent faults hold
 *   waits for them, instead of raising SIGBUS or spinning;
 * - a fault waits for a queued move without the mmap lock.
 * The paging ring is kept busy (inject_paging_delay) so that clears and
 * copies are still queued when the CPU comes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

#define MiB		(1ull << 20)
#define BO_SIZE		MiB
#define BUSY_MS		"1500"

FIXTURE(cpu) {
	vmgpu_device *dev;
	uint32_t aperture;
	int mem;
};

FIXTURE_SETUP(cpu)
{
	struct drm_vmgpu_query_segments *s;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &s));
	self->aperture = vmgpu_aperture_segment_id(s);
	free(s);
	self->mem = open("/proc/self/mem", O_RDWR);
	ASSERT_LE(0, self->mem);
}

FIXTURE_TEARDOWN(cpu)
{
	close(self->mem);
	vmgpu_device_unref(self->dev);
}

/* A write through /proc/self/mem lands after the queued clear, not under it. */
TEST_F(cpu, ptrace_write_waits_for_clear)
{
	static const uint32_t where[] = { 1, 0 };	/* segment 1, system memory */
	uint64_t first = 0, dirty;
	uint8_t page[4096];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		uint32_t id = where[i] ?: self->aperture;
		vmgpu_bo *bo;
		void *cpu;

		ASSERT_EQ(0, vmgpu_test_dirty_segment(self->dev, id, self->aperture, 8 * MiB));
		ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", BUSY_MS));
		/* Mapped, never touched: the clear is queued behind the delay. */
		ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, id, self->aperture,
							BO_SIZE, &bo, &cpu));
		vmgpu_test_fill(page, sizeof(page), 0xabc + i);
		ASSERT_EQ(sizeof(page), pwrite(self->mem, page, sizeof(page), (uintptr_t)cpu))
			TH_LOG("segment %u: %s", id, strerror(errno));

		EXPECT_EQ(0, vmgpu_test_check(cpu, sizeof(page), 0xabc + i, &first))
			TH_LOG("segment %u: the clear overwrote the ptrace write at %#llx", id,
			       (unsigned long long)first);
		dirty = vmgpu_test_nonzero((uint8_t *)cpu + sizeof(page),
					   BO_SIZE - sizeof(page), &first);
		EXPECT_EQ(0, dirty) TH_LOG("segment %u: %llu stale bytes", id,
					   (unsigned long long)dirty);
		vmgpu_bo_unref(bo);
	}
}

/* A read through /proc/self/mem waits for the queued eviction copy. */
TEST_F(cpu, ptrace_read_waits_for_eviction)
{
	uint64_t first = 0, bad;
	uint8_t *copy;
	vmgpu_bo *bo;
	void *cpu;

	copy = malloc(BO_SIZE);
	ASSERT_NE(NULL, copy);
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, self->aperture, BO_SIZE,
						&bo, &cpu));
	vmgpu_test_fill(cpu, BO_SIZE, 0x600d);
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", BUSY_MS));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));

	ASSERT_EQ(BO_SIZE, pread(self->mem, copy, BO_SIZE, (uintptr_t)cpu));
	bad = vmgpu_test_check(copy, BO_SIZE, 0x600d, &first);
	EXPECT_EQ(0, bad) TH_LOG("%llu bytes read before the copy, first at %#llx",
				 (unsigned long long)bad, (unsigned long long)first);
	free(copy);
	vmgpu_bo_unref(bo);
}

struct toucher {
	pthread_t thread;
	const volatile uint8_t *cpu;
	pid_t tid;
	int64_t done_ms;
};

static void *touch(void *arg)
{
	struct toucher *t = arg;

	__atomic_store_n(&t->tid, gettid(), __ATOMIC_RELEASE);
	(void)t->cpu[BO_SIZE / 2];
	__atomic_store_n(&t->done_ms, now_ms(), __ATOMIC_RELEASE);
	return NULL;
}

/* Whether thread tid of this process sleeps (state S or D), as its fault's wait does. */
static bool sleeping(pid_t tid)
{
	char path[64], stat[256], *state;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	state = fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
	fclose(f);
	return state && (state[2] == 'S' || state[2] == 'D');
}

/*
 * A fault that waits for a queued move waits without the mmap lock: an
 * mmap() of the same process, which takes it for writing, goes on.
 */
TEST_F(cpu, fault_waits_without_the_mmap_lock)
{
	struct toucher t = { 0 };
	int64_t start, waiting, took;
	uint64_t first = 0;
	pid_t tid;
	vmgpu_bo *bo;
	void *cpu, *p;

	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, self->aperture, BO_SIZE,
						&bo, &cpu));
	vmgpu_test_fill(cpu, BO_SIZE, 0x1dea);
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "3000"));
	/* Queued behind the delay; the mapping is gone until it ran. */
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	t.cpu = cpu;
	start = now_ms();
	ASSERT_EQ(0, pthread_create(&t.thread, NULL, touch, &t));
	/* Until the fault waits: an mmap() before it would not meet it. */
	while ((!(tid = __atomic_load_n(&t.tid, __ATOMIC_ACQUIRE)) || !sleeping(tid)) &&
	       !__atomic_load_n(&t.done_ms, __ATOMIC_ACQUIRE) && now_ms() - start < 10000)
		usleep(1000);
	waiting = now_ms();
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	took = now_ms() - waiting;
	ASSERT_NE(MAP_FAILED, p);
	munmap(p, 4096);
	ASSERT_EQ(0, pthread_join(t.thread, NULL));
	/* The negative: the fault did wait for the move, and mmap() came meanwhile. */
	EXPECT_LE(1500, t.done_ms - start) TH_LOG("the fault found the move done");
	EXPECT_LT(waiting, t.done_ms - 1000) TH_LOG("mmap() came when the fault was nearly done");
	EXPECT_GT(1000, took) TH_LOG("mmap() waited %lld ms behind the fault",
				     (long long)took);
	EXPECT_EQ(0, vmgpu_test_check(cpu, BO_SIZE, 0x1dea, &first))
		TH_LOG("wrong bytes after the move, first at %#llx", (unsigned long long)first);
	vmgpu_bo_unref(bo);
}

static uint64_t mmap_offset(vmgpu_device *dev, vmgpu_bo *bo)
{
	struct drm_vmgpu_gem_mmap_offset args = { .handle = vmgpu_bo_handle(bo) };

	return vmgpu_test_ioctl(dev, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, &args) ? 0 : args.offset;
}

static int export(vmgpu_device *dev, vmgpu_bo *bo)
{
	int fd;

	return drmPrimeHandleToFD(vmgpu_device_fd(dev), vmgpu_bo_handle(bo),
				  DRM_CLOEXEC | DRM_RDWR, &fd) ? -1 : fd;
}

/*
 * An allocation without CPU access is refused by the mmap itself: through
 * a dma-buf, and at its fake offset on the DRM fd. The driver is reloaded
 * first so that fake offsets are handed out in order: the refused
 * allocation's lies between its neighbours', and every page offset there
 * is tried.
 */
TEST(mmap_needs_cpu_access)
{
	struct drm_vmgpu_query_segments *s;
	vmgpu_bo *before, *gpu_only, *after;
	uint64_t lo, hi, off;
	int refused = 0, mapped = 0;
	vmgpu_device *dev;
	uint32_t aperture;
	int dmabuf;

	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu"));
	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_query_segments(dev, &s));
	aperture = vmgpu_aperture_segment_id(s);
	free(s);
	ASSERT_EQ(0, vmgpu_test_create(dev, BO_SIZE, DRM_VMGPU_ALLOC_CPU_ACCESS, 1u << aperture,
				       aperture, &before));
	ASSERT_EQ(0, vmgpu_test_create(dev, BO_SIZE, 0, 1u << aperture, aperture, &gpu_only));
	ASSERT_EQ(0, vmgpu_test_create(dev, BO_SIZE, DRM_VMGPU_ALLOC_CPU_ACCESS, 1u << aperture,
				       aperture, &after));

	dmabuf = export(dev, gpu_only);
	ASSERT_LE(0, dmabuf);
	EXPECT_EQ(EACCES, vmgpu_test_try_mmap(dmabuf, BO_SIZE, 0));
	close(dmabuf);
	dmabuf = export(dev, before);
	ASSERT_LE(0, dmabuf);
	EXPECT_EQ(0, vmgpu_test_try_mmap(dmabuf, BO_SIZE, 0)) TH_LOG("a CPU-accessible dma-buf was refused");
	close(dmabuf);

	lo = mmap_offset(dev, before);
	hi = mmap_offset(dev, after);
	ASSERT_NE(0, lo);
	ASSERT_LT(lo, hi);
	EXPECT_EQ(0, vmgpu_test_try_mmap(vmgpu_device_fd(dev), BO_SIZE, lo));
	for (off = lo + BO_SIZE; off < hi; off += 4096) {
		int err = vmgpu_test_try_mmap(vmgpu_device_fd(dev), BO_SIZE, off);

		refused += err == EACCES;
		mapped += !err;
	}
	EXPECT_EQ(0, mapped) TH_LOG("the allocation without CPU access was mapped");
	EXPECT_EQ(1, refused) TH_LOG("its fake offset was never found between %#llx and %#llx",
				     (unsigned long long)lo, (unsigned long long)hi);

	vmgpu_bo_unref(before);
	vmgpu_bo_unref(gpu_only);
	vmgpu_bo_unref(after);
	vmgpu_device_unref(dev);
}

/*
 * A dma-buf mapping sees the allocation wherever it is: after an eviction
 * it reads the moved data, not what the next allocation writes into the
 * VRAM it left; writes through it survive the way back. A forked child
 * reads it too.
 */
TEST_F(cpu, dmabuf_mmap_follows_moves)
{
	vmgpu_bo *bo, *next;
	uint8_t *shared;
	void *cpu, *next_cpu;
	uint64_t first = 0;
	int dmabuf, status;
	pid_t child;

	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, self->aperture, BO_SIZE,
						&bo, &cpu));
	vmgpu_test_fill(cpu, BO_SIZE, 1);
	dmabuf = export(self->dev, bo);
	ASSERT_LE(0, dmabuf);
	shared = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, shared);
	EXPECT_EQ(0, vmgpu_test_check(shared, BO_SIZE, 1, &first));

	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, self->aperture, BO_SIZE,
						&next, &next_cpu));
	vmgpu_test_fill(next_cpu, BO_SIZE, 2);
	EXPECT_EQ(0, vmgpu_test_check(shared, BO_SIZE, 1, &first))
		TH_LOG("the dma-buf mapping still reads the VRAM it left, at %#llx",
		       (unsigned long long)first);

	vmgpu_test_fill(shared, BO_SIZE, 3);
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	EXPECT_EQ(0, vmgpu_test_check(cpu, BO_SIZE, 3, &first))
		TH_LOG("writes through the dma-buf mapping lost at %#llx",
		       (unsigned long long)first);
	EXPECT_EQ(0, vmgpu_test_check(next_cpu, BO_SIZE, 2, &first))
		TH_LOG("writes through the dma-buf mapping landed in another allocation");

	fflush(stdout);
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(vmgpu_test_check(shared, BO_SIZE, 3, &first) ? 1 : 0);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	munmap(shared, BO_SIZE);
	close(dmabuf);
	vmgpu_bo_unref(next);
	vmgpu_bo_unref(bo);
}

/* A thread that faults on its allocation and waits there for its clear. */
struct holder {
	pthread_t thread;
	vmgpu_bo *bo;
	volatile uint32_t *cpu;
	int started;
	int done;
	uint32_t seen;
};

static int holders_go;

static void *hold(void *arg)
{
	struct holder *h = arg;

	while (!__atomic_load_n(&holders_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	__atomic_store_n(&h->started, 1, __ATOMIC_RELEASE);
	h->seen = h->cpu[0];
	__atomic_store_n(&h->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static sigjmp_buf sigbus_jmp;

static int64_t thread_cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000ll +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

static void on_sigbus(int sig)
{
	siglongjmp(sigbus_jmp, 1);
}

/* A segment's use once it has not changed for a while. */
static int segment_settled(vmgpu_device *dev, uint32_t id, uint64_t *used)
{
	uint64_t last = ~0ull;
	int same = 0, polls;

	for (polls = 0; polls < 200 && same < 5; polls++) {
		if (vmgpu_test_segment_used(dev, id, used))
			return -1;
		same = *used == last ? same + 1 : 0;
		last = *used;
		usleep(20 * 1000);
	}
	return same < 5 ? -1 : 0;
}

#define HOLDERS		2
#define HOLD_MS		"4000"
/* CPU time the fault may take, of the HOLD_MS it waits. */
#define SPIN_MAX_MS	1000
#define MOVER_SIZE	MiB

/*
 * A fault that must move its allocation into a memory segment (a swizzled
 * allocation evicted swizzled is paged in first, seed 001 case 2) finds
 * the segment full of allocations whose own faults hold them, waiting for
 * their clears. It waits for them and evicts one; it used to evict only
 * what it could trylock, and fail: SIGBUS, or -ENOMEM from TTM, which made
 * the fault retry at once, spinning until the holders were done.
 */
TEST_F_TIMEOUT(cpu, fault_waits_for_held_allocations, 120)
{
	struct sigaction on_bus = { .sa_handler = on_sigbus }, old_bus;
	struct holder holders[HOLDERS] = { 0 };
	uint64_t seg_size = 0, used, hold_size, bad = 0, first = 0;
	struct drm_vmgpu_query_device dev_info;
	struct drm_vmgpu_gem_info gem;
	uint32_t seg, page_size = 0, i, moved = 0;
	volatile uint32_t first_word = 0;
	volatile int sigbus = 0;
	int64_t cpu_before, cpu_spent;
	vmgpu_bo *mover;
	void *mover_cpu;

	ASSERT_EQ(0, vmgpu_query_device(self->dev, &dev_info));
	seg = vmgpu_test_visible_segment(self->dev, &seg_size, &page_size);
	if (!seg || !dev_info.host_aperture_size)
		SKIP(return, "needs a memory segment the BAR shows whole, and a host aperture");
	ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, MOVER_SIZE, DRM_VMGPU_ALLOC_SWIZZLED,
					      1u << seg | 1u << self->aperture, seg, &mover,
					      &mover_cpu));
	vmgpu_test_fill(mover_cpu, MOVER_SIZE, 0x5b05);
	ASSERT_EQ(0, vmgpu_bo_evict(mover));
	ASSERT_EQ(0, vmgpu_bo_info_flags(mover, DRM_VMGPU_GEM_INFO_WAIT, &gem));
	ASSERT_EQ(0, gem.segment_id) TH_LOG("the swizzled allocation was not evicted");

	/*
	 * The holders take what is free of the segment, to under a page each,
	 * once the earlier tests' deferred destructions are done.
	 */
	ASSERT_EQ(0, segment_settled(self->dev, seg, &used));
	hold_size = (seg_size - used) / HOLDERS / page_size * page_size;
	ASSERT_LT(seg_size - used - HOLDERS * hold_size, MOVER_SIZE);
	/* Each holder's own clear, not a scrub of freed VRAM ahead of it. */
	ASSERT_EQ(0, vmgpu_test_vram_scrub(0));
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", HOLD_MS));
	for (i = 0; i < HOLDERS; i++) {
		void *cpu;

		ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, seg, self->aperture,
							hold_size, &holders[i].bo, &cpu));
		holders[i].cpu = cpu;
		/* No wait: the clear is still queued behind the delay. */
		ASSERT_EQ(0, vmgpu_bo_info(holders[i].bo, &gem));
		ASSERT_EQ(seg, gem.segment_id);
	}
	ASSERT_EQ(0, vmgpu_test_vram_scrub(1));
	/*
	 * Threads first: while a fault holds the mmap lock, nothing may take
	 * it for writing (a thread's stack, a mapping, malloc) before the
	 * fault under test, or that waits for the holders' faults.
	 */
	__atomic_store_n(&holders_go, 0, __ATOMIC_RELEASE);
	for (i = 0; i < HOLDERS; i++)
		ASSERT_EQ(0, pthread_create(&holders[i].thread, NULL, hold, &holders[i]));
	__atomic_store_n(&holders_go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < HOLDERS; i++)
		while (!__atomic_load_n(&holders[i].started, __ATOMIC_ACQUIRE))
			usleep(1000);
	/* Into their faults: the clears wait behind the delay for seconds. */
	usleep(300 * 1000);

	/* Else the fault under test would find them gone: no test at all. */
	for (i = 0; i < HOLDERS; i++)
		ASSERT_EQ(0, __atomic_load_n(&holders[i].done, __ATOMIC_ACQUIRE));

	/* One fault, timed: the rest of the allocation is read afterwards. */
	ASSERT_EQ(0, sigaction(SIGBUS, &on_bus, &old_bus));
	cpu_before = thread_cpu_ms();
	if (sigsetjmp(sigbus_jmp, 1))
		sigbus = 1;
	else
		first_word = *(volatile uint32_t *)mover_cpu;
	cpu_spent = thread_cpu_ms() - cpu_before;
	sigaction(SIGBUS, &old_bus, NULL);
	ASSERT_EQ(0, sigbus) TH_LOG("the fault raised SIGBUS");
	/* Waiting, not spinning: the holders keep theirs for seconds. */
	EXPECT_GT(SPIN_MAX_MS, cpu_spent) TH_LOG("the fault spun for %lld ms of CPU",
						  (long long)cpu_spent);
	EXPECT_EQ((uint32_t)vmgpu_test_word(0x5b05, 0), first_word);
	bad = vmgpu_test_check(mover_cpu, MOVER_SIZE, 0x5b05, &first);
	EXPECT_EQ(0, bad) TH_LOG("%llu bytes changed, first at %#llx", (unsigned long long)bad,
				 (unsigned long long)first);

	for (i = 0; i < HOLDERS; i++) {
		ASSERT_EQ(0, pthread_join(holders[i].thread, NULL));
		EXPECT_EQ(0, holders[i].seen);
		ASSERT_EQ(0, vmgpu_bo_info_flags(holders[i].bo, DRM_VMGPU_GEM_INFO_WAIT, &gem));
		moved += gem.segment_id != seg;
		vmgpu_bo_unref(holders[i].bo);
	}
	ASSERT_EQ(0, vmgpu_bo_info_flags(mover, DRM_VMGPU_GEM_INFO_WAIT, &gem));
	EXPECT_EQ(seg, gem.segment_id) TH_LOG("not paged in for the CPU");
	/* The room it took was a held allocation's. */
	EXPECT_LE(1, moved);
	vmgpu_bo_unref(mover);
}

TEST_HARNESS_MAIN
