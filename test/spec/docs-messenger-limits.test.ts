// Docs audit: docs/messenger.md "Abuse limits" against the real app (limits lowered through their variables).
import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { initDataFor, openMessengerApp, textUpdate, tmaPost, webhookPost } from "../messenger/support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/messenger.md — Abuse limits", () => {
  // docs/messenger.md:328-333 — per player: its headers on a player's answers, 429 with Retry-After past it
  test("per-player limit", async () => {
    h = await openMessengerApp({ env: { MESSENGER_RATE_LIMIT_PLAYER_PER_MIN: "3", MESSENGER_RATE_LIMIT_IP_PER_MIN: "0" } });
    const init = initDataFor(h, { id: 4242 });
    const first = await h.request("/api/messenger/init/verify", tmaPost(init));
    expect([first.headers.get("x-ratelimit-limit"), first.headers.get("x-ratelimit-remaining")]).toEqual(["3", "2"]);
    await h.request("/api/messenger/init/verify", tmaPost(init));
    await h.request("/api/messenger/init/verify", tmaPost(init));
    const fourth = await h.request("/api/messenger/init/verify", tmaPost(init));
    expect(fourth.status).toBe(429);
    expect(((await fourth.json()) as any).error).toBe("rate_limited");
    expect(Number(fourth.headers.get("retry-after"))).toBeGreaterThan(0);
    const other = await h.request("/api/messenger/init/verify", tmaPost(initDataFor(h, { id: 5151 })));
    expect(other.status).toBe(200);
  });

  // docs/messenger.md:331 — refused init-data checks per address: past it 429, and valid init data still passes
  test("init-data failure limit does not lock out valid players", async () => {
    h = await openMessengerApp({ env: { MESSENGER_RATE_LIMIT_INIT_DATA_FAILURES_PER_MIN: "2", MESSENGER_RATE_LIMIT_IP_PER_MIN: "0" } });
    const bad = initDataFor(h, { id: 1 }).replace("Ada", "Adb");
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await h.request("/api/messenger/init/verify", tmaPost(bad))).status);
    expect(codes).toEqual([401, 401, 429, 429]);
    const ok = await h.request("/api/messenger/init/verify", tmaPost(initDataFor(h, { id: 4242 })));
    expect(ok.status).toBe(200);
  });

  // docs/messenger.md:332-333 — per address before init data is checked
  test("per-address limit", async () => {
    h = await openMessengerApp({ env: { MESSENGER_RATE_LIMIT_IP_PER_MIN: "2" } });
    const s: number[] = [];
    for (let i = 0; i < 3; i++) s.push((await h.request("/api/messenger/init/verify", tmaPost(initDataFor(h, { id: 10 + i })))).status);
    expect(s).toEqual([200, 200, 429]);
  });

  // docs/messenger.md:333 — webhook posts without the secret are limited; Telegram's never are
  test("webhook unauthorized limit", async () => {
    h = await openMessengerApp({ env: { MESSENGER_RATE_LIMIT_WEBHOOK_UNAUTHORIZED_PER_MIN: "2", MESSENGER_BOT_USERNAME: "HeraldBot" } });
    const s: number[] = [];
    for (let i = 0; i < 3; i++) s.push((await h.request("/api/messenger/webhook", webhookPost(textUpdate("/help", undefined, 500 + i), "wrong"))).status);
    expect(s).toEqual([401, 401, 429]);
    const good: number[] = [];
    for (let i = 0; i < 5; i++) good.push((await h.request("/api/messenger/webhook", webhookPost(textUpdate("/help", undefined, 600 + i)))).status);
    expect(good).toEqual([200, 200, 200, 200, 200]);
    const admin = await h.request("/api/messenger/ops/health");
    expect(admin.status).toBe(403);
  });
});
