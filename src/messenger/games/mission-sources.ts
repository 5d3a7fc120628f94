// Where a mission's progress comes from (docs/messenger.md, "Missions"). For what the server itself records —
// spins, grid starts and reveals, purchases, promo claims, wallet proofs — progress is the server's count, kept in
// the same transaction as the action (observeEvent), never a number the mini-app sends: a client could otherwise
// report any progress on any mission. Anything else the operator must declare `self_reported` when creating the
// mission, and such missions live under tighter limits (smaller caps and rewards, no salutes), since their
// progress is only the client's word. An event type that is neither is refused at creation.
import type { Queryable, Statement } from "../../db/port";
import { badField } from "../config/inputs";
import { addObserved, addObservedStatement } from "../store/missions";

/** Event types the server observes, and what counts one unit. */
export const SERVER_OBSERVED_EVENTS = {
  "spin_wheel.play": "one wheel spin",
  "recon_grid.start": "one recon grid started",
  "recon_grid.reveal": "one grid cell revealed",
  "recon_grid.complete": "one grid completed (every prize found)",
  "recon_grid.purchase": "one missile bought (POST /api/messenger/games/recon-grid/purchase)",
  "items.purchase": "one item bought (POST /api/messenger/games/items/purchase), per unit of quantity",
  "promo.claim": "one promo code claimed",
  "wallet.proof": "one wallet proven for the first time by this player",
} as const;

export type ServerObservedEvent = keyof typeof SERVER_OBSERVED_EVENTS;
export type ProgressSource = "server" | "self_reported";

export const isServerObserved = (eventType: string): eventType is ServerObservedEvent => Object.hasOwn(SERVER_OBSERVED_EVENTS, eventType);

/** The tighter limits of a self-reported mission (the general ones: caps up to 1,000,000 and 1000, any reward). */
export const SELF_REPORTED_LIMITS = {
  daily_cap: 20,
  per_minute_cap: 5,
  reward: { free_spins: 5, missiles: 20, points: 1000 },
} as const;

/**
 * Counts `units` of an observed event for the player's unfinished enrollments in active server missions of that
 * type, inside the caller's transaction. On the spin path: a player without enrollments costs one probe of the
 * enrollments' primary key (telegram_user_id, mission_key) and writes nothing.
 */
export function observeEvent(t: Queryable, telegramUserId: number, eventType: ServerObservedEvent, units = 1): Promise<void> {
  return addObserved(t, telegramUserId, eventType, units);
}

/** observeEvent's statement, for an action that hands it to the ledger to send (ActionEffect.riders). */
export const observedStatement = (telegramUserId: number, eventType: ServerObservedEvent, units = 1): Statement =>
  addObservedStatement(telegramUserId, eventType, units);

const observedList = () => Object.keys(SERVER_OBSERVED_EVENTS).join(", ");

/** The progress source of a new mission: refuses an event type that is neither observed nor declared self-reported. */
export function progressSourceOrThrow(eventType: string, declared: ProgressSource | undefined): ProgressSource {
  if (isServerObserved(eventType)) {
    if (declared === "self_reported") {
      throw badField("body.progress_source", `cannot be self_reported for ${eventType}: the server observes it, so its progress is the server's count`);
    }
    return "server";
  }
  if (declared === "self_reported") return "self_reported";
  throw badField(
    "body.event_type",
    `${JSON.stringify(eventType)} is not an event type the server observes (${observedList()}); ` +
      'a mission counted by the mini-app must be declared with progress_source: "self_reported"',
  );
}

/** The fields a mission of this source may hold; only the fields present are checked (a PATCH passes the whole mission). */
export interface MissionLimitsInput {
  event_type?: string;
  daily_cap?: number;
  per_minute_cap?: number;
  reward?: { free_spins?: number; missiles?: number; points?: number; salutes?: string | null };
}

export function checkMissionLimitsOrThrow(source: ProgressSource, m: MissionLimitsInput): void {
  if (m.event_type !== undefined) {
    if (source === "server" && !isServerObserved(m.event_type)) {
      throw badField("body.event_type", `must be one the server observes for this server-counted mission (${observedList()})`);
    }
    if (source === "self_reported" && isServerObserved(m.event_type)) {
      throw badField("body.event_type", `cannot be ${m.event_type} on a self-reported mission: the server observes it (create a server-counted mission)`);
    }
  }
  if (source === "server") return;
  const L = SELF_REPORTED_LIMITS;
  if (m.daily_cap !== undefined && m.daily_cap > L.daily_cap) throw badField("body.daily_cap", `must be at most ${L.daily_cap} on a self-reported mission`);
  if (m.per_minute_cap !== undefined && m.per_minute_cap > L.per_minute_cap)
    throw badField("body.per_minute_cap", `must be at most ${L.per_minute_cap} on a self-reported mission`);
  for (const k of ["free_spins", "missiles", "points"] as const) {
    const v = m.reward?.[k];
    if (v !== undefined && v > L.reward[k]) throw badField(`body.reward.${k}`, `must be at most ${L.reward[k]} on a self-reported mission`);
  }
  const salutes = m.reward?.salutes;
  if (salutes !== undefined && salutes !== null && Number(salutes) !== 0) {
    throw badField("body.reward.salutes", "is not allowed on a self-reported mission: salutes are not paid on the client's word");
  }
}
