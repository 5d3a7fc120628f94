import type { Clock, Rng } from "../clock";
import type { Owner } from "../auth/actors";
import type { Queryable } from "../db/port";
import type { EventType } from "./event-types";
import { type EventRow, insertEvent } from "./store";

export type { Owner };

export interface EmittedEvent {
  id: number;
  publicId: string;
  deliveryIds: number[];
}

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

function eventRow(deps: EmitDeps, owner: Owner, eventType: EventType, data: Record<string, unknown>): EventRow {
  return {
    publicId: "evt_" + Buffer.from(deps.rng.bytes(12)).toString("hex"),
    owner,
    eventType,
    data: eventJson(data),
    nowIso: deps.clock.now().toISOString(),
  };
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
): Promise<EmittedEvent> {
  const row = eventRow(deps, owner, eventType, data);
  const { id, deliveryIds } = await insertEvent(q, row, only?.webhookId ?? null);
  return { id, publicId: row.publicId, deliveryIds };
}
