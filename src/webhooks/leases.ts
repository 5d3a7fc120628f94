import type { Queryable } from "../db/port";
import type { DispatchContext } from "./deps";
import { type DueRow, dueDeliveries, interruptAttempts, settleDelivery, takeDeliveries } from "./lease-store";
import { type EmitDeps, emitEvent } from "./outbox";

/** last_error of a delivery (and error of its attempt row) whose sender stopped while the attempt was out. */
export const INTERRUPTED_ERROR =
  "the sender stopped during this attempt (process killed or lease lost): the receiver may have received the request; its outcome is unknown";

/** A delivery leased for one attempt, already counted: `attempts` includes it and `attempt_id` is its row. */
export type Leased = Omit<DueRow, "status" | "is_active" | "deleted_at" | "due" | "reason_tag" | "last_error"> & {
  attempt_id: number;
  lease_token: string;
  /** When the lease runs out (epoch ms, this instance's clock). */
  lease_until_ms: number;
};

/** Tells the partner's webhook.delivery_failed receivers — never about a delivery_failed event itself (no loops). */
export async function notifyDeadLetter(
  q: Queryable,
  deps: EmitDeps,
  d: { id: number; partner: string; mode: "sandbox" | "live"; webhook_id: number; event_public_id: string; event_type: string },
  reasonTag: string | null,
  error: string | null,
): Promise<void> {
  if (d.event_type === "webhook.delivery_failed") return;
  await emitEvent(q, deps, { partner: d.partner, mode: d.mode }, "webhook.delivery_failed", {
    delivery_id: d.id,
    event_id: d.event_public_id,
    event_type: d.event_type,
    webhook_id: d.webhook_id,
    reason_tag: reasonTag,
    last_error: error,
  });
}

/**
 * Takes due deliveries for sending, in ONE short transaction per batch, so two dispatchers (instances) never take
 * the same delivery — SQLite's write lock, PostgreSQL's FOR UPDATE SKIP LOCKED (lease-store.ts) — and a crash never
 * loses one: a lease that outlives its sender expires and is taken again. Taking a delivery counts its attempt
 * (attempts + 1, and an attempt row without an outcome) before the request leaves, so `attempts` counts every
 * request a receiver may have seen. A delivery whose previous lease expired lost that attempt's outcome: its row
 * is marked `interrupted`, and if the attempt was the last allowed one the delivery is dead-lettered here instead
 * of being sent again.
 */
export class DeliveryLeases {
  constructor(private readonly ctx: DispatchContext) {}

  /**
   * Leases up to `limit` due deliveries until `leaseUntil`. Returns those to send, and how many were settled
   * without a send: cancelled (webhook disabled or deleted) or dead-lettered (attempts already at max_attempts).
   */
  async take(limit: number, leaseUntil: Date): Promise<{ leased: Leased[]; settled: number }> {
    const { store, clock, rng } = this.ctx;
    const now = clock.now().toISOString();
    const token = Buffer.from(rng.bytes(8)).toString("hex");
    const max = this.ctx.config.webhooks.maxAttempts;
    const lease = { untilIso: leaseUntil.toISOString(), token, nowIso: now, interruptedError: INTERRUPTED_ERROR };
    return store.tx(async (t) => {
      const due = await dueDeliveries(t, store.dialect, now, limit);
      await interruptAttempts(
        t,
        due.filter((c) => c.status === "processing").map((c) => c.id),
        INTERRUPTED_ERROR,
      );
      const send: DueRow[] = [];
      let settled = 0;
      for (const c of due) {
        const interrupted = c.status === "processing";
        if (!c.is_active || c.deleted_at) {
          await settleDelivery(t, c.id, "cancelled", now, INTERRUPTED_ERROR);
          settled++;
        } else if (c.attempts >= max) {
          // Every allowed request may have reached the receiver already (the last one cut off by a crash, or
          // max_attempts lowered since): sending again would exceed the bound.
          await settleDelivery(t, c.id, "dead_letter", now, INTERRUPTED_ERROR);
          await notifyDeadLetter(t, { clock, rng }, c, interrupted ? "interrupted" : c.reason_tag, interrupted ? INTERRUPTED_ERROR : c.last_error);
          settled++;
        } else {
          send.push(c);
        }
      }
      const taken = await takeDeliveries(
        t,
        send.map((c) => c.id),
        lease,
      );
      const leased = send.map(({ status: _s, is_active: _a, deleted_at: _d, due: _due, reason_tag: _r, last_error: _e, ...rest }) => {
        const { attempts, attemptId } = taken.get(rest.id)!;
        return { ...rest, attempts, attempt_id: attemptId, lease_token: token, lease_until_ms: leaseUntil.getTime() };
      });
      return { leased, settled };
    });
  }
}
