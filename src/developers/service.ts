import type { AppContext } from "../context";
import { AppError, found } from "../http/errors/errors";
import { schemaView } from "../http/schema-view";
import { DeprecationEntry, Migration } from "./model";
import type { Deprecation, Registry } from "./registry";

// The developer portal's verbs over the deprecation registry: the calendar, each entry's phase and
// reminders, the headers a deprecated endpoint sends, and a partner's migration status.

const DAY_MS = 86_400_000;

export type Phase = "announced" | "deprecated" | "sunset";

export function phaseOf(d: Deprecation, now: Date): Phase {
  const t = now.getTime();
  if (t >= Date.parse(d.sunset_at)) return "sunset";
  return t >= Date.parse(d.deprecated_at) ? "deprecated" : "announced";
}

const daysUntil = (iso: string, now: Date) => Math.ceil((Date.parse(iso) - now.getTime()) / DAY_MS);

/**
 * The headers every endpoint of a deprecation sends (and the simulator shows):
 * - Deprecation (RFC 9745): a structured-field date, `@` + unix seconds; a future date announces it.
 * - Sunset (RFC 8594): an HTTP-date after which the endpoint stops answering.
 * - Link: rel="deprecation" to this registry entry (RFC 9745), rel="sunset" to the migration guide (RFC 8594).
 */
export function deprecationHeaders(base: string, d: Deprecation): Record<string, string> {
  const abs = (p: string) => (p.startsWith("/") ? `${base}${p}` : p);
  return {
    Deprecation: `@${Math.floor(Date.parse(d.deprecated_at) / 1000)}`,
    Sunset: new Date(d.sunset_at).toUTCString(),
    Link: `<${base}/developers/deprecations.json#${d.id}>; rel="deprecation"; type="application/json", <${abs(d.migration_guide)}>; rel="sunset"`,
  };
}

function reminders(reg: Registry, d: Deprecation, now: Date) {
  return reg.policy.reminder_days_before_sunset.map((days) => {
    const at = new Date(Date.parse(d.sunset_at) - days * DAY_MS).toISOString();
    return { days_before_sunset: days, at, sent: at <= now.toISOString() };
  });
}

export function entryView(ctx: AppContext, reg: Registry, d: Deprecation) {
  const now = ctx.clock.now();
  return schemaView(DeprecationEntry, d, {
    replacement: d.replacement ?? null,
    phase: phaseOf(d, now),
    days_until_sunset: daysUntil(d.sunset_at, now),
    reminders: reminders(reg, d, now),
    headers: deprecationHeaders(ctx.config.publicBaseUrl, d),
  });
}

/** Entries already announced (future announcements are not published early), soonest sunset first. */
export function published(ctx: AppContext, reg: Registry): Deprecation[] {
  const now = ctx.clock.now().toISOString();
  return reg.deprecations.filter((d) => d.announced_at <= now).sort((a, b) => (a.sunset_at < b.sunset_at ? -1 : a.sunset_at > b.sunset_at ? 1 : 0));
}

export function calendar(ctx: AppContext, reg: Registry) {
  const entries = published(ctx, reg).map((d) => entryView(ctx, reg, d));
  const upcoming = entries.filter((e) => e.phase !== "sunset");
  return {
    generated_at_utc: ctx.clock.now().toISOString(),
    registry_version: reg.version,
    registry_updated_at: reg.updated_at,
    api_version: "v1",
    policy: reg.policy,
    sunsets_scheduled: upcoming.length > 0,
    // The spec's sentence, in the calendar itself (the playbook says the same).
    summary:
      upcoming.length === 0
        ? "No endpoint sunsets are currently scheduled."
        : `${upcoming.length} deprecation${upcoming.length === 1 ? "" : "s"} with a scheduled sunset: ${upcoming.map((e) => `${e.id} (${e.sunset_at})`).join(", ")}.`,
    count: entries.length,
    deprecations: entries,
    links: {
      rss: "/developers/deprecations.rss",
      playbook: "/developers/deprecations-playbook.md",
      playbook_json: "/developers/deprecations-playbook.json",
      migration_status: "/developers/migration-status.json",
    },
  };
}

export function getDeprecationOrThrow(ctx: AppContext, reg: Registry, id: string): Deprecation {
  return found(
    published(ctx, reg).find((x) => x.id === id),
    "deprecation",
    id,
  );
}

export function migrationStatus(ctx: AppContext, reg: Registry, given: string | undefined) {
  // An empty id (a form or template left blank) asks for no particular one: every published migration.
  const id = given?.trim() ? given : undefined;
  const list = id === undefined ? published(ctx, reg) : [getDeprecationOrThrow(ctx, reg, id)];
  const now = ctx.clock.now();
  return {
    generated_at_utc: now.toISOString(),
    id: id ?? null,
    count: list.length,
    migrations: list.map((d) => {
      const phase = phaseOf(d, now);
      return schemaView(Migration, d, {
        phase,
        replacement: d.replacement ?? null,
        days_until_sunset: daysUntil(d.sunset_at, now),
        action_required: phase !== "sunset" ? "migrate before sunset_at" : "the old endpoints no longer answer; use the replacement",
      });
    }),
  };
}

/** "GET /api/x" or "/api/x" (any method). A path may use {param} segments, as OpenAPI writes them. */
function parseEndpoint(raw: string): { method: string | null; path: string } {
  const m = /^(GET|POST|PUT|PATCH|DELETE)\s+(\/\S*)$/i.exec(raw.trim());
  if (m) return { method: m[1]!.toUpperCase(), path: m[2]! };
  if (raw.startsWith("/")) return { method: null, path: raw.split("?")[0]! };
  throw new AppError("invalid_query", 'endpoint must be a path such as /api/partner/users or "GET /api/partner/users"', {
    details: [{ field: "query.endpoint", problem: "must be a path, optionally preceded by a method" }],
  });
}

const templateMatches = (template: string, path: string) =>
  new RegExp("^" + template.replace(/[.+?^$()|[\]\\]/g, "\\$&").replace(/\{[^/}]+\}|:[^/]+/g, "[^/]+") + "/?$").test(path);

const covers = (d: Deprecation, e: { method: string | null; path: string }) =>
  d.endpoints.some((x) => (e.method === null || x.method === e.method) && (x.path === e.path || templateMatches(x.path, e.path)));

/**
 * GET /api/public/deprecations/header-simulator. With neither id nor endpoint it shows the soonest-ending published
 * deprecation's headers (or says that none is scheduled), so a bare call is an answer, not a 400.
 */
export function simulateHeaders(ctx: AppContext, reg: Registry, q: { id?: string; endpoint?: string }) {
  const endpoint = q.endpoint ? parseEndpoint(q.endpoint) : null;
  if (q.id) {
    const d = getDeprecationOrThrow(ctx, reg, q.id);
    if (endpoint && !covers(d, endpoint)) {
      const covered = d.endpoints.map((x) => `${x.method} ${x.path}`).join(", ");
      throw new AppError("invalid_query", `Deprecation ${q.id} does not cover ${q.endpoint}; it covers ${covered}`, {
        details: [{ field: "query.endpoint", problem: "is not one of the deprecation's endpoints" }],
      });
    }
    return simulation(ctx, q, d);
  }
  if (endpoint) {
    const covering = published(ctx, reg).find((d) => covers(d, endpoint));
    return simulation(ctx, q, covering);
  }
  const first = published(ctx, reg)[0];
  return { ...simulation(ctx, q, first), note: bareNote(first) };
}

const bareNote = (d: Deprecation | undefined) =>
  d
    ? `No id or endpoint given: these are the headers of ${d.id}, the deprecation whose sunset comes first. Give id or endpoint for another.`
    : "No endpoint sunsets are currently scheduled, so no endpoint sends Deprecation, Sunset or deprecation Link headers. Give id or endpoint to check one.";

function simulation(ctx: AppContext, q: { id?: string; endpoint?: string }, first: Deprecation | undefined) {
  const now = ctx.clock.now();
  return {
    query: { id: q.id ?? null, endpoint: q.endpoint ?? null },
    deprecated: first !== undefined,
    id: first?.id ?? null,
    phase: first ? phaseOf(first, now) : null,
    // Before the sunset the endpoint answers normally plus these headers; after it, it no longer answers.
    headers: first ? deprecationHeaders(ctx.config.publicBaseUrl, first) : {},
    note: first ? null : "This endpoint is not deprecated: it sends no Deprecation, Sunset or deprecation Link header.",
  };
}
