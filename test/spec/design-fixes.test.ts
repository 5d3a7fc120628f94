// The design audit's four findings, each a contradiction of docs/design.md or of Herald's own docs that these tests
// showed failing before its fix: webhook secrets in stored idempotency answers, /healthz's uptime off ctx.clock, a 503
// probe answered with success: true, and the audio-share health counting every active link.
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

/** Every stored idempotency response body of the database, as text (either engine). */
const storedResponses = async () =>
  ((await h.ctx.store.all("SELECT response_body FROM idempotency_records WHERE response_body IS NOT NULL", [])) as Array<{ response_body: string }>).map(
    (r) => r.response_body,
  );

// docs/design.md §3 "Secrets are stored encrypted (AES-256-GCM) under HERALD_MASTER_KEY; shown once at creation";
// docs/operations.md "Restore": "Partner, webhook and status-subscriber secrets are stored AES-256-GCM-encrypted
// under HERALD_MASTER_KEY … A backup is only usable together with its key".
test("a webhook secret is never stored in plain text: not in the idempotency record of its creation (live, sandbox) or rotation", async () => {
  h = await openTestApp();
  const k = await createKey(h);
  const create = { body: { event_type: "salutes.credit", target_url: "https://example.com/h" }, idempotencyKey: "webhook-create-1" };
  const created = await signedJson(h, k, "POST", "/api/partner/webhooks", create);
  expect(created.status).toBe(201);
  const secret = created.body.webhook.secret as string;
  const rotated = await signedJson(h, k, "POST", `/api/partner/webhooks/${created.body.webhook.id}/rotate-secret`, { body: { overlap_hours: 1 } });
  expect(rotated.status).toBe(200);
  const newSecret = JSON.stringify(rotated.body).match(/whsec_[A-Za-z0-9_-]+/)![0];
  const sandbox = await createKey(h, { mode: "sandbox" });
  const practice = await signedJson(h, sandbox, "POST", "/api/partner/sandbox/webhooks", {
    body: { event_type: "salutes.credit", target_url: "https://example.com/s" },
  });
  const sandboxSecret = practice.body.webhook.secret as string;
  const stored = await storedResponses();
  const leaks = [
    ...stored.filter((b) => b.includes(secret)).map(() => "creation's secret"),
    ...stored.filter((b) => b.includes(newSecret)).map(() => "rotation's secret"),
    ...stored.filter((b) => b.includes(sandboxSecret)).map(() => "sandbox webhook's secret"),
  ];
  expect(leaks).toEqual([]);
  // Sealed at rest, the stored answer is still the replay's: the same request again gets the secret it was shown.
  const again = await signedJson(h, k, "POST", "/api/partner/webhooks", create);
  expect([again.status, again.body.error, again.body.original_response?.webhook?.secret]).toEqual([409, "idempotency_replay", secret]);
});

// docs/design.md §1 "Time comes from ctx.clock, randomness from ctx.rng (so tests and sandbox fixtures are deterministic)":
// /healthz's uptime_seconds reads the wall clock against a start time taken from ctx.clock.
test("/healthz uptime_seconds is measured on ctx.clock", async () => {
  h = await openTestApp();
  h.clock.advanceSeconds(120);
  const r = await h.json("/healthz");
  expect(r.status).toBe(200);
  expect(r.body.uptime_seconds).toBe(120);
});

// docs/design.md §2 "Success: { success: true, ...fields }. Failure: { success: false, error: "<error_code>", message,
// request_id }"; spec Common conventions: "A failed response is {success:false, error:<error_code string>}".
test("/readyz answering 503 (draining after SIGTERM) is a failure envelope: success false and a catalog code", async () => {
  h = await openTestApp();
  const now = h.clock.now();
  h.ctx.draining = { signal: "SIGTERM", since: now, stopsListeningAt: new Date(now.getTime() + 5_000) };
  const r = await h.json("/readyz");
  expect(r.status).toBe(503);
  const catalog = (await h.json("/api/partner/errors.json")).body.by_code as Record<string, { http_status: number }>;
  expect(r.body.success).toBe(false);
  expect(catalog[r.body.error]?.http_status).toBe(503);
  // Still the probe's own fields, and the message names the failed check.
  expect([r.body.ready, r.body.checks.shutdown.ok, r.body.message]).toEqual([false, false, expect.stringContaining("shutdown (draining: SIGTERM")]);
});

test("the audio-share health's 503 (its links table cannot be read) is a failure envelope, and names no database error", async () => {
  h = await openTestApp();
  await h.ctx.store.run("ALTER TABLE audio_share_links RENAME TO audio_share_links_away", []);
  const r = await h.json("/api/public/audio-share-links/health");
  expect([r.status, r.body.success, r.body.error, r.body.status, r.body.database]).toEqual([503, false, "service_unavailable", "degraded", "unavailable"]);
  await h.ctx.store.run("ALTER TABLE audio_share_links_away RENAME TO audio_share_links", []);
});

// docs/design.md §8 "Growth: … A request reads a summary kept as the data is written …, an index, or a bounded range —
// never a scan of a table that grows". docs/audio-share.md caps links.total at 10,000 because "anyone may call this,
// and counting every link would read them all"; links.active counted every unexpired link (195 ms at 1,000,000 on
// this machine, on the event loop). Both are now counted up to the cap (test/db/guard-indexes.test.ts: the index).
test("the audio-share health counts active links up to 10,000 and says so", async () => {
  h = await openTestApp();
  const now = h.clock.now().toISOString();
  const expires = new Date(h.clock.now().getTime() + 7 * 86_400_000).toISOString();
  await h.ctx.store.run(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10001)
     INSERT INTO audio_share_links (code, destination_url, source, signed, created_at, expires_at)
     SELECT 'c' || i, 'http://localhost:3000/t', 'track', 0, ?, ? FROM n`,
    [now, expires],
  );
  const r = await h.json("/api/public/audio-share-links/health");
  expect([r.status, r.body.links]).toEqual([200, { total: 10_000, active: 10_000, total_capped: true, active_capped: true }]);
});
