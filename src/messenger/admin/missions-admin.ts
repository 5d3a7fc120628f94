// Operator edits of a mission, guarded by its revision (optimistic concurrency): the operator sends the revision
// it read in X-Expected-Revision and the change applies only if nobody changed the mission since. The compare
// and the write are ONE statement (`UPDATE … WHERE mission_key = ? AND revision = ?`) inside a transaction that
// also writes the audit row and holds the mission's row lock from its first statement, so of two edits naming the
// same revision exactly one applies and the other is told the revision that won.
import type { Static } from "elysia";
import type { AdminRequest } from "../../auth/admin-plugin";
import type { AppContext } from "../../context";
import { auditOperator } from "../../auth/audit";
import type { Queryable } from "../../db/port";
import { AppError } from "../../http/errors/errors";
import { checkMissionLimitsOrThrow } from "../games/mission-sources";
import { adminMissionView } from "../games/missions";
import { checkSalutesReward } from "../games/salutes-reward";
import { highestUnfinishedProgress, lockMission, type MissionRow, missionByKey, updateMissionIfRevision } from "../store/missions";
import type { MissionAdminModel } from "./missions-model";

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

type MissionPatch = Static<typeof MissionAdminModel.patchBody>;

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

/** The mission read (or locked, for the rest of the operator's transaction) by key; any mission, active or not. */
function foundOrThrow(m: MissionRow | null, key: string): MissionRow {
  if (!m) throw new AppError("mission_not_found", `No mission ${JSON.stringify(key)}; list them with GET /api/messenger/admin/missions`);
  return m;
}
export const missionOrThrow = async (q: Queryable, key: string) => foundOrThrow(await missionByKey(q, key), key);

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
async function checkTarget(t: Queryable, key: string, target: number) {
  const highest = await highestUnfinishedProgress(t, key);
  if (highest !== null && target <= highest) {
    const problem = `must be more than ${highest}, the highest progress of a player who has not completed the mission`;
    throw new AppError("conflict", `target ${problem}`, { details: [{ field: "body.target", problem }] });
  }
}

export async function patchMission(ctx: AppContext, admin: AdminRequest, key: string, expected: number, patch: MissionPatch) {
  const changes = COLUMNS.flatMap(([field, column, pick]) => {
    const value = pick(patch);
    return value === undefined ? [] : [{ field, column, value }];
  });
  if (changes.length === 0) {
    const problem = "must change at least one of title, event_type, target, reward, daily_cap, per_minute_cap";
    throw new AppError("invalid_payload", `The body ${problem}`, { details: [{ field: "body", problem }] });
  }
  checkSalutesReward(ctx, patch.reward?.salutes);
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    const before = foundOrThrow(await lockMission(t, key), key);
    if (before.revision !== expected) throw conflict(key, expected, before.revision);
    // The source is fixed at creation; the mission as it will be must suit it (a self-reported mission keeps its
    // tighter limits), the fields this PATCH leaves as they are included.
    checkMissionLimitsOrThrow(before.progress_source, {
      event_type: patch.event_type ?? before.event_type,
      daily_cap: patch.daily_cap ?? before.daily_cap,
      per_minute_cap: patch.per_minute_cap ?? before.per_minute_cap,
      reward: {
        free_spins: patch.reward?.free_spins ?? before.reward_free_spins,
        missiles: patch.reward?.missiles ?? before.reward_missiles,
        points: patch.reward?.points ?? before.reward_points,
        salutes: patch.reward?.salutes !== undefined ? patch.reward.salutes : before.reward_salutes,
      },
    });
    if (patch.target !== undefined && patch.target < before.target) await checkTarget(t, key, patch.target);
    const after = await updateMissionIfRevision(
      t,
      key,
      expected,
      changes.map((c) => ({ column: c.column, value: c.value })),
      now,
    );
    if (!after) throw conflict(key, expected, (await missionOrThrow(t, key)).revision);
    const changed = changes.map((c) => c.field);
    await auditOperator(t, admin, now, "messenger.mission.update", key, {
      revision: after.revision,
      changed_fields: changed,
      before: Object.fromEntries(changes.map((c) => [c.field, before[c.column]])),
      after: Object.fromEntries(changes.map((c) => [c.field, after[c.column]])),
    });
    return { mission: adminMissionView(after), changed_fields: changed };
  });
}

/**
 * Activate or deactivate. Idempotent: already in that state answers changed=false and leaves the revision and
 * the audit trail alone. With X-Expected-Revision a stale revision is 409 even when nothing would change, so an
 * operator acting on an old read always hears about the newer one.
 */
export async function setMissionActive(ctx: AppContext, admin: AdminRequest, key: string, active: boolean, expected: number | null) {
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    const before = foundOrThrow(await lockMission(t, key), key);
    if (expected !== null && before.revision !== expected) throw conflict(key, expected, before.revision);
    if ((before.active === 1) === active) return { mission: adminMissionView(before), changed: false };
    const after = await updateMissionIfRevision(t, key, before.revision, [{ column: "active", value: active ? 1 : 0 }], now);
    if (!after) throw conflict(key, before.revision, (await missionOrThrow(t, key)).revision);
    await auditOperator(t, admin, now, active ? "messenger.mission.activate" : "messenger.mission.deactivate", key, { revision: after.revision, active });
    return { mission: adminMissionView(after), changed: true };
  });
}
