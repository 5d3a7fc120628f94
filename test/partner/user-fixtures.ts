import { expect } from "bun:test";
import bs58 from "bs58";
import type { TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";

/** A valid Solana address (base58 of 32 bytes), distinct for each n in 1..255. */
export const sol = (n: number) => bs58.encode(new Uint8Array(32).fill(n));

export const createUser = (h: TestApp, key: TestKey, body: Record<string, unknown>, opts: { idempotencyKey?: string } = {}) =>
  signedJson(h, key, "POST", "/api/partner/users", { body, ...opts });

export const linkWallet = (h: TestApp, key: TestKey, userId: number | string, body: Record<string, unknown>) =>
  signedJson(h, key, "POST", `/api/partner/users/${userId}/wallets`, { body });

/** users.updated events in the outbox, oldest first, with their data parsed. */
export async function userEvents(h: TestApp, partner = "Acme"): Promise<Array<{ user_id: string; external_id: string; changes: string[] }>> {
  const rows = await h.ctx.store.all<{ data: string }>("SELECT data FROM events WHERE event_type = 'users.updated' AND partner = ? ORDER BY id", [partner]);
  return rows.map((r) => JSON.parse(r.data));
}

export const count = async (h: TestApp, table: string) => (await h.ctx.store.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;

/** The auth answers every signed route must give: unsigned 401, the other scope only 403, a sandbox key 403. */
export async function expectPartnerAuth(h: TestApp, route: { method: string; path: string; body?: unknown; scope: "read" | "users" }) {
  const init: RequestInit = {
    method: route.method,
    headers: { "content-type": "application/json" },
    body: route.body === undefined ? undefined : JSON.stringify(route.body),
  };
  const unsigned = await h.json(route.path, init);
  expect(unsigned.status).toBe(401);
  expect(unsigned.body.error).toBe("unauthorized");
  const noScope = await createKey(h, { scopes: [route.scope === "read" ? "users" : "read"] });
  const forbidden = await signedJson(h, noScope, route.method, route.path, { body: route.body });
  expect(forbidden.status).toBe(403);
  expect(forbidden.body.message).toContain(`"${route.scope}" scope`);
  const sandbox = await createKey(h, { mode: "sandbox" });
  const wrongMode = await signedJson(h, sandbox, route.method, route.path, { body: route.body });
  expect(wrongMode.status).toBe(403);
  expect(wrongMode.body.message).toContain("live key");
}
