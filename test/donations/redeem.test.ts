import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { buildApp } from "../../src/app";
import { openContextAsync } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/log";
import { openTestApp, type TestApp } from "../support/app";
import { seededRng } from "../support/clock";
import { createKey, signedInit, signedJson, type TestKey } from "../support/partner";
import { count, events, getClaim, issue, redeem, WALLET } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const body = { campaign_id: "spring-2026", amount: "5", recipient: { email: "fan@example.com" } };

async function issued(key: TestKey): Promise<string> {
  const r = await issue(h, key, body);
  expect(r.status).toBe(200);
  return r.body.claim_code;
}

describe("reading a claim", () => {
  test("answers the whole claim to any key of the issuing partner", async () => {
    h = await openTestApp();
    const key = await createKey(h, { partner: "Acme" });
    const code = await issued(key);
    const sibling = await createKey(h, { partner: "Acme", scopes: ["donation"] });
    const r = await getClaim(h, sibling, code);
    expect(r.status).toBe(200);
    expect(r.body.claim).toEqual({
      claim_id: expect.any(Number),
      claim_code: code,
      status: "issued",
      claim_status: "issued",
      campaign_id: "spring-2026",
      amount: "5",
      recipient: { email: "fan@example.com", wallet_address: null },
      user_id: null,
      partner_key_id: key.keyId,
      email_sent: false,
      email_status: "queued",
      claim_url: `http://localhost:3000/claim/${code}`,
      created_at: "2026-01-01T00:00:00.000Z",
      redeemed_at: null,
      redeemed_by: null,
    });
  });

  test("unknown, malformed, oversize and other partners' codes are 404 (or 400 when oversize)", async () => {
    h = await openTestApp();
    const mine = await createKey(h, { partner: "Acme" });
    const theirs = await createKey(h, { partner: "Other" });
    const code = await issued(mine);
    for (const c of ["dc_" + "a".repeat(32), "nope", code.toUpperCase(), encodeURIComponent("dc_' OR 1=1 --")]) {
      expect((await getClaim(h, mine, c)).status).toBe(404);
    }
    const foreign = await getClaim(h, theirs, code);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe("not_found");
    const huge = await getClaim(h, mine, "x".repeat(200));
    expect(huge.status).toBe(400);
    expect(huge.body.error).toBe("invalid_query");
  });

  test("needs the donation scope and a live key", async () => {
    h = await openTestApp();
    const code = await issued(await createKey(h));
    expect((await getClaim(h, await createKey(h, { scopes: ["read"] }), code)).status).toBe(403);
    expect((await getClaim(h, await createKey(h, { mode: "sandbox" }), code)).status).toBe(403);
    expect((await h.json(`/api/partner/donation-claims/${code}`)).status).toBe(401);
  });
});

describe("redeeming a claim", () => {
  test("moves issued → redeemed once, records who and when, and emits donation.claim_redeemed", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const code = await issued(key);
    h.clock.advanceSeconds(90);
    const r = await redeem(h, key, code, { redeemed_by: "wallet-app:user-7" });
    expect(r.status).toBe(200);
    expect(r.body.claim).toMatchObject({
      claim_code: code,
      status: "redeemed",
      claim_status: "redeemed",
      redeemed_at: "2026-01-01T00:01:30.000Z",
      redeemed_by: "wallet-app:user-7",
    });
    expect((await getClaim(h, key, code)).body.claim.claim_status).toBe("redeemed");
    expect(await events(h, "donation.claim_redeemed")).toEqual([
      {
        partner: "Acme",
        mode: "live",
        data: { claim_code: code, campaign_id: "spring-2026", amount: "5", redeemed_at: "2026-01-01T00:01:30.000Z", redeemed_by: "wallet-app:user-7" },
      },
    ]);

    const again = await redeem(h, key, code);
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("claim_already_redeemed");
    expect(again.body.details).toEqual({ claim_code: code, redeemed_at: "2026-01-01T00:01:30.000Z" });
    expect(await events(h, "donation.claim_redeemed")).toHaveLength(1);
    expect(await h.ctx.store.all("SELECT redeemed_by FROM donation_claims")).toEqual([{ redeemed_by: "wallet-app:user-7" }]);
  });

  test("the body is optional; the error catalog lists claim_already_redeemed", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const r = await redeem(h, key, await issued(key));
    expect(r.status).toBe(200);
    expect(r.body.claim.redeemed_by).toBeNull();
    const empty = await redeem(h, key, await issued(key), {});
    expect(empty.status).toBe(200);
    const catalog = await h.json("/developers/api-errors.json");
    expect(catalog.body.by_code.claim_already_redeemed).toMatchObject({ http_status: 409, category: "conflict" });
  });

  test("the same Idempotency-Key answers idempotency_replay, not a second redeem", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const code = await issued(key);
    const path = `/api/partner/donation-claims/${code}/redeem`;
    expect((await signedJson(h, key, "POST", path, { idempotencyKey: "r-1" })).status).toBe(200);
    const replay = await signedJson(h, key, "POST", path, { idempotencyKey: "r-1" });
    expect(replay.status).toBe(409);
    expect(replay.body.error).toBe("idempotency_replay");
    expect(replay.body.original_response.claim.claim_status).toBe("redeemed");
    expect(await events(h, "donation.claim_redeemed")).toHaveLength(1);
  });

  test.each([
    [{ redeemed_by: "x".repeat(129) }, "redeemed_by"],
    [{ redeemed_by: "" }, "redeemed_by"],
    [{ redeemed_by: 7 }, "redeemed_by"],
    [{ redeemer: "typo" }, "redeemer"],
  ])("bad body %j → 400 and the claim stays issued", async (b, field) => {
    h = await openTestApp();
    const key = await createKey(h);
    const code = await issued(key);
    const r = await redeem(h, key, code, b);
    expect(r.status).toBe(400);
    expect((r.body.details as Array<{ field: string }>).map((d) => d.field)).toContain(field);
    expect((await getClaim(h, key, code)).body.claim.claim_status).toBe("issued");
  });

  test("another partner's, an unknown or a sandbox-side code is 404 and changes nothing", async () => {
    h = await openTestApp();
    const mine = await createKey(h, { partner: "Acme" });
    const theirs = await createKey(h, { partner: "Other" });
    const code = await issued(mine);
    expect((await redeem(h, theirs, code)).status).toBe(404);
    expect((await redeem(h, mine, "dc_" + "b".repeat(32))).status).toBe(404);
    expect((await h.ctx.store.run("UPDATE donation_claims SET mode = 'sandbox'")).changes).toBe(1);
    expect((await redeem(h, mine, code)).status).toBe(404);
    expect((await h.ctx.store.run("UPDATE donation_claims SET mode = 'live'")).changes).toBe(1);
    expect((await getClaim(h, mine, code)).body.claim.claim_status).toBe("issued");
    expect(await count(h, "events")).toBe(1); // only the issue
  });

  test("a cancelled claim cannot be redeemed: 409 conflict", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const code = await issued(key);
    expect((await h.ctx.store.run("UPDATE donation_claims SET status = 'cancelled'")).changes).toBe(1);
    const r = await redeem(h, key, code);
    expect(r.status).toBe(409);
    expect(r.body.error).toBe("conflict");
  });

  test("auth: unsigned 401, no donation scope 403, sandbox key 403, no Idempotency-Key 400", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const code = await issued(key);
    const path = `/api/partner/donation-claims/${code}/redeem`;
    expect((await h.json(path, { method: "POST" })).status).toBe(401);
    expect((await redeem(h, await createKey(h, { scopes: ["read"] }), code)).status).toBe(403);
    expect((await redeem(h, await createKey(h, { mode: "sandbox" }), code)).status).toBe(403);
    const noIdem = await signedJson(h, key, "POST", path, { idempotencyKey: null });
    expect(noIdem.body.error).toBe("idempotency_key_required");
    expect((await getClaim(h, key, code)).body.claim.claim_status).toBe("issued");
  });
});

describe("concurrent redeems", () => {
  test("of one code over two real servers sharing one database: exactly one succeeds", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const code = await issued(key);
    // A second instance over the same database — the SQLite file, or the PostgreSQL database — as a second
    // machine over one primary would be.
    const url = h.ctx.config.database.url;
    const other = await openContextAsync(
      loadConfig({
        HERALD_DB_PATH: join(h.dir, "herald.db"),
        JOBS_ENABLED: "0",
        LOG_LEVEL: "silent",
        PUBLIC_BASE_URL: "http://localhost:3000",
        ...(url ? { DATABASE_URL: url, DATABASE_POOL_MAX: "4" } : {}),
      }),
      {
        clock: h.clock,
        rng: seededRng("second-instance"),
        log: createLogger("silent"),
      },
    );
    expect(other.store.dialect).toBe(h.ctx.store.dialect);
    const a = h.app.listen({ hostname: "127.0.0.1", port: 0 });
    const b = buildApp(other).listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const path = `/api/partner/donation-claims/${code}/redeem`;
      const bases = [`http://127.0.0.1:${a.server!.port}`, `http://127.0.0.1:${b.server!.port}`];
      const responses = await Promise.all(
        Array.from({ length: 40 }, (_, i) => fetch(bases[i % 2] + path, signedInit(h, key, "POST", path, { body: { redeemed_by: `racer-${i}` } }))),
      );
      const answers = await Promise.all(responses.map(async (r) => ({ status: r.status, body: (await r.json()) as any })));
      const ok = answers.filter((x) => x.status === 200);
      expect(ok).toHaveLength(1);
      expect(answers.filter((x) => x.status === 409 && x.body.error === "claim_already_redeemed")).toHaveLength(39);
      expect(await h.ctx.store.all("SELECT status, redeemed_by FROM donation_claims")).toEqual([
        { status: "redeemed", redeemed_by: ok[0]!.body.claim.redeemed_by },
      ]);
      expect(await events(h, "donation.claim_redeemed")).toHaveLength(1);
    } finally {
      await a.stop(true);
      await b.stop(true);
      await other.requestLog.stop();
      await other.jobs.stop();
      await other.store.close();
    }
  });
});

test("the wallet recipient is shown on read", async () => {
  h = await openTestApp();
  const key = await createKey(h);
  const r = await issue(h, key, { campaign_id: "c", amount: "1", recipient: { wallet_address: WALLET } });
  const got = await getClaim(h, key, r.body.claim_code);
  expect(got.body.claim).toMatchObject({ recipient: { email: null, wallet_address: WALLET }, email_status: "not_requested" });
});
