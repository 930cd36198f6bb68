// SPDX-License-Identifier: MIT
/*
 * vmgpu-bench: eviction bandwidth between VRAM and system memory, against
 * a plain memcpy in guest RAM, the allocation create + destroy rate, and
 * user submission: empty-job latency and rate, busy checks through the
 * seqno page against an ioctl, the CPU a non-polling wait burns against a
 * spin, and the destroy latency of a busy allocation against an idle one.
 * The clear of a new allocation, and a physical-engine copy against the
 * eviction (what the paging VA costs a move).
 * CPU access (bench/vmgpu_bench_cpu.c): write and read bandwidth through
 * the VRAM BAR, the CPU host aperture (plain and detiling a swizzled
 * allocation) and system memory, and the latency of a lock that finds the
 * allocation visible, that lends it host-aperture pages, and that moves
 * it to system memory. The worst
 * latency of a register read from the CPU, idle and while the device
 * moves half of segment 1 (up to 256 MiB) both ways. With "cpu", the CPU
 * access figures only.
 *
 * Prints "bench: <name> <value> <unit>" and "ratio: <name> <value>" lines;
 * on failure "bench: error ..." and exits 1.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "libvmgpu.h"
#include "hw/vmgpu_hw.h"
#include "vmgpu_bench.h"

#define MOVE_SIZE		(64 * MiB)
#define MOVE_ROUNDS		5
#define ALLOC_SIZE		4096
#define ALLOC_ITERATIONS	10000
/* How long a closed allocation may take to leave its segment. */
#define FILL			0x5a
#define LATENCY_JOBS		500
#define RATE_JOBS		2000
#define BUSY_CHECKS		200000
#define WAIT_US			100000
#define DESTROY_BOS		32
#define DESTROY_VA		0x100000000ull
#define LATENCY_MOVE_MAX	(256 * MiB)
#define IDLE_READS		20000
#define MMIO_READ_GAP_US	20

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void fail(const char *what, int err)
{
	printf("bench: error %s: %s\n", what, strerror(-err));
	exit(1);
}

void fail_msg(const char *msg)
{
	printf("bench: error %s\n", msg);
	exit(1);
}

vmgpu_bo *create(vmgpu_device *dev, uint64_t size, uint32_t flags,
		 uint32_t segments, uint32_t preferred)
{
	const struct vmgpu_bo_create_info info = {
		.size = size,
		.flags = flags,
		.segments = segments,
		.preferred_segment = preferred,
	};
	vmgpu_bo *bo;
	int ret;

	ret = vmgpu_bo_create(dev, &info, &bo);
	if (ret)
		fail("create", ret);
	return bo;
}

static uint32_t segment_of(vmgpu_bo *bo)
{
	struct drm_vmgpu_gem_info info;
	int ret;

	ret = vmgpu_bo_info(bo, &info);
	if (ret)
		fail("info", ret);
	return info.segment_id;
}

/*
 * Paging operations are only queued by the ioctls; a CPU access through the
 * mapping waits for the allocation's pending move, so reading its first
 * byte ends a timed move.
 */
static void touch(const volatile uint8_t *cpu)
{
	if (cpu[0] != FILL)
		fail_msg("moved allocation lost its contents");
}

static double memcpy_mib_s(void)
{
	uint8_t *src = malloc(MOVE_SIZE), *dst = malloc(MOVE_SIZE);
	double best = 0, start, t;
	int i;

	if (!src || !dst)
		fail_msg("out of memory for the memcpy buffers");
	/* Fault both in first: time the copy, not the page faults. */
	memset(src, FILL, MOVE_SIZE);
	memset(dst, 0, MOVE_SIZE);
	for (i = 0; i < MEMCPY_RUNS; i++) {
		start = now();
		memcpy(dst, src, MOVE_SIZE);
		t = now() - start;
		if (!best || t < best)
			best = t;
	}
	/* Reading dst keeps the copies from being optimised away. */
	if (dst[MOVE_SIZE - 1] != FILL)
		fail_msg("memcpy copied the wrong bytes");
	free(src);
	free(dst);
	return MOVE_SIZE / MiB / best;
}

/*
 * A 64 MiB allocation in segment 1 is evicted to system memory (WDDM
 * Evict), then made resident again, MOVE_ROUNDS times. Each move is timed
 * from the ioctl to the first byte being readable through the mapping,
 * which waits for it. The first round is reported apart: it also pays for
 * new system pages and their caching change, which TTM's pool spares the
 * later rounds; of those, the best counts, as for memcpy.
 */
static double bench_eviction(vmgpu_device *dev, uint32_t aperture)
{
	const uint32_t set = 1u << 1 | 1u << aperture;
	double evict_mib_s, restore_mib_s, memcpy_bw, start, t;
	double cold_evict = 0, cold_restore = 0;
	int round;
	vmgpu_bo *a;
	void *cpu;
	int ret;

	memcpy_bw = memcpy_mib_s();

	a = create(dev, MOVE_SIZE, DRM_VMGPU_ALLOC_CPU_ACCESS, set, 1);
	ret = vmgpu_bo_map(a, &cpu);
	if (ret)
		fail("map", ret);
	memset(cpu, FILL, MOVE_SIZE);
	if (segment_of(a) != 1)
		fail_msg("64 MiB allocation not placed in segment 1");

	evict_mib_s = restore_mib_s = 0;
	for (round = 0; round < MOVE_ROUNDS; round++) {
		start = now();
		ret = vmgpu_bo_evict(a);
		if (ret)
			fail("evict", ret);
		touch(cpu);
		t = MOVE_SIZE / MiB / (now() - start);
		if (round)
			evict_mib_s = fmax(evict_mib_s, t);
		else
			cold_evict = t;
		if (segment_of(a) == 1)
			fail_msg("evicted allocation still in segment 1");

		start = now();
		ret = vmgpu_bo_make_resident(a);
		if (ret)
			fail("make resident", ret);
		touch(cpu);
		t = MOVE_SIZE / MiB / (now() - start);
		if (round)
			restore_mib_s = fmax(restore_mib_s, t);
		else
			cold_restore = t;
		if (segment_of(a) != 1)
			fail_msg("64 MiB allocation not made resident in segment 1 again");
	}
	vmgpu_bo_unref(a);

	printf("bench: memcpy %.1f MiB/s\n", memcpy_bw);
	printf("bench: evict_vram_to_system %.1f MiB/s (first round %.1f)\n",
	       evict_mib_s, cold_evict);
	printf("bench: restore_system_to_vram %.1f MiB/s (first round %.1f)\n",
	       restore_mib_s, cold_restore);
	printf("ratio: evict_vram_to_system_vs_memcpy %.3f\n",
	       evict_mib_s / memcpy_bw);
	printf("ratio: restore_system_to_vram_vs_memcpy %.3f\n",
	       restore_mib_s / memcpy_bw);
	printf("ratio: evict_vram_to_system_first_round_vs_memcpy %.3f\n",
	       cold_evict / memcpy_bw);
	printf("ratio: restore_system_to_vram_first_round_vs_memcpy %.3f\n",
	       cold_restore / memcpy_bw);
	return evict_mib_s;
}

/*
 * The scrub of freed VRAM (debugfs vram_scrub): on, a new backing made of
 * scrubbed pages gets no clear of its own.
 */
static void set_vram_scrub(bool on)
{
	DIR *dri = opendir("/sys/kernel/debug/dri");
	struct dirent *e;
	char path[300];
	int fd = -1;

	while (dri && fd < 0 && (e = readdir(dri))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%s/vram_scrub", e->d_name);
		fd = open(path, O_WRONLY);
	}
	if (dri)
		closedir(dri);
	if (fd < 0 || write(fd, on ? "1" : "0", 1) != 1)
		fail_msg("debugfs vram_scrub");
	close(fd);
}

/*
 * A clear: a new allocation in segment 1 is ready once GEM_INFO's wait
 * returns, its clear being its only paging operation (the scrub of freed
 * VRAM off, which would spare it). The best of MOVE_ROUNDS.
 */
static void bench_clear(vmgpu_device *dev)
{
	struct drm_vmgpu_gem_info info;
	double best = 0, start;
	int round, ret;

	set_vram_scrub(false);
	for (round = 0; round < MOVE_ROUNDS; round++) {
		vmgpu_bo *bo;

		start = now();
		bo = create(dev, MOVE_SIZE, 0, 1u << 1, 1);
		ret = vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info);
		if (ret)
			fail("info", ret);
		best = fmax(best, MOVE_SIZE / MiB / (now() - start));
		if (info.segment_id != 1)
			fail_msg("64 MiB allocation not placed in segment 1");
		vmgpu_bo_unref(bo);
	}
	set_vram_scrub(true);
	printf("bench: clear_vram %.1f MiB/s\n", best);
}

/*
 * What the paging VA costs a move: the eviction's direction, VRAM to
 * system pages, copied by a physical-engine job between two
 * AccessedPhysically allocations (segment 1 and the aperture segment),
 * which names both by physical reference. The best of MOVE_ROUNDS, after
 * one run that makes them resident.
 */
static void bench_physical_copy(vmgpu_device *dev, uint32_t aperture, double evict_mib_s)
{
	const uint32_t phys = DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY;
	vmgpu_bo *bos[2] = {
		create(dev, MOVE_SIZE, phys, 1u << 1, 1),
		create(dev, MOVE_SIZE, phys, 1u << aperture, aperture),
	};
	const struct drm_vmgpu_patch patches[2] = {
		{ .cmd = 0, .which = DRM_VMGPU_PATCH_FIRST, .alloc = 0 },
		{ .cmd = 0, .which = DRM_VMGPU_PATCH_SECOND, .alloc = 1 },
	};
	int fd = vmgpu_device_fd(dev), round, ret;
	union vmgpu_cmd cmd = { 0 };
	double best = 0, start;
	struct vmgpu_sync out;
	vmgpu_context *ctx;
	uint32_t syncobj;

	cmd.transfer.hdr.opcode = VMGPU_OP_TRANSFER;
	cmd.transfer.size = MOVE_SIZE;
	ret = vmgpu_context_create(dev, DRM_VMGPU_ENGINE_PHYSICAL, &ctx);
	if (ret)
		fail("physical context", ret);
	if (drmSyncobjCreate(fd, 0, &syncobj))
		fail_msg("syncobj");
	out = (struct vmgpu_sync){ .syncobj = syncobj };
	for (round = 0; round <= MOVE_ROUNDS; round++) {
		drmSyncobjReset(fd, &syncobj, 1);
		start = now();
		ret = vmgpu_context_submit_physical(ctx, &cmd, 1, bos, 2, patches, 2, &out, 1,
						    NULL);
		if (ret)
			fail("physical submit", ret);
		if (drmSyncobjWait(fd, &syncobj, 1, INT64_MAX, 0, NULL))
			fail_msg("syncobj wait");
		if (round)
			best = fmax(best, MOVE_SIZE / MiB / (now() - start));
	}
	if (segment_of(bos[0]) != 1 || segment_of(bos[1]) != aperture)
		fail_msg("physical copy's allocations not where asked");
	drmSyncobjDestroy(fd, syncobj);
	vmgpu_context_unref(ctx);
	vmgpu_bo_unref(bos[1]);
	vmgpu_bo_unref(bos[0]);
	printf("bench: copy_vram_to_system_physical %.1f MiB/s\n", best);
	printf("ratio: evict_through_paging_va_vs_physical_copy %.3f\n", evict_mib_s / best);
}

static double bench_alloc(vmgpu_device *dev, const char *name, uint32_t segment)
{
	double start = now(), rate;
	int i;

	for (i = 0; i < ALLOC_ITERATIONS; i++)
		vmgpu_bo_unref(create(dev, ALLOC_SIZE, 0, 1u << segment, segment));
	rate = ALLOC_ITERATIONS / (now() - start);
	printf("bench: %s %.0f allocs/s\n", name, rate);
	return rate;
}

/* Segment 1's allocations with freed VRAM scrubbed ahead and without. */
static void bench_alloc_memory1(vmgpu_device *dev)
{
	double scrubbed, unscrubbed;

	scrubbed = bench_alloc(dev, "alloc_memory1", 1);
	set_vram_scrub(false);
	unscrubbed = bench_alloc(dev, "alloc_memory1_unscrubbed", 1);
	set_vram_scrub(true);
	printf("ratio: alloc_memory1_scrubbed_vs_unscrubbed %.2f\n", scrubbed / unscrubbed);
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static union vmgpu_cmd nop(uint32_t delay_us)
{
	union vmgpu_cmd c = { 0 };

	c.nop.hdr.opcode = VMGPU_OP_NOP;
	c.nop.delay_us = delay_us;
	return c;
}

static void submit_wait(vmgpu_context *ctx, int fd, uint32_t syncobj,
			const union vmgpu_cmd *cmd)
{
	struct vmgpu_sync out = { .syncobj = syncobj };
	int ret;

	drmSyncobjReset(fd, &syncobj, 1);
	ret = vmgpu_context_submit(ctx, cmd, 1, NULL, 0, &out, 1, NULL);
	if (ret)
		fail("submit", ret);
	if (drmSyncobjWait(fd, &syncobj, 1, INT64_MAX, 0, NULL))
		fail_msg("syncobj wait");
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* Empty jobs: submit to fence signalled, one at a time, then back to back. */
static void bench_submit(vmgpu_device *dev, vmgpu_context *ctx)
{
	static double lat[LATENCY_JOBS];
	union vmgpu_cmd cmd = nop(0);
	int fd = vmgpu_device_fd(dev);
	uint64_t seqno = 0;
	uint32_t syncobj;
	double start;
	int i;

	if (drmSyncobjCreate(fd, 0, &syncobj))
		fail_msg("syncobj create");
	for (i = 0; i < LATENCY_JOBS; i++) {
		start = now();
		submit_wait(ctx, fd, syncobj, &cmd);
		lat[i] = now() - start;
	}
	qsort(lat, LATENCY_JOBS, sizeof(lat[0]), cmp_double);
	printf("bench: empty_job_latency_p50 %.1f us\n", lat[LATENCY_JOBS / 2] * 1e6);
	printf("bench: empty_job_latency_p99 %.1f us\n", lat[LATENCY_JOBS * 99 / 100] * 1e6);

	start = now();
	for (i = 0; i < RATE_JOBS; i++)
		if (vmgpu_context_submit(ctx, &cmd, 1, NULL, 0, NULL, 0, &seqno))
			fail_msg("submit");
	while (vmgpu_context_busy(ctx, seqno))
		usleep(100);
	printf("bench: empty_jobs %.0f jobs/s\n", RATE_JOBS / (now() - start));

	/* A busy check of a completed job: the page, then an ioctl. */
	start = now();
	for (i = 0; i < BUSY_CHECKS; i++)
		if (vmgpu_context_busy(ctx, seqno))
			fail_msg("busy after completion");
	double page_ns = (now() - start) / BUSY_CHECKS * 1e9;

	start = now();
	for (i = 0; i < BUSY_CHECKS / 10; i++)
		if (drmSyncobjWait(fd, &syncobj, 1, 0, 0, NULL))
			fail_msg("syncobj busy after completion");
	double ioctl_ns = (now() - start) / (BUSY_CHECKS / 10) * 1e9;

	printf("bench: busy_check_seqno_page %.1f ns\n", page_ns);
	printf("bench: busy_check_ioctl %.1f ns\n", ioctl_ns);
	printf("ratio: busy_check_ioctl_vs_page %.1f\n", ioctl_ns / page_ns);
	drmSyncobjDestroy(fd, syncobj);
}

/* CPU burnt while a 100 ms job runs: a syncobj wait, then a spin. */
static void bench_wait_cpu(vmgpu_device *dev, vmgpu_context *ctx)
{
	union vmgpu_cmd cmd = nop(WAIT_US);
	int fd = vmgpu_device_fd(dev);
	double cpu, sleep_cpu, spin_cpu;
	uint32_t syncobj;
	uint64_t seqno;

	if (drmSyncobjCreate(fd, 0, &syncobj))
		fail_msg("syncobj create");
	cpu = cpu_seconds();
	submit_wait(ctx, fd, syncobj, &cmd);
	sleep_cpu = cpu_seconds() - cpu;

	cpu = cpu_seconds();
	if (vmgpu_context_submit(ctx, &cmd, 1, NULL, 0, NULL, 0, &seqno))
		fail_msg("submit");
	while (vmgpu_context_busy(ctx, seqno))
		;
	spin_cpu = cpu_seconds() - cpu;
	printf("bench: wait_cpu %.2f ms\n", sleep_cpu * 1e3);
	printf("bench: spin_cpu %.2f ms\n", spin_cpu * 1e3);
	printf("ratio: wait_cpu_vs_spin %.4f\n", sleep_cpu / spin_cpu);
	drmSyncobjDestroy(fd, syncobj);
}

/* Destroy latency: allocations a queued 1 s job may use, then idle ones. */
static double destroy_round(vmgpu_device *dev, vmgpu_context *ctx,
			    uint32_t aperture, bool busy)
{
	union vmgpu_cmd cmd = nop(1000000);
	vmgpu_bo *bos[DESTROY_BOS];
	double total = 0, start;
	int i, ret;

	for (i = 0; i < DESTROY_BOS; i++) {
		bos[i] = create(dev, 4096, 0, 1u << aperture, aperture);
		ret = vmgpu_vm_map(bos[i], 0, DESTROY_VA + i * 4096ull, 4096, 0);
		if (ret)
			fail("map", ret);
	}
	if (busy && vmgpu_context_submit(ctx, &cmd, 1, NULL, 0, NULL, 0, NULL))
		fail_msg("submit");
	for (i = 0; i < DESTROY_BOS; i++) {
		start = now();
		ret = vmgpu_bo_destroy(bos[i], 0);
		total += now() - start;
		if (ret)
			fail("destroy", ret);
	}
	/* Let the deferred unmaps go before the VA is used again. */
	usleep(busy ? 1200000 : 10000);
	return total / DESTROY_BOS;
}

static void bench_destroy(vmgpu_device *dev, vmgpu_context *ctx, uint32_t aperture)
{
	double idle = destroy_round(dev, ctx, aperture, false);
	double busy = destroy_round(dev, ctx, aperture, true);

	printf("bench: destroy_idle %.1f us\n", idle * 1e6);
	printf("bench: destroy_busy %.1f us\n", busy * 1e6);
	printf("ratio: destroy_busy_vs_idle %.2f\n", busy / idle);
}

/*
 * Seed "Allocation notification": what NotifyEviction costs. A 16 MiB
 * allocation in system memory under device access is made non-resident
 * and resident again, with and without the flag; each round ends when
 * the allocation is settled. The eviction call alone is timed too: the
 * notification is queued, not waited for.
 */
#define NOTIFY_SIZE	(16ull << 20)
#define NOTIFY_ROUNDS	8

struct nonresident_cost {
	double round_s;
	double evict_s;
};

/* The median: a round the host preempted QEMU in is not the cost. */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

static struct nonresident_cost nonresident_round(vmgpu_device *dev, uint32_t aperture,
						 uint32_t flags)
{
	vmgpu_bo *bo = create(dev, NOTIFY_SIZE, flags, 1u << aperture, aperture);
	double start, rounds[NOTIFY_ROUNDS], evicts[NOTIFY_ROUNDS];
	struct drm_vmgpu_gem_info info;
	int i, ret;

	for (i = 0; i < NOTIFY_ROUNDS; i++) {
		start = now();
		ret = vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT);
		evicts[i] = now() - start;
		if (!ret)
			ret = vmgpu_bo_make_resident(bo);
		if (!ret)
			ret = vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info);
		if (ret)
			fail("non-resident round", ret);
		rounds[i] = now() - start;
	}
	vmgpu_bo_unref(bo);
	return (struct nonresident_cost){
		.round_s = median(rounds, NOTIFY_ROUNDS),
		.evict_s = median(evicts, NOTIFY_ROUNDS),
	};
}

static void bench_notify(vmgpu_device *dev, uint32_t aperture)
{
	struct nonresident_cost plain = nonresident_round(dev, aperture, 0);
	struct nonresident_cost notified =
		nonresident_round(dev, aperture, DRM_VMGPU_ALLOC_NOTIFY_EVICTION);

	printf("bench: nonresident_round %.1f us\n", plain.round_s * 1e6);
	printf("bench: nonresident_round_notify_eviction %.1f us\n", notified.round_s * 1e6);
	printf("ratio: nonresident_round_notify_vs_plain %.2f\n",
	       notified.round_s / plain.round_s);
	printf("bench: nonresident_evict_call %.1f us\n", plain.evict_s * 1e6);
	printf("bench: nonresident_evict_call_notify_eviction %.1f us\n",
	       notified.evict_s * 1e6);
	printf("ratio: nonresident_evict_call_notify_vs_plain %.2f\n",
	       notified.evict_s / plain.evict_s);
}

/* Register reads from the CPU, timed one by one, until told to stop. */
struct mmio_reader {
	const volatile uint32_t *version;
	atomic_bool stop;
	uint64_t reads;
	double worst;
};

static void mmio_read_timed(struct mmio_reader *r)
{
	double start = now(), t;

	(void)*r->version;
	t = now() - start;
	r->reads++;
	if (t > r->worst)
		r->worst = t;
}

static void *mmio_reader_main(void *arg)
{
	struct sched_param param = { .sched_priority = sched_get_priority_min(SCHED_FIFO) };
	struct mmio_reader *r = arg;

	/*
	 * Time the device, not the guest's scheduler: a real-time thread
	 * runs as soon as it wakes, and its sleeps leave the vCPU to the
	 * kernel's work on the move.
	 */
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param))
		fail_msg("cannot run the register reader SCHED_FIFO");
	while (!atomic_load(&r->stop)) {
		mmio_read_timed(r);
		usleep(MMIO_READ_GAP_US);
	}
	return NULL;
}

/* BAR 0 of the device behind @dev, through sysfs (the bench runs as root). */
static const volatile uint32_t *map_registers(vmgpu_device *dev)
{
	char path[128];
	struct stat st;
	void *regs;
	int fd;

	if (fstat(vmgpu_device_fd(dev), &st))
		fail_msg("fstat of the DRM file");
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/resource0",
		 major(st.st_rdev), minor(st.st_rdev));
	fd = open(path, O_RDONLY | O_SYNC);
	if (fd < 0)
		fail_msg("cannot open BAR 0 through sysfs");
	regs = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (regs == MAP_FAILED)
		fail_msg("cannot map BAR 0");
	return regs;
}

/* Queue a move and wait for it: GEM_INFO with WAIT settles it. */
static void move_and_wait(vmgpu_bo *bo, bool evict)
{
	struct drm_vmgpu_gem_info info;
	int ret = evict ? vmgpu_bo_evict(bo) : vmgpu_bo_make_resident(bo);

	if (!ret)
		ret = vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info);
	if (ret)
		fail(evict ? "evict" : "make resident", ret);
}

/*
 * The engine runs on QEMU's main loop in slices: a register read waits for
 * the slice in progress. Its worst case, idle and while an allocation of
 * half of segment 1 (at most 256 MiB) is evicted and restored.
 */
static void bench_mmio_latency(vmgpu_device *dev, uint32_t aperture, uint64_t seg1_size)
{
	/* Half: the console and other allocations may hold part of it. */
	uint64_t size = seg1_size / 2 < LATENCY_MOVE_MAX ? seg1_size / 2 : LATENCY_MOVE_MAX;
	struct mmio_reader r = { .version = map_registers(dev) + VMGPU_REG_VERSION / 4 };
	double idle_worst;
	pthread_t thread;
	vmgpu_bo *bo;
	int i;

	for (i = 0; i < IDLE_READS; i++)
		mmio_read_timed(&r);
	idle_worst = r.worst;
	r.worst = 0;
	r.reads = 0;

	bo = create(dev, size, 0, 1u << 1 | 1u << aperture, 1);
	if (segment_of(bo) != 1)
		fail_msg("the latency move's allocation is not in segment 1");
	if (pthread_create(&thread, NULL, mmio_reader_main, &r))
		fail_msg("pthread_create");
	move_and_wait(bo, true);
	move_and_wait(bo, false);
	atomic_store(&r.stop, true);
	pthread_join(thread, NULL);
	vmgpu_bo_unref(bo);

	printf("bench: mmio_read_worst_idle %.1f us\n", idle_worst * 1e6);
	printf("bench: mmio_read_worst_during_move %.1f us (%llu MiB each way, %llu reads)\n",
	       r.worst * 1e6, (unsigned long long)(size / MiB), (unsigned long long)r.reads);
	if (idle_worst > 0)
		printf("ratio: mmio_read_worst_during_move_vs_idle %.2f\n", r.worst / idle_worst);
}

/*
 * "vmgpu-bench cpu": CPU access only, for a configuration whose VRAM BAR
 * does not cover VRAM (make bench runs it on norebar), where linear pages
 * go through the host aperture and the moves above could not be timed.
 */
int main(int argc, char **argv)
{
	bool cpu_only = argc > 1 && !strcmp(argv[1], "cpu");
	double evict_mib_s;
	struct drm_vmgpu_query_segments *s;
	uint32_t aperture, beyond;
	uint64_t seg1_size;
	bool hap;
	vmgpu_context *ctx;
	vmgpu_device *dev;
	int ret;

	ret = vmgpu_device_open(&dev);
	if (ret)
		fail("open", ret);
	ret = vmgpu_query_segments(dev, &s);
	if (ret)
		fail("query segments", ret);
	aperture = vmgpu_aperture_segment_id(s);
	/* The query lists segments by id, system segment first. */
	if (aperture < 2 || s->segments[1].kind != DRM_VMGPU_SEGMENT_MEMORY)
		fail_msg("no memory segment 1");
	seg1_size = s->segments[1].size;
	beyond = invisible_segment(s);
	free(s);
	if (seg1_size < MOVE_SIZE)
		fail_msg("segment 1 smaller than 64 MiB");
	if (cpu_only)
		goto cpu_access;

	evict_mib_s = bench_eviction(dev, aperture);
	bench_physical_copy(dev, aperture, evict_mib_s);
	bench_clear(dev);
	bench_mmio_latency(dev, aperture, seg1_size);
	bench_alloc(dev, "alloc_aperture", aperture);
	bench_alloc_memory1(dev);
	bench_notify(dev, aperture);

	ret = vmgpu_context_create(dev, DRM_VMGPU_ENGINE_GPU_VA0, &ctx);
	if (ret)
		fail("context", ret);
	bench_submit(dev, ctx);
	bench_wait_cpu(dev, ctx);
	bench_destroy(dev, ctx, aperture);
	vmgpu_context_unref(ctx);

cpu_access:
	hap = has_host_aperture(dev);
	bench_cpu_bandwidth(dev, aperture, hap ? beyond : 0);
	bench_lock(dev, aperture, beyond, hap);
	vmgpu_device_unref(dev);
	return 0;
}
