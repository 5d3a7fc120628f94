// Design audit: probes that FAIL against the current code, each a contradiction of a concrete statement of
// /work/shared/DESIGN.md or of Herald's own docs. Kept apart so the passing design-*.test.ts files merge green.
import { afterEach, expect, test } from "bun:test";
import { openTestApp, sqliteOf, type TestApp } from "../support/app";
import { testEngine } from "../support/engine";
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

// DESIGN §3 "Secrets are stored encrypted (AES-256-GCM) under HERALD_MASTER_KEY; shown once at creation";
// docs/operations.md "Restore": "Partner, webhook and status-subscriber secrets are stored AES-256-GCM-encrypted
// under HERALD_MASTER_KEY … A backup is only usable together with its key".
test("a webhook secret is never stored in plain text: not in the idempotency record of its creation (live, sandbox) or rotation", async () => {
  h = await openTestApp();
  const k = await createKey(h);
  const created = await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: "https://example.com/h" } });
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
});

// DESIGN §1 "Time comes from ctx.clock, randomness from ctx.rng (so tests and sandbox fixtures are deterministic)":
// /healthz's uptime_seconds reads the wall clock against a start time taken from ctx.clock.
test("/healthz uptime_seconds is measured on ctx.clock", async () => {
  h = await openTestApp();
  h.clock.advanceSeconds(120);
  const r = await h.json("/healthz");
  expect(r.status).toBe(200);
  expect(r.body.uptime_seconds).toBe(120);
});

// DESIGN §2 "Success: { success: true, ...fields }. Failure: { success: false, error: "<error_code>", message,
// request_id }"; spec Common conventions: "A failed response is {success:false, error:<error_code string>}".
// A not-ready /readyz is answered 503 with success: true and no error code.
test("/readyz answering 503 (draining after SIGTERM) is a failure envelope: success false and a catalog code", async () => {
  h = await openTestApp();
  const now = h.clock.now();
  h.ctx.draining = { signal: "SIGTERM", since: now, stopsListeningAt: new Date(now.getTime() + 5_000) };
  const r = await h.json("/readyz");
  expect(r.status).toBe(503);
  const catalog = (await h.json("/api/partner/errors.json")).body.by_code as Record<string, { http_status: number }>;
  expect(r.body.success).toBe(false);
  expect(catalog[r.body.error]?.http_status).toBe(503);
});

// DESIGN §8 "Growth: … A request reads a summary kept as the data is written …, an index, or a bounded range —
// never a scan of a table that grows"; "The event loop runs only work bounded by a page". README benchmarks:
// "every job, export and route ≤ 50 ms at 10M (issue 71)". docs/audio-share.md caps links.total at 10,000 because
// "anyone may call this, and counting every link would read them all" — but links.active still counts every
// unexpired link down audio_share_links_expires_idx: a public, unauthenticated read that grows with the links.
test.skipIf(testEngine() === "postgres")(
  "GET /api/public/audio-share-links/health stays within 50 ms with 1,000,000 active short links",
  async () => {
    h = await openTestApp();
    const db = sqliteOf(h);
    const now = h.clock.now();
    const expires = new Date(now.getTime() + 7 * 86_400_000).toISOString();
    const insert = db.prepare(
      "INSERT INTO audio_share_links (code, destination_url, source, signed, created_at, expires_at) VALUES (?, 'http://localhost:3000/t', 'track', 0, ?, ?)",
    );
    db.transaction(() => {
      for (let i = 0; i < 1_000_000; i++) insert.run(`c${i}`, now.toISOString(), expires);
    })();
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const r = await h.json("/api/public/audio-share-links/health");
      times.push(performance.now() - t0);
      expect(r.status).toBe(200);
    }
    times.sort((a, b) => a - b);
    expect(Math.round(times[1]!)).toBeLessThanOrEqual(50);
  },
  120_000,
);
