import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { KEY_CHANGE_POLL_MS, PartnerKeys } from "../../src/auth/keys";
import type { Param } from "../../src/db/port";
import { PostgresStore } from "../../src/db/postgres-engine";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

// The signature check keeps key rows in memory. A change made through PartnerKeys in this process is seen by the
// very next request; one made by another connection or process (partner_keys_version, bumped by trigger) within
// KEY_CHANGE_POLL_MS.

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const CAPS = "/api/partner/capabilities";

/**
 * A connection of its own to the test app's database, as another process would have: a second bun:sqlite handle
 * on the file, or a second pool on the PostgreSQL database. Neither is the app's store, so its writes reach the
 * app only through partner_keys_version.
 */
function otherConnection(t: TestApp): { run(sql: string, params: Param[]): Promise<unknown>; close(): Promise<void> } {
  const url = t.ctx.config.database.url;
  if (url) {
    const pg = new PostgresStore({ url, poolMax: 1 });
    return { run: (sql, params) => pg.run(sql, params), close: () => pg.close() };
  }
  const db = new Database(join(t.dir, "herald.db"));
  db.run("PRAGMA busy_timeout = 5000");
  return {
    run: async (sql, params) => db.query(sql).run(...(params as Array<string | number>)),
    close: async () => db.close(),
  };
}

test("a key disabled through another PartnerKeys instance is refused on the next request", async () => {
  h = await openTestApp();
  const key = await createKey(h);
  expect((await signedJson(h, key, "GET", CAPS)).status).toBe(200);
  await new PartnerKeys(h.ctx).disable(key.keyId, "compromised", { kind: "cli", user: "test" });
  const res = await signedJson(h, key, "GET", CAPS);
  expect([res.status, res.body.error]).toEqual([403, "forbidden"]);
});

test("a change written by another connection (another process, raw SQL) is seen within KEY_CHANGE_POLL_MS", async () => {
  h = await openTestApp();
  const key = await createKey(h, { scopes: ["read", "credit"] });
  for (let i = 0; i < 2; i++) expect((await signedJson(h, key, "GET", CAPS)).body.scopes).toEqual(["credit", "read"]);
  const other = otherConnection(h);
  const afterPoll = () => h.clock.advanceSeconds(KEY_CHANGE_POLL_MS / 1000);
  try {
    await other.run("UPDATE partner_keys SET scopes = 'read' WHERE key_id = ?", [key.keyId]);
    afterPoll();
    expect((await signedJson(h, key, "GET", CAPS)).body.scopes).toEqual(["read"]);
    await other.run("UPDATE partner_keys SET allowed_ips = '203.0.113.0/24' WHERE key_id = ?", [key.keyId]);
    afterPoll();
    const refused = await signedJson(h, key, "GET", CAPS);
    expect([refused.status, refused.body.error]).toEqual([403, "forbidden"]);
    await other.run("DELETE FROM partner_keys WHERE key_id = ?", [key.keyId]);
    afterPoll();
    expect((await signedJson(h, key, "GET", CAPS)).status).toBe(401);
  } finally {
    await other.close();
  }
});

test("a rotation is seen at once: the new secret works and, without overlap, the old one does not", async () => {
  h = await openTestApp();
  const key = await createKey(h);
  expect((await signedJson(h, key, "GET", CAPS)).status).toBe(200);
  const rotated = await new PartnerKeys(h.ctx).rotate(key.keyId, 0, { kind: "cli", user: "test" });
  expect((await signedJson(h, key, "GET", CAPS)).status).toBe(401);
  expect((await signedJson(h, { ...key, secret: rotated.secret }, "GET", CAPS)).status).toBe(200);
});

test("last_used_at is written on first use and then at most once a minute", async () => {
  h = await openTestApp();
  const key = await createKey(h);
  const lastUsed = async () =>
    (await h.ctx.store.get<{ last_used_at: string | null }>("SELECT last_used_at FROM partner_keys WHERE key_id = ?", [key.keyId]))!.last_used_at;
  expect(await lastUsed()).toBeNull();
  await signedJson(h, key, "GET", CAPS);
  const first = await lastUsed();
  expect(first).toBe(h.clock.now().toISOString());
  h.clock.advanceSeconds(59);
  await signedJson(h, key, "GET", CAPS);
  expect(await lastUsed()).toBe(first);
  h.clock.advanceSeconds(1);
  await signedJson(h, key, "GET", CAPS);
  expect(await lastUsed()).toBe(h.clock.now().toISOString());
});

test("a disable by the CLI (another process) stops a running server's key within KEY_CHANGE_POLL_MS", async () => {
  h = await openTestApp();
  const key = await createKey(h);
  // Two requests: the first writes last_used_at (which itself refreshes the cache); the second is served from it.
  for (let i = 0; i < 2; i++) expect((await signedJson(h, key, "GET", CAPS)).status).toBe(200);
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), "keys", "disable", key.keyId], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      NODE_ENV: "test",
      HERALD_DB_PATH: join(h.dir, "herald.db"),
      LOG_LEVEL: "silent",
      // On PostgreSQL the CLI opens the same database as the app.
      ...(h.ctx.config.database.url ? { DATABASE_URL: h.ctx.config.database.url } : {}),
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const exit = await proc.exited;
  expect({ exit, stderr: exit === 0 ? "" : await new Response(proc.stderr).text() }).toEqual({ exit: 0, stderr: "" });
  h.clock.advanceSeconds(KEY_CHANGE_POLL_MS / 1000);
  const res = await signedJson(h, key, "GET", CAPS);
  expect([res.status, res.body.error]).toEqual([403, "forbidden"]);
});
