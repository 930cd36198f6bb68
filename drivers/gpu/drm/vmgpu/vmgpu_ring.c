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

#include "vmgpu_device.h"
#include "vmgpu_fence.h"
#include "vmgpu_job.h"
#include "vmgpu_job_types.h"
#include "vmgpu_ring.h"
#include "vmgpu_trace.h"

/**
 * DOC: rings
 *
 * A ring is one of the device's command queues with a DRM scheduler in
 * front of it. The kernel's paging operations (seed "GPU segments": Fill,
 * Transfer, Discard...) go to the privileged paging ring, ring 0. Jobs
 * wait for their dependencies in scheduler callbacks, never by blocking
 * the thread that queued them, and the scheduler's credit limit is the
 * ring size, so run_job always finds room.
 *
 * Errors: a command the device rejects halts the ring. The error
 * interrupt retires what the device completed, blames the job that owns
 * the halted slot (-EIO) and resumes the ring after that command.
 *
 * Hangs follow the scheduler's documented recovery: drm_sched_stop(),
 * stop the ring, signal what completed before the stop with success, fail
 * the hung job (-ETIMEDOUT), write the jobs queued behind it to the ring
 * again, drm_sched_start(). Re-running those is safe because every paging
 * command is idempotent (a Fill, or a Transfer between disjoint ranges).
 * The same path, with the device gone, fails everything with -ENODEV at
 * hot-unplug.
 */

#define VMGPU_PAGING_RING_ORDER	12

static unsigned int paging_timeout_ms = 10000;
module_param(paging_timeout_ms, uint, 0444);
MODULE_PARM_DESC(paging_timeout_ms,
		 "A paging job running longer is declared hung and the ring reset; 0 never (default 10000)");

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

/* Write a job's commands and its FENCE; returns the job's first slot. */
static u32 vmgpu_ring_write_job(struct vmgpu_ring *ring, struct vmgpu_job *job,
				u64 seqno)
{
	u32 mask = ring->num_slots - 1;
	union vmgpu_cmd fence_cmd = {};
	u32 first = ring->tail;
	u32 i;

	lockdep_assert_held(&ring->lock);
	for (i = 0; i < job->num_cmds; i++) {
		trace_vmgpu_cmd(&job->cmds[i]);
		ring->cmds[ring->tail] = job->cmds[i];
		ring->tail = (ring->tail + 1) & mask;
	}
	fence_cmd.fence.hdr.opcode = cpu_to_le16(VMGPU_OP_FENCE);
	fence_cmd.fence.hdr.flags = cpu_to_le16(VMGPU_FENCE_FLAG_IRQ);
	fence_cmd.fence.dst.space = cpu_to_le32(VMGPU_SPACE_SYSTEM);
	fence_cmd.fence.dst.addr = cpu_to_le64(ring->seqno_bus);
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
		fence = ERR_PTR(-ENODEV);
		goto out;
	}
	seqno = ++ring->next_seqno;
	first = vmgpu_ring_write_job(ring, job, seqno);
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
 */
static void vmgpu_ring_reset(struct vmgpu_ring *ring, struct vmgpu_job *bad)
{
	int error_irq = ring->vdev->irq[VMGPU_MSIX_VEC_ERROR];
	struct drm_sched_job *s_job;

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
			continue;
		}
		hw->first_slot = vmgpu_ring_write_job(ring, job, hw->base.seqno);
		hw->end_slot = ring->tail;
	}
	spin_unlock(&ring->lock);
	enable_irq(error_irq);
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
	cookie = dma_fence_begin_signalling();
	drm_sched_stop(&ring->sched, sched_job);
	if (!ring->dead) {
		drm_err(&vdev->drm, "%s ring hung: head %u tail %u status 0x%x, seqno %llu of %llu; resetting it\n",
			ring->name, vmgpu_ring_read_reg(ring, VMGPU_RING_HEAD),
			ring->tail, vmgpu_ring_read_reg(ring, VMGPU_RING_STATUS),
			READ_ONCE(*ring->seqno_cpu), ring->next_seqno);
		vmgpu_ring_reset(ring, bad);
	} else {
		/* vmgpu_ring_unplug() stopped the ring and retired its work. */
		vmgpu_fence_fail_all(ring, -ENODEV);
		status = DRM_GPU_SCHED_STAT_ENODEV;
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
	drm_sched_job_cleanup(sched_job);
	vmgpu_job_free(to_vmgpu_job(sched_job));
}

static const struct drm_sched_backend_ops vmgpu_ring_sched_ops = {
	.run_job = vmgpu_ring_run_job,
	.timedout_job = vmgpu_ring_timedout_job,
	.free_job = vmgpu_ring_free_job,
};

/**
 * vmgpu_ring_handle_error() - the device halted a ring on a bad command
 * @vdev: the device
 * @index: the ring
 * @slot: the slot of the command it rejected
 *
 * Called from the error interrupt.
 */
void vmgpu_ring_handle_error(struct vmgpu_device *vdev, u32 index, u32 slot)
{
	struct vmgpu_ring *ring = &vdev->paging;
	bool cookie;

	if (index != ring->index ||
	    !(vmgpu_ring_read_reg(ring, VMGPU_RING_STATUS) & VMGPU_RING_STATUS_HALTED))
		return;
	cookie = dma_fence_begin_signalling();
	/* The fence vector may not have run yet for jobs done before it. */
	vmgpu_fence_process(ring);
	if (!vmgpu_fence_blame_slot(ring, slot, -EIO))
		drm_err_ratelimited(&vdev->drm, "%s ring halted at slot %u, which no pending job owns\n",
				    ring->name, slot);
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL,
			     VMGPU_RING_CTRL_ENABLE | VMGPU_RING_CTRL_RESUME);
	dma_fence_end_signalling(cookie);
}

static irqreturn_t vmgpu_ring_fence_irq(int irq, void *arg)
{
	struct vmgpu_ring *ring = arg;
	bool cookie = dma_fence_begin_signalling();

	vmgpu_write32(ring->vdev, VMGPU_REG_INT_STATUS, VMGPU_INT_FENCE);
	vmgpu_fence_process(ring);
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

	drm_sched_entity_destroy(&ring->entity);
	drm_sched_fini(&ring->sched);
}

/**
 * vmgpu_ring_init() - set up the paging ring, its fences and scheduler
 * @vdev: the device, with MSI-X vectors allocated
 *
 * Ring memory and interrupts are device-managed: they go when the device
 * is unbound. The scheduler is DRM-managed: it goes with the last
 * reference to the DRM device, after every job has completed.
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_ring_init(struct vmgpu_device *vdev)
{
	struct vmgpu_ring *ring = &vdev->paging;
	struct device *dev = vdev->drm.dev;
	struct drm_gpu_scheduler *sched = &ring->sched;
	struct drm_sched_init_args args = {
		.ops = &vmgpu_ring_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = (1u << VMGPU_PAGING_RING_ORDER) - 1,
		.timeout = paging_timeout_ms ? msecs_to_jiffies(paging_timeout_ms) :
			   MAX_SCHEDULE_TIMEOUT,
		.name = "vmgpu-paging",
		.dev = dev,
	};
	int ret;

	ring->vdev = vdev;
	ring->index = VMGPU_RING_PAGING;
	ring->name = "paging";
	ring->num_slots = 1u << VMGPU_PAGING_RING_ORDER;
	spin_lock_init(&ring->lock);
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
	vmgpu_ring_write_reg(ring, VMGPU_RING_SIZE_SHIFT, VMGPU_PAGING_RING_ORDER);
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, VMGPU_RING_CTRL_ENABLE);
	ret = devm_add_action_or_reset(dev, vmgpu_ring_hw_stop, ring);
	if (ret)
		return ret;

	ret = devm_request_irq(dev, vdev->irq[VMGPU_MSIX_VEC_FENCE],
			       vmgpu_ring_fence_irq, 0, "vmgpu-fence", ring);
	if (ret)
		return ret;
	vmgpu_write32(vdev, VMGPU_REG_INT_MASK,
		      vmgpu_read32(vdev, VMGPU_REG_INT_MASK) | VMGPU_INT_FENCE);

	ret = drm_sched_init(sched, &args);
	if (ret)
		return ret;
	ret = drm_sched_entity_init(&ring->entity, DRM_SCHED_PRIORITY_KERNEL,
				    &sched, 1, NULL);
	if (ret) {
		drm_sched_fini(sched);
		return ret;
	}
	return drmm_add_action_or_reset(&vdev->drm, vmgpu_ring_release, ring);
}

/**
 * vmgpu_ring_unplug() - the device is going: fail all of its work
 * @vdev: the device, its registers still mapped
 *
 * Called before drm_dev_unplug(), whose wait for ioctls and faults in
 * flight may depend on these fences. Stops the ring (no hang recovery can
 * restart it afterwards), signals what the device completed with success
 * and everything else with -ENODEV, through the scheduler's recovery path
 * so that every job is completed and freed. Jobs run later fail at once.
 */
void vmgpu_ring_unplug(struct vmgpu_device *vdev)
{
	struct vmgpu_ring *ring = &vdev->paging;
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
