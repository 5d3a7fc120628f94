// Abuse limits of the messenger routes (issue 30, item 9): per player and per address, with X-RateLimit-* and
// Retry-After, in the same sliding-window limiter as the partner routes; the bot webhook limits only senders
// without the secret, never Telegram. Addresses come from X-Forwarded-For with TRUST_PROXY=1 (app.handle has no
// socket), as in test/http/rate-limit.test.ts. Time moves by the fake clock only.
import { afterEach, describe, expect, test } from "bun:test";
import { afterResponses, jsonInit, type TestApp } from "../support/app";
import { openMessengerApp, initDataFor, textUpdate, WEBHOOK_SECRET, webhookPost } from "./support";

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const start = async (env: Record<string, string> = {}) => {
  h = await openMessengerApp({ env: { TRUST_PROXY: "1", ...env } });
  return h;
};

/** GET the game catalog as player `id` from address `ip`. */
const catalog = (app: TestApp, id: number, ip = "203.0.113.10") =>
  app.request("/api/messenger/games/catalog", { headers: { authorization: `tma ${initDataFor(app, { id })}`, "x-forwarded-for": ip } });

const failures = async (app: TestApp) =>
  (await app.ctx.store.get<{ n: number }>("SELECT COALESCE(SUM(count), 0) AS n FROM messenger_counters WHERE metric = 'init_data_failures'"))!.n;

describe("mini-app routes", () => {
  test("the per-address limit reads the client's address; set to 0 it does not, and the request-log row has none", async () => {
    const clientOf = async (app: TestApp) => {
      expect((await catalog(app, 5)).status).toBe(200);
      await afterResponses();
      await app.ctx.requestLog.flush();
      return (await app.ctx.store.get<{ client_ip: string | null }>("SELECT client_ip FROM request_log WHERE route = ? ORDER BY id DESC LIMIT 1", [
        "/api/messenger/games/catalog",
      ]))!.client_ip;
    };
    expect(await clientOf(await start())).toBe("203.0.113.10");
    await h!.close();
    expect(await clientOf(await start({ MESSENGER_RATE_LIMIT_IP_PER_MIN: "0", MESSENGER_RATE_LIMIT_PLAYER_PER_MIN: "0" }))).toBe(null);
  });

  test("150 catalog reads by one player: 429 past MESSENGER_RATE_LIMIT_PLAYER_PER_MIN (120), Retry-After honoured; other players unaffected", async () => {
    const app = await start();
    const statuses: number[] = [];
    let first: Response | undefined;
    let refused: Response | undefined;
    for (let i = 0; i < 150; i++) {
      const res = await catalog(app, 4242);
      statuses.push(res.status);
      first ??= res;
      if (res.status === 429) refused ??= res;
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(120);
    expect(statuses.slice(120).every((s) => s === 429)).toBe(true);
    expect(first!.headers.get("x-ratelimit-limit")).toBe("120");
    expect(first!.headers.get("x-ratelimit-remaining")).toBe("119");
    const body = (await refused!.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ success: false, error: "rate_limited" });
    expect(refused!.headers.get("x-ratelimit-remaining")).toBe("0");
    const retryAfter = Number(refused!.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    // Another player from the same address has a budget of its own.
    expect((await catalog(app, 5151)).status).toBe(200);
    app.clock.advanceSeconds(retryAfter - 1);
    expect((await catalog(app, 4242)).status).toBe(429);
    app.clock.advanceSeconds(1);
    expect((await catalog(app, 4242)).status).toBe(200);
  });

  test("MESSENGER_RATE_LIMIT_IP_PER_MIN bounds one address across players; other addresses are unaffected", async () => {
    const app = await start({ MESSENGER_RATE_LIMIT_IP_PER_MIN: "5" });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await catalog(app, 1000 + i)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const refused = await catalog(app, 2000);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(refused.headers.get("x-ratelimit-limit")).toBe("5");
    expect((await catalog(app, 2000, "198.51.100.7")).status).toBe(200);
    // Refused before the init data is looked at: no player row for the refused ones.
    expect(await app.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_players WHERE telegram_user_id >= 1005 AND telegram_user_id < 2000")).toEqual({
      n: 0,
    });
  });

  test("120 bad init-data checks from one address: 401 up to MESSENGER_RATE_LIMIT_INIT_DATA_FAILURES_PER_MIN (30), then 429; valid init data still passes", async () => {
    const app = await start();
    const forged = initDataFor(app, { id: 9 }).replace(/hash=[0-9a-f]+/, `hash=${"0".repeat(64)}`);
    const codes: string[] = [];
    for (let i = 0; i < 120; i++) {
      const res = await app.json("/api/messenger/init/verify", jsonInit("POST", {}, { authorization: `tma ${forged}`, "x-forwarded-for": "203.0.113.66" }));
      codes.push(`${res.status} ${res.body.error}`);
    }
    expect(codes.slice(0, 30).every((c) => c === "401 init_data_signature_invalid")).toBe(true);
    expect(codes.slice(30).every((c) => c === "429 rate_limited")).toBe(true);
    // The refusals past the limit write no counter rows.
    expect(await failures(app)).toBe(30);
    // A player behind the same address with valid init data is not locked out; another address still gets its 401.
    expect((await catalog(app, 4242, "203.0.113.66")).status).toBe(200);
    const elsewhere = await app.json("/api/messenger/init/verify", jsonInit("POST", {}, { authorization: `tma ${forged}`, "x-forwarded-for": "198.51.100.9" }));
    expect(elsewhere.body.error).toBe("init_data_signature_invalid");
  });

  test("0 turns each limit off", async () => {
    const app = await start({
      MESSENGER_RATE_LIMIT_PLAYER_PER_MIN: "0",
      MESSENGER_RATE_LIMIT_IP_PER_MIN: "0",
      MESSENGER_RATE_LIMIT_INIT_DATA_FAILURES_PER_MIN: "0",
    });
    for (let i = 0; i < 150; i++) expect((await catalog(app, 4242)).status).toBe(200);
    const res = await catalog(app, 4242);
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    for (let i = 0; i < 40; i++) expect((await app.json("/api/messenger/init/verify", jsonInit("POST", {}))).status).toBe(401);
  });
});

describe("POST /api/messenger/webhook", () => {
  test("150 posts without the secret from one address: 401 up to 30, then 429 with Retry-After; Telegram's 150 posts all answered 200", async () => {
    const app = await start();
    const hook = (secret: string | null, ip: string) => app.json("/api/messenger/webhook", webhookPost(textUpdate("/help"), secret, { "x-forwarded-for": ip }));
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof hook>> | undefined;
    for (let i = 0; i < 150; i++) {
      const res = await hook(i % 2 ? "wrong-secret" : null, "203.0.113.99");
      statuses.push(res.status);
      if (res.status === 429) refused ??= res;
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(30).every((s) => s === 429)).toBe(true);
    expect(refused!.body.error).toBe("rate_limited");
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused!.headers.get("x-ratelimit-limit")).toBe("30");
    // Telegram, with the secret, from that same address and another: never limited, every update stored.
    for (let i = 0; i < 150; i++) {
      const res = await hook(WEBHOOK_SECRET, i % 2 ? "203.0.113.99" : "149.154.167.220");
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    }
    expect(await app.ctx.store.get("SELECT COUNT(*) AS n FROM messenger_updates")).toEqual({ n: 150 });
  });

  test("MESSENGER_RATE_LIMIT_WEBHOOK_UNAUTHORIZED_PER_MIN=0 keeps every refusal a 401", async () => {
    const app = await start({ MESSENGER_RATE_LIMIT_WEBHOOK_UNAUTHORIZED_PER_MIN: "0" });
    for (let i = 0; i < 60; i++) expect((await app.json("/api/messenger/webhook", webhookPost(textUpdate("/help"), "nope"))).status).toBe(401);
  });
});
