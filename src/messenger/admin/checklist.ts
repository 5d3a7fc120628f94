// GET /api/messenger/admin/games/rollout-checklist: named checks an operator runs before widening a campaign, each
// pass / warn / fail with its figure, its thresholds and what to do. Thresholds are constants here and documented
// in docs/messenger-admin-analytics.md; "worst wins" for the overall status.
import type { Static } from "elysia";
import type { AppContext } from "../../context";
import type { RolloutCheck } from "./analytics-model";
import { outboxBacklog } from "../store/bot";
import { countersSince } from "../counters";
import { counted, playsText } from "../count-words";
import { refusalsOnRoutes } from "../store/read-models";
import { wheelSegments } from "./game-stats";
import { gameFigures, parseGames, percentOf } from "./overview";
import { resolveWindow, type ReportWindow, type WindowQuery } from "./window";

export const CHECKLIST_DEFAULT_DAYS = 7;
/** The request-log rows read for the refusal share: the window's newest, at most this many. */
export const REQUEST_LOG_SCAN = 100_000;

export type Check = Static<typeof RolloutCheck>;
type Status = Check["status"];

export const THRESHOLDS = {
  rtp: { pass: [40, 110], warn: [20, 150] },
  players: { pass: 100, warn: 20 },
  refusalPercent: { pass: 10, warn: 25 },
  initDataFailurePercent: { pass: 2, warn: 10 },
  outboxPending: { pass: 100, warn: 1000 },
  outboxDead: { pass: 0, warn: 10 },
  botApiErrorPercent: { pass: 1, warn: 5 },
  wheelZ: { pass: 3, warn: 4, minSpins: 100 },
} as const;

/** The mini-app routes whose refusals count (a play or a purchase refused for balance or cooldown). */
const GAME_ACTION_ROUTES = [
  "/api/messenger/games/spin-wheel/play",
  "/api/messenger/games/recon-grid/reveal",
  "/api/messenger/games/recon-grid/purchase",
  "/api/messenger/games/items/purchase",
];
const REFUSAL_CODES = ["game_balance_insufficient", "game_cooldown"];

/** Lower is better: pass up to `pass`, warn up to `warn`, else fail. */
const atMost = (v: number, t: { pass: number; warn: number }): Status => (v <= t.pass ? "pass" : v <= t.warn ? "warn" : "fail");
const below = (v: number, t: { pass: number; warn: number }): Status => (v < t.pass ? "pass" : v < t.warn ? "warn" : "fail");

/** A check of no one game unless it names one; a pass carries no fix. */
function check({ name, game_key = null, fix, ...c }: Omit<Check, "fix" | "game_key"> & { game_key?: string | null; fix: string }): Check {
  return { name, game_key, ...c, fix: c.status === "pass" ? null : fix };
}

async function refusalShare(ctx: AppContext, w: ReportWindow): Promise<Check> {
  const r = await refusalsOnRoutes(ctx.store, { sinceIso: w.since, untilIso: w.until, scan: REQUEST_LOG_SCAN }, GAME_ACTION_ROUTES, REFUSAL_CODES);
  const share = percentOf(r.refused, r.total);
  const t = THRESHOLDS.refusalPercent;
  return check({
    name: "refusal_share",
    status: share === null ? "warn" : below(share, t),
    figure: share,
    unit: "%",
    threshold: `pass < ${t.pass} %, warn < ${t.warn} %, else fail; no game requests: warn`,
    message:
      share === null
        ? "no play or purchase requests in the window's request log"
        : `${r.refused} of ${r.total} play and purchase requests refused for balance or cooldown (newest ${REQUEST_LOG_SCAN} request-log rows of the window)`,
    fix: "Players are trying to play without spins or missiles: check the daily free spin and item prices, or grant starter balances before widening",
  });
}

async function counterChecks(ctx: AppContext, w: ReportWindow): Promise<Check[]> {
  const totals = new Map<string, number>();
  for (const r of await countersSince(ctx, w.since)) totals.set(r.metric, (totals.get(r.metric) ?? 0) + r.count);
  const n = (m: string) => totals.get(m) ?? 0;
  const failures = n("init_data_failures");
  const initRate = percentOf(failures, failures + n("plays"));
  const ti = THRESHOLDS.initDataFailurePercent;
  const errors = n("bot_api_errors");
  const botRate = percentOf(errors, errors + n("bot_messages_sent"));
  const tb = THRESHOLDS.botApiErrorPercent;
  return [
    check({
      name: "init_data_failure_rate",
      status: initRate === null ? "warn" : below(initRate, ti),
      figure: initRate,
      unit: "%",
      threshold: `failures ÷ (failures + plays): pass < ${ti.pass} %, warn < ${ti.warn} %, else fail; no traffic: warn`,
      message: `${counted(failures, "init-data verification")} failed against ${playsText(n("plays"))} (messenger_counters since ${w.since})`,
      fix: "Check MESSENGER_BOT_TOKEN matches the bot that opens the mini-app, the clients' clocks (auth_date age) and GET /api/messenger/ops/health's by_reason",
    }),
    check({
      name: "bot_api_error_rate",
      status: botRate === null ? "pass" : below(botRate, tb),
      figure: botRate,
      unit: "%",
      threshold: `errors ÷ (errors + messages sent): pass < ${tb.pass} %, warn < ${tb.warn} %, else fail; nothing sent: pass`,
      message: `${errors} Bot API errors, ${n("bot_messages_sent")} messages sent in the window`,
      fix: "Read the recent errors in GET /api/messenger/ops/health (a revoked token, 403 from users who blocked the bot, 429 rate limits)",
    }),
  ];
}

async function outboxChecks(ctx: AppContext): Promise<Check[]> {
  const o = await outboxBacklog(ctx.store);
  const tp = THRESHOLDS.outboxPending;
  const td = THRESHOLDS.outboxDead;
  return [
    check({
      name: "bot_outbox_backlog",
      status: atMost(o.pending, tp),
      figure: o.pending,
      unit: "rows",
      threshold: `pending rows now: pass ≤ ${tp.pass}, warn ≤ ${tp.warn}, else fail`,
      message: `${o.pending} bot replies waiting${o.oldest_pending_at ? `, the oldest since ${o.oldest_pending_at}` : ""}`,
      fix: "The messenger-bot-outbox job is behind or failing: check JOBS_ENABLED, the job runs and the Bot API errors",
    }),
    check({
      name: "bot_outbox_dead",
      status: atMost(o.dead, td),
      figure: o.dead,
      unit: "rows",
      threshold: `dead rows now: pass ${td.pass}, warn ≤ ${td.warn}, else fail`,
      message: `${o.dead} bot replies gave up after their retries`,
      fix: "Read messenger_bot_outbox.last_error of the dead rows (GET /api/messenger/ops/health recent_errors) and fix the cause before more players arrive",
    }),
  ];
}

export async function rolloutChecklist(ctx: AppContext, query: WindowQuery & { games?: string }) {
  const games = parseGames(query.games);
  const w = resolveWindow(query, ctx.clock.now(), CHECKLIST_DEFAULT_DAYS);
  const figures = await gameFigures(ctx, w, games);
  const checks: Check[] = [];
  const tr = THRESHOLDS.rtp;
  for (const g of figures.games) {
    const rtp = g.rtp_percent;
    const status: Status = rtp === null ? "warn" : rtp >= tr.pass[0] && rtp <= tr.pass[1] ? "pass" : rtp >= tr.warn[0] && rtp <= tr.warn[1] ? "warn" : "fail";
    checks.push(
      check({
        name: "rtp_band",
        game_key: g.game_key,
        status,
        figure: rtp,
        unit: "%",
        threshold: `pass ${tr.pass[0]}–${tr.pass[1]} %, warn ${tr.warn[0]}–${tr.warn[1]} %, else fail; nothing spent: warn`,
        message:
          rtp === null
            ? `${playsText(g.plays)} and nothing spent: the return to player is undefined`
            : `paid ${counted(g.payout_points_value, "point of value", "points of value")} for ${g.cost_points_value.toLocaleString("en-US")} spent over ${playsText(g.plays)}`,
        fix: "Rebalance the rewards (wheel segment weights, grid prizes) or the item prices so the game neither drains nor floods balances",
      }),
    );
  }
  const tp = THRESHOLDS.players;
  checks.push(
    check({
      name: "players_in_window",
      status: figures.total.players >= tp.pass ? "pass" : figures.total.players >= tp.warn ? "warn" : "fail",
      figure: figures.total.players,
      unit: "players",
      threshold: `distinct players of the selected games: pass ≥ ${tp.pass}, warn ≥ ${tp.warn}, else fail`,
      message: `${figures.total.players} distinct players in ${games.join(", ")} over ${w.from}..${w.to}`,
      fix: "Too few players to judge the other figures: run the campaign longer or on a wider test group first",
    }),
  );
  checks.push(await refusalShare(ctx, w), ...(await counterChecks(ctx, w)), ...(await outboxChecks(ctx)));
  if (games.includes("spin_wheel")) checks.push(await wheelDrift(ctx, w));
  const counts = { pass: 0, warn: 0, fail: 0 };
  for (const c of checks) counts[c.status]++;
  const overall: Status = counts.fail > 0 ? "fail" : counts.warn > 0 ? "warn" : "pass";
  return { window: w, games_selected: games, overall, counts, checks };
}

async function wheelDrift(ctx: AppContext, w: ReportWindow): Promise<Check> {
  const tz = THRESHOLDS.wheelZ;
  const known = (await wheelSegments(ctx, w)).campaigns.filter((c) => c.known_campaign);
  const spins = known.reduce((n, c) => n + c.spins, 0);
  const worst = known.reduce<{ z: number; key: string } | null>(
    (m, c) => (c.max_abs_z_score !== null && (m === null || c.max_abs_z_score > m.z) ? { z: c.max_abs_z_score, key: c.campaign_key } : m),
    null,
  );
  const status: Status = spins < tz.minSpins || worst === null ? "warn" : worst.z < tz.pass ? "pass" : worst.z < tz.warn ? "warn" : "fail";
  return check({
    name: "wheel_segment_drift",
    game_key: "spin_wheel",
    status,
    figure: worst?.z ?? null,
    unit: "z",
    threshold: `largest |z| of a segment's observed share against its weight: pass < ${tz.pass}, warn < ${tz.warn}, else fail; fewer than ${tz.minSpins} spins: warn`,
    message:
      worst === null
        ? `${counted(spins, "spin")} of known campaigns in the window`
        : `largest drift |z| = ${worst.z} in campaign ${worst.key} over ${counted(spins, "spin")} (GET /api/messenger/admin/games/spin-wheel lists every segment)`,
    fix: "A segment lands far more or less often than its weight says: check the campaign's weights and the fairness draw before widening",
  });
}
