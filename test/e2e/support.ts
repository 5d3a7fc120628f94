// Shared pieces of the end-to-end suites (test/e2e): one pass over each domain as its users drive it over HTTP,
// against the suite's target (test/support/target.ts) — the in-process app, `bun src/main.ts serve`, or the built
// binary. A served target runs on the wall clock, so nothing here moves time; waiting for something another process
// does (a webhook delivery) is a bounded poll, never a sleep that an assertion depends on.
import { createHmac } from "node:crypto";
import { expect } from "bun:test";
import { createAdminToken, createKey, type TestKey } from "../support/partner";
import { startTarget, type TargetApp } from "../support/target";

/** Rate limits off: an end-to-end pass sends bursts from one address and one key within a minute. */
export const NO_RATE_LIMITS: Record<string, string> = {
  RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
  RATE_LIMIT_WEBHOOK_PER_MIN: "0",
  PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "0",
  RATE_LIMIT_PARTNER_PER_MIN: "0",
  MESSENGER_RATE_LIMIT_PLAYER_PER_MIN: "0",
  MESSENGER_RATE_LIMIT_IP_PER_MIN: "0",
  MESSENGER_RATE_LIMIT_INIT_DATA_FAILURES_PER_MIN: "0",
  MESSENGER_RATE_LIMIT_WEBHOOK_UNAUTHORIZED_PER_MIN: "0",
};

export interface E2E {
  h: TargetApp;
  /** A live key of partner Acme with every scope. */
  live: TestKey;
  adminToken: string;
  admin: Record<string, string>;
  stop(): Promise<void>;
}

/** A target with rate limits off (plus `env`), a live key and an admin token, made as an operator's CLI would. */
export async function startE2E(env: Record<string, string> = {}): Promise<E2E> {
  const h = await startTarget({ env: { ...NO_RATE_LIMITS, ...env } });
  const live = await createKey(h, { partner: "Acme", mode: "live" });
  const adminToken = await createAdminToken(h, "e2e-operator");
  return { h, live, adminToken, admin: { authorization: `Bearer ${adminToken}` }, stop: () => h.stop() };
}

/**
 * One row (null when there is none), or every row, of a query over the target's database, through the test's own
 * context on the same database (ctx.store): portable SQL with `?` placeholders, so the same read runs on SQLite and
 * on PostgreSQL.
 */
export const row = async <T = Record<string, any>>(h: TargetApp, sql: string, ...params: Array<string | number | null>): Promise<T> =>
  (await h.ctx.store.get<T>(sql, params)) as T;
export const rows = async <T = Record<string, any>>(h: TargetApp, sql: string, ...params: Array<string | number | null>): Promise<T[]> =>
  h.ctx.store.all<T>(sql, params);

/**
 * Polls `probe` until it returns something other than undefined; bounded in count. For effects another process
 * makes (a served Herald's dispatcher), where the only clock is the wall clock.
 */
export async function eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, tries = 400, pauseMs = 25): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await Bun.sleep(pauseMs);
  }
  throw new Error(`e2e: gave up waiting for ${what}`);
}

/** The admin bearer header, with a JSON body when given. */
export const adminInit = (e: E2E, method: string, body?: unknown): RequestInit => ({
  method,
  headers: { ...e.admin, ...(body === undefined ? {} : { "content-type": "application/json" }) },
  body: body === undefined ? undefined : JSON.stringify(body),
});

/** Telegram Mini App init data, signed as Telegram documents it (WebAppData HMAC over the sorted fields). */
export function signInitData(botToken: string, user: Record<string, unknown>, authDateSeconds: number): string {
  const fields: Record<string, string> = { auth_date: String(authDateSeconds), query_id: "AAE2eQueryId0001", user: JSON.stringify(user) };
  const dcs = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join("\n");
  const secret = createHmac("sha256", "WebAppData").update(botToken).digest();
  return new URLSearchParams({ ...fields, hash: createHmac("sha256", secret).update(dcs).digest("hex") }).toString();
}

/** name → value of a response's Set-Cookie headers. */
export function setCookies(res: Response): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of res.headers.getSetCookie()) {
    const pair = line.split(";")[0]!;
    out.set(pair.split("=")[0]!, pair.slice(pair.indexOf("=") + 1));
  }
  return out;
}

/** The value of an HTML form's hidden csrf_token field. */
export function csrfField(html: string): string {
  const m = /name="csrf_token" value="([^"]+)"/.exec(html);
  expect(m).not.toBeNull();
  return m![1]!;
}

/** Every JSON refusal has the envelope of docs/design.md §2. */
export function expectRefusal(r: { status: number; body: any }, status: number, error: string) {
  expect({ status: r.status, error: r.body.error, success: r.body.success }).toEqual({ status, error, success: false });
  expect(typeof r.body.message).toBe("string");
  expect(r.body.request_id).toMatch(/\S/);
}
