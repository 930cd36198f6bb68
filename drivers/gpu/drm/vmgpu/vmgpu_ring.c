// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/module.h>

#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "vmgpu_cache.h"
#include "vmgpu_context.h"
#include "vmgpu_device.h"
#include "vmgpu_fence.h"
#include "vmgpu_inject.h"
#include "vmgpu_job.h"
#include "vmgpu_job_types.h"
#include "vmgpu_ring.h"
#include "vmgpu_trace.h"

/**
 * DOC: rings
 *
 * A ring is one of the device's command queues with a DRM scheduler in
 * front of it. The kernel's paging operations (seed "GPU segments": Fill,
 * Transfer, Discard...) go to the privileged paging ring, ring 0; user
 * contexts submit to the user engines, rings 1 and up, each context an
 * entity of its engine's scheduler. Only the kernel writes rings: a user
 * submission is checked and copied in by run_job. The GPU-VA engines
 * reach memory through VMs only, the physical engine through the physical
 * references the kernel patched in (both checked by the device again). Jobs wait for their
 * dependencies in scheduler callbacks, never by blocking the thread that
 * queued them, and the scheduler's credit limit is the ring size, so
 * run_job always finds room. Every job ends with a FENCE to the ring's
 * fence word; FENCE_RINGS tells the fence interrupt which rings to look at.
 *
 * Errors: a command the device rejects halts its ring alone. The error
 * interrupt looks at every ring, retires what the device completed, blames
 * the job that owns the halted slot (-EIO) and resumes the ring after that
 * command; other rings run on.
 *
 * Hangs follow the scheduler's documented recovery: drm_sched_stop(),
 * stop the ring, signal what completed before the stop with success, fail
 * the hung job (-ETIMEDOUT), write the jobs queued behind it to the ring
 * again, drm_sched_start(). Re-running those is safe: a ring runs in order,
 * so nothing queued behind the hung job has started, and every paging
 * command is idempotent anyway (a Fill, or a Transfer between disjoint
 * ranges). The reset stops and restarts that ring alone.
 * The same path, with the device gone, fails everything with -ENODEV at
 * hot-unplug.
 */

#define VMGPU_PAGING_RING_ORDER	12
#define VMGPU_USER_RING_ORDER	10

static unsigned int paging_timeout_ms = 10000;
module_param(paging_timeout_ms, uint, 0444);
MODULE_PARM_DESC(paging_timeout_ms,
		 "A paging job running longer is declared hung and the ring reset; 0 never (default 10000)");

static unsigned int job_timeout_ms = 2000;
module_param(job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "A user job running longer is declared hung and its engine reset; 0 never (default 2000)");

/* The user engines, on rings 1 and up, by DRM_VMGPU_ENGINE_* number. */
static const struct {
	const char *name;
	u32 mode;
} vmgpu_user_engines[] = {
	{ "gpuva0", VMGPU_RING_MODE_VIRTUAL },
	{ "gpuva1", VMGPU_RING_MODE_VIRTUAL },
	{ "physical", VMGPU_RING_MODE_PHYSICAL },
};

static struct vmgpu_job *to_vmgpu_job(struct drm_sched_job *job)
{
	return container_of(job, struct vmgpu_job, base);
}

static void vmgpu_ring_write_reg(struct vmgpu_ring *ring, u32 reg, u32 val)
{
	vmgpu_write32(ring->vdev, VMGPU_REG_RING(ring->index) + reg, val);
}

static u32 vmgpu_ring_read_reg(struct vmgpu_ring *ring, u32 reg)
{
	return vmgpu_read32(ring->vdev, VMGPU_REG_RING(ring->index) + reg);
}

/*
 * Write a job's SET_VM, commands (between cache flushes if it asks) and
 * FENCE; returns the job's first slot.
 * A job the scheduler cancelled (its context is guilty) writes only the
 * FENCE, so that the ring's timeline goes on.
 */
static u32 vmgpu_ring_write_job(struct vmgpu_ring *ring, struct vmgpu_job *job,
				u64 seqno)
{
	u32 num_cmds = job->base.s_fence->finished.error ? 0 : job->num_cmds;
	u32 mask = ring->num_slots - 1;
	union vmgpu_cmd fence_cmd = {};
	u32 first = ring->tail;
	u32 i;

	lockdep_assert_held(&ring->lock);
	if (num_cmds && job->hw_vm >= 0) {
		union vmgpu_cmd set_vm = {};

		set_vm.set_vm.hdr.opcode = cpu_to_le16(VMGPU_OP_SET_VM);
		set_vm.set_vm.vm = cpu_to_le32(job->hw_vm);
		set_vm.set_vm.generation = cpu_to_le32(job->vm_generation);
		trace_vmgpu_cmd(&set_vm);
		ring->cmds[ring->tail] = set_vm;
		ring->tail = (ring->tail + 1) & mask;
	}
	if (num_cmds && job->cache_bracket) {
		ring->cmds[ring->tail] = vmgpu_cache_flush_cmd();
		trace_vmgpu_cmd(&ring->cmds[ring->tail]);
		ring->tail = (ring->tail + 1) & mask;
	}
	for (i = 0; i < num_cmds; i++) {
		trace_vmgpu_cmd(&job->cmds[i]);
		ring->cmds[ring->tail] = job->cmds[i];
		ring->tail = (ring->tail + 1) & mask;
	}
	if (num_cmds && job->cache_bracket) {
		ring->cmds[ring->tail] = vmgpu_cache_flush_cmd();
		trace_vmgpu_cmd(&ring->cmds[ring->tail]);
		ring->tail = (ring->tail + 1) & mask;
	}
	fence_cmd.fence.hdr.opcode = cpu_to_le16(VMGPU_OP_FENCE);
	fence_cmd.fence.hdr.flags = cpu_to_le16(VMGPU_FENCE_FLAG_IRQ |
						VMGPU_FENCE_FLAG_RING);
	fence_cmd.fence.value = cpu_to_le64(seqno);
	ring->cmds[ring->tail] = fence_cmd;
	ring->tail = (ring->tail + 1) & mask;
	return first;
}

static void vmgpu_ring_doorbell(struct vmgpu_ring *ring)
{
	lockdep_assert_held(&ring->lock);
	/* Commands must be in memory before the doorbell. */
	dma_wmb();
	vmgpu_ring_write_reg(ring, VMGPU_RING_TAIL, ring->tail);
}

/*
 * The fence a job inherits an error from, as a hardware fence of this ring
 * when it can be: those signal in ring order from vmgpu_fence_process(),
 * even while recovery has detached the scheduler's finished fences from
 * them. @prev is the finished fence of earlier work on this ring, which
 * ran before this job (one entity, in order). Consumes @prev.
 */
static struct dma_fence *vmgpu_ring_inherit_from(struct dma_fence *prev)
{
	struct drm_sched_fence *s_fence = prev ? to_drm_sched_fence(prev) : NULL;
	struct dma_fence *hw;

	if (!s_fence || test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &prev->flags))
		return prev;
	/* Stable here: recovery stops the scheduler before detaching it. */
	hw = dma_fence_get(s_fence->parent);
	if (!hw)
		return prev;
	dma_fence_put(prev);
	return hw;
}

static struct dma_fence *vmgpu_ring_run_job(struct drm_sched_job *sched_job)
{
	struct vmgpu_job *job = to_vmgpu_job(sched_job);
	struct vmgpu_ring *ring = job->ring;
	bool cookie = dma_fence_begin_signalling();
	struct dma_fence *fence, *prev;
	u32 first;
	u64 seqno;

	prev = vmgpu_ring_inherit_from(job->prev);
	job->prev = NULL;
	spin_lock(&ring->lock);
	if (ring->dead) {
		spin_unlock(&ring->lock);
		dma_fence_put(prev);
		if (job->ctx)
			vmgpu_context_job_dropped(job);
		fence = ERR_PTR(-ENODEV);
		goto out;
	}
	seqno = ++ring->next_seqno;
	first = vmgpu_ring_write_job(ring, job, seqno);
	if (job->ctx)
		vmgpu_context_job_running(job);
	vmgpu_fence_init(job->hw_fence, ring, prev, seqno, first, ring->tail);
	/* The job's own reference: recovery reattaches the fence to it. */
	dma_fence_get(&job->hw_fence->base);
	job->hw_fence_live = true;
	vmgpu_ring_doorbell(ring);
	spin_unlock(&ring->lock);
	/* dma_fence_init()'s reference goes to the scheduler. */
	fence = &job->hw_fence->base;
out:
	dma_fence_end_signalling(cookie);
	return fence;
}

/*
 * After drm_sched_stop(), which detached every pending job from its
 * hardware fence: reattach them, so that drm_sched_start() completes each
 * job when (or, if signalled already, as) its hardware fence signals, with
 * that fence's error. The pending list is stable while the scheduler is
 * stopped.
 */
static void vmgpu_ring_reattach_jobs(struct vmgpu_ring *ring)
{
	struct drm_sched_job *s_job;

	list_for_each_entry(s_job, &ring->sched.pending_list, list) {
		struct vmgpu_job *job = to_vmgpu_job(s_job);

		if (!s_job->s_fence->parent && job->hw_fence_live)
			s_job->s_fence->parent = dma_fence_get(&job->hw_fence->base);
	}
}

/*
 * Restart a hung ring empty, then refill it with the jobs queued behind
 * the hung one. Called with the scheduler stopped and the device present.
 *
 * The first job the stop found unfinished is the one it cut short. If the
 * hung job finished after all (after vmgpu_ring_job_finished() looked),
 * that is a user job behind it that may have run in part, and running it
 * again from its first command could repeat what it did (a TRANSFER
 * whose source a later command of the job overwrote): it fails instead.
 * Paging jobs run again: each of their commands can be repeated.
 */
static void vmgpu_ring_reset(struct vmgpu_ring *ring, struct vmgpu_job *bad)
{
	int error_irq = ring->vdev->irq[VMGPU_MSIX_VEC_ERROR];
	bool paging = ring == vmgpu_paging_ring(ring->vdev);
	struct drm_sched_job *s_job;
	bool cut_short = true;

	/* No RESUME from the error handler while the ring restarts. */
	disable_irq(error_irq);
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, 0);
	/* What finished before the stop did succeed. */
	vmgpu_fence_process(ring);

	spin_lock(&ring->lock);
	ring->tail = 0;
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, VMGPU_RING_CTRL_ENABLE);
	list_for_each_entry(s_job, &ring->sched.pending_list, list) {
		struct vmgpu_job *job = to_vmgpu_job(s_job);
		struct vmgpu_hw_fence *hw = job->hw_fence;

		if (!job->hw_fence_live ||
		    test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &hw->base.flags))
			continue;
		if (job == bad) {
			vmgpu_fence_fail(hw, -ETIMEDOUT);
			cut_short = false;
			continue;
		}
		if (cut_short && !paging) {
			vmgpu_fence_fail(hw, -ECANCELED);
			cut_short = false;
			continue;
		}
		cut_short = false;
		/* The hung job's context is guilty now: its later jobs only fence. */
		if (job->ctx && atomic_read(&job->ctx->guilty))
			dma_fence_set_error(&s_job->s_fence->finished, -ECANCELED);
		hw->first_slot = vmgpu_ring_write_job(ring, job, hw->base.seqno);
		hw->end_slot = ring->tail;
	}
	spin_unlock(&ring->lock);
	enable_irq(error_irq);
}

/*
 * The job timed out just as it completed: then nothing hangs, and the job
 * running behind it must not be stopped half-way and run again.
 */
static bool vmgpu_ring_job_finished(struct vmgpu_ring *ring, struct vmgpu_job *job)
{
	vmgpu_fence_process(ring);
	return job->hw_fence_live &&
	       test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &job->hw_fence->base.flags);
}

static enum drm_gpu_sched_stat vmgpu_ring_timedout_job(struct drm_sched_job *sched_job)
{
	struct vmgpu_job *bad = to_vmgpu_job(sched_job);
	struct vmgpu_ring *ring = bad->ring;
	struct vmgpu_device *vdev = ring->vdev;
	enum drm_gpu_sched_stat status = DRM_GPU_SCHED_STAT_NOMINAL;
	bool cookie;

	/* Taken outside the signalling section: unplug holds it briefly. */
	mutex_lock(&ring->reset_lock);
	/*
	 * Before the section: stopping flushes the run-job work, itself a
	 * signalling section, which lockdep would see as a cycle.
	 */
	drm_sched_stop(&ring->sched, sched_job);
	cookie = dma_fence_begin_signalling();
	if (ring->dead) {
		/* vmgpu_ring_unplug() stopped the ring and retired its work. */
		vmgpu_fence_fail_all(ring, -ENODEV);
		status = DRM_GPU_SCHED_STAT_ENODEV;
	} else if (!vmgpu_ring_job_finished(ring, bad)) {
		drm_err(&vdev->drm, "%s ring hung: head %u tail %u status 0x%x, seqno %llu of %llu; resetting it\n",
			ring->name, vmgpu_ring_read_reg(ring, VMGPU_RING_HEAD),
			ring->tail, vmgpu_ring_read_reg(ring, VMGPU_RING_STATUS),
			READ_ONCE(*ring->seqno_cpu), ring->next_seqno);
		vmgpu_inject_reset_delay(vdev);
		vmgpu_ring_reset(ring, bad);
	}
	vmgpu_ring_reattach_jobs(ring);
	drm_sched_start(&ring->sched);

	if (status == DRM_GPU_SCHED_STAT_NOMINAL) {
		/* Only now, so that nothing re-emitted runs before the restart. */
		spin_lock(&ring->lock);
		vmgpu_ring_doorbell(ring);
		spin_unlock(&ring->lock);
	}
	dma_fence_end_signalling(cookie);
	mutex_unlock(&ring->reset_lock);
	return status;
}

static void vmgpu_ring_free_job(struct drm_sched_job *sched_job)
{
	struct vmgpu_ring *ring = to_vmgpu_job(sched_job)->ring;

	if (ring->index != VMGPU_RING_PAGING)
		vmgpu_inject_free_job_delay(ring->vdev);
	drm_sched_job_cleanup(sched_job);
	vmgpu_job_free(to_vmgpu_job(sched_job));
}

/* A paging job is prepared before its commands are known (DOC: paging job reserve). */
static u32 vmgpu_ring_job_credits(struct drm_sched_job *sched_job)
{
	return vmgpu_job_credits(to_vmgpu_job(sched_job));
}

static const struct drm_sched_backend_ops vmgpu_ring_sched_ops = {
	.run_job = vmgpu_ring_run_job,
	.timedout_job = vmgpu_ring_timedout_job,
	.free_job = vmgpu_ring_free_job,
	.update_job_credits = vmgpu_ring_job_credits,
};

/* Blame the command a halted ring stopped on, and run on after it. */
static void vmgpu_ring_recover_halt(struct vmgpu_ring *ring)
{
	u64 seqno;
	u32 slot;

	if (!(vmgpu_ring_read_reg(ring, VMGPU_RING_STATUS) & VMGPU_RING_STATUS_HALTED))
		return;
	/* HEAD stays on the failed command until RESUME. */
	slot = vmgpu_ring_read_reg(ring, VMGPU_RING_HEAD);
	/* The fence vector may not have run yet for jobs done before it. */
	vmgpu_fence_process(ring);
	seqno = vmgpu_fence_blame_slot(ring, slot, -EIO);
	trace_vmgpu_ring_fault(ring->name, slot, seqno);
	if (!seqno)
		drm_err_ratelimited(&ring->vdev->drm, "%s ring halted at slot %u, which no pending job owns\n",
				    ring->name, slot);
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL,
			     VMGPU_RING_CTRL_ENABLE | VMGPU_RING_CTRL_RESUME);
}

/**
 * vmgpu_ring_handle_error() - the device halted rings on bad commands
 * @vdev: the device
 *
 * Called from the error interrupt. The error registers latch the first
 * error only, so every ring is looked at.
 */
void vmgpu_ring_handle_error(struct vmgpu_device *vdev)
{
	bool cookie = dma_fence_begin_signalling();
	u32 i;

	for (i = 0; i < VMGPU_MAX_RINGS; i++)
		if (vdev->rings[i].live)
			vmgpu_ring_recover_halt(&vdev->rings[i]);
	dma_fence_end_signalling(cookie);
}

static irqreturn_t vmgpu_ring_fence_irq(int irq, void *arg)
{
	struct vmgpu_device *vdev = arg;
	bool cookie = dma_fence_begin_signalling();
	unsigned long rings;
	u32 i;

	vmgpu_write32(vdev, VMGPU_REG_INT_STATUS, VMGPU_INT_FENCE);
	rings = vmgpu_read32(vdev, VMGPU_REG_FENCE_RINGS);
	/* A fence that lands after this clear raises the interrupt again. */
	vmgpu_write32(vdev, VMGPU_REG_FENCE_RINGS, rings);
	for_each_set_bit(i, &rings, VMGPU_MAX_RINGS)
		if (vdev->rings[i].live)
			vmgpu_fence_process(&vdev->rings[i]);
	dma_fence_end_signalling(cookie);
	return IRQ_HANDLED;
}

/**
 * vmgpu_ring_timeout() - how long a job may run before it counts as hung
 * @ring: the ring
 *
 * Return: the scheduler timeout in jiffies.
 */
long vmgpu_ring_timeout(const struct vmgpu_ring *ring)
{
	return ring->sched.timeout;
}

/*
 * devres: the device must not fetch from the ring, and no interrupt handler
 * look at its fences, once its memory is freed (also on a failed probe).
 */
static void vmgpu_ring_hw_stop(void *arg)
{
	struct vmgpu_ring *ring = arg;

	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, 0);
	vmgpu_write32(ring->vdev, VMGPU_REG_INT_MASK, 0);
	synchronize_irq(ring->vdev->irq[VMGPU_MSIX_VEC_FENCE]);
	synchronize_irq(ring->vdev->irq[VMGPU_MSIX_VEC_ERROR]);
}

/* drmm: the scheduler lives as long as the DRM device. */
static void vmgpu_ring_release(struct drm_device *drm, void *arg)
{
	struct vmgpu_ring *ring = arg;
	struct drm_sched_job *s_job, *next;

	if (ring->index == VMGPU_RING_PAGING)
		drm_sched_entity_destroy(&ring->entity);
	drm_sched_fini(&ring->sched);
	/*
	 * 6.12's drm_sched_fini() stops the free_job work but leaves the jobs
	 * it had not freed yet on the pending list: after an unplug the last
	 * reference can come right after their fences failed. Their finished
	 * fences have signalled, so only freeing them is left; the work is
	 * stopped, so nothing else touches the list.
	 */
	list_for_each_entry_safe(s_job, next, &ring->sched.pending_list, list) {
		if (!dma_fence_is_signaled(&s_job->s_fence->finished))
			continue;
		list_del_init(&s_job->list);
		vmgpu_ring_free_job(s_job);
	}
}

static int vmgpu_ring_init(struct vmgpu_device *vdev, u32 index,
			   const char *name, u32 mode, u32 order,
			   unsigned int timeout_ms)
{
	struct vmgpu_ring *ring = &vdev->rings[index];
	struct device *dev = vdev->drm.dev;
	struct drm_gpu_scheduler *sched = &ring->sched;
	struct drm_sched_init_args args = {
		.ops = &vmgpu_ring_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = (1u << order) - 1,
		.timeout = timeout_ms ? msecs_to_jiffies(timeout_ms) :
			   MAX_SCHEDULE_TIMEOUT,
		.name = name,
		.dev = dev,
	};
	int ret;

	ring->vdev = vdev;
	ring->index = index;
	ring->name = name;
	ring->mode = mode;
	ring->num_slots = 1u << order;
	spin_lock_init(&ring->lock);
	ret = drmm_mutex_init(&vdev->drm, &ring->push_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&vdev->drm, &ring->reset_lock);
	if (ret)
		return ret;
	ring->cmds = dmam_alloc_coherent(dev, ring->num_slots * VMGPU_CMD_SIZE,
					 &ring->cmds_bus, GFP_KERNEL);
	ring->seqno_cpu = dmam_alloc_coherent(dev, sizeof(u64), &ring->seqno_bus,
					      GFP_KERNEL);
	if (!ring->cmds || !ring->seqno_cpu)
		return -ENOMEM;
	vmgpu_fence_ring_init(ring);
	ring->tail = 0;

	vmgpu_ring_write_reg(ring, VMGPU_RING_BASE_LO, lower_32_bits(ring->cmds_bus));
	vmgpu_ring_write_reg(ring, VMGPU_RING_BASE_HI, upper_32_bits(ring->cmds_bus));
	vmgpu_ring_write_reg(ring, VMGPU_RING_SIZE_SHIFT, order);
	vmgpu_ring_write_reg(ring, VMGPU_RING_FENCE_ADDR_LO, lower_32_bits(ring->seqno_bus));
	vmgpu_ring_write_reg(ring, VMGPU_RING_FENCE_ADDR_HI, upper_32_bits(ring->seqno_bus));
	if (index != VMGPU_RING_PAGING)
		vmgpu_ring_write_reg(ring, VMGPU_RING_MODE, mode);
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, VMGPU_RING_CTRL_ENABLE);
	ret = devm_add_action_or_reset(dev, vmgpu_ring_hw_stop, ring);
	if (ret)
		return ret;

	ret = drm_sched_init(sched, &args);
	if (ret)
		return ret;
	if (index == VMGPU_RING_PAGING) {
		ret = drm_sched_entity_init(&ring->entity, DRM_SCHED_PRIORITY_KERNEL,
					    &sched, 1, NULL);
		if (ret) {
			drm_sched_fini(sched);
			return ret;
		}
	}
	ret = drmm_add_action_or_reset(&vdev->drm, vmgpu_ring_release, ring);
	if (ret)
		return ret;
	ring->live = true;
	return 0;
}

/**
 * vmgpu_rings_init() - set up the paging ring and the user engines
 * @vdev: the device, with MSI-X vectors allocated
 *
 * Ring memory and interrupts are device-managed: they go when the device
 * is unbound. The schedulers are DRM-managed: they go with the last
 * reference to the DRM device, after every job has completed.
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_rings_init(struct vmgpu_device *vdev)
{
	u32 num_rings = vmgpu_read32(vdev, VMGPU_REG_NUM_RINGS);
	u32 i;
	int ret;

	if (num_rings < 1 + ARRAY_SIZE(vmgpu_user_engines)) {
		drm_err(&vdev->drm, "device has %u rings, vmgpu needs %zu\n",
			num_rings, 1 + ARRAY_SIZE(vmgpu_user_engines));
		return -ENODEV;
	}
	ret = vmgpu_ring_init(vdev, VMGPU_RING_PAGING, "paging", 0,
			      VMGPU_PAGING_RING_ORDER, paging_timeout_ms);
	for (i = 0; !ret && i < ARRAY_SIZE(vmgpu_user_engines); i++)
		ret = vmgpu_ring_init(vdev, 1 + i, vmgpu_user_engines[i].name,
				      vmgpu_user_engines[i].mode,
				      VMGPU_USER_RING_ORDER, job_timeout_ms);
	if (ret)
		return ret;

	ret = devm_request_irq(vdev->drm.dev, vdev->irq[VMGPU_MSIX_VEC_FENCE],
			       vmgpu_ring_fence_irq, 0, "vmgpu-fence", vdev);
	if (ret)
		return ret;
	vmgpu_write32(vdev, VMGPU_REG_INT_MASK,
		      vmgpu_read32(vdev, VMGPU_REG_INT_MASK) | VMGPU_INT_FENCE);
	return 0;
}

/**
 * vmgpu_ring_user_engine() - the ring of a user engine
 * @vdev: the device
 * @engine: user engine number, from 0
 *
 * Return: the ring, or NULL if there is no such engine.
 */
struct vmgpu_ring *vmgpu_ring_user_engine(struct vmgpu_device *vdev, u32 engine)
{
	if (engine >= ARRAY_SIZE(vmgpu_user_engines))
		return NULL;
	return &vdev->rings[1 + engine];
}

static void vmgpu_ring_unplug(struct vmgpu_ring *ring)
{
	bool cookie;

	mutex_lock(&ring->reset_lock);
	spin_lock(&ring->lock);
	ring->dead = true;
	spin_unlock(&ring->lock);
	vmgpu_ring_hw_stop(ring);
	cookie = dma_fence_begin_signalling();
	vmgpu_fence_process(ring);
	dma_fence_end_signalling(cookie);
	mutex_unlock(&ring->reset_lock);

	drm_sched_fault(&ring->sched);
	flush_delayed_work(&ring->sched.work_tdr);
}

/**
 * vmgpu_rings_unplug() - the device is going: fail all of its work
 * @vdev: the device, its registers still mapped
 *
 * Called before drm_dev_unplug(), whose wait for ioctls and faults in
 * flight may depend on these fences. Stops every ring (no hang recovery
 * can restart them afterwards), signals what the device completed with
 * success and everything else with -ENODEV, through the scheduler's
 * recovery path so that every job is completed and freed. Jobs run later
 * fail at once.
 */
void vmgpu_rings_unplug(struct vmgpu_device *vdev)
{
	u32 i;

	for (i = 0; i < VMGPU_MAX_RINGS; i++)
		if (vdev->rings[i].live)
			vmgpu_ring_unplug(&vdev->rings[i]);
}
