// Docs audit (second batch): docs/sandbox.md's nonce policy and the per-key limit of 30 a minute.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const S = "/api/partner/sandbox";

describe("docs/sandbox.md (second batch)", () => {
  // docs/sandbox.md:13-15 — a nonce sent is single use; SANDBOX_NONCE_REQUIRED=1 requires one
  test("nonce policy", async () => {
    h = await openTestApp();
    const s = await createKey(h, { mode: "sandbox" });
    const nonce = "9f86d081884c7d659a2feaa0c55ad015";
    expect((await signedJson(h, s, "POST", `${S}/salutes/credit`, { nonce })).status).toBe(200);
    const again = await signedJson(h, s, "POST", `${S}/salutes/credit`, { nonce });
    expect([again.status, again.body.error]).toEqual([409, "replay_detected"]);
    await h.close();
    h = await openTestApp({ env: { SANDBOX_NONCE_REQUIRED: "1" } });
    const s2 = await createKey(h, { mode: "sandbox" });
    const none = await signedJson(h, s2, "POST", `${S}/salutes/credit`, { nonce: null });
    expect([none.status, none.body.error]).toEqual([401, "unauthorized"]);
  });

  // docs/sandbox.md:16-18 — 30 requests a minute per sandbox key, on every route the key calls
  test("30 a minute per sandbox key across routes", async () => {
    h = await openTestApp();
    const s = await createKey(h, { mode: "sandbox" });
    const other = await createKey(h, { mode: "sandbox", partner: "Beta" });
    const routes = [`${S}/verify`, `${S}/token-status`, `${S}/users`, `${S}/webhook-simulator/scenarios`, "/api/partner/capabilities"];
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await signedJson(h, s, "GET", routes[i % routes.length]!)).status);
    expect(statuses.slice(0, 30).every((x) => x === 200)).toBe(true);
    const last = await signedJson(h, s, "GET", `${S}/verify`);
    expect([last.status, last.body.error]).toEqual([429, "rate_limited"]);
    expect(last.headers.get("retry-after")).toBeTruthy();
    expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
    expect((await signedJson(h, other, "GET", `${S}/verify`)).status).toBe(200);
    h.clock.advanceSeconds(61);
    expect((await signedJson(h, s, "GET", `${S}/verify`)).status).toBe(200);
  });
});
