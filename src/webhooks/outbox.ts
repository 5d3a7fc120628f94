import type { Clock, Rng } from "../clock";
import type { Owner } from "../auth/actors";
import type { Queryable } from "../db/port";
import type { EventType } from "./event-types";
import { type EventRow, insertEvent } from "./store";

export type { Owner };

export interface EmitDeps {
  clock: Clock;
  rng: Rng;
}

/**
 * Event data as JSON text, its unpaired surrogates as U+FFFD — as they are in every text column (stored as UTF-8):
 * the event says what was stored, a receiver's strict JSON parser accepts it, and PostgreSQL's json type (the
 * sandbox's user_id filter) can read it, which refuses a "\ud800" escape. JSON.stringify escapes only unpaired
 * surrogates as \udXXX, so text without one is kept as it is (one scan, no second pass).
 */
function eventJson(data: Record<string, unknown>): string {
  const text = JSON.stringify(data);
  return text.includes("\\ud") ? JSON.stringify(data, (_key, value: unknown) => (typeof value === "string" ? value.toWellFormed() : value)) : text;
}

/**
 * `evt_` and 24 hex digits: the event's time in milliseconds (12 digits, as UUIDv7 starts) then 48 random bits.
 * Ids made one after another sort together, so each new row of events_public_id_idx lands on the index's last
 * page, which the transactions of one commit share; a fully random id put every event on a page of its own
 * (a credit's statements as a grouped loop: 64–66 → 55–56 µs, bench/README.md "Sub-journal in memory"). Unguessable
 * still (48 random bits per millisecond), and an id reveals nothing the event's own created_at does not.
 */
export function eventPublicId(atMs: number, random: Uint8Array): string {
  return `evt_${Math.max(0, Math.floor(atMs)).toString(16).padStart(12, "0").slice(-12)}${Buffer.from(random.subarray(0, 6)).toString("hex")}`;
}

function eventRow(deps: EmitDeps, owner: Owner, eventType: EventType, data: Record<string, unknown>): EventRow {
  const now = deps.clock.now();
  return { publicId: eventPublicId(now.getTime(), deps.rng.bytes(6)), owner, eventType, data: eventJson(data), nowIso: now.toISOString() };
}

/**
 * The transactional outbox. Call with the producer's transaction handle (`await ctx.store.tx(async (t) => …
 * emitEvent(t, …))`): the event row and one queued delivery per active subscribed webhook are written with the
 * change, so an event exists exactly when its change does. Fanning out here (not later) also pins the receivers to
 * those subscribed when the change happened. `only`: to that webhook alone (webhook.test). Nudge ctx.dispatcher
 * after the transaction commits.
 */
export async function emitEvent(
  q: Queryable,
  deps: EmitDeps,
  owner: Owner,
  eventType: EventType,
  data: Record<string, unknown>,
  only?: { webhookId: number },
): Promise<{ id: number; publicId: string; deliveryIds: number[] }> {
  const row = eventRow(deps, owner, eventType, data);
  const { id, deliveryIds } = await insertEvent(q, row, only?.webhookId ?? null);
  return { id, publicId: row.publicId, deliveryIds };
}
