// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * KUnit: hardware fences. A failing command is blamed on the job that owns
 * its ring slot, even while an older job's completion is not processed
 * yet; a job continuing failed work fails too; a user job's context learns
 * of its completion before the fence signals. Included by vmgpu_fence.c.
 */

#include <kunit/test.h>

struct fence_test {
	struct vmgpu_ring ring;
	u64 seqno;
};

static int fence_test_init(struct kunit *test)
{
	struct fence_test *ft = kunit_kzalloc(test, sizeof(*ft), GFP_KERNEL);

	if (!ft)
		return -ENOMEM;
	ft->ring.name = "kunit";
	ft->ring.num_slots = 16;
	ft->ring.seqno_cpu = &ft->seqno;
	vmgpu_fence_ring_init(&ft->ring);
	test->priv = ft;
	return 0;
}

/* A job's fence over ring slots [first, end); the caller's reference. */
static struct vmgpu_hw_fence *fence_emit(struct kunit *test, struct dma_fence *prev,
					 u32 first, u32 end)
{
	struct fence_test *ft = test->priv;
	struct vmgpu_hw_fence *fence = vmgpu_fence_alloc();

	KUNIT_ASSERT_NOT_NULL(test, fence);
	vmgpu_fence_init(fence, &ft->ring, dma_fence_get(prev), ++ft->ring.next_seqno,
			 first, end);
	return fence;
}

static void fence_put_all(struct vmgpu_hw_fence **fences, int n)
{
	while (n--)
		dma_fence_put(&fences[n]->base);
}

/* The device finished job 1 and failed in job 2 before anyone looked. */
static void fence_blames_owner_of_slot(struct kunit *test)
{
	struct fence_test *ft = test->priv;
	struct vmgpu_hw_fence *f[3] = {
		fence_emit(test, NULL, 0, 3),
		fence_emit(test, NULL, 3, 6),
		fence_emit(test, NULL, 6, 9),
	};

	WRITE_ONCE(ft->seqno, 1);
	KUNIT_EXPECT_EQ(test, vmgpu_fence_blame_slot(&ft->ring, 4, -EIO), 2);
	KUNIT_EXPECT_EQ(test, f[0]->base.error, 0);
	KUNIT_EXPECT_EQ(test, f[1]->base.error, -EIO);

	KUNIT_EXPECT_EQ(test, vmgpu_fence_process(&ft->ring), 1);
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(&f[0]->base));
	KUNIT_EXPECT_EQ(test, f[0]->base.error, 0);
	WRITE_ONCE(ft->seqno, 3);
	KUNIT_EXPECT_EQ(test, vmgpu_fence_process(&ft->ring), 2);
	KUNIT_EXPECT_EQ(test, dma_fence_get_status(&f[1]->base), -EIO);
	KUNIT_EXPECT_EQ(test, dma_fence_get_status(&f[2]->base), 1);
	fence_put_all(f, 3);
}

/* A job may wrap around the end of the ring. */
static void fence_slots_wrap(struct kunit *test)
{
	struct fence_test *ft = test->priv;
	struct vmgpu_hw_fence *f = fence_emit(test, NULL, 14, 2);

	KUNIT_EXPECT_TRUE(test, vmgpu_fence_owns_slot(f, 15, 15));
	KUNIT_EXPECT_TRUE(test, vmgpu_fence_owns_slot(f, 1, 15));
	KUNIT_EXPECT_FALSE(test, vmgpu_fence_owns_slot(f, 2, 15));
	KUNIT_EXPECT_FALSE(test, vmgpu_fence_owns_slot(f, 13, 15));
	KUNIT_EXPECT_EQ(test, vmgpu_fence_blame_slot(&ft->ring, 9, -EIO), 0);
	KUNIT_EXPECT_EQ(test, f->base.error, 0);
	vmgpu_fence_fail_all(&ft->ring, -ENODEV);
	KUNIT_EXPECT_EQ(test, dma_fence_get_status(&f->base), -ENODEV);
	dma_fence_put(&f->base);
}

/* Work that continues failed work fails, even if its own commands ran. */
static void fence_inherits_failure(struct kunit *test)
{
	struct fence_test *ft = test->priv;
	struct vmgpu_hw_fence *f[4];

	f[0] = fence_emit(test, NULL, 0, 2);
	f[1] = fence_emit(test, &f[0]->base, 2, 4);
	f[2] = fence_emit(test, NULL, 4, 6);
	f[3] = fence_emit(test, &f[2]->base, 6, 8);
	KUNIT_EXPECT_EQ(test, vmgpu_fence_blame_slot(&ft->ring, 1, -EIO), 1);
	WRITE_ONCE(ft->seqno, 4);
	KUNIT_EXPECT_EQ(test, vmgpu_fence_process(&ft->ring), 4);
	KUNIT_EXPECT_EQ(test, f[1]->base.error, -EIO);
	KUNIT_EXPECT_EQ(test, f[3]->base.error, 0);
	/* Consumed: no chain of earlier fences is kept alive. */
	KUNIT_EXPECT_NULL(test, f[1]->prev);
	fence_put_all(f, 4);
}

/* What a callback on a user job's fence saw of the job's context. */
struct fence_publish_seen {
	struct dma_fence_cb cb;
	struct vmgpu_context *ctx;
	u64 seqno_page;
	int guilty;
	bool called;
};

static void fence_publish_seen_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct fence_publish_seen *seen = container_of(cb, struct fence_publish_seen, cb);

	seen->seqno_page = READ_ONCE(*seen->ctx->seqno_page->seqno);
	seen->guilty = atomic_read(&seen->ctx->guilty);
	seen->called = true;
}

/*
 * A user job's completion reaches its context before anything can see the
 * fence signalled (the scheduler may free the job from then on): a
 * callback added before any other already sees the seqno page written,
 * and the context guilty when the job failed.
 */
static void fence_publishes_before_signalling(struct kunit *test)
{
	struct fence_test *ft = test->priv;
	struct vmgpu_seqno_page *sp = kunit_kzalloc(test, sizeof(*sp), GFP_KERNEL);
	struct vmgpu_context *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	struct fence_publish_seen seen[2] = { { .ctx = ctx }, { .ctx = ctx } };
	struct vmgpu_hw_fence *f[2];
	u64 page = 0;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, sp);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	sp->seqno = &page;
	ctx->seqno_page = sp;
	for (i = 0; i < 2; i++) {
		f[i] = vmgpu_fence_alloc();
		KUNIT_ASSERT_NOT_NULL(test, f[i]);
		f[i]->ctx = ctx;
		f[i]->ctx_seqno = 40 + i;
		vmgpu_fence_init(f[i], &ft->ring, NULL, ++ft->ring.next_seqno, 2 * i, 2 * i + 2);
		KUNIT_ASSERT_EQ(test, dma_fence_add_callback(&f[i]->base, &seen[i].cb,
							     fence_publish_seen_cb), 0);
	}

	WRITE_ONCE(ft->seqno, 1);
	KUNIT_EXPECT_EQ(test, vmgpu_fence_process(&ft->ring), 1);
	KUNIT_EXPECT_TRUE(test, seen[0].called);
	KUNIT_EXPECT_EQ(test, seen[0].seqno_page, 40);
	KUNIT_EXPECT_EQ(test, seen[0].guilty, 0);
	KUNIT_EXPECT_NULL(test, f[0]->ctx);

	vmgpu_fence_fail(f[1], -EIO);
	KUNIT_EXPECT_TRUE(test, seen[1].called);
	KUNIT_EXPECT_EQ(test, seen[1].seqno_page, 41);
	KUNIT_EXPECT_EQ(test, seen[1].guilty, 1);
	fence_put_all(f, 2);
}

static struct kunit_case vmgpu_fence_cases[] = {
	KUNIT_CASE(fence_blames_owner_of_slot),
	KUNIT_CASE(fence_slots_wrap),
	KUNIT_CASE(fence_inherits_failure),
	KUNIT_CASE(fence_publishes_before_signalling),
	{}
};

static struct kunit_suite vmgpu_fence_suite = {
	.name = "vmgpu_fence",
	.init = fence_test_init,
	.test_cases = vmgpu_fence_cases,
};

kunit_test_suite(vmgpu_fence_suite);
