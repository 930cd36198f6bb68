// SPDX-License-Identifier: MIT
/*
 * vmgpu-bench-umd: the UMD layer's queues and renameable buffers. A
 * WRITE_DISCARD map of a buffer the GPU uses against a blocking WRITE map
 * (256 B, 64 KiB, 1 MiB), the renamed storage in flight under DISCARD spam
 * against the queue's budget, the latency of a DO_NOT_WAIT map that finds
 * the buffer busy, and the CPU a 100 ms blocking map burns against a spin
 * of DO_NOT_WAIT maps.
 *
 * Prints "bench: <name> <value> <unit>" and "ratio: <name> <value>" lines;
 * on failure "bench: error ..." and exits 1.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libvmgpu.h"

#define KiB			(1ull << 10)
#define MiB			(1ull << 20)
#define BUSY_DELAY_US		50000	/* keeps the GPU on the first copy */
#define RENAME_SIZE		(64 * KiB)
#define RENAME_ITERATIONS	3000
#define RENAME_DELAY_US		100
#define RENAME_FLUSH_BYTES	(2 * MiB)
#define RENAME_WAIT_BYTES	(8 * MiB)
#define DNW_SIZE		(64 * KiB)
#define DNW_CALLS		10000
#define WAIT_SIZE		(64 * KiB)
#define WAIT_NS			100000000ull
#define FINISH_TIMEOUT_NS	(30 * 1000000000ull)

struct map_size {
	const char *name;
	uint64_t size;
	int discard_iterations, blocking_iterations;
};

static const struct map_size map_sizes[] = {
	{ "256b", 256, 2000, 100 },
	{ "64k", 64 * KiB, 2000, 100 },
	{ "1m", MiB, 200, 20 },
};

static uint64_t lat[DNW_CALLS];
/* The CPU write's share of each iteration. */
static uint64_t write_lat[DNW_CALLS];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void fail(const char *what, int err)
{
	printf("bench: error %s: %s\n", what, strerror(-err));
	exit(1);
}

static void fail_msg(const char *msg)
{
	printf("bench: error %s\n", msg);
	exit(1);
}

static void check(int ret, const char *what)
{
	if (ret)
		fail(what, ret);
}

static vmgpu_buffer *buffer(vmgpu_queue *q, uint64_t size)
{
	vmgpu_buffer *buf;

	check(vmgpu_buffer_create(q, size, 0, &buf), "buffer create");
	return buf;
}

/* Map [0, size) with mode, fill it with byte, unmap; ns the fill took. */
static uint64_t upload(vmgpu_buffer *buf, uint32_t mode, uint64_t size, int byte)
{
	uint64_t t;
	void *p;

	check(vmgpu_buffer_map(buf, mode, 0, 0, size, &p), "map");
	t = now_ns();
	memset(p, byte, size);
	t = now_ns() - t;
	check(vmgpu_buffer_unmap(buf), "unmap");
	return t;
}

/* The CPU releases a gate: never waits, the GPU's WAIT reads coherently. */
static void release(vmgpu_buffer *sem, uint64_t value)
{
	void *p;

	check(vmgpu_buffer_map(sem, VMGPU_MAP_WRITE_NO_OVERWRITE, 0, 0, 8, &p),
	      "map semaphore");
	*(volatile uint64_t *)p = value;
	check(vmgpu_buffer_unmap(sem), "unmap semaphore");
}

/*
 * Make buf busy behind a gate: the GPU waits for sem >= value, then
 * writes buf (a READ map waits for the last GPU write, not for reads).
 */
static void gate_write(vmgpu_queue *q, vmgpu_buffer *sem, uint64_t value,
		       vmgpu_buffer *buf, vmgpu_buffer *src, uint64_t size)
{
	check(vmgpu_queue_wait_value(q, sem, 0, value), "wait value");
	check(vmgpu_queue_copy(q, buf, 0, src, 0, size), "copy");
	check(vmgpu_queue_flush(q), "flush");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct lat_stats {
	double p50_ns, p99_ns, per_s, ioctls, write_p50_ns;
};

/* Sorts lat[0..n) and write_lat[0..n). */
static struct lat_stats summarize(int n, uint64_t total_ns, uint64_t ioctls)
{
	qsort(lat, n, sizeof(lat[0]), cmp_u64);
	qsort(write_lat, n, sizeof(write_lat[0]), cmp_u64);
	return (struct lat_stats){
		.p50_ns = lat[n / 2],
		.p99_ns = lat[n * 99 / 100],
		.per_s = n / (total_ns / 1e9),
		.ioctls = (double)ioctls / n,
		.write_p50_ns = write_lat[n / 2],
	};
}

static void print_maps(const char *kind, const char *size, const struct lat_stats *s)
{
	printf("bench: %s_%s_maps_per_s %.0f maps/s\n", kind, size, s->per_s);
	printf("bench: %s_%s_p50_ns %.0f ns\n", kind, size, s->p50_ns);
	printf("bench: %s_%s_p99_ns %.0f ns\n", kind, size, s->p99_ns);
	printf("bench: %s_%s_cpu_write_p50_ns %.0f ns\n", kind, size, s->write_p50_ns);
	printf("bench: %s_%s_ioctls_per_map %.3f ioctls\n", kind, size, s->ioctls);
}

/*
 * WRITE_DISCARD: the buffer is busy (a copy behind a 50 ms NOP) when the
 * loop starts, and every iteration's copy keeps the new storage in use,
 * so each map renames. No explicit flush: the library flushes on its
 * renaming budget or a full job. Each iteration is map, write, unmap and
 * the recorded copy; the final vmgpu_queue_finish is timed apart.
 */
static struct lat_stats discard_loop(vmgpu_device *dev, vmgpu_queue *q,
				     const struct map_size *m)
{
	vmgpu_buffer *buf = buffer(q, m->size), *sink = buffer(q, m->size);
	uint64_t ioctls, start, prev, t;
	struct lat_stats s;
	int i;

	upload(buf, VMGPU_MAP_WRITE, m->size, 0x11);
	check(vmgpu_queue_delay(q, BUSY_DELAY_US), "delay");
	check(vmgpu_queue_copy(q, sink, 0, buf, 0, m->size), "copy");
	check(vmgpu_queue_flush(q), "flush");

	ioctls = vmgpu_device_ioctl_count(dev);
	start = prev = now_ns();
	for (i = 0; i < m->discard_iterations; i++) {
		write_lat[i] = upload(buf, VMGPU_MAP_WRITE_DISCARD, m->size, i);
		check(vmgpu_queue_copy(q, sink, 0, buf, 0, m->size), "copy");
		t = now_ns();
		lat[i] = t - prev;
		prev = t;
	}
	s = summarize(m->discard_iterations, prev - start,
		      vmgpu_device_ioctl_count(dev) - ioctls);

	t = now_ns();
	check(vmgpu_queue_finish(q, FINISH_TIMEOUT_NS), "finish");
	printf("bench: discard_%s_finish_us %.1f us\n", m->name, (now_ns() - t) / 1e3);
	vmgpu_buffer_unref(buf);
	vmgpu_buffer_unref(sink);
	return s;
}

/* Blocking WRITE: each iteration the GPU reads the buffer, the map waits. */
static struct lat_stats blocking_loop(vmgpu_device *dev, vmgpu_queue *q,
				      const struct map_size *m)
{
	vmgpu_buffer *buf = buffer(q, m->size), *sink = buffer(q, m->size);
	uint64_t ioctls, start, prev, t;
	struct lat_stats s;
	int i;

	upload(buf, VMGPU_MAP_WRITE, m->size, 0x22);
	ioctls = vmgpu_device_ioctl_count(dev);
	start = prev = now_ns();
	for (i = 0; i < m->blocking_iterations; i++) {
		check(vmgpu_queue_copy(q, sink, 0, buf, 0, m->size), "copy");
		check(vmgpu_queue_flush(q), "flush");
		write_lat[i] = upload(buf, VMGPU_MAP_WRITE, m->size, i);
		t = now_ns();
		lat[i] = t - prev;
		prev = t;
	}
	s = summarize(m->blocking_iterations, prev - start,
		      vmgpu_device_ioctl_count(dev) - ioctls);
	check(vmgpu_queue_finish(q, FINISH_TIMEOUT_NS), "finish");
	vmgpu_buffer_unref(buf);
	vmgpu_buffer_unref(sink);
	return s;
}

static void bench_discard(vmgpu_device *dev, vmgpu_queue *q)
{
	size_t i;

	for (i = 0; i < sizeof(map_sizes) / sizeof(map_sizes[0]); i++) {
		const struct map_size *m = &map_sizes[i];
		struct lat_stats d = discard_loop(dev, q, m);
		struct lat_stats b = blocking_loop(dev, q, m);

		print_maps("discard", m->name, &d);
		print_maps("blocking", m->name, &b);
		printf("ratio: discard_vs_blocking_%s %.1f\n", m->name,
		       b.p50_ns / d.p50_ns);
		/* The CPU write costs both the same: compare what the maps cost. */
		printf("ratio: discard_vs_blocking_%s_map_only %.1f\n", m->name,
		       (b.p50_ns - b.write_p50_ns) / (d.p50_ns - d.write_p50_ns));
	}
}

/* DISCARD spam on a GPU kept behind: renamed storage in flight vs budget. */
static void bench_rename_budget(vmgpu_device *dev)
{
	const struct vmgpu_queue_info info = {
		.engine = DRM_VMGPU_ENGINE_GPU_VA0,
		.rename_flush_bytes = RENAME_FLUSH_BYTES,
		.rename_wait_bytes = RENAME_WAIT_BYTES,
	};
	struct vmgpu_queue_stats st;
	vmgpu_buffer *buf, *sink;
	vmgpu_queue *q;
	void *p;
	int i;

	check(vmgpu_queue_create(dev, &info, &q), "queue create (budget)");
	buf = buffer(q, RENAME_SIZE);
	sink = buffer(q, RENAME_SIZE);
	for (i = 0; i < RENAME_ITERATIONS; i++) {
		check(vmgpu_buffer_map(buf, VMGPU_MAP_WRITE_DISCARD, 0, 0, RENAME_SIZE, &p),
		      "map discard");
		memset(p, i, RENAME_SIZE);
		check(vmgpu_buffer_unmap(buf), "unmap");
		check(vmgpu_queue_copy(q, sink, 0, buf, 0, RENAME_SIZE), "copy");
		check(vmgpu_queue_delay(q, RENAME_DELAY_US), "delay");
	}
	check(vmgpu_queue_finish(q, FINISH_TIMEOUT_NS), "finish");
	vmgpu_queue_stats(q, &st);
	printf("bench: rename_peak_in_flight %llu KiB\n",
	       (unsigned long long)(st.renamed_bytes_peak / KiB));
	printf("bench: rename_budget %llu KiB\n",
	       (unsigned long long)(RENAME_WAIT_BYTES / KiB));
	printf("bench: rename_budget_waits %llu waits\n",
	       (unsigned long long)st.budget_waits);
	printf("bench: rename_budget_flushes %llu flushes\n",
	       (unsigned long long)st.budget_flushes);
	printf("ratio: rename_peak_vs_budget %.3f\n",
	       (double)st.renamed_bytes_peak / RENAME_WAIT_BYTES);
	vmgpu_buffer_unref(buf);
	vmgpu_buffer_unref(sink);
	vmgpu_queue_unref(q);
}

/* DO_NOT_WAIT READ maps of a buffer the gated GPU is to write: -EBUSY. */
static void bench_do_not_wait(vmgpu_device *dev, vmgpu_queue *q,
			      vmgpu_buffer *sem, uint64_t *gate)
{
	vmgpu_buffer *buf = buffer(q, DNW_SIZE), *src = buffer(q, DNW_SIZE);
	uint64_t ioctls, loop, start, t;
	struct lat_stats s;
	void *p;
	int i, ret;

	upload(src, VMGPU_MAP_WRITE, DNW_SIZE, 0x33);
	gate_write(q, sem, ++*gate, buf, src, DNW_SIZE);
	ioctls = vmgpu_device_ioctl_count(dev);
	loop = now_ns();
	for (i = 0; i < DNW_CALLS; i++) {
		start = now_ns();
		ret = vmgpu_buffer_map(buf, VMGPU_MAP_READ, VMGPU_MAP_DO_NOT_WAIT, 0,
				       DNW_SIZE, &p);
		t = now_ns();
		if (ret != -EBUSY) {
			if (!ret)
				vmgpu_buffer_unmap(buf);
			release(sem, *gate);
			printf("bench: error DO_NOT_WAIT map of a busy buffer returned %d\n", ret);
			exit(1);
		}
		lat[i] = t - start;
	}
	loop = now_ns() - loop;
	ioctls = vmgpu_device_ioctl_count(dev) - ioctls;
	release(sem, *gate);
	check(vmgpu_queue_finish(q, FINISH_TIMEOUT_NS), "finish");
	s = summarize(DNW_CALLS, loop, ioctls);
	printf("bench: do_not_wait_p50_ns %.0f ns\n", s.p50_ns);
	printf("bench: do_not_wait_p99_ns %.0f ns\n", s.p99_ns);
	printf("bench: do_not_wait_ioctls_per_call %.3f ioctls\n", s.ioctls);
	vmgpu_buffer_unref(buf);
	vmgpu_buffer_unref(src);
}

struct waiter {
	vmgpu_buffer *buf;
	bool spin;
	int ret;
	uint64_t cpu_ns, wall_ns;
};

/* Thread A: a READ map of the gated buffer, blocking or spinning. */
static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	uint64_t cpu = thread_cpu_ns(), wall = now_ns();
	void *p;

	do
		w->ret = vmgpu_buffer_map(w->buf, VMGPU_MAP_READ,
					  w->spin ? VMGPU_MAP_DO_NOT_WAIT : 0, 0,
					  WAIT_SIZE, &p);
	while (w->spin && w->ret == -EBUSY);
	w->cpu_ns = thread_cpu_ns() - cpu;
	w->wall_ns = now_ns() - wall;
	if (!w->ret)
		w->ret = vmgpu_buffer_unmap(w->buf);
	return NULL;
}

/*
 * The gate opens 100 ms after thread A starts its map. The semaphore is
 * mapped before A starts and unmapped after it is done, so that the main
 * thread makes no libvmgpu call while A is in one: the header does not
 * say a queue may be used by two threads at once. The plain store is
 * enough, WAIT never goes through the device cache.
 */
static uint64_t wait_cpu_ns(vmgpu_queue *q, vmgpu_buffer *sem, uint64_t *gate,
			    bool spin)
{
	vmgpu_buffer *buf = buffer(q, WAIT_SIZE), *src = buffer(q, WAIT_SIZE);
	struct waiter w = { .buf = buf, .spin = spin };
	const struct timespec wait = { 0, WAIT_NS };
	pthread_t thread;
	void *p;

	upload(src, VMGPU_MAP_WRITE, WAIT_SIZE, 0x44);
	gate_write(q, sem, ++*gate, buf, src, WAIT_SIZE);
	check(vmgpu_buffer_map(sem, VMGPU_MAP_WRITE_NO_OVERWRITE, 0, 0, 8, &p),
	      "map semaphore");
	if (pthread_create(&thread, NULL, waiter_main, &w))
		fail_msg("pthread_create");
	nanosleep(&wait, NULL);
	*(volatile uint64_t *)p = *gate;
	pthread_join(thread, NULL);
	check(vmgpu_buffer_unmap(sem), "unmap semaphore");
	check(w.ret, spin ? "spinning map" : "blocking map");
	if (w.wall_ns < WAIT_NS / 2)
		fail_msg("READ map returned before the gate opened");
	check(vmgpu_queue_finish(q, FINISH_TIMEOUT_NS), "finish");
	vmgpu_buffer_unref(buf);
	vmgpu_buffer_unref(src);
	return w.cpu_ns;
}

static void bench_wait_cpu(vmgpu_queue *q, vmgpu_buffer *sem, uint64_t *gate)
{
	double wait = wait_cpu_ns(q, sem, gate, false) / 1e3;
	double spin = wait_cpu_ns(q, sem, gate, true) / 1e3;

	printf("bench: wait_100ms_cpu_us %.1f us\n", wait);
	printf("bench: spin_100ms_cpu_us %.1f us\n", spin);
	printf("ratio: wait_cpu_vs_spin %.4f\n", wait / spin);
}

int main(void)
{
	vmgpu_buffer *sem;
	vmgpu_device *dev;
	vmgpu_queue *q;
	uint64_t gate = 0;

	check(vmgpu_device_open(&dev), "open");
	check(vmgpu_queue_create(dev, &(struct vmgpu_queue_info){
					.engine = DRM_VMGPU_ENGINE_GPU_VA0 }, &q),
	      "queue create");
	/* The gates' semaphore: new buffers read as zero. */
	sem = buffer(q, 8);

	bench_discard(dev, q);
	bench_rename_budget(dev);
	bench_do_not_wait(dev, q, sem, &gate);
	bench_wait_cpu(q, sem, &gate);

	vmgpu_buffer_unref(sem);
	vmgpu_queue_unref(q);
	vmgpu_device_unref(dev);
	return 0;
}
