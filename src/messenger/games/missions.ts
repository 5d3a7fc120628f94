// Missions: an operator defines an event type to count up to a target, with a reward and abuse limits. The
// player enrolls (idempotent) and the mini-app sends progress events, each with a client_event_id. Where the
// progress comes from is the mission's progress_source (mission-sources.ts): for `server` missions the server
// counts the events itself (enrollment.observed) and an event only brings progress up to that count — the
// client's number is not used; for `self_reported` missions the event carries the absolute progress. Either way:
// - a repeated client_event_id replays the first answer (nothing counted twice);
// - progress is monotonic: an event must bring more than the progress already recorded;
// - at most per_minute_cap accepted events per mission per rolling minute, and at most daily_cap progress units
//   per UTC day;
// refused events are recorded and answered with accepted=false and a reason. Completing pays the reward once
// (a ledger action keyed by the mission, nested in the event's transaction).
import type { AdminRequest } from "../../auth/admin-plugin";
import { writeAudit } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { keyPageOf, parseKeyPage } from "../../http/pagination";
import { applyAction } from "../ledger";
import { checkMissionLimitsOrThrow, type ProgressSource, progressSourceOrThrow } from "./mission-sources";
import { getPlayerOrCreate } from "../players";
import { paySalutes, type SalutesPayout } from "./salutes-reward";

export interface MissionRow {
  mission_key: string;
  title: string;
  event_type: string;
  progress_source: ProgressSource;
  target: number;
  reward_free_spins: number;
  reward_missiles: number;
  reward_points: number;
  reward_salutes: string | null;
  daily_cap: number;
  per_minute_cap: number;
  active: number;
  created_at: string;
  /** Bumped by every operator change (src/messenger/admin/missions-admin.ts). */
  revision: number;
  updated_at: string | null;
}

interface EnrollmentRow {
  telegram_user_id: number;
  mission_key: string;
  progress: number;
  observed: number;
  enrolled_at: string;
  completed_at: string | null;
}

export interface NewMission {
  mission_key: string;
  title: string;
  event_type: string;
  /** Required as "self_reported" for an event type the server does not observe; "server" otherwise. */
  progress_source?: ProgressSource;
  target: number;
  reward: { free_spins?: number; missiles?: number; points?: number; salutes?: string };
  daily_cap: number;
  per_minute_cap: number;
}

export const missionView = (m: MissionRow) => ({
  mission_key: m.mission_key,
  title: m.title,
  event_type: m.event_type,
  progress_source: m.progress_source,
  target: m.target,
  reward: { free_spins: m.reward_free_spins, missiles: m.reward_missiles, points: m.reward_points },
  reward_salutes: m.reward_salutes,
  daily_cap: m.daily_cap,
  per_minute_cap: m.per_minute_cap,
  active: m.active === 1,
  created_at: m.created_at,
});

const enrollmentView = (e: EnrollmentRow, m: Pick<MissionRow, "target" | "progress_source">) => ({
  mission_key: e.mission_key,
  progress: e.progress,
  observed: m.progress_source === "server" ? e.observed : null,
  target: m.target,
  enrolled_at: e.enrolled_at,
  completed_at: e.completed_at,
  completed: e.completed_at !== null,
});

export function createMission(ctx: AppContext, admin: AdminRequest, input: NewMission) {
  const source = progressSourceOrThrow(input.event_type, input.progress_source);
  checkMissionLimitsOrThrow(source, input);
  const db = ctx.db.sqlite;
  return db
    .transaction(() => {
      const now = ctx.clock.now().toISOString();
      const row = db
        .query<MissionRow, Array<string | number | null>>(
          `INSERT INTO messenger_missions (mission_key, title, event_type, progress_source, target, reward_free_spins, reward_missiles, reward_points, reward_salutes, daily_cap, per_minute_cap, active, created_at, revision, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 1, ?) ON CONFLICT (mission_key) DO NOTHING RETURNING *`,
        )
        .get(
          input.mission_key,
          input.title,
          input.event_type,
          source,
          input.target,
          input.reward.free_spins ?? 0,
          input.reward.missiles ?? 0,
          input.reward.points ?? 0,
          input.reward.salutes ?? null,
          input.daily_cap,
          input.per_minute_cap,
          now,
          now,
        );
      if (!row) throw new AppError("conflict", `A mission with key ${JSON.stringify(input.mission_key)} already exists`);
      writeAudit(db, {
        at: now,
        actor: admin.actor,
        action: "messenger.mission.create",
        target: input.mission_key,
        details: adminMissionView(row),
        requestId: admin.requestId,
      });
      return { mission: adminMissionView(row) };
    })
    .immediate();
}

/** The operator's view: the player's fields plus the revision a PATCH must name. */
export const adminMissionView = (m: MissionRow) => ({ ...missionView(m), revision: m.revision, updated_at: m.updated_at ?? m.created_at });

/**
 * One page of missions, oldest first (created_at, then key), in the spec's list shape. A cursor holds the last
 * row's [created_at, mission_key], so a mission created meanwhile never shifts the next page.
 */
export function listMissions(ctx: AppContext, input: { limit?: number; offset?: number; cursor?: string } = {}) {
  const db = ctx.db.sqlite;
  const page = parseKeyPage(input, ["text", "text"]);
  const [afterCreated, afterKey] = (page.after ?? [null, null]) as [string | null, string | null];
  const rows = db
    .query<MissionRow, [string | null, string | null, number, number]>(
      `SELECT * FROM messenger_missions WHERE ?1 IS NULL OR created_at > ?1 OR (created_at = ?1 AND mission_key > ?2)
       ORDER BY created_at, mission_key LIMIT ?3 OFFSET ?4`,
    )
    .all(afterCreated, afterKey, page.limit + 1, page.offset);
  const p = keyPageOf(rows, page, (m) => [m.created_at, m.mission_key]);
  const total = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM messenger_missions").get()!.n;
  return { missions: p.items.map(adminMissionView), count: p.count, total, pagination: p.pagination, query: p.query };
}

/**
 * The mission a player may act on: unknown is 404 mission_not_found; deactivated by the operator is 409
 * mission_inactive, so the mini-app can say "this mission was switched off" rather than "no such mission".
 */
const activeMission = (ctx: AppContext, key: string) => {
  const m = ctx.db.sqlite.query<MissionRow, [string]>("SELECT * FROM messenger_missions WHERE mission_key = ?").get(key);
  if (!m) throw new AppError("mission_not_found", `No mission ${JSON.stringify(key)}`);
  if (m.active !== 1) throw new AppError("mission_inactive", `The mission ${JSON.stringify(key)} is not active`, { details: { mission_key: key } });
  return m;
};

/** Active missions with this player's enrollment, if any. */
export function missionCatalog(ctx: AppContext, telegramUserId: number) {
  const db = ctx.db.sqlite;
  const missions = db.query<MissionRow, []>("SELECT * FROM messenger_missions WHERE active = 1 ORDER BY created_at, mission_key LIMIT 500").all();
  const mine = new Map(
    db
      .query<EnrollmentRow, [number]>("SELECT * FROM messenger_mission_enrollments WHERE telegram_user_id = ?")
      .all(telegramUserId)
      .map((e) => [e.mission_key, e]),
  );
  return { missions: missions.map((m) => ({ ...missionView(m), enrollment: mine.has(m.mission_key) ? enrollmentView(mine.get(m.mission_key)!, m) : null })) };
}

/** The player's enrollments (active and completed). */
export function listEnrollments(ctx: AppContext, telegramUserId: number) {
  const db = ctx.db.sqlite;
  const rows = db
    .query<EnrollmentRow & MissionRow, [number]>(
      "SELECT e.*, m.target, m.title, m.event_type, m.progress_source, m.reward_free_spins, m.reward_missiles, m.reward_points, m.daily_cap, m.per_minute_cap, m.active, m.created_at FROM messenger_mission_enrollments e JOIN messenger_missions m ON m.mission_key = e.mission_key WHERE e.telegram_user_id = ? ORDER BY e.enrolled_at, e.mission_key LIMIT 500",
    )
    .all(telegramUserId);
  return { enrollments: rows.map((r) => ({ ...enrollmentView(r, r), title: r.title })) };
}

/** Enrolls; enrolling again answers the same enrollment with already_enrolled=true. */
export function enroll(ctx: AppContext, telegramUserId: number, missionKey: string) {
  const db = ctx.db.sqlite;
  return db
    .transaction(() => {
      // Read inside the transaction: an operator's deactivation or PATCH is either wholly before or after.
      const m = activeMission(ctx, missionKey);
      const now = ctx.clock.now().toISOString();
      getPlayerOrCreate(db, telegramUserId, now);
      const fresh = db
        .query("INSERT INTO messenger_mission_enrollments (telegram_user_id, mission_key, progress, enrolled_at) VALUES (?, ?, 0, ?) ON CONFLICT DO NOTHING")
        .run(telegramUserId, missionKey, now).changes;
      const e = db
        .query<EnrollmentRow, [number, string]>("SELECT * FROM messenger_mission_enrollments WHERE telegram_user_id = ? AND mission_key = ?")
        .get(telegramUserId, missionKey)!;
      return { enrollment: enrollmentView(e, m), already_enrolled: fresh === 0 };
    })
    .immediate();
}

type Reason = "not_monotonic" | "not_observed" | "rate_limited" | "daily_cap_reached" | "already_completed";

type ProgressAnswer = {
  client_event_id: string;
  mission_key: string;
  accepted: boolean;
  reason: Reason | null;
  message: string | null;
  progress: number;
  target: number;
  completed: boolean;
  progress_source: ProgressSource;
  /** Server missions: the events the server counted since enrolling; null for self-reported ones. */
  observed: number | null;
  reward_paid: { free_spins: number; missiles: number; points: number } | null;
  salutes: SalutesPayout | null;
};

const dayStart = (iso: string) => `${iso.slice(0, 10)}T00:00:00.000Z`;

/**
 * How far this event may move the enrollment: an increment, or why not. A server mission moves toward what the
 * server observed (up to the day's cap left: the count is not the client's to split); a self-reported one to the
 * reported progress, all or nothing.
 */
function nextStep(
  ctx: AppContext,
  m: MissionRow,
  e: EnrollmentRow,
  reported: number | undefined,
  now: Date,
): { increment: number } | { reason: Reason; message: string } {
  if (e.completed_at) return { reason: "already_completed", message: "the mission is already completed" };
  const server = m.progress_source === "server";
  const wanted = Math.min(server ? e.observed : reported!, m.target) - e.progress;
  if (wanted <= 0) {
    return server
      ? {
          reason: "not_observed",
          message: `the server has counted ${e.observed} ${m.event_type} since you enrolled: no progress past the recorded ${e.progress}`,
        }
      : { reason: "not_monotonic", message: `progress must be more than the recorded ${e.progress}` };
  }
  const db = ctx.db.sqlite;
  const recent = db
    .query<{ n: number }, [number, string, string]>(
      "SELECT COUNT(*) AS n FROM messenger_mission_events WHERE telegram_user_id = ? AND mission_key = ? AND created_at > ? AND accepted = 1",
    )
    .get(e.telegram_user_id, m.mission_key, new Date(now.getTime() - 60_000).toISOString())!.n;
  if (recent >= m.per_minute_cap) return { reason: "rate_limited", message: `at most ${m.per_minute_cap} progress events a minute for this mission` };
  const today =
    db
      .query<{ s: number | null }, [number, string, string]>(
        "SELECT SUM(value) AS s FROM messenger_mission_events WHERE telegram_user_id = ? AND mission_key = ? AND created_at >= ? AND accepted = 1",
      )
      .get(e.telegram_user_id, m.mission_key, dayStart(now.toISOString()))!.s ?? 0;
  const left = m.daily_cap - today;
  if (left <= 0 || (!server && wanted > left)) {
    return { reason: "daily_cap_reached", message: `at most ${m.daily_cap} progress a UTC day; ${Math.max(0, left)} left today` };
  }
  return { increment: Math.min(wanted, left) };
}

/** Completion: the reward as one ledger row keyed by the mission (however completion is reached), and its salutes. */
function payReward(ctx: AppContext, telegramUserId: number, m: MissionRow) {
  const reward = { free_spins: m.reward_free_spins, missiles: m.reward_missiles, points: m.reward_points };
  const applied = applyAction(
    ctx,
    { telegramUserId, requestId: `mission-reward:${m.mission_key}`, action: "mission.reward", inputs: { mission_key: m.mission_key }, gameKey: null },
    (player, db) => ({
      deltas: { freeSpins: reward.free_spins, missiles: reward.missiles, points: reward.points },
      earnedPoints: reward.points,
      result: {
        mission_key: m.mission_key,
        reward,
        salutes: paySalutes(ctx, db, player, {
          amount: m.reward_salutes,
          idempotencyKey: `messenger:mission:${m.mission_key}:${telegramUserId}`,
          reason: "messenger_mission",
          rewardKey: `mission:${m.mission_key}`,
        }),
      },
    }),
  );
  return { reward, salutes: applied.salutes };
}

export function reportProgress(ctx: AppContext, telegramUserId: number, input: { client_event_id: string; mission_key: string; progress?: number }) {
  const db = ctx.db.sqlite;
  return db
    .transaction((): ProgressAnswer & { replayed: boolean } => {
      const prior = db
        .query<{ mission_key: string; result: string }, [number, string]>(
          "SELECT mission_key, result FROM messenger_mission_events WHERE telegram_user_id = ? AND client_event_id = ?",
        )
        .get(telegramUserId, input.client_event_id);
      // A replay answers what was recorded, even if the operator has since deactivated the mission. The same id with
      // another payload is 422 request_id_reused, the API's one rule for reused ids (docs/messenger.md).
      if (prior) {
        const { reported_progress, ...recorded } = JSON.parse(prior.result) as ProgressAnswer & { reported_progress?: number | null };
        const reported = input.progress ?? null;
        if (prior.mission_key !== input.mission_key || (reported_progress !== undefined && reported_progress !== reported)) {
          throw new AppError(
            "request_id_reused",
            `client_event_id ${JSON.stringify(input.client_event_id)} was already used for another mission or progress value`,
          );
        }
        return { ...recorded, replayed: true };
      }
      const m = activeMission(ctx, input.mission_key);
      if (m.progress_source === "self_reported" && input.progress === undefined) {
        const problem = "is required for a self-reported mission (the absolute progress now)";
        throw new AppError("invalid_payload", `body.progress ${problem}`, { details: [{ field: "body.progress", problem }] });
      }
      const now = ctx.clock.now();
      const iso = now.toISOString();
      const e = db
        .query<EnrollmentRow, [number, string]>("SELECT * FROM messenger_mission_enrollments WHERE telegram_user_id = ? AND mission_key = ?")
        .get(telegramUserId, input.mission_key);
      if (!e) throw new AppError("mission_not_enrolled", `Enroll in ${input.mission_key} before reporting progress`);
      const base = {
        client_event_id: input.client_event_id,
        mission_key: m.mission_key,
        target: m.target,
        progress_source: m.progress_source,
        observed: m.progress_source === "server" ? e.observed : null,
      };
      const step = nextStep(ctx, m, e, input.progress, now);
      let answer: ProgressAnswer;
      if ("reason" in step) {
        answer = { ...base, accepted: false, ...step, progress: e.progress, completed: e.completed_at !== null, reward_paid: null, salutes: null };
      } else {
        const progress = e.progress + step.increment;
        const done = progress >= m.target;
        db.query("UPDATE messenger_mission_enrollments SET progress = ?3, completed_at = ?4 WHERE telegram_user_id = ?1 AND mission_key = ?2").run(
          telegramUserId,
          m.mission_key,
          progress,
          done ? iso : null,
        );
        const paid = done ? payReward(ctx, telegramUserId, m) : null;
        answer = {
          ...base,
          accepted: true,
          reason: null,
          message: null,
          progress,
          completed: done,
          reward_paid: paid?.reward ?? null,
          salutes: paid?.salutes ?? null,
        };
      }
      db.query(
        "INSERT INTO messenger_mission_events (telegram_user_id, mission_key, client_event_id, value, accepted, reason, result, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ).run(
        telegramUserId,
        m.mission_key,
        input.client_event_id,
        "increment" in step ? step.increment : 0,
        answer.accepted ? 1 : 0,
        answer.reason,
        JSON.stringify({ ...answer, reported_progress: input.progress ?? null }),
        iso,
      );
      return { ...answer, replayed: false };
    })
    .immediate();
}

/** The player's progress events, newest first. */
export function missionHistory(ctx: AppContext, telegramUserId: number, missionKey: string | undefined, limit: number) {
  const rows = ctx.db.sqlite
    .query<
      { mission_key: string; client_event_id: string; value: number; accepted: number; reason: string | null; created_at: string },
      [number, string | null, string | null, number]
    >(
      "SELECT mission_key, client_event_id, value, accepted, reason, created_at FROM messenger_mission_events WHERE telegram_user_id = ? AND (? IS NULL OR mission_key = ?) ORDER BY id DESC LIMIT ?",
    )
    .all(telegramUserId, missionKey ?? null, missionKey ?? null, limit);
  return { events: rows.map((r) => ({ ...r, accepted: r.accepted === 1 })), count: rows.length };
}
