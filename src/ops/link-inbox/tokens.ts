import { sha256Hex } from "../../auth/admin";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { recordExportUsage } from "../export-usage/service";
import { claimToken, insertToken, tokenOf, tokensByActor, usageByActor } from "../export-usage/store";
import { ok } from "../../http/envelope";

// One-time download tokens of the link-inbox exports, and the export-usage rows they and the direct exports leave.
// A token is 32 random bytes (base64url, prefix hdt_) shown once; only its sha256 is stored, with the operator who
// asked, the export and its parameters. It works once, for that operator, within DOWNLOAD_TOKEN_TTL_SECONDS: the
// redeeming UPDATE sets used_at only where it is still null and unexpired, so two racing downloads cannot both win.

export const DOWNLOAD_TOKEN_TTL_SECONDS = 600;
/** What a token downloads, and the usage row's export for a token download (route templates, as the recorder writes them). */
export const EVENTS_EXPORT = "/admin/ops/link-inbox/events/export.csv";
export const DOWNLOAD_EXPORT = "/admin/ops/link-inbox/events/export-download.csv";
const USAGE_PREFIX = "/admin/ops/link-inbox/";

/** A token download's usage row (source token); direct exports are counted by src/ops/export-usage/recorder.ts. */
export const recordTokenDownload = (ctx: AppContext, actor: string, bytes: number) =>
  recordExportUsage(ctx, { actor, export: DOWNLOAD_EXPORT, bytes, source: "token" });

export async function issueDownloadToken(ctx: AppContext, actor: string, exportName: string, params: Record<string, unknown>) {
  const token = `hdt_${Buffer.from(ctx.rng.bytes(32)).toString("base64url")}`;
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + DOWNLOAD_TOKEN_TTL_SECONDS * 1000).toISOString();
  await insertToken(ctx.store, {
    token_hash: sha256Hex(token),
    actor,
    export: exportName,
    params: JSON.stringify(params),
    created_at: now.toISOString(),
    expires_at: expiresAt,
  });
  return { token, expiresAt };
}

/** The parameters of a token, which is now used up; another operator's is refused and stays usable for its owner. */
export async function redeemDownloadTokenOrThrow(ctx: AppContext, actor: string, token: string): Promise<{ export: string; params: Record<string, unknown> }> {
  const hash = sha256Hex(token);
  const row = await tokenOf(ctx.store, hash);
  if (!row) throw new AppError("not_found", "No such download token: ask the export for one with download_token=1");
  if (row.actor !== actor) throw new AppError("forbidden", "This download token was issued to another operator");
  const now = ctx.clock.now().toISOString();
  const gone = (used: string | null) =>
    used !== null
      ? new AppError("download_token_used", `This download token was used at ${used}; ask for a new one`)
      : new AppError("download_token_expired", `This download token expired at ${row.expires_at}; ask for a new one`);
  if (row.used_at !== null || row.expires_at <= now) throw gone(row.used_at);
  if (!(await claimToken(ctx.store, hash, now))) throw gone((await tokenOf(ctx.store, hash))?.used_at ?? null);
  return { export: row.export, params: JSON.parse(row.params) as Record<string, unknown> };
}

/** Link-inbox export usage and download tokens, all time, optionally for one operator (requested_by). */
export async function exportTelemetry(ctx: AppContext, requestedBy: string | null) {
  const now = ctx.clock.now().toISOString();
  const usage = await usageByActor(ctx.store, USAGE_PREFIX, requestedBy);
  const tokens = await tokensByActor(ctx.store, USAGE_PREFIX, requestedBy, now);

  const bySource: Record<string, { downloads: number; bytes: number }> = {};
  const actors = new Map<string, { actor: string; downloads: number; bytes: number; tokens_requested: number; tokens_used: number; tokens_expired: number }>();
  const actorOf = (actor: string) => {
    let a = actors.get(actor);
    if (!a) actors.set(actor, (a = { actor, downloads: 0, bytes: 0, tokens_requested: 0, tokens_used: 0, tokens_expired: 0 }));
    return a;
  };
  for (const u of usage) {
    const s = (bySource[u.source] ??= { downloads: 0, bytes: 0 });
    s.downloads += u.downloads;
    s.bytes += u.bytes;
    const a = actorOf(u.actor);
    a.downloads += u.downloads;
    a.bytes += u.bytes;
  }
  for (const t of tokens) {
    const a = actorOf(t.actor);
    a.tokens_requested += t.requested;
    a.tokens_used += t.used;
    a.tokens_expired += t.expired;
  }
  const sum = <K extends string>(rows: Array<Record<K, number>>, k: K) => rows.reduce((n, r) => n + r[k], 0);
  const requested = sum(tokens, "requested");
  const used = sum(tokens, "used");
  const expired = sum(tokens, "expired");
  return ok({
    generated_at: now,
    requested_by: requestedBy,
    exports: { downloads: sum(usage, "downloads"), bytes: sum(usage, "bytes"), by_source: bySource },
    download_tokens: { requested, used, expired, pending: requested - used - expired },
    by_actor: [...actors.values()].sort((a, b) => (a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : 0)),
  });
}
