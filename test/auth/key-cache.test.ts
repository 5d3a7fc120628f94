import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { KEY_CHANGE_POLL_MS, PartnerKeys } from "../../src/auth/keys";
import { createTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

// The signature check keeps key rows in memory. A change made through PartnerKeys in this process is seen by the
// very next request; one made by another connection or process (partner_keys_version, bumped by trigger) within
// KEY_CHANGE_POLL_MS.

let h: TestApp;
afterEach(() => h?.close());

const CAPS = "/api/partner/capabilities";

test("a key disabled through another PartnerKeys instance is refused on the next request", async () => {
  h = createTestApp();
  const key = createKey(h);
  expect((await signedJson(h, key, "GET", CAPS)).status).toBe(200);
  new PartnerKeys(h.ctx).disable(key.keyId, "compromised", { kind: "cli", user: "test" });
  const res = await signedJson(h, key, "GET", CAPS);
  expect([res.status, res.body.error]).toEqual([403, "forbidden"]);
});

test("a change written by another connection (another process, raw SQL) is seen within KEY_CHANGE_POLL_MS", async () => {
  h = createTestApp();
  const key = createKey(h, { scopes: ["read", "credit"] });
  for (let i = 0; i < 2; i++) expect((await signedJson(h, key, "GET", CAPS)).body.scopes).toEqual(["credit", "read"]);
  const other = new Database(join(h.dir, "herald.db"));
  const afterPoll = () => h.clock.advanceSeconds(KEY_CHANGE_POLL_MS / 1000);
  try {
    other.run("PRAGMA busy_timeout = 5000");
    other.query("UPDATE partner_keys SET scopes = 'read' WHERE key_id = ?").run(key.keyId);
    afterPoll();
    expect((await signedJson(h, key, "GET", CAPS)).body.scopes).toEqual(["read"]);
    other.query("UPDATE partner_keys SET allowed_ips = '203.0.113.0/24' WHERE key_id = ?").run(key.keyId);
    afterPoll();
    const refused = await signedJson(h, key, "GET", CAPS);
    expect([refused.status, refused.body.error]).toEqual([403, "forbidden"]);
    other.query("DELETE FROM partner_keys WHERE key_id = ?").run(key.keyId);
    afterPoll();
    expect((await signedJson(h, key, "GET", CAPS)).status).toBe(401);
  } finally {
    other.close();
  }
});

test("a rotation is seen at once: the new secret works and, without overlap, the old one does not", async () => {
  h = createTestApp();
  const key = createKey(h);
  expect((await signedJson(h, key, "GET", CAPS)).status).toBe(200);
  const rotated = new PartnerKeys(h.ctx).rotate(key.keyId, 0, { kind: "cli", user: "test" });
  expect((await signedJson(h, key, "GET", CAPS)).status).toBe(401);
  expect((await signedJson(h, { ...key, secret: rotated.secret }, "GET", CAPS)).status).toBe(200);
});

test("last_used_at is written on first use and then at most once a minute", async () => {
  h = createTestApp();
  const key = createKey(h);
  const lastUsed = () =>
    (h.ctx.db.sqlite.query("SELECT last_used_at FROM partner_keys WHERE key_id = ?").get(key.keyId) as { last_used_at: string | null }).last_used_at;
  expect(lastUsed()).toBeNull();
  await signedJson(h, key, "GET", CAPS);
  const first = lastUsed();
  expect(first).toBe(h.clock.now().toISOString());
  h.clock.advanceSeconds(59);
  await signedJson(h, key, "GET", CAPS);
  expect(lastUsed()).toBe(first);
  h.clock.advanceSeconds(1);
  await signedJson(h, key, "GET", CAPS);
  expect(lastUsed()).toBe(h.clock.now().toISOString());
});

test("a disable by the CLI (another process) stops a running server's key within KEY_CHANGE_POLL_MS", async () => {
  h = createTestApp();
  const key = createKey(h);
  // Two requests: the first writes last_used_at (which itself refreshes the cache); the second is served from it.
  for (let i = 0; i < 2; i++) expect((await signedJson(h, key, "GET", CAPS)).status).toBe(200);
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), "keys", "disable", key.keyId], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", NODE_ENV: "test", HERALD_DB_PATH: join(h.dir, "herald.db"), LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await proc.exited).toBe(0);
  h.clock.advanceSeconds(KEY_CHANGE_POLL_MS / 1000);
  const res = await signedJson(h, key, "GET", CAPS);
  expect([res.status, res.body.error]).toEqual([403, "forbidden"]);
});
