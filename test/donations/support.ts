import type { TestApp } from "../support/app";
import { signedJson, type TestKey } from "../support/partner";

export const WALLET = "So11111111111111111111111111111111111111112";

export const issue = (h: TestApp, key: TestKey, body: unknown, opts: { idempotencyKey?: string } = {}) =>
  signedJson(h, key, "POST", "/api/partner/donation-claim", { body, ...opts });

export const redeem = (h: TestApp, key: TestKey, code: string, body?: unknown) =>
  signedJson(h, key, "POST", `/api/partner/donation-claims/${code}/redeem`, body === undefined ? {} : { body });

export const getClaim = (h: TestApp, key: TestKey, code: string) => signedJson(h, key, "GET", `/api/partner/donation-claims/${code}`);

/** A user row for an owner, written directly: the users routes are not what these tests are about. */
export async function insertUser(
  h: TestApp,
  partner: string,
  opts: { mode?: "live" | "sandbox"; status?: "active" | "suspended"; externalId?: string } = {},
): Promise<number> {
  const now = h.clock.now().toISOString();
  // In a transaction: outside one, get() reads on SQLite's reader connection, which takes no writes.
  const row = await h.ctx.store.tx((t) =>
    t.get<{ id: number }>("INSERT INTO partner_users (partner, mode, external_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id", [
      partner,
      opts.mode ?? "live",
      opts.externalId ?? `ext-${crypto.randomUUID()}`,
      opts.status ?? "active",
      now,
      now,
    ]),
  );
  return row!.id;
}

export const events = async (h: TestApp, type: string) =>
  (
    await h.ctx.store.all<{ partner: string; mode: string; data: string }>("SELECT partner, mode, data FROM events WHERE event_type = ? ORDER BY id", [type])
  ).map((e) => ({
    ...e,
    data: JSON.parse(e.data),
  }));

export const count = async (h: TestApp, table: string) => (await h.ctx.store.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
