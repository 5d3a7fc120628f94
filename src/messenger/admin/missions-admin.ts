// Operator edits of a mission, guarded by its revision (optimistic concurrency): the operator sends the revision
// it read in X-Expected-Revision and the change applies only if nobody changed the mission since. The compare
// and the write are ONE statement (`UPDATE … WHERE mission_key = ? AND revision = ?`) inside an immediate
// transaction that also writes the audit row, so of two edits naming the same revision exactly one applies and
// the other is told the revision that won.
import type { AdminRequest } from "../../auth/admin-plugin";
import { writeAudit } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { checkMissionLimitsOrThrow } from "../games/mission-sources";
import { adminMissionView, type MissionRow } from "../games/missions";

export const REVISION_HEADER = "X-Expected-Revision";

/**
 * The header's value as a revision. Absent is 428 revision_required when the route demands it (PATCH), else
 * null; anything but a positive integer in range is 400 naming the header.
 */
export function expectedRevisionOrThrow(raw: string | undefined, required: true): number;
export function expectedRevisionOrThrow(raw: string | undefined, required: false): number | null;
export function expectedRevisionOrThrow(raw: string | undefined, required: boolean): number | null {
  if (raw === undefined) {
    if (!required) return null;
    throw new AppError("revision_required", `Send ${REVISION_HEADER} with the mission's revision (GET /api/messenger/admin/missions shows it)`);
  }
  const value = raw.trim();
  if (!/^[1-9][0-9]{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    const shown = JSON.stringify(raw.length > 24 ? `${raw.slice(0, 24)}…` : raw);
    const problem = `must be a positive integer (the revision you read); got ${shown}`;
    throw new AppError("invalid_payload", `${REVISION_HEADER} ${problem}`, { details: [{ field: `header.${REVISION_HEADER.toLowerCase()}`, problem }] });
  }
  return Number(value);
}

export interface MissionPatch {
  title?: string;
  event_type?: string;
  target?: number;
  reward?: { free_spins?: number; missiles?: number; points?: number; salutes?: string | null };
  daily_cap?: number;
  per_minute_cap?: number;
}

/** Body field → column, in the order changed_fields lists them. */
const COLUMNS: Array<[string, keyof MissionRow, (p: MissionPatch) => string | number | null | undefined]> = [
  ["title", "title", (p) => p.title],
  ["event_type", "event_type", (p) => p.event_type],
  ["target", "target", (p) => p.target],
  ["reward.free_spins", "reward_free_spins", (p) => p.reward?.free_spins],
  ["reward.missiles", "reward_missiles", (p) => p.reward?.missiles],
  ["reward.points", "reward_points", (p) => p.reward?.points],
  // A zero amount pays nothing (paySalutes skips it): store it as null, one spelling of "no salutes".
  [
    "reward.salutes",
    "reward_salutes",
    (p) => (p.reward?.salutes === undefined ? undefined : p.reward.salutes === null || Number(p.reward.salutes) === 0 ? null : p.reward.salutes),
  ],
  ["daily_cap", "daily_cap", (p) => p.daily_cap],
  ["per_minute_cap", "per_minute_cap", (p) => p.per_minute_cap],
];

/** Any mission, active or not: the operator routes see them all. */
export const missionOrThrow = (ctx: AppContext, key: string) => {
  const m = ctx.db.sqlite.query<MissionRow, [string]>("SELECT * FROM messenger_missions WHERE mission_key = ?").get(key);
  if (!m) throw new AppError("mission_not_found", `No mission ${JSON.stringify(key)}; list them with GET /api/messenger/admin/missions`);
  return m;
};

const conflict = (key: string, expected: number, current: number) =>
  new AppError("revision_conflict", `Mission ${JSON.stringify(key)} is at revision ${current}, not ${expected}: read it again and re-apply your change`, {
    details: { mission_key: key, expected_revision: expected, current_revision: current },
  });

/**
 * A lower target must stay above every unfinished player's progress: a player already at or past it could
 * never report more (progress is capped at the target and must grow), so would be stuck short of a completion
 * it has earned. Refused rather than completing those players inside an operator's edit (which would pay
 * rewards nobody reported); raising the target never touches completed players.
 */
function checkTarget(ctx: AppContext, key: string, target: number) {
  // messenger_mission_enrollments_mission_idx (mission_key, completed_at): the unfinished enrollments of one mission.
  const highest = ctx.db.sqlite
    .query<{ p: number | null }, [string]>("SELECT MAX(progress) AS p FROM messenger_mission_enrollments WHERE mission_key = ? AND completed_at IS NULL")
    .get(key)!.p;
  if (highest !== null && target <= highest) {
    const problem = `must be more than ${highest}, the highest progress of a player who has not completed the mission`;
    throw new AppError("conflict", `target ${problem}`, { details: [{ field: "body.target", problem }] });
  }
}

/** PATCH: the fields sent change, the revision goes up by one; 409 revision_conflict if `expected` is stale. */
export function patchMission(ctx: AppContext, admin: AdminRequest, key: string, expected: number, patch: MissionPatch) {
  const changes = COLUMNS.flatMap(([field, column, pick]) => {
    const value = pick(patch);
    return value === undefined ? [] : [{ field, column, value }];
  });
  if (changes.length === 0) {
    const problem = "must change at least one of title, event_type, target, reward, daily_cap, per_minute_cap";
    throw new AppError("invalid_payload", `The body ${problem}`, { details: [{ field: "body", problem }] });
  }
  const db = ctx.db.sqlite;
  return db
    .transaction(() => {
      const before = missionOrThrow(ctx, key);
      if (before.revision !== expected) throw conflict(key, expected, before.revision);
      // The source is fixed at creation; what changes must suit it (a self-reported mission keeps its tighter limits).
      checkMissionLimitsOrThrow(before.progress_source, patch);
      if (patch.target !== undefined && patch.target < before.target) checkTarget(ctx, key, patch.target);
      const now = ctx.clock.now().toISOString();
      const sets = changes.map((c) => `${c.column} = ?`).join(", ");
      // The compare-and-set itself: the revision in the WHERE clause is what makes a concurrent edit lose.
      const after = db
        .query<MissionRow, Array<string | number | null>>(
          `UPDATE messenger_missions SET ${sets}, revision = revision + 1, updated_at = ? WHERE mission_key = ? AND revision = ? RETURNING *`,
        )
        .get(...changes.map((c) => c.value), now, key, expected);
      if (!after) throw conflict(key, expected, missionOrThrow(ctx, key).revision);
      const changed = changes.map((c) => c.field);
      writeAudit(db, {
        at: now,
        actor: admin.actor,
        action: "messenger.mission.update",
        target: key,
        details: {
          revision: after.revision,
          changed_fields: changed,
          before: Object.fromEntries(changes.map((c) => [c.field, before[c.column]])),
          after: Object.fromEntries(changes.map((c) => [c.field, after[c.column]])),
        },
        requestId: admin.requestId,
      });
      return { mission: adminMissionView(after), changed_fields: changed };
    })
    .immediate();
}

/**
 * Activate or deactivate. Idempotent: already in that state answers changed=false and leaves the revision and
 * the audit trail alone. With X-Expected-Revision a stale revision is 409 even when nothing would change, so an
 * operator acting on an old read always hears about the newer one.
 */
export function setMissionActive(ctx: AppContext, admin: AdminRequest, key: string, active: boolean, expected: number | null) {
  const db = ctx.db.sqlite;
  return db
    .transaction(() => {
      const before = missionOrThrow(ctx, key);
      if (expected !== null && before.revision !== expected) throw conflict(key, expected, before.revision);
      if ((before.active === 1) === active) return { mission: adminMissionView(before), changed: false };
      const now = ctx.clock.now().toISOString();
      const after = db
        .query<MissionRow, [number, string, string, number]>(
          "UPDATE messenger_missions SET active = ?, revision = revision + 1, updated_at = ? WHERE mission_key = ? AND revision = ? RETURNING *",
        )
        .get(active ? 1 : 0, now, key, before.revision);
      if (!after) throw conflict(key, before.revision, missionOrThrow(ctx, key).revision);
      writeAudit(db, {
        at: now,
        actor: admin.actor,
        action: active ? "messenger.mission.activate" : "messenger.mission.deactivate",
        target: key,
        details: { revision: after.revision, active },
        requestId: admin.requestId,
      });
      return { mission: adminMissionView(after), changed: true };
    })
    .immediate();
}
