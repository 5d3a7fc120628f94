import { createHash } from "node:crypto";
import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import { writeAudit } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError, NotFoundError, ValidationError } from "../../http/errors";
import { pageOf, type PageRequest } from "../../http/pagination";
import { isWorse } from "../checks/types";
import type { ComponentId } from "../components";
import { findIncident, viewsOf, type IncidentRow, type IncidentState, type IncidentView } from "./incidents";
import { enqueueIncidentEvent, type StatusEventType } from "./notify";

// Operator-written incidents (Statuspage's model): a title, a severity (warn = degraded, bad = outage), the
// affected components, and updates that move it through investigating → identified → monitoring → resolved.
// Any order is allowed before resolved (an issue can come back), nothing after it: a new problem is a new
// incident. Each change writes an admin_audit row and queues the subscribers' event in its own transaction.
//
// Idempotency: a POST may carry an Idempotency-Key. The same key with the same body answers the incident as
// first created (200, `replayed: true`) and changes nothing; the same key with another body is a 409. Keys
// are kept with the incident (creates) or the update (updates, per incident), so they never expire.

const MAX_BACKDATE_DAYS = 30;
const FUTURE_SKEW_MS = 60_000;

type Severity = "warn" | "bad";

export interface CreateInput {
  title: string;
  message: string;
  severity: Severity;
  state?: IncidentState;
  components?: ComponentId[];
  started_at?: string;
}

export interface UpdateInput {
  state: IncidentState;
  message: string;
  severity?: Severity;
}

export interface EditInput {
  title?: string;
  components?: ComponentId[];
}

export interface Outcome {
  incident: IncidentView;
  replayed: boolean;
}

const hashOf = (parts: unknown[]) => createHash("sha256").update(JSON.stringify(parts)).digest("hex");

function startedAtOrThrow(raw: string | undefined, now: Date): string {
  if (raw === undefined) return now.toISOString();
  const ms = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(ms))
    throw new ValidationError("started_at must be an ISO 8601 UTC time such as 2026-01-01T00:00:00Z", [
      { field: "started_at", problem: "must be an ISO 8601 time" },
    ]);
  if (ms > now.getTime() + FUTURE_SKEW_MS)
    throw new ValidationError("started_at may not be in the future", [{ field: "started_at", problem: "must not be in the future" }]);
  if (ms < now.getTime() - MAX_BACKDATE_DAYS * 86_400_000) {
    throw new ValidationError(`started_at may be at most ${MAX_BACKDATE_DAYS} days in the past`, [
      { field: "started_at", problem: `must be within ${MAX_BACKDATE_DAYS} days` },
    ]);
  }
  return new Date(ms).toISOString();
}

const replayConflict = (key: string) =>
  new AppError("conflict", "This Idempotency-Key was already used with another body; use a new key for a different request", {
    details: { idempotency_key: key },
  });

export function createOperatorIncident(ctx: AppContext, admin: AdminRequest, input: CreateInput, idempotencyKey: string | null, nudge: () => void): Outcome {
  const sqlite = ctx.db.sqlite;
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  const state = input.state ?? "investigating";
  const components = [...new Set(input.components ?? [])];
  const hash = hashOf([input.title, input.message, input.severity, state, components, input.started_at ?? null]);
  let queued = 0;
  const outcome = sqlite.transaction((): Outcome => {
    if (idempotencyKey) {
      const prior = sqlite.query("SELECT id, request_hash FROM status_incidents WHERE idempotency_key = ?").get(idempotencyKey) as {
        id: number;
        request_hash: string;
      } | null;
      if (prior) {
        if (prior.request_hash !== hash) throw replayConflict(idempotencyKey);
        return { incident: findIncident(sqlite, prior.id, now)!, replayed: true };
      }
    }
    const startedAt = startedAtOrThrow(input.started_at, now);
    const by = actorLabel(admin.actor);
    const { id } = sqlite
      .query(
        `INSERT INTO status_incidents (source, started_at, ended_at, severity, current_severity, checks, summary, updated_at, title, state, components, created_by, idempotency_key, request_hash)
         VALUES ('operator', ?, ?, ?, ?, '{}', '{}', ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      )
      .get(
        startedAt,
        state === "resolved" ? nowIso : null,
        input.severity,
        input.severity,
        nowIso,
        input.title,
        state,
        JSON.stringify(components),
        by,
        idempotencyKey,
        hash,
      ) as { id: number };
    sqlite
      .query("INSERT INTO status_incident_updates (incident_id, state, message, severity, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)")
      .run(id, state, input.message, input.severity, nowIso, by);
    writeAudit(sqlite, {
      at: nowIso,
      actor: admin.actor,
      action: "status.incident.create",
      target: String(id),
      details: { title: input.title, severity: input.severity, state, components },
      requestId: admin.requestId,
    });
    const incident = findIncident(sqlite, id, now)!;
    queued = enqueueIncidentEvent(ctx, "status.incident.created", incident);
    return { incident, replayed: false };
  })();
  if (queued > 0) nudge(); // after the commit: the rows it sends exist now
  return outcome;
}

/** The operator incident, or 404; an automatic one is a 409 (the checks open and close those). */
function operatorRowOrThrow(ctx: AppContext, id: number): IncidentRow {
  const row = ctx.db.sqlite.query("SELECT * FROM status_incidents WHERE id = ?").get(id) as IncidentRow | null;
  if (!row) throw new NotFoundError("incident", id);
  if (row.source !== "operator") {
    throw new AppError("conflict", `Incident ${id} was opened by the status checks and closes when they recover; write an operator incident to say more`);
  }
  return row;
}

export function postIncidentUpdate(
  ctx: AppContext,
  admin: AdminRequest,
  id: number,
  input: UpdateInput,
  idempotencyKey: string | null,
  nudge: () => void,
): Outcome {
  const sqlite = ctx.db.sqlite;
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  const hash = hashOf([input.state, input.message, input.severity ?? null]);
  let queued = 0;
  const outcome = sqlite.transaction((): Outcome => {
    const row = operatorRowOrThrow(ctx, id);
    if (idempotencyKey) {
      const prior = sqlite.query("SELECT request_hash FROM status_incident_updates WHERE incident_id = ? AND idempotency_key = ?").get(id, idempotencyKey) as {
        request_hash: string;
      } | null;
      if (prior) {
        if (prior.request_hash !== hash) throw replayConflict(idempotencyKey);
        return { incident: findIncident(sqlite, id, now)!, replayed: true };
      }
    }
    if (row.ended_at)
      throw new AppError("conflict", `Incident ${id} is resolved; open a new incident for a new problem`, { details: { ended_at: row.ended_at } });
    const severity: Severity = input.severity ?? row.current_severity;
    const peak: Severity = isWorse(severity, row.severity) ? severity : row.severity;
    const resolved = input.state === "resolved";
    const by = actorLabel(admin.actor);
    sqlite
      .query(
        "INSERT INTO status_incident_updates (incident_id, state, message, severity, created_at, created_by, idempotency_key, request_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(id, input.state, input.message, input.severity ?? null, nowIso, by, idempotencyKey, hash);
    sqlite
      .query("UPDATE status_incidents SET state = ?, severity = ?, current_severity = ?, ended_at = ?, updated_at = ? WHERE id = ?")
      .run(input.state, peak, severity, resolved ? nowIso : null, nowIso, id);
    writeAudit(sqlite, {
      at: nowIso,
      actor: admin.actor,
      action: "status.incident.update",
      target: String(id),
      details: { state: input.state, severity: input.severity ?? null },
      requestId: admin.requestId,
    });
    const incident = findIncident(sqlite, id, now)!;
    const type: StatusEventType = resolved ? "status.incident.resolved" : "status.incident.updated";
    queued = enqueueIncidentEvent(ctx, type, incident);
    return { incident, replayed: false };
  })();
  if (queued > 0) nudge(); // after the commit: the rows it sends exist now
  return outcome;
}

/** Corrects the title or the components (not the history: updates are never edited). Idempotent by nature. */
export function editOperatorIncident(ctx: AppContext, admin: AdminRequest, id: number, input: EditInput, nudge: () => void): IncidentView {
  if (input.title === undefined && input.components === undefined)
    throw new ValidationError("give title or components to change", [{ field: "body", problem: "must change title or components" }]);
  const sqlite = ctx.db.sqlite;
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  let queued = 0;
  const incident = sqlite.transaction(() => {
    const row = operatorRowOrThrow(ctx, id);
    const title = input.title ?? row.title;
    const components = input.components ? JSON.stringify([...new Set(input.components)]) : row.components;
    if (title === row.title && components === row.components) return findIncident(sqlite, id, now)!; // nothing changes: no event, no audit
    sqlite.query("UPDATE status_incidents SET title = ?, components = ?, updated_at = ? WHERE id = ?").run(title, components, nowIso, id);
    writeAudit(sqlite, {
      at: nowIso,
      actor: admin.actor,
      action: "status.incident.edit",
      target: String(id),
      details: { before: { title: row.title, components: JSON.parse(row.components ?? "[]") }, after: { title, components: JSON.parse(components ?? "[]") } },
      requestId: admin.requestId,
    });
    const v = findIncident(sqlite, id, now)!;
    queued = enqueueIncidentEvent(ctx, "status.incident.updated", v);
    return v;
  })();
  if (queued > 0) nudge(); // after the commit: the rows it sends exist now
  return incident;
}

export interface AdminListFilter {
  source?: "automatic" | "operator";
  status?: "open" | "resolved";
}

/** Every incident (both sources, any age still kept), newest first, keyset-paged by id. */
export function listAdminIncidents(ctx: AppContext, page: PageRequest, f: AdminListFilter) {
  const rows = ctx.db.sqlite
    .query(
      `SELECT * FROM status_incidents WHERE (?1 IS NULL OR id < ?1) AND (?2 IS NULL OR source = ?2)
         AND (?3 IS NULL OR (?3 = 'open' AND ended_at IS NULL) OR (?3 = 'resolved' AND ended_at IS NOT NULL))
       ORDER BY id DESC LIMIT ?4 OFFSET ?5`,
    )
    .all(page.after, f.source ?? null, f.status ?? null, page.limit + 1, page.offset) as IncidentRow[];
  const p = pageOf(rows, page, (r) => r.id);
  return { ...p, items: viewsOf(ctx.db.sqlite, p.items, ctx.clock.now()) };
}

export function getIncidentOrThrow(ctx: AppContext, id: number): IncidentView {
  const v = findIncident(ctx.db.sqlite, id, ctx.clock.now());
  if (!v) throw new NotFoundError("incident", id);
  return v;
}
