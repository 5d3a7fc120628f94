import type { Queryable } from "../db/port";
import type { DispatchContext } from "./deps";
import {
  type DueRow,
  dueDeliveries,
  interruptAttempts,
  interruptedInBudget,
  settleDelivery,
  takeDeliveries,
  type TakenRow,
  takeQueuedPostgres,
} from "./lease-store";
import { type EmitDeps, emitEvent } from "./outbox";

/** last_error of a delivery (and error of its attempt row) whose sender stopped while the attempt was out. */
export const INTERRUPTED_ERROR =
  "the sender stopped during this attempt (process killed or lease lost): the receiver may have received the request; its outcome is unknown";

/** last_error of a delivery dead-lettered because WEBHOOK_MAX_ATTEMPTS of its attempts were interrupted. */
export const interruptedLimitError = (n: number) =>
  `the sender stopped during ${n} attempts of this delivery (processes killed or leases lost), as many as WEBHOOK_MAX_ATTEMPTS allows: ` +
  "the receiver may have received them; their outcome is unknown and no further attempt is made";

/**
 * On PostgreSQL, how often the full lease runs at least, while the one-statement lease of new deliveries keeps
 * finding all it asks for (DeliveryLeases.take).
 */
const FULL_LEASE_EVERY_MS = 1_000;

/** A delivery leased for one attempt, already counted: `attempts` includes it and `attempt_id` is its row. */
export type Leased = TakenRow & {
  /**
   * This is the last attempt the budget allows: WEBHOOK_MAX_ATTEMPTS − 1 attempts of this budget have a recorded
   * outcome, so a failure dead-letters the delivery. (Interrupted attempts are not among them.)
   */
  final_attempt: boolean;
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
 * is marked `interrupted`, and the delivery is sent again. The budget, WEBHOOK_MAX_ATTEMPTS, counts the attempts
 * whose outcome was recorded; an interrupted one is not among them (it may or may not have reached the receiver,
 * and was cut off at any point from its lease to its outcome's commit). Interrupted attempts have a bound of their
 * own, the same number: a delivery whose sends keep being cut off is dead-lettered after WEBHOOK_MAX_ATTEMPTS of
 * them, never retried forever. Per budget, a delivery is thus attempted at most 2 × WEBHOOK_MAX_ATTEMPTS − 1 times:
 * each new attempt is taken with at most WEBHOOK_MAX_ATTEMPTS − 1 recorded and as many interrupted ones before it.
 */
export class DeliveryLeases {
  /** When the full lease last ran (epoch ms, this instance's clock): PostgreSQL's common lease defers to it. */
  private fullAt = Number.NEGATIVE_INFINITY;
  /** The last lease found all it asked for: a backlog, where PostgreSQL's common lease pays. */
  private backlog = false;

  constructor(private readonly ctx: DispatchContext) {}

  /**
   * Leases up to `limit` due deliveries until `leaseUntil`. Returns those to send, and how many were settled
   * without a send: cancelled (webhook disabled or deleted) or dead-lettered (no attempt left in the budget).
   * On PostgreSQL, through a backlog (the last lease found all it asked for), the common case is leased first in
   * one statement (takeQueuedPostgres: queued, webhook active, budget not near its end); the full lease takes the
   * rest when that finds fewer than `limit`, and runs instead at least once every FULL_LEASE_EVERY_MS, so that
   * retries and expired leases due now wait no longer than that behind new deliveries. Outside a backlog only the
   * full lease runs, as on SQLite (where it is one statement already).
   */
  async take(limit: number, leaseUntil: Date): Promise<{ leased: Leased[]; settled: number }> {
    const taken = await this.takeSome(limit, leaseUntil);
    this.backlog = taken.leased.length + taken.settled >= limit;
    return taken;
  }

  private async takeSome(limit: number, leaseUntil: Date): Promise<{ leased: Leased[]; settled: number }> {
    const { store, clock } = this.ctx;
    const nowMs = clock.now().getTime();
    if (store.dialect !== "postgres" || !this.backlog || nowMs - this.fullAt >= FULL_LEASE_EVERY_MS) {
      this.fullAt = nowMs;
      return this.takeAll(limit, leaseUntil);
    }
    const token = Buffer.from(this.ctx.rng.bytes(8)).toString("hex");
    const rows = await takeQueuedPostgres(store, limit, this.ctx.config.webhooks.maxAttempts, {
      untilIso: leaseUntil.toISOString(),
      token,
      nowIso: new Date(nowMs).toISOString(),
    });
    const leased: Leased[] = rows.map((r) => ({ ...r, final_attempt: false, lease_token: token, lease_until_ms: leaseUntil.getTime() }));
    if (leased.length === limit) return { leased, settled: 0 };
    this.fullAt = nowMs;
    const rest = await this.takeAll(limit - leased.length, leaseUntil);
    return { leased: [...leased, ...rest.leased], settled: rest.settled };
  }

  /** Every state due now (dueDeliveries), with the checks of budgets, interrupted attempts and cancelled webhooks. */
  private async takeAll(limit: number, leaseUntil: Date): Promise<{ leased: Leased[]; settled: number }> {
    const { store, clock, rng } = this.ctx;
    const now = clock.now().toISOString();
    const token = Buffer.from(rng.bytes(8)).toString("hex");
    const max = this.ctx.config.webhooks.maxAttempts;
    const lease = { untilIso: leaseUntil.toISOString(), token, nowIso: now, interruptedError: INTERRUPTED_ERROR };
    return store.tx(async (t) => {
      const due = await dueDeliveries(t, store.dialect, now, limit);
      const interruptedIds = due.filter((c) => c.status === "processing").map((c) => c.id);
      await interruptAttempts(t, interruptedIds, INTERRUPTED_ERROR);
      // Interrupted attempts are looked up only where they can change what happens: a delivery just interrupted,
      // or one whose next attempt may be its last (attempts + 1 ≥ max). Below that, neither count can reach max,
      // and the lease of an ordinary delivery reads nothing more.
      const nearTheEnd = due.filter((c) => c.status === "processing" || c.attempts + 1 >= max).map((c) => c.id);
      const uncounted = await interruptedInBudget(t, nearTheEnd);
      const send: Array<DueRow & { final_attempt: boolean }> = [];
      let settled = 0;
      for (const c of due) {
        const interrupted = c.status === "processing";
        const lost = uncounted.get(c.id) ?? 0;
        const recorded = c.attempts - lost;
        if (!c.is_active || c.deleted_at) {
          await settleDelivery(t, c.id, "cancelled", now, INTERRUPTED_ERROR);
          settled++;
        } else if (recorded >= max || lost >= max) {
          // The budget is spent: max_attempts outcomes recorded (max_attempts lowered since, or a sender that had
          // lost its lease recorded its late outcome), or max_attempts attempts interrupted.
          const error = lost >= max ? interruptedLimitError(lost) : INTERRUPTED_ERROR;
          await settleDelivery(t, c.id, "dead_letter", now, error);
          await notifyDeadLetter(t, { clock, rng }, c, interrupted ? "interrupted" : c.reason_tag, interrupted ? error : c.last_error);
          settled++;
        } else {
          send.push({ ...c, final_attempt: recorded + 1 >= max });
        }
      }
      const sendIds = send.map((c) => c.id);
      const taken = await takeDeliveries(t, sendIds, lease);
      const leased = send.map(({ status: _s, is_active: _a, deleted_at: _d, due: _due, reason_tag: _r, last_error: _e, ...rest }) => {
        const { attempts, attemptId } = taken.get(rest.id)!;
        return { ...rest, attempts, attempt_id: attemptId, lease_token: token, lease_until_ms: leaseUntil.getTime() };
      });
      return { leased, settled };
    });
  }
}
