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
import type { Static } from "elysia";
import type { AdminRequest } from "../../auth/admin-plugin";
import type { AppContext } from "../../context";
import { auditOperator } from "../../auth/audit";
import { inOrder } from "../../db/in-order";
import type { Queryable } from "../../db/port";
import { AppError } from "../../http/errors/errors";
import { keyPageOf, offsetPage, parseKeyPage } from "../../http/pagination";
import { adminListAnswer, badField, type PageInput } from "../config/inputs";
import { type ActionScope, applyActionIn, creditOf, inOwnTx } from "../ledger";
import { reward as fullReward, rewardOfRow } from "../catalog";
import { lockedPlayer } from "../players";
import {
  acceptedEventsSince,
  acceptedUnitsFrom,
  activeMissions,
  countMissions,
  type EnrollmentRow,
  enrollmentOf,
  enrollmentsOf,
  enrollmentsWithMissions,
  eventsOf,
  holdMissionTarget,
  insertEnrollment,
  insertEvent,
  insertMission,
  lockEnrollment,
  type MissionRow,
  missionByKey,
  missionsPage,
  priorEvent,
  setProgress,
} from "../store/missions";
import { checkMissionLimitsOrThrow, type ProgressSource, progressSourceOrThrow } from "./mission-sources";
import { checkSalutesReward, paySalutes } from "./salutes-reward";
import { Enrollment, Mission, type MissionModel, type REFUSAL_REASONS } from "./promos-model";
import { schemaView } from "../../http/schema-view";

export const missionView = (m: MissionRow) => schemaView(Mission, m, { reward: rewardOfRow(m), active: m.active === 1 });

const enrollmentView = (e: EnrollmentRow, m: Pick<MissionRow, "target" | "progress_source">) =>
  schemaView(Enrollment, e, { observed: m.progress_source === "server" ? e.observed : null, target: m.target, completed: e.completed_at !== null });

export async function createMission(ctx: AppContext, admin: AdminRequest, input: Static<typeof MissionModel.createBody>) {
  const source = progressSourceOrThrow(input.event_type, input.progress_source);
  checkMissionLimitsOrThrow(source, input);
  checkSalutesReward(ctx, input.reward.salutes);
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    const reward = { ...fullReward(input.reward), salutes: input.reward.salutes ?? null };
    const row = await insertMission(t, { ...input, progress_source: source }, reward, now);
    if (!row) throw new AppError("conflict", `A mission with key ${JSON.stringify(input.mission_key)} already exists`);
    await auditOperator(t, admin, now, "messenger.mission.create", input.mission_key, adminMissionView(row));
    return { mission: adminMissionView(row) };
  });
}

/** The operator's view: the player's fields plus the revision a PATCH must name. */
export const adminMissionView = (m: MissionRow) => ({ ...missionView(m), revision: m.revision, updated_at: m.updated_at ?? m.created_at });

export async function missionKeyPage(q: Queryable, input: PageInput) {
  const page = parseKeyPage(input, ["text", "text"]);
  const [afterCreated, afterKey] = (page.after ?? [null, null]) as [string | null, string | null];
  const rows = await missionsPage(q, afterCreated, afterKey, page.limit + 1, page.offset);
  return keyPageOf(rows, page, (m) => [m.created_at, m.mission_key]);
}

/** The operator's list: a missionKeyPage (a mission created meanwhile never shifts the next page) in the spec's list shape. */
export async function listMissions(ctx: AppContext, input: PageInput = {}) {
  const p = await missionKeyPage(ctx.store, input);
  const total = await countMissions(ctx.store);
  return adminListAnswer("missions", { ...p, items: p.items.map(adminMissionView) }, {}, { total });
}

/** A switched-off mission is 409 mission_inactive, not 404: the mini-app can say so rather than "no such mission". */
async function activeMission(q: Queryable, key: string): Promise<MissionRow> {
  const m = await missionByKey(q, key);
  if (!m) throw new AppError("mission_not_found", `No mission ${JSON.stringify(key)}`);
  if (m.active !== 1) throw new AppError("mission_inactive", `The mission ${JSON.stringify(key)} is not active`, { details: { mission_key: key } });
  return m;
}

export async function missionCatalog(ctx: AppContext, telegramUserId: number) {
  const missions = await activeMissions(ctx.store, 500);
  const mine = new Map((await enrollmentsOf(ctx.store, telegramUserId)).map((e) => [e.mission_key, e]));
  return { missions: missions.map((m) => ({ ...missionView(m), enrollment: mine.has(m.mission_key) ? enrollmentView(mine.get(m.mission_key)!, m) : null })) };
}

/** The player's enrollments (active and completed), oldest first. */
export async function listEnrollments(ctx: AppContext, telegramUserId: number, limit: number, offset: number) {
  const { items, ...page } = offsetPage(await enrollmentsWithMissions(ctx.store, telegramUserId, limit + 1, offset), limit, offset);
  return { enrollments: items.map((r) => ({ ...enrollmentView(r, r), title: r.title })), ...page };
}

export async function enroll(ctx: AppContext, telegramUserId: number, missionKey: string) {
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    await lockedPlayer(t, telegramUserId, now);
    // Read inside the transaction: an operator's deactivation or PATCH is either wholly before or after.
    const m = await activeMission(t, missionKey);
    const fresh = await insertEnrollment(t, telegramUserId, missionKey, now);
    const e = (await enrollmentOf(t, telegramUserId, missionKey))!;
    return { enrollment: enrollmentView(e, m), already_enrolled: !fresh };
  });
}

type Reason = (typeof REFUSAL_REASONS)[number];

/** The answer as recorded: the schema's, with the fields older recorded answers may lack always present here. */
type ProgressAnswer = Omit<Static<typeof MissionModel.progress>, "success" | "meta" | "replayed"> & {
  reason: Reason | null;
  progress_source: ProgressSource;
  observed: number | null;
};

const dayStart = (iso: string) => `${iso.slice(0, 10)}T00:00:00.000Z`;

/**
 * How far this event may move the enrollment: an increment, or why not. A server mission moves toward what the
 * server observed (up to the day's cap left: the count is not the client's to split); a self-reported one to the
 * reported progress, all or nothing.
 */
async function nextStep(
  t: Queryable,
  m: MissionRow,
  e: EnrollmentRow,
  reported: number | undefined,
  now: Date,
): Promise<{ increment: number } | { reason: Reason; message: string }> {
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
  const recent = await acceptedEventsSince(t, e.telegram_user_id, m.mission_key, new Date(now.getTime() - 60_000).toISOString());
  if (recent >= m.per_minute_cap) return { reason: "rate_limited", message: `at most ${m.per_minute_cap} progress events a minute for this mission` };
  const today = await acceptedUnitsFrom(t, e.telegram_user_id, m.mission_key, dayStart(now.toISOString()));
  const left = m.daily_cap - today;
  if (left <= 0 || (!server && wanted > left)) {
    return { reason: "daily_cap_reached", message: `at most ${m.daily_cap} progress a UTC day; ${Math.max(0, left)} left today` };
  }
  return { increment: Math.min(wanted, left) };
}

/** Completion: the reward as one ledger row keyed by the mission (however completion is reached), and its salutes. */
async function payReward(ctx: AppContext, s: ActionScope, telegramUserId: number, m: MissionRow) {
  const reward = rewardOfRow(m);
  const applied = await applyActionIn(
    s,
    { telegramUserId, requestId: `mission-reward:${m.mission_key}`, action: "mission.reward", inputs: { mission_key: m.mission_key }, gameKey: null },
    async (player, scope) => ({
      ...creditOf(reward),
      result: {
        mission_key: m.mission_key,
        reward,
        salutes: await paySalutes(ctx, scope, player, m.reward_salutes, "mission", m.mission_key),
      },
    }),
  );
  return { reward, salutes: applied.salutes };
}

export async function reportProgress(ctx: AppContext, telegramUserId: number, input: { client_event_id: string; mission_key: string; progress?: number }) {
  const now = ctx.clock.now();
  return inOwnTx(ctx, (s) => progressIn(s, ctx, telegramUserId, input, now), undefined, now.toISOString());
}

async function progressIn(
  s: ActionScope,
  ctx: AppContext,
  telegramUserId: number,
  input: { client_event_id: string; mission_key: string; progress?: number },
  now: Date,
): Promise<ProgressAnswer & { replayed: boolean }> {
  const { t, now: iso } = s;
  // The player's row lock first: a client_event_id is then checked and recorded by one transaction at a time.
  await lockedPlayer(t, telegramUserId, iso);
  const prior = await priorEvent(t, telegramUserId, input.client_event_id);
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
  // The mission's target held (shared) before the mission is read: an operator lowering the target takes it
  // exclusively before reading the players' progress (src/messenger/admin/missions-admin.ts), so this event either
  // sees the old target and commits before that read, or waits and sees the new one. Sent with the enrollment's lock.
  const [e] = await inOrder(lockEnrollment(t, telegramUserId, input.mission_key), holdMissionTarget(t, input.mission_key));
  const m = await activeMission(t, input.mission_key);
  if (m.progress_source === "self_reported" && input.progress === undefined) {
    throw badField("body.progress", "is required for a self-reported mission (the absolute progress now)");
  }
  if (!e) throw new AppError("mission_not_enrolled", `Enroll in ${input.mission_key} before reporting progress`);
  const base = {
    client_event_id: input.client_event_id,
    mission_key: m.mission_key,
    target: m.target,
    progress_source: m.progress_source,
    observed: m.progress_source === "server" ? e.observed : null,
  };
  const step = await nextStep(t, m, e, input.progress, now);
  let answer: ProgressAnswer;
  if ("reason" in step) {
    answer = { ...base, accepted: false, ...step, progress: e.progress, completed: e.completed_at !== null, reward_paid: null, salutes: null };
  } else {
    const progress = e.progress + step.increment;
    const done = progress >= m.target;
    await setProgress(t, telegramUserId, m.mission_key, progress, done ? iso : null);
    const paid = done ? await payReward(ctx, s, telegramUserId, m) : null;
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
  await insertEvent(t, {
    telegram_user_id: telegramUserId,
    mission_key: m.mission_key,
    client_event_id: input.client_event_id,
    value: "increment" in step ? step.increment : 0,
    accepted: answer.accepted ? 1 : 0,
    reason: answer.reason,
    result: JSON.stringify({ ...answer, reported_progress: input.progress ?? null }),
    created_at: iso,
  });
  return { ...answer, replayed: false };
}

export async function missionHistory(ctx: AppContext, telegramUserId: number, missionKey: string | undefined, limit: number, offset: number) {
  const { items, query, ...page } = offsetPage(await eventsOf(ctx.store, telegramUserId, missionKey ?? null, limit + 1, offset), limit, offset);
  return { events: items.map((r) => ({ ...r, accepted: r.accepted === 1 })), ...page, query: { ...query, mission_key: missionKey ?? null } };
}
