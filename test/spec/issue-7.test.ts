// Issue 7 (sandbox mode), re-verified over HTTP against the suite's target (test/support/target.ts): the in-process
// app by default, `bun src/main.ts serve` with HERALD_TEST_TARGET=source. test/sandbox holds every claim in process;
// these are the ones an outside check probes on a served Herald, where no e2e suite covered the sandbox.
import { createHmac } from "node:crypto";
import { afterEach, expect, test } from "bun:test";
import { createAdminToken, createKey, signedInit, signedJson } from "../support/partner";
import { startTarget, type TargetApp } from "../support/target";

let h: TargetApp | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const SB = "/api/partner/sandbox";

test("issue 7: the default limit is 30 a minute per sandbox key, with the X-RateLimit headers, then 429 with Retry-After", async () => {
  h = await startTarget();
  const key = await createKey(h, { mode: "sandbox" });
  for (let i = 1; i <= 30; i++) {
    const r = await h.request(`${SB}/verify`, signedInit(h, key, "GET", `${SB}/verify`));
    expect(r.status).toBe(200);
    expect([r.headers.get("x-ratelimit-limit"), r.headers.get("x-ratelimit-remaining")]).toEqual(["30", String(30 - i)]);
    await r.arrayBuffer();
  }
  const limited = await signedJson(h, key, "GET", `${SB}/verify`);
  expect([limited.status, limited.body.error]).toEqual([429, "rate_limited"]);
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  // Another sandbox key has its own budget.
  expect((await signedJson(h, await createKey(h, { mode: "sandbox" }), "GET", `${SB}/verify`)).status).toBe(200);
});

test("issue 7: a live key on a sandbox route and a sandbox key on a live route are 403 naming the mode", async () => {
  h = await startTarget();
  const live = await createKey(h);
  const sandbox = await createKey(h, { mode: "sandbox" });
  const a = await signedJson(h, live, "GET", `${SB}/users`);
  expect([a.status, a.body.error]).toEqual([403, "forbidden"]);
  expect(a.body.message).toContain("needs a sandbox key");
  const b = await signedJson(h, sandbox, "GET", "/api/partner/users");
  expect([b.status, b.body.error]).toEqual([403, "forbidden"]);
  expect(b.body.message).toContain("needs a live key");
});

test("issue 7: fixtures, practice mutations with live_side_effects_performed false, reset restores the same fixtures", async () => {
  h = await startTarget();
  const key = await createKey(h, { mode: "sandbox" });
  const fixtures = async () => {
    const users = (await signedJson(h!, key, "GET", `${SB}/users?include_wallets=1`)).body.users as Array<Record<string, any>>;
    const out: unknown[] = [];
    for (const u of users) {
      const bal = (await signedJson(h!, key, "GET", `${SB}/salutes/balance?user_id=${u.id}`)).body;
      out.push({
        external_id: u.external_id,
        username: u.username,
        status: u.status,
        wallets: u.wallets.map((w: any) => w.wallet_address),
        balance: bal.balance,
      });
    }
    return out;
  };
  const before = await fixtures();
  expect(before.length).toBeGreaterThan(0);
  const active = (await signedJson(h, key, "GET", `${SB}/users?status=active`)).body.users[0];
  const credit = await signedJson(h, key, "POST", `${SB}/salutes/credit`, {
    body: { user_id: String(active.id), amount: 7, reason: "practice", source: "probe" },
  });
  expect(credit.status).toBe(200);
  expect(credit.body).toMatchObject({
    mode: "sandbox",
    fixture_profile: expect.any(String),
    source: expect.any(String),
    live_side_effects_performed: false,
    delta: 7,
  });
  const claim = await signedJson(h, key, "POST", `${SB}/donation-claim`, { body: { campaign_id: "c", amount: 5, recipient: { email: "a@example.com" } } });
  expect(claim.body).toMatchObject({ claim_status: "sandbox_preview", email_sent: false, live_side_effects_performed: false, claim_campaign_id: "c" });
  expect(await fixtures()).not.toEqual(before);
  const reset = await signedJson(h, key, "POST", `${SB}/reset`, { body: {} });
  expect(reset.status).toBe(200);
  expect(reset.body).toMatchObject({ mode: "sandbox", reset: true, live_side_effects_performed: false });
  expect(await fixtures()).toEqual(before);
  // Nothing of it reached the live tables.
  const live = await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM salutes_ledger WHERE mode = 'live'", []);
  expect(Number(live!.n)).toBe(0);
});

test("issue 7: the simulator's POST run is signed with the given secret; an independent HMAC verifies it", async () => {
  h = await startTarget();
  const key = await createKey(h, { mode: "sandbox" });
  const meta = await signedJson(h, key, "GET", `${SB}/webhook-simulator/run`);
  expect(meta.body).toMatchObject({ method: "POST", required_fields: ["scenario_id"], optional_fields: ["secret", "key_id"] });
  const ids = (await signedJson(h, key, "GET", `${SB}/webhook-simulator/scenarios`)).body.scenarios.map((s: { id: string }) => s.id);
  expect(ids).toEqual(expect.arrayContaining(["claim_created", "claim_redeemed", "delivery_failed"]));
  const run = await signedJson(h, key, "POST", `${SB}/webhook-simulator/run`, { body: { scenario_id: "claim_redeemed", secret: "whsec_probe" } });
  expect(run.body.selected_scenario_id).toBe("claim_redeemed");
  const hd = run.body.simulation.headers;
  expect(Object.keys(hd)).toEqual(expect.arrayContaining(["X-Webhook-Timestamp", "X-Webhook-Signature", "X-Partner-Key"]));
  const expected = createHmac("sha256", "whsec_probe").update(`${hd["X-Webhook-Timestamp"]}.${run.body.simulation.body}`).digest("hex");
  expect(hd["X-Webhook-Signature"]).toBe(expected);
});

test("issue 7: POST /admin/partners/{partner}/promote refuses a partner that is not ready, and issues a live key when forced with a reason", async () => {
  h = await startTarget();
  const key = await createKey(h, { mode: "sandbox", partner: "Probe Co" });
  expect((await signedJson(h, key, "GET", `${SB}/verify`)).status).toBe(200);
  const admin = `Bearer ${await createAdminToken(h)}`;
  const promote = (body: unknown) =>
    h!.json("/admin/partners/Probe%20Co/promote", {
      method: "POST",
      headers: { authorization: admin, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const report = await signedJson(h, key, "GET", `${SB}/promotion-report`);
  expect(report.body).toMatchObject({ promotion_policy: "sandbox_to_live_manual_approval", ready: false });
  const refused = await promote({});
  expect([refused.status, refused.body.error]).toEqual([409, "promotion_not_ready"]);
  expect((await promote({ force: true })).status).toBe(400);
  const forced = await promote({ force: true, reason: "reviewed by hand" });
  expect(forced.status).toBe(201);
  expect(forced.body).toMatchObject({ promoted: true, forced: true, reason: "reviewed by hand", key: { mode: "live", partner: "Probe Co" } });
  const liveKey = { keyId: forced.body.key.key_id, secret: forced.body.secret, mode: "live" as const };
  expect((await signedJson(h, liveKey, "GET", "/api/partner/users")).status).toBe(200);
});
