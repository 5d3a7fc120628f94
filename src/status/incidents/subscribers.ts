import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import { writeAudit } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError, NotFoundError, ValidationError } from "../../http/errors";
import { pageOf, type PageRequest } from "../../http/pagination";
import { checkTargetUrl, WebhookSecrets } from "../../webhooks/service";

// Status subscribers: URLs that receive incident events (src/status/incidents/notify.ts), registered by operators.
// Admin-only by choice: a public sign-up would need double opt-in, per-IP limits and abuse handling for a
// feature whose subscribers are a handful of partner and on-call systems an operator knows. A URL is one
// subscriber: registering it again with the same event types is a no-op that answers the existing one (a
// retried POST is safe); with other event types it is a 409, so nothing changes silently. The secret is
// shown once, sealed at rest under the master key and bound to the subscriber id.

export const MAX_SUBSCRIBERS = 100;
const AAD = (id: number) => `status-subscriber:${id}`;

interface SubscriberRow {
  id: number;
  url: string;
  description: string | null;
  event_types: string;
  secret_ciphertext: string;
  created_by: string;
  created_at: string;
}

interface Health {
  pending: number;
  succeeded: number;
  failed: number;
  dead_letter: number;
  last_attempt_at: string | null;
  last_error: string | null;
}

const healthOf = (ctx: AppContext, id: number): Health => {
  const counts = ctx.db.sqlite
    .query("SELECT status, count(*) AS n FROM status_subscriber_deliveries WHERE subscriber_id = ? GROUP BY status")
    .all(id) as Array<{ status: string; n: number }>;
  const n = (s: string) => counts.find((c) => c.status === s)?.n ?? 0;
  const last = ctx.db.sqlite
    .query(
      "SELECT last_attempt_at, last_error FROM status_subscriber_deliveries WHERE subscriber_id = ? AND last_attempt_at IS NOT NULL ORDER BY last_attempt_at DESC, id DESC LIMIT 1",
    )
    .get(id) as { last_attempt_at: string; last_error: string | null } | null;
  return {
    pending: n("queued"),
    succeeded: n("succeeded"),
    failed: n("failed"),
    dead_letter: n("dead_letter"),
    last_attempt_at: last?.last_attempt_at ?? null,
    last_error: last?.last_error ?? null,
  };
};

const view = (ctx: AppContext, r: SubscriberRow) => ({
  id: r.id,
  url: r.url,
  description: r.description,
  event_types: JSON.parse(r.event_types) as string[],
  created_by: r.created_by,
  created_at: r.created_at,
  deliveries: healthOf(ctx, r.id),
});

export type SubscriberView = ReturnType<typeof view>;

export function openSubscriberSecret(ctx: AppContext, id: number, ciphertext: string): string {
  return ctx.secrets.open(ciphertext, AAD(id));
}

export function createSubscriber(
  ctx: AppContext,
  admin: AdminRequest,
  input: { url: string; description?: string; event_types?: string[] },
  allTypes: readonly string[],
): { subscriber: SubscriberView; created: boolean; secret: string | null } {
  const policy = { allowPrivateTargets: ctx.config.webhooks.allowPrivateTargets, requireHttps: ctx.config.isProduction };
  const problem = checkTargetUrl(input.url, policy);
  if (problem) throw new ValidationError(`url ${problem}`, [{ field: "url", problem }]);
  const types = [...new Set(input.event_types ?? allTypes)].sort();
  const sqlite = ctx.db.sqlite;
  const nowIso = ctx.clock.now().toISOString();
  // Same secret format as partner webhooks, so the same verifiers accept it.
  const secret = new WebhookSecrets(ctx).newSecret();
  return sqlite.transaction(() => {
    const existing = sqlite.query("SELECT * FROM status_subscribers WHERE url = ?").get(input.url) as SubscriberRow | null;
    if (existing) {
      if (existing.event_types !== JSON.stringify(types)) {
        throw new AppError("conflict", "This URL is already subscribed with other event types; delete that subscriber first to change them", {
          details: { subscriber_id: existing.id, event_types: JSON.parse(existing.event_types) },
        });
      }
      return { subscriber: view(ctx, existing), created: false, secret: null };
    }
    const { n } = sqlite.query("SELECT count(*) AS n FROM status_subscribers").get() as { n: number };
    if (n >= MAX_SUBSCRIBERS) throw new AppError("conflict", `At most ${MAX_SUBSCRIBERS} status subscribers; delete one first`);
    const row = sqlite
      .query("INSERT INTO status_subscribers (url, description, event_types, secret_ciphertext, created_by, created_at) VALUES (?, ?, ?, '', ?, ?) RETURNING *")
      .get(input.url, input.description ?? null, JSON.stringify(types), actorLabel(admin.actor), nowIso) as SubscriberRow;
    // Sealed under its own id (known only after the insert), so a ciphertext cannot be moved to another row.
    sqlite.query("UPDATE status_subscribers SET secret_ciphertext = ? WHERE id = ?").run(ctx.secrets.seal(secret, AAD(row.id)), row.id);
    writeAudit(sqlite, {
      at: nowIso,
      actor: admin.actor,
      action: "status.subscriber.create",
      target: String(row.id),
      details: { url: input.url, event_types: types },
      requestId: admin.requestId,
    });
    return { subscriber: view(ctx, row), created: true, secret };
  })();
}

export function listSubscribers(ctx: AppContext, page: PageRequest) {
  const rows = ctx.db.sqlite
    .query("SELECT * FROM status_subscribers WHERE (?1 IS NULL OR id < ?1) ORDER BY id DESC LIMIT ?2 OFFSET ?3")
    .all(page.after, page.limit + 1, page.offset) as SubscriberRow[];
  const p = pageOf(rows, page, (r) => r.id);
  return { ...p, items: p.items.map((r) => view(ctx, r)) };
}

/** Deletes a subscriber and its queued and past deliveries (the audit row keeps what it was). */
export function deleteSubscriber(ctx: AppContext, admin: AdminRequest, id: number): SubscriberView {
  const sqlite = ctx.db.sqlite;
  const nowIso = ctx.clock.now().toISOString();
  return sqlite.transaction(() => {
    const row = sqlite.query("SELECT * FROM status_subscribers WHERE id = ?").get(id) as SubscriberRow | null;
    if (!row) throw new NotFoundError("status subscriber", id);
    const v = view(ctx, row);
    sqlite.query("DELETE FROM status_subscriber_deliveries WHERE subscriber_id = ?").run(id);
    sqlite.query("DELETE FROM status_subscribers WHERE id = ?").run(id);
    writeAudit(sqlite, {
      at: nowIso,
      actor: admin.actor,
      action: "status.subscriber.delete",
      target: String(id),
      details: { url: row.url, event_types: v.event_types },
      requestId: admin.requestId,
    });
    return v;
  })();
}
