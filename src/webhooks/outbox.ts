import type { Database } from "bun:sqlite";
import type { Clock, Rng } from "../clock";
import type { Owner } from "../auth/actors";
import type { EventType } from "./event-types";

export type { Owner };

export interface EmittedEvent {
  id: number;
  publicId: string;
  deliveryIds: number[];
}

export interface OutboxDeps {
  sqlite: Database;
  clock: Clock;
  rng: Rng;
}

/**
 * The transactional outbox. Call INSIDE the producing transaction: the event row and one queued delivery per
 * active subscribed webhook are written with the change, so an event exists exactly when its change does.
 * Fanning out here (not later) also pins the receivers to those subscribed when the change happened.
 */
export function emitEventSync(deps: OutboxDeps, owner: Owner, eventType: EventType, data: Record<string, unknown>, only?: { webhookId: number }): EmittedEvent {
  const now = deps.clock.now().toISOString();
  const publicId = "evt_" + Buffer.from(deps.rng.bytes(12)).toString("hex");
  const { id } = deps.sqlite
    .query("INSERT INTO events (public_id, partner, mode, event_type, data, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id")
    .get(publicId, owner.partner, owner.mode, eventType, JSON.stringify(data), now) as { id: number };
  const targets = only
    ? [{ id: only.webhookId }]
    : (deps.sqlite
        .query("SELECT id FROM webhooks WHERE partner = ? AND mode = ? AND event_type = ? AND is_active = 1 AND deleted_at IS NULL")
        .all(owner.partner, owner.mode, eventType) as Array<{ id: number }>);
  const insert = deps.sqlite.query(
    `INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'queued', 0, ?, ?, ?) RETURNING id`,
  );
  const deliveryIds = targets.map((w) => (insert.get(id, w.id, owner.partner, owner.mode, now, now, now) as { id: number }).id);
  return { id, publicId, deliveryIds };
}
