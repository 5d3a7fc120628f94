import type { AppContext } from "../../context";
import { listIncidents } from "../../status/service";
import { LINK_EVENTS, linkTargets } from "./notify";
import { policyProblemOf } from "./target-health";
import { eventsSince, outboxCountsSince, resolvedEventsOf, resolvedMessagesOf, type SummaryEvent } from "./store-reads";

// The link inbox's read-models over ops_link_events and ops_link_outbox: delivery health per target and per
// event kind, and whether each resolved incident's resolution notice reached every target. Targets appear only
// as their redacted labels (src/ops/link-inbox/notify.ts).

export const SUMMARY_DEFAULT_DAYS = 30;
export const SUMMARY_MAX_DAYS = 365;
export const RESOLVED_DEFAULT_DAYS = 7;
export const RESOLVED_MAX_DAYS = 90;

/** An attempt is an event with an outcome family; a skip has a skip_reason and no request behind it. */
const isAttempt = (e: SummaryEvent) => e.status_code_family !== null && e.skip_reason === null;

function tally(events: SummaryEvent[]) {
  const failures = { "4xx": 0, "5xx": 0, timeout: 0, other: 0 };
  const skips = { no_url: 0, cooldown: 0, silenced: 0, other: 0 };
  let attempts = 0;
  let successes = 0;
  for (const e of events) {
    if (e.skip_reason) skips[e.skip_reason as keyof typeof skips] = (skips[e.skip_reason as keyof typeof skips] ?? 0) + 1;
    if (!isAttempt(e)) continue;
    attempts++;
    if (e.status_code_family === "2xx") successes++;
    else failures[e.status_code_family as keyof typeof failures] = (failures[e.status_code_family as keyof typeof failures] ?? 0) + 1;
  }
  return { attempts, successes, failures, skips };
}

export async function verificationSummary(ctx: AppContext, input: { days?: number }) {
  const days = input.days ?? SUMMARY_DEFAULT_DAYS;
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - days * 86_400_000).toISOString();
  const events = await eventsSince(ctx.store, since);
  const outbox = await outboxCountsSince(ctx.store, since);
  const configured = linkTargets(ctx);
  const labels = [...new Set([...configured.map((t) => t.label), ...events.map((e) => e.target).filter(Boolean), ...outbox.map((o) => o.target)])];
  const countOf = (status: string, by: (o: (typeof outbox)[number]) => boolean) =>
    outbox.filter((o) => o.status === status && by(o)).reduce((s, o) => s + o.n, 0);
  const targets = labels.map((label) => {
    const mine = events.filter((e) => e.target === label);
    const attempts = mine.filter(isAttempt);
    const lastSuccess = attempts.filter((e) => e.status_code_family === "2xx").pop();
    let streak = 0;
    for (let i = attempts.length - 1; i >= 0 && attempts[i]!.status_code_family !== "2xx"; i--) streak++;
    const conf = configured.find((t) => t.label === label);
    const { skips, ...rest } = tally(mine);
    return {
      target: label,
      configured: conf !== undefined,
      policy_problem: conf ? policyProblemOf(ctx, conf) : null,
      ...rest,
      skips: { cooldown: skips.cooldown, other: skips.other },
      last_attempt_at: attempts.at(-1)?.at ?? null,
      last_success_at: lastSuccess?.at ?? null,
      failing_streak: streak,
      pending: countOf("pending", (o) => o.target === label),
      dead: countOf("dead", (o) => o.target === label),
    };
  });
  const kinds = [...new Set([...LINK_EVENTS, ...events.map((e) => e.event)])].map((event) => ({
    event,
    ...tally(events.filter((e) => e.event === event)),
    pending: countOf("pending", (o) => o.event === event),
    dead: countOf("dead", (o) => o.event === event),
  }));
  return {
    generated_at: now.toISOString(),
    days,
    window: { start_utc: since, end_utc: now.toISOString() },
    configured_targets: configured.length,
    cooldown_seconds: ctx.config.linkInbox.cooldownSeconds,
    max_attempts: ctx.config.linkInbox.maxAttempts,
    no_url_skips: events.filter((e) => e.skip_reason === "no_url").length,
    targets,
    events: kinds,
  };
}

/**
 * GET /admin/ops/digest/resolved-verification.json: the body holds no request time, so equal data gives equal
 * bytes (the strong ETag holds across requests); `last_modified` is the newest change it reflects, the start of this
 * process included (the configured targets are read from the configuration).
 */
export async function resolvedVerification(ctx: AppContext, input: { days?: number }) {
  const days = input.days ?? RESOLVED_DEFAULT_DAYS;
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - days * 86_400_000).toISOString();
  const resolved = (await listIncidents(ctx, days * 24, 500)).incidents.filter((i) => i.ended_at !== null && i.ended_at >= since);
  const configured = linkTargets(ctx).map((t) => t.label);
  let lastModified = "";
  const incidents = [];
  for (const i of resolved) {
    const issueId = `incident:${i.id}`;
    const events = await resolvedEventsOf(ctx.store, issueId);
    const rows = await resolvedMessagesOf(ctx.store, issueId);
    const labels = [...new Set([...configured, ...rows.map((r) => r.target), ...events.map((e) => e.target).filter(Boolean)])];
    const targets = labels.map((label) => {
      const mine = events.filter((e) => e.target === label && isAttempt(e));
      const ok = mine.find((e) => e.status_code_family === "2xx");
      const row = rows.filter((r) => r.target === label).pop();
      return {
        target: label,
        delivered: ok !== undefined,
        delivered_at: ok?.at ?? null,
        attempts: mine.length,
        last_status_code_family: mine.at(-1)?.status_code_family ?? null,
        outbox_status: (row?.status ?? null) as "pending" | "sent" | "dead" | null,
      };
    });
    for (const at of [i.ended_at!, i.updated_at, ...events.map((e) => e.at)]) if (at > lastModified) lastModified = at;
    incidents.push({
      incident_id: i.id,
      issue_id: issueId,
      title: i.title,
      source: i.source,
      resolved_at: i.ended_at!,
      delivered_to_all: targets.length > 0 && targets.every((t) => t.delivered),
      targets,
      event_ids: events.map((e) => e.id),
      skip_reasons: [...new Set(events.map((e) => e.skip_reason).filter((r): r is string => r !== null))],
    });
  }
  return {
    body: {
      days,
      configured_targets: configured,
      count: incidents.length,
      delivered_to_all_count: incidents.filter((i) => i.delivered_to_all).length,
      incidents,
    },
    // Nothing in the window: the data is as old as the window's start, to the hour (a stable validator). The
    // targets come from the configuration, which changes only when a process starts: never older than this start.
    lastModified: new Date(
      Math.max(lastModified ? Date.parse(lastModified) : Math.floor(Date.parse(since) / 3_600_000) * 3_600_000, ctx.startedAt.getTime()),
    ).toISOString(),
  };
}
