// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/interrupt.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_drv.h>
#include <drm/drm_fourcc.h>
#include <drm/drm_framebuffer.h>
#include <drm/drm_gem_atomic_helper.h>
#include <drm/drm_gem_framebuffer_helper.h>
#include <drm/drm_managed.h>
#include <drm/drm_modeset_helper_vtables.h>
#include <drm/drm_print.h>
#include <drm/drm_probe_helper.h>
#include <drm/drm_simple_kms_helper.h>
#include <drm/drm_vblank.h>

#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_display.h"

/**
 * DOC: display
 *
 * KMS on the device's display controller (hardware contract, *Display
 * controller*): each head is a CRTC with a primary and a cursor plane, a
 * virtual encoder and a connector whose modes come from the head's EDID.
 * A CRTC may run without its primary plane: the head then shows black
 * under the cursor (CTRL.PRIMARY_OFF), as vkms does.
 *
 * Framebuffers are primary surfaces (seed: "Primary surfaces"): their
 * allocation must have been created PRIMARY, as dumb buffers are. The
 * display controller reads them by physical reference, so while a plane
 * shows one it is pinned contiguous in a memory segment or mapped into the
 * aperture segment, the latter only while shown (DOC: planes). A pinned
 * allocation is never evicted, and an Evict of it fails with -EBUSY.
 * The commit waits for the clear or move queued on a primary (its kernel
 * fences), in the commit tail for a nonblocking one; if that failed, the
 * head shows no primary until a later commit, whose pin clears it again
 * (vmgpu_plane_shows()). A cursor's pin waits itself: async cursor updates
 * wait for no fence.
 *
 * The device latches a head's registers, as the COMMIT found them, at the
 * vblank after it (at once for an async flip, DRM_MODE_PAGE_FLIP_ASYNC:
 * the device reads a frame's pixels all at its vblank, so an immediate
 * latch never tears); its FLIP_DONE event completes the commit's flip
 * event (an async flip's as soon as a read flushes its COMMIT), and the
 * commit tail waits for that, not for a vblank count, before it unpins the
 * old framebuffers: the device never reads a buffer TTM may move. A flip
 * not done after 3 s (a lost interrupt, a stalled emulator) is latched
 * at once, and its event sent, before the old framebuffers are unpinned.
 * A legacy cursor update is an async update of the cursor plane, latched
 * alone at once (COMMIT_CURSOR), or else synchronized like any commit.
 * Each commit waits for the previous one's flip to be done before it
 * writes the registers, and a COMMIT latches them as they are then, so a
 * latch never takes half a commit. Vblank interrupts are on only while
 * DRM wants them; they also deliver CRCs (DOC: display CRCs).
 */

/* The device refuses frames shorter than 1 ms (its own formula). */
#define VMGPU_MIN_FRAME_NS	1000000ull
/* Commits wait for a flip's vblank: keep frames well under a second. */
#define VMGPU_MAX_FRAME_NS	50000000ull

static void vmgpu_display_mask(struct vmgpu_device *vdev, u32 set, u32 clear)
{
	struct vmgpu_display *display = &vdev->display;
	unsigned long flags;

	spin_lock_irqsave(&display->lock, flags);
	if (display->event_mask != ((display->event_mask & ~clear) | set)) {
		display->event_mask = (display->event_mask & ~clear) | set;
		vmgpu_write32(vdev, VMGPU_REG_DISPLAY_EVENT_MASK, display->event_mask);
	}
	spin_unlock_irqrestore(&display->lock, flags);
}

/*
 * CTRL and COMMIT; the display lock orders them against a CRC switch
 * (vmgpu_crtc_set_crc_source()), which writes CTRL too.
 */
static void vmgpu_head_commit(struct vmgpu_head *head, u32 latched, u32 when)
{
	struct vmgpu_display *display = &head->vdev->display;
	unsigned long flags;

	spin_lock_irqsave(&display->lock, flags);
	vmgpu_head_write(head, VMGPU_HEAD_CTRL, vmgpu_head_ctrl(head, latched));
	if (when != VMGPU_HEAD_COMMIT_VBLANK ||
	    !READ_ONCE(head->vdev->inject.display_commit_lost))
		vmgpu_head_commit_write(head, when);
	spin_unlock_irqrestore(&display->lock, flags);
}

/*
 * Turn the head off at once. The write is posted: the head has stopped
 * reading its planes once a read flushes it (contract 1.8), and only then
 * may they be unpinned.
 */
static void vmgpu_head_off(struct vmgpu_head *head)
{
	vmgpu_head_write(head, VMGPU_HEAD_CURSOR_CTRL, 0);
	vmgpu_head_commit(head, 0, VMGPU_HEAD_COMMIT_NOW);
	vmgpu_head_read(head, VMGPU_HEAD_STATUS);
}

/* CRTC */

static enum drm_mode_status vmgpu_crtc_mode_valid(struct drm_crtc *crtc,
						  const struct drm_display_mode *mode)
{
	u64 frame_ns;

	if (mode->hdisplay > VMGPU_MAX_MODE || mode->vdisplay > VMGPU_MAX_MODE)
		return MODE_BAD;
	if (mode->htotal > 16384 || mode->vtotal > 16384)
		return MODE_BAD;
	if (mode->flags & DRM_MODE_FLAG_INTERLACE)
		return MODE_NO_INTERLACE;
	if (mode->flags & DRM_MODE_FLAG_DBLSCAN || mode->vscan > 1)
		return MODE_NO_DBLESCAN;
	if (!mode->clock)
		return MODE_CLOCK_LOW;
	/* The device's frame: HTOTAL * VTOTAL / CLOCK_KHZ ms, exactly. */
	frame_ns = div_u64((u64)mode->htotal * mode->vtotal * 1000000, mode->clock);
	if (frame_ns < VMGPU_MIN_FRAME_NS)
		return MODE_CLOCK_HIGH;
	if (frame_ns > VMGPU_MAX_FRAME_NS)
		return MODE_CLOCK_LOW;
	return MODE_OK;
}

static void vmgpu_crtc_atomic_enable(struct drm_crtc *crtc, struct drm_atomic_state *state)
{
	struct drm_display_mode *mode = &crtc->state->adjusted_mode;
	struct vmgpu_head *head = crtc_to_head(crtc);
	int idx;

	if (drm_dev_enter(crtc->dev, &idx)) {
		/*
		 * FRAME_COUNT starts over, and CRC_FRAME still names a frame
		 * of the head's last run: no frame of this one.
		 */
		spin_lock_irq(&head->vdev->display.lock);
		head->crc_frame = vmgpu_head_read(head, VMGPU_HEAD_CRC_FRAME);
		spin_unlock_irq(&head->vdev->display.lock);
		/* Latched with the planes by the COMMIT of atomic_flush. */
		vmgpu_head_write(head, VMGPU_HEAD_HDISPLAY, mode->hdisplay);
		vmgpu_head_write(head, VMGPU_HEAD_VDISPLAY, mode->vdisplay);
		vmgpu_head_write(head, VMGPU_HEAD_HTOTAL, mode->htotal);
		vmgpu_head_write(head, VMGPU_HEAD_VTOTAL, mode->vtotal);
		vmgpu_head_write(head, VMGPU_HEAD_CLOCK_KHZ, mode->clock);
		/*
		 * A cursor disabled while the CRTC was off never reached the
		 * device (the helpers skip the planes of inactive CRTCs): off,
		 * unless the planes of this commit turn it back on.
		 */
		vmgpu_head_write(head, VMGPU_HEAD_CURSOR_CTRL, 0);
		drm_dev_exit(idx);
	}
	drm_crtc_vblank_on(crtc);
}

/*
 * A display goes off at a vblank: the commit, and its event, complete no
 * earlier than the next one, as userspace that polls right after a
 * nonblocking disable expects. Not drm_crtc_wait_one_vblank(), which
 * warns when a stalled emulator misses its 100 ms: a late vblank only
 * makes the disable late.
 */
static void vmgpu_crtc_wait_vblank(struct drm_crtc *crtc)
{
	u64 last;

	if (drm_crtc_vblank_get(crtc))
		return;
	last = drm_crtc_vblank_count(crtc);
	wait_event_timeout(*drm_crtc_vblank_waitqueue(crtc),
			   drm_crtc_vblank_count(crtc) != last, HZ);
	drm_crtc_vblank_put(crtc);
}

static void vmgpu_crtc_atomic_disable(struct drm_crtc *crtc, struct drm_atomic_state *state)
{
	struct vmgpu_head *head = crtc_to_head(crtc);
	int idx;

	if (drm_dev_enter(crtc->dev, &idx)) {
		vmgpu_crtc_wait_vblank(crtc);
		/*
		 * The helpers skip the planes of a CRTC going off: a cursor
		 * left pending would come back at the next enable, unpinned.
		 */
		vmgpu_head_off(head);
		drm_dev_exit(idx);
	}
	drm_crtc_vblank_off(crtc);
	/*
	 * A CRTC that stays on (a modeset) sends its event from atomic_flush,
	 * with the new mode's first frame.
	 */
	spin_lock_irq(&crtc->dev->event_lock);
	if (crtc->state->event && !crtc->state->active) {
		drm_crtc_send_vblank_event(crtc, crtc->state->event);
		crtc->state->event = NULL;
	}
	spin_unlock_irq(&crtc->dev->event_lock);
}

/*
 * Send an event armed for the device's FLIP_DONE and drop the vblank
 * reference taken when it was armed.
 */
static void vmgpu_head_send_armed_event(struct vmgpu_head *head,
					struct drm_pending_vblank_event *event)
{
	lockdep_assert_held(&head->vdev->drm.event_lock);
	drm_crtc_send_vblank_event(&head->crtc, event);
	drm_crtc_vblank_put(&head->crtc);
}

/*
 * Latch what the commit wrote at the next vblank (at once on a head that
 * was off, or for an async flip); the device's FLIP_DONE sends the event.
 */
static void vmgpu_crtc_atomic_flush(struct drm_crtc *crtc, struct drm_atomic_state *state)
{
	struct drm_crtc_state *crtc_state = drm_atomic_get_new_crtc_state(state, crtc);
	struct vmgpu_head *head = crtc_to_head(crtc);
	struct drm_pending_vblank_event *event = crtc_state->event;
	struct drm_plane_state *primary;
	bool now = crtc_state->async_flip;
	u32 latched;
	int idx;

	if (!crtc_state->active)
		return;
	crtc_state->event = NULL;
	spin_lock_irq(&crtc->dev->event_lock);
	if (!drm_dev_enter(crtc->dev, &idx)) {
		/* Unplugged: no FLIP_DONE will come. */
		if (event)
			drm_crtc_send_vblank_event(crtc, event);
		spin_unlock_irq(&crtc->dev->event_lock);
		return;
	}
	/* Without vblanks there is nothing to wait for: latch at once. */
	if (event && !now && drm_crtc_vblank_get(crtc))
		now = true;
	if (event && !now) {
		/* A FLIP_DONE of an earlier COMMIT must not complete this one. */
		vmgpu_write32(head->vdev, VMGPU_REG_DISPLAY_EVENTS,
			      VMGPU_DISPLAY_EVENT_FLIP_DONE(head->index));
		/*
		 * Commits on a CRTC are serialized, and the last one's event
		 * went out (vmgpu_wait_for_flip_done()). One still armed was
		 * given up on: send it rather than lose it.
		 */
		if (head->event) {
			drm_err_ratelimited(crtc->dev, "[CRTC:%d:%s] stale flip event sent\n",
					    crtc->base.id, crtc->name);
			vmgpu_head_send_armed_event(head, head->event);
		}
		head->event = event;
		/*
		 * A head that was off (or a modeset turned off) latches at
		 * once; as on any display, its event comes with the first frame.
		 */
		head->event_at_vblank =
			!drm_atomic_get_old_crtc_state(state, crtc)->active ||
			drm_atomic_crtc_needs_modeset(crtc_state);
		/* Nor a vblank from before it went off. */
		if (head->event_at_vblank)
			vmgpu_write32(head->vdev, VMGPU_REG_DISPLAY_EVENTS,
				      VMGPU_DISPLAY_EVENT_VBLANK(head->index));
		event = NULL;
	}
	/* Only an armed event needs the FLIP_DONE interrupt. */
	vmgpu_display_mask(head->vdev, head->event ? VMGPU_DISPLAY_EVENT_FLIP_DONE(head->index) : 0,
			   head->event ? 0 : VMGPU_DISPLAY_EVENT_FLIP_DONE(head->index));
	/* States are swapped: the primary's is this commit's. */
	primary = crtc->primary->state;
	latched = VMGPU_HEAD_CTRL_ENABLE;
	if (primary->crtc != crtc || !primary->visible || !vmgpu_plane_shows(primary))
		latched |= VMGPU_HEAD_CTRL_PRIMARY_OFF;
	vmgpu_head_commit(head, latched, now ? VMGPU_HEAD_COMMIT_NOW : VMGPU_HEAD_COMMIT_VBLANK);
	if (event) {
		/*
		 * COMMIT_NOW has latched once a read flushes it (contract
		 * 1.8): the event needs no interrupt. A vblank reference, if
		 * vblanks can be had, brings its count and time up to date.
		 */
		vmgpu_head_read(head, VMGPU_HEAD_STATUS);
		if (!drm_crtc_vblank_get(crtc)) {
			drm_crtc_send_vblank_event(crtc, event);
			drm_crtc_vblank_put(crtc);
		} else {
			drm_crtc_send_vblank_event(crtc, event);
		}
	}
	drm_dev_exit(idx);
	spin_unlock_irq(&crtc->dev->event_lock);
}

static const struct drm_crtc_helper_funcs vmgpu_crtc_helper_funcs = {
	.mode_valid = vmgpu_crtc_mode_valid,
	.atomic_enable = vmgpu_crtc_atomic_enable,
	.atomic_disable = vmgpu_crtc_atomic_disable,
	.atomic_flush = vmgpu_crtc_atomic_flush,
};

/*
 * drm_vblank_get() and its put may come from an ioctl that raced an
 * unplug; the unplug itself masks every event without entering. No error
 * after it: drm_crtc_vblank_on() warns on one, and a wait for a vblank
 * that never comes times out.
 */
static int vmgpu_crtc_enable_vblank(struct drm_crtc *crtc)
{
	struct vmgpu_head *head = crtc_to_head(crtc);
	int idx;

	if (drm_dev_enter(crtc->dev, &idx)) {
		vmgpu_display_mask(head->vdev, VMGPU_DISPLAY_EVENT_VBLANK(head->index), 0);
		drm_dev_exit(idx);
	}
	return 0;
}

static void vmgpu_crtc_disable_vblank(struct drm_crtc *crtc)
{
	struct vmgpu_head *head = crtc_to_head(crtc);
	int idx;

	if (!drm_dev_enter(crtc->dev, &idx))
		return;
	vmgpu_display_mask(head->vdev, 0, VMGPU_DISPLAY_EVENT_VBLANK(head->index));
	drm_dev_exit(idx);
}

/*
 * VBLANK_AGE and the ktime it was read at: the read bracketed by two
 * clock reads, the narrowest of a few tries (a vCPU preempted in between
 * widens one). *error_ns: half the bracket.
 */
static u32 vmgpu_head_vblank_age(struct vmgpu_head *head, ktime_t *at, u64 *error_ns)
{
	u64 width, best = U64_MAX;
	ktime_t before, after;
	u32 age = 0, read;
	int i;

	for (i = 0; i < 4 && best > 4 * NSEC_PER_USEC; i++) {
		before = ktime_get();
		read = vmgpu_head_read(head, VMGPU_HEAD_VBLANK_AGE);
		after = ktime_get();
		width = ktime_to_ns(ktime_sub(after, before));
		if (width >= best)
			continue;
		best = width;
		age = read;
		*at = ktime_add_ns(before, width / 2);
	}
	*error_ns = best / 2;
	return age;
}

/*
 * The last vblank's time from the device's own record (VBLANK_AGE, the
 * time since FRAME_TIME), not from when its interrupt got handled: exact
 * to half a register read, however late the interrupt. It is read at
 * every vblank and every commit (fence deadlines): one register read.
 */
static bool vmgpu_crtc_get_vblank_timestamp(struct drm_crtc *crtc, int *max_error,
					    ktime_t *vblank_time, bool in_vblank_irq)
{
	struct vmgpu_head *head = crtc_to_head(crtc);
	ktime_t now;
	u64 error;
	u32 age;
	int idx;

	if (!drm_dev_enter(crtc->dev, &idx))
		return false;
	age = vmgpu_head_vblank_age(head, &now, &error);
	drm_dev_exit(idx);
	/*
	 * A head just on dates frame 0 from its COMMIT. One still off (the
	 * helpers turn vblanks on before the COMMIT) has had no vblank: now,
	 * as vkms says, so that its first one counts as one.
	 */
	if (age == VMGPU_HEAD_VBLANK_AGE_OFF) {
		*vblank_time = now;
		*max_error = 0;
		return true;
	}
	/* Seconds without a vblank on a running head: the device stalled. */
	if (age == VMGPU_HEAD_VBLANK_AGE_MAX)
		return false;
	*vblank_time = ktime_sub_ns(now, age);
	*max_error = min_t(u64, error, INT_MAX);
	return true;
}

static const struct drm_crtc_funcs vmgpu_crtc_funcs = {
	.reset = drm_atomic_helper_crtc_reset,
	.destroy = drm_crtc_cleanup,
	.set_config = drm_atomic_helper_set_config,
	.page_flip = drm_atomic_helper_page_flip,
	.atomic_duplicate_state = drm_atomic_helper_crtc_duplicate_state,
	.atomic_destroy_state = drm_atomic_helper_crtc_destroy_state,
	.enable_vblank = vmgpu_crtc_enable_vblank,
	.disable_vblank = vmgpu_crtc_disable_vblank,
	.get_vblank_timestamp = vmgpu_crtc_get_vblank_timestamp,
	.set_crc_source = vmgpu_crtc_set_crc_source,
	.verify_crc_source = vmgpu_crtc_verify_crc_source,
	.get_crc_sources = vmgpu_crtc_get_crc_sources,
};

/* Interrupts */

/*
 * The event the device's events complete: FLIP_DONE the armed flip's,
 * unless that waits for the first frame of a head turned on (the next
 * vblank). Claimed under &drm_device.event_lock, with the events read.
 */
static struct drm_pending_vblank_event *
vmgpu_head_claim_event(struct vmgpu_head *head, bool flip_done, bool vblank)
{
	struct drm_pending_vblank_event *event = head->event;

	if (!event || !(head->event_at_vblank ? vblank : flip_done))
		return NULL;
	head->event = NULL;
	return event;
}

static void vmgpu_head_vblank(struct vmgpu_head *head)
{
	drm_crtc_handle_vblank(&head->crtc);
	vmgpu_head_crc_vblank(head);
}

static irqreturn_t vmgpu_display_irq(int irq, void *arg)
{
	struct drm_pending_vblank_event *done[VMGPU_MAX_HEADS] = {};
	struct vmgpu_device *vdev = arg;
	u32 events, i;

	vmgpu_write32(vdev, VMGPU_REG_INT_STATUS, VMGPU_INT_DISPLAY);
	/* Read, acked and claimed with the flips armed under the same lock. */
	spin_lock(&vdev->drm.event_lock);
	events = vmgpu_read32(vdev, VMGPU_REG_DISPLAY_EVENTS);
	vmgpu_write32(vdev, VMGPU_REG_DISPLAY_EVENTS, events);
	if (READ_ONCE(vdev->inject.display_events_lost))
		events &= ~(VMGPU_DISPLAY_EVENTS_ALL & GENMASK(15, 0));
	for (i = 0; i < vdev->display.num_heads; i++)
		done[i] = vmgpu_head_claim_event(&vdev->display.heads[i],
						 events & VMGPU_DISPLAY_EVENT_FLIP_DONE(i),
						 events & VMGPU_DISPLAY_EVENT_VBLANK(i));
	spin_unlock(&vdev->drm.event_lock);
	/*
	 * The vblank that latched a flip first: its event then carries that
	 * vblank's count and time, not the one before.
	 */
	for (i = 0; i < vdev->display.num_heads; i++)
		if (events & VMGPU_DISPLAY_EVENT_VBLANK(i))
			vmgpu_head_vblank(&vdev->display.heads[i]);
	spin_lock(&vdev->drm.event_lock);
	for (i = 0; i < vdev->display.num_heads; i++) {
		if (!done[i])
			continue;
		vmgpu_head_send_armed_event(&vdev->display.heads[i], done[i]);
	}
	spin_unlock(&vdev->drm.event_lock);
	if (events & (VMGPU_DISPLAY_EVENTS_ALL & GENMASK(23, 16)))
		schedule_work(&vdev->display.hotplug_work);
	return IRQ_HANDLED;
}

static void vmgpu_display_hotplug_work(struct work_struct *work)
{
	struct vmgpu_display *display = container_of(work, struct vmgpu_display, hotplug_work);
	struct vmgpu_device *vdev = container_of(display, struct vmgpu_device, display);

	drm_helper_hpd_irq_event(&vdev->drm);
}

/* Setup */

/* A HOTPLUG interrupt just before remove may leave the work queued. */
static void vmgpu_display_fini(struct drm_device *drm, void *arg)
{
	struct vmgpu_display *display = arg;

	cancel_work_sync(&display->hotplug_work);
}

/*
 * A legacy cursor ioctl is an async update (the cursor plane's, latched
 * at once) when it can be. Otherwise it would skip the helpers' waits and
 * unpin the old cursor while the device still shows it: synchronize it.
 */
static int vmgpu_atomic_check(struct drm_device *drm, struct drm_atomic_state *state)
{
	int ret = drm_atomic_helper_check(drm, state);

	if (!state->async_update)
		state->legacy_cursor_update = false;
	return ret;
}

static const struct drm_mode_config_funcs vmgpu_mode_config_funcs = {
	.fb_create = drm_gem_fb_create,
	.atomic_check = vmgpu_atomic_check,
	.atomic_commit = drm_atomic_helper_commit,
};

/*
 * How long a flip may wait for the device to latch it: frames are at most
 * VMGPU_MAX_FRAME_NS, and a commit queued behind this one gives up
 * waiting for it after 10 s (drm_crtc_commit_wait()), long after this.
 */
#define VMGPU_FLIP_TIMEOUT	(3 * HZ)

/*
 * Latch @head's committed registers at once and send the event of
 * @commit, if it is still armed: the device then no longer reads the old
 * framebuffers, and the next commit finds no event armed. Returns whether
 * it did.
 */
static bool vmgpu_head_flip_late(struct vmgpu_head *head, struct drm_crtc_commit *commit)
{
	struct drm_device *drm = &head->vdev->drm;
	struct drm_pending_vblank_event *event;
	int idx;

	spin_lock_irq(&drm->event_lock);
	event = head->event;
	if (!event || event->base.completion != &commit->flip_done) {
		spin_unlock_irq(&drm->event_lock);
		return false;
	}
	head->event = NULL;
	/* Unplugged: the removal turns the head off itself. */
	if (drm_dev_enter(drm, &idx)) {
		/* Not between the writes of an async cursor update. */
		spin_lock(&head->vdev->display.lock);
		vmgpu_head_commit_write(head, VMGPU_HEAD_COMMIT_NOW);
		vmgpu_head_read(head, VMGPU_HEAD_STATUS);
		spin_unlock(&head->vdev->display.lock);
		drm_dev_exit(idx);
	}
	/* No vblank interrupt may have counted the frames since. */
	drm_crtc_accurate_vblank_count(&head->crtc);
	vmgpu_head_send_armed_event(head, event);
	spin_unlock_irq(&drm->event_lock);
	drm_err_ratelimited(drm, "[CRTC:%d:%s] flip not done after %u ms: latched at once\n",
			    head->crtc.base.id, head->crtc.name,
			    jiffies_to_msecs(VMGPU_FLIP_TIMEOUT));
	return true;
}

/*
 * drm_atomic_helper_wait_for_flip_done(), but a flip still not done at
 * the timeout (one for all the commit's CRTCs) is latched at once rather
 * than left armed while its old framebuffers are unpinned.
 */
static void vmgpu_wait_for_flip_done(struct drm_atomic_state *state)
{
	unsigned long deadline = jiffies + VMGPU_FLIP_TIMEOUT;
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;
	int i;

	for_each_new_crtc_in_state(state, crtc, crtc_state, i) {
		struct drm_crtc_commit *commit = state->crtcs[i].commit;
		unsigned long left = time_before(jiffies, deadline) ? deadline - jiffies : 0;

		if (!commit || wait_for_completion_timeout(&commit->flip_done, left))
			continue;
		if (vmgpu_head_flip_late(crtc_to_head(crtc), commit))
			continue;
		/* The interrupt claimed it meanwhile: it is being sent. */
		if (!wait_for_completion_timeout(&commit->flip_done, 10 * HZ))
			drm_err(state->dev, "[CRTC:%d:%s] flip_done timed out\n",
				crtc->base.id, crtc->name);
	}
	if (state->fake_commit)
		complete_all(&state->fake_commit->flip_done);
}

/*
 * Enables before planes: a head's mode registers are written before the
 * COMMIT of atomic_flush latches them with the planes, and its vblanks
 * are on for the flip event. The old framebuffers are unpinned once the
 * device has latched the new ones (FLIP_DONE), not after a vblank count.
 */
static void vmgpu_atomic_commit_tail(struct drm_atomic_state *state)
{
	struct drm_device *drm = state->dev;

	drm_atomic_helper_commit_modeset_disables(drm, state);
	drm_atomic_helper_commit_modeset_enables(drm, state);
	drm_atomic_helper_commit_planes(drm, state, DRM_PLANE_COMMIT_ACTIVE_ONLY);
	drm_atomic_helper_fake_vblank(state);
	drm_atomic_helper_commit_hw_done(state);
	vmgpu_wait_for_flip_done(state);
	drm_atomic_helper_cleanup_planes(drm, state);
}

static const struct drm_mode_config_helper_funcs vmgpu_mode_config_helpers = {
	.atomic_commit_tail = vmgpu_atomic_commit_tail,
};

static int vmgpu_head_init(struct vmgpu_device *vdev, struct vmgpu_head *head)
{
	struct drm_device *drm = &vdev->drm;
	int ret;

	ret = vmgpu_planes_init(vdev, head);
	if (ret)
		return ret;
	ret = drm_crtc_init_with_planes(drm, &head->crtc, &head->primary, &head->cursor,
					&vmgpu_crtc_funcs, NULL);
	if (ret)
		return ret;
	drm_crtc_helper_add(&head->crtc, &vmgpu_crtc_helper_funcs);
	ret = drm_simple_encoder_init(drm, &head->encoder, DRM_MODE_ENCODER_VIRTUAL);
	if (ret)
		return ret;
	head->encoder.possible_crtcs = drm_crtc_mask(&head->crtc);
	return vmgpu_connector_init(head);
}

/**
 * vmgpu_display_init() - KMS for the device's display controller
 * @vdev: the device, its interrupts allocated (vmgpu_irq_init())
 *
 * Mode config, vblank and poll helpers are drm-managed; the interrupt
 * handler device-managed.
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_display_init(struct vmgpu_device *vdev)
{
	struct vmgpu_display *display = &vdev->display;
	struct drm_device *drm = &vdev->drm;
	u32 i;
	int ret;

	spin_lock_init(&display->lock);
	INIT_WORK(&display->hotplug_work, vmgpu_display_hotplug_work);
	display->num_heads = min_t(u32, vmgpu_read32(vdev, VMGPU_REG_DISPLAY_HEADS),
				   VMGPU_MAX_HEADS);
	if (!display->num_heads)
		return -ENODEV;

	ret = drmm_mode_config_init(drm);
	if (ret)
		return ret;
	/* Released first: the work probes the connectors. */
	ret = drmm_add_action_or_reset(drm, vmgpu_display_fini, display);
	if (ret)
		return ret;
	drm->mode_config.min_width = 1;
	drm->mode_config.min_height = 1;
	drm->mode_config.max_width = VMGPU_MAX_MODE;
	drm->mode_config.max_height = VMGPU_MAX_MODE;
	drm->mode_config.cursor_width = VMGPU_CURSOR_SIZE;
	drm->mode_config.cursor_height = VMGPU_CURSOR_SIZE;
	drm->mode_config.preferred_depth = 24;
	/* COMMIT can latch at once: flips need not wait for a vblank. */
	drm->mode_config.async_page_flip = true;
	drm->mode_config.funcs = &vmgpu_mode_config_funcs;
	drm->mode_config.helper_private = &vmgpu_mode_config_helpers;

	for (i = 0; i < display->num_heads; i++) {
		struct vmgpu_head *head = &display->heads[i];

		head->vdev = vdev;
		head->index = i;
		ret = vmgpu_head_init(vdev, head);
		if (ret)
			return ret;
	}
	ret = drm_vblank_init(drm, display->num_heads);
	if (ret)
		return ret;
	drm_mode_config_reset(drm);
	ret = drmm_kms_helper_poll_init(drm);
	if (ret)
		return ret;

	ret = devm_request_irq(drm->dev, vdev->irq[VMGPU_MSIX_VEC_DISPLAY], vmgpu_display_irq,
			       0, "vmgpu-display", vdev);
	if (ret)
		return ret;
	vmgpu_display_mask(vdev, VMGPU_DISPLAY_EVENTS_ALL & ~GENMASK(7, 0), 0);
	vmgpu_write32(vdev, VMGPU_REG_INT_MASK,
		      vmgpu_read32(vdev, VMGPU_REG_INT_MASK) | VMGPU_INT_DISPLAY);
	return 0;
}

/**
 * vmgpu_display_unplug() - turn the heads off before the device goes
 * @vdev: the device, being removed, after drm_dev_unplug()
 *
 * Runs while the registers are still mapped: the heads go off first, then
 * the planes are unpinned; no interrupt or hotplug work is left.
 */
void vmgpu_display_unplug(struct vmgpu_device *vdev)
{
	struct vmgpu_display *display = &vdev->display;
	u32 i;

	/* Off before anything is unpinned, and no interrupt left running. */
	for (i = 0; i < display->num_heads; i++)
		vmgpu_head_off(&display->heads[i]);
	vmgpu_display_mask(vdev, 0, ~0u);
	synchronize_irq(vdev->irq[VMGPU_MSIX_VEC_DISPLAY]);
	/* No FLIP_DONE or vblank will complete an armed flip now. */
	spin_lock_irq(&vdev->drm.event_lock);
	for (i = 0; i < display->num_heads; i++) {
		struct vmgpu_head *head = &display->heads[i];

		if (!head->event)
			continue;
		vmgpu_head_send_armed_event(head, head->event);
		head->event = NULL;
	}
	spin_unlock_irq(&vdev->drm.event_lock);
	cancel_work_sync(&display->hotplug_work);
	/* Unplugged: the helpers no longer touch the device, only state. */
	drm_atomic_helper_shutdown(&vdev->drm);
}
