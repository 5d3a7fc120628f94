import { createHash } from "node:crypto";
import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { AppError, found, NotFoundError, ValidationError } from "../../http/errors/errors";
import type { PageRequest } from "../../http/pagination";
import { isWorse } from "../checks/types";
import { findIncident, viewsOf, type IncidentRow, type IncidentView } from "./incidents";
import {
  adminIncidentPage,
  incidentById,
  incidentByKey,
  insertOperatorIncident,
  insertUpdate,
  lockIncident,
  setOperatorState,
  setTitleAndComponents,
  updateByKey,
} from "../store/incidents";
import { auditOperator } from "../../auth/audit";
import { isoOrThrow } from "./maintenance";
import type { StatusAdminModel as M } from "../model-admin";
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
type CreateInput = typeof M.incidentCreateBody.static;
type UpdateInput = typeof M.incidentUpdateBody.static;
type EditInput = typeof M.incidentEditBody.static;

export type Outcome = { incident: IncidentView; replayed: boolean };

const hashOf = (parts: unknown[]) => createHash("sha256").update(JSON.stringify(parts)).digest("hex");

function startedAtOrThrow(raw: string | undefined, now: Date): string {
  if (raw === undefined) return now.toISOString();
  const iso = isoOrThrow("started_at", raw);
  const ms = Date.parse(iso);
  if (ms > now.getTime() + FUTURE_SKEW_MS)
    throw new ValidationError("started_at may not be in the future", [{ field: "started_at", problem: "must not be in the future" }]);
  if (ms < now.getTime() - MAX_BACKDATE_DAYS * 86_400_000) {
    throw new ValidationError(`started_at may be at most ${MAX_BACKDATE_DAYS} days in the past`, [
      { field: "started_at", problem: `must be within ${MAX_BACKDATE_DAYS} days` },
    ]);
  }
  return iso;
}

/** A request whose Idempotency-Key was used before: the incident as it is now, or 409 for another body. */
async function replayOf(t: Queryable, prior: { request_hash: string | null }, hash: string, key: string, id: number, now: Date): Promise<Outcome> {
  if (prior.request_hash !== hash) {
    throw new AppError("conflict", "This Idempotency-Key was already used with another body; use a new key for a different request", {
      details: { idempotency_key: key },
    });
  }
  return { incident: (await findIncident(t, id, now))!, replayed: true };
}

/** Ends a change that happened: its audit row, then the subscribers' event queued in the same transaction. */
type Announce = (action: string, id: number, details: Record<string, unknown>, event: StatusEventType) => Promise<IncidentView>;

/** Runs an operator's change in one transaction, and wakes the sender once it has committed if it queued events. */
async function operatorChange<T>(
  ctx: AppContext,
  admin: AdminRequest,
  nudge: () => void,
  work: (t: Queryable, now: Date, announce: Announce) => Promise<T>,
): Promise<T> {
  const now = ctx.clock.now();
  let queued = 0;
  const out = await ctx.store.tx((t) =>
    work(t, now, async (action, id, details, event) => {
      await auditOperator(t, admin, now.toISOString(), action, String(id), details);
      const incident = (await findIncident(t, id, now))!;
      queued = await enqueueIncidentEvent(ctx, t, event, incident);
      return incident;
    }),
  );
  if (queued > 0) nudge(); // after the commit: the rows it sends exist now
  return out;
}

export async function createOperatorIncident(
  ctx: AppContext,
  admin: AdminRequest,
  input: CreateInput,
  idempotencyKey: string | null,
  nudge: () => void,
): Promise<Outcome> {
  const state = input.state ?? "investigating";
  const components = [...new Set(input.components ?? [])];
  const hash = hashOf([input.title, input.message, input.severity, state, components, input.started_at ?? null]);
  return operatorChange(ctx, admin, nudge, async (t, now, announce): Promise<Outcome> => {
    const nowIso = now.toISOString();
    if (idempotencyKey) {
      const prior = await incidentByKey(t, idempotencyKey);
      if (prior) return replayOf(t, prior, hash, idempotencyKey, prior.id, now);
    }
    const startedAt = startedAtOrThrow(input.started_at, now);
    const by = actorLabel(admin.actor);
    // The key is claimed by the INSERT itself: a request with the same key committed meanwhile (another instance)
    // makes this one a replay of it.
    const id = await insertOperatorIncident(t, {
      started_at: startedAt,
      ended_at: state === "resolved" ? nowIso : null,
      severity: input.severity,
      updated_at: nowIso,
      title: input.title,
      state,
      components: JSON.stringify(components),
      created_by: by,
      idempotency_key: idempotencyKey,
      request_hash: hash,
    });
    if (id === null) {
      const prior = (await incidentByKey(t, idempotencyKey!))!;
      return replayOf(t, prior, hash, idempotencyKey!, prior.id, now);
    }
    await insertUpdate(t, {
      incident_id: id,
      state,
      message: input.message,
      severity: input.severity,
      created_at: nowIso,
      created_by: by,
      idempotency_key: null,
      request_hash: null,
    });
    const details = { title: input.title, severity: input.severity, state, components };
    return { incident: await announce("status.incident.create", id, details, "status.incident.created"), replayed: false };
  });
}

/**
 * The operator incident, locked for the rest of the transaction (two changes of one incident take turns), or 404;
 * an automatic one is a 409 (the checks open and close those).
 */
async function lockedOperatorRowOrThrow(t: Queryable, id: number): Promise<IncidentRow> {
  if (!(await lockIncident(t, id))) throw new NotFoundError("incident", id);
  const row = (await incidentById(t, id))!;
  if (row.source !== "operator") {
    throw new AppError("conflict", `Incident ${id} was opened by the status checks and closes when they recover; write an operator incident to say more`);
  }
  return row;
}

export async function postIncidentUpdate(
  ctx: AppContext,
  admin: AdminRequest,
  id: number,
  input: UpdateInput,
  idempotencyKey: string | null,
  nudge: () => void,
): Promise<Outcome> {
  const hash = hashOf([input.state, input.message, input.severity ?? null]);
  return operatorChange(ctx, admin, nudge, async (t, now, announce): Promise<Outcome> => {
    const nowIso = now.toISOString();
    const row = await lockedOperatorRowOrThrow(t, id);
    if (idempotencyKey) {
      const prior = await updateByKey(t, id, idempotencyKey);
      if (prior) return replayOf(t, prior, hash, idempotencyKey, id, now);
    }
    if (row.ended_at)
      throw new AppError("conflict", `Incident ${id} is resolved; open a new incident for a new problem`, { details: { ended_at: row.ended_at } });
    const severity: Severity = input.severity ?? row.current_severity;
    const peak: Severity = isWorse(severity, row.severity) ? severity : row.severity;
    const resolved = input.state === "resolved";
    // Under the incident's lock no other update of it runs, so the key checked above is still free.
    await insertUpdate(t, {
      incident_id: id,
      state: input.state,
      message: input.message,
      severity: input.severity ?? null,
      created_at: nowIso,
      created_by: actorLabel(admin.actor),
      idempotency_key: idempotencyKey,
      request_hash: hash,
    });
    await setOperatorState(t, id, { state: input.state, peak, current: severity, endedAt: resolved ? nowIso : null, at: nowIso });
    const details = { state: input.state, severity: input.severity ?? null };
    const event = resolved ? "status.incident.resolved" : "status.incident.updated";
    return { incident: await announce("status.incident.update", id, details, event), replayed: false };
  });
}

/** Corrects the title or the components (not the history: updates are never edited). Idempotent by nature. */
export async function editOperatorIncident(ctx: AppContext, admin: AdminRequest, id: number, input: EditInput, nudge: () => void): Promise<IncidentView> {
  if (input.title === undefined && input.components === undefined)
    throw new ValidationError("give title or components to change", [{ field: "body", problem: "must change title or components" }]);
  return operatorChange(ctx, admin, nudge, async (t, now, announce) => {
    const row = await lockedOperatorRowOrThrow(t, id);
    const title = input.title ?? row.title;
    const components = input.components ? JSON.stringify([...new Set(input.components)]) : row.components;
    if (title === row.title && components === row.components) return (await findIncident(t, id, now))!; // nothing changes: no event, no audit
    await setTitleAndComponents(t, id, title, components, now.toISOString());
    const parsed = (c: string | null) => JSON.parse(c ?? "[]");
    const details = { before: { title: row.title, components: parsed(row.components) }, after: { title, components: parsed(components) } };
    return announce("status.incident.edit", id, details, "status.incident.updated");
  });
}

/** Every incident (both sources, any age still kept), newest first, keyset-paged by id. */
export async function listAdminIncidents(ctx: AppContext, page: PageRequest, f: Pick<typeof M.incidentListQuery.static, "source" | "status">) {
  const p = await adminIncidentPage(ctx.store, page, f.source ?? null, f.status ?? null);
  return { ...p, items: await viewsOf(ctx.store, p.items, ctx.clock.now()) };
}

export async function getIncidentOrThrow(ctx: AppContext, id: number): Promise<IncidentView> {
  return found(await findIncident(ctx.store, id, ctx.clock.now()), "incident", id);
}
