import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { chromiumPresent, noHorizontalOverflow, OperatorBrowser } from "../support/browser";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { issue, redeem, WALLET } from "./support";

// The claim page a donation's recipient reaches from the claim email (claim_url), in headless Chromium with
// JavaScript off, from a real server on 127.0.0.1: every state of a claim, the sandbox preview, and the 404 that
// unknown, malformed and other-case codes share. The raw answers (status, headers) are checked over fetch.

const present = chromiumPresent("test/donations/claim-page.browser.test.ts");

let h: TestApp;
let server: ReturnType<TestApp["app"]["listen"]>;
let base = "";
const browser = new OperatorBrowser();
let live: TestKey;

/** The claim_url's path and query, served by this test's server (the URL names PUBLIC_BASE_URL). */
const onServer = (claimUrl: string) => {
  const u = new URL(claimUrl);
  return `${base}${u.pathname}${u.search}`;
};

beforeAll(async () => {
  h = await openTestApp();
  live = await createKey(h, { mode: "live" });
  server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${server.server!.port}`;
  if (present) await browser.launch();
}, 120_000);

afterAll(async () => {
  await browser.close();
  await server?.stop(true);
  await h?.close();
});

const facts = async (url: string, width = 390) => {
  const page = await browser.page();
  await page.setViewportSize({ width, height: 800 });
  const res = await page.goto(url, { waitUntil: "load" });
  await noHorizontalOverflow(page);
  const text = async (sel: string) => ((await page.locator(sel).count()) ? (await page.locator(sel).innerText()).trim() : null);
  return {
    status: res!.status(),
    heading: await text("h1"),
    lead: await text("#lead"),
    campaign: await text("#campaign"),
    amount: await text("#amount"),
    state: await text("#status"),
    claimed: await text("#claimed"),
    page,
  };
};

describe.skipIf(!present)("donation claim page", () => {
  test("an issued claim: campaign, amount, waiting; after the partner redeems it: claimed, with the time", async () => {
    const issued = await issue(h, live, { campaign_id: "spring-2026", amount: "12.50", recipient: { wallet_address: WALLET } });
    expect(issued.status).toBe(200);
    const url = onServer(issued.body.claim_url);
    const before = await facts(url);
    expect(before).toMatchObject({
      status: 200,
      heading: "Your donation claim",
      lead: "A donation of 12.5 from campaign spring-2026 is waiting for you.",
      campaign: "spring-2026",
      amount: "12.5",
      state: "Waiting to be claimed",
      claimed: null,
    });
    await browser.screenshot(before.page, "claim-issued.png");

    h.clock.advanceSeconds(3600);
    expect((await redeem(h, live, issued.body.claim_code, { redeemed_by: "wallet-app" })).status).toBe(200);
    const after = await facts(url, 1280);
    await browser.screenshot(after.page, "claim-redeemed-1280.png");
    expect(after).toMatchObject({ status: 200, state: "Claimed", lead: "This donation of 12.5 from campaign spring-2026 has been claimed." });
    expect(after.claimed).toBe(`${h.clock.now().toISOString().slice(0, 10)} ${h.clock.now().toISOString().slice(11, 16)} UTC`);
  });

  test("a sandbox claim's claim_url opens a preview that says it cannot be claimed", async () => {
    const sandbox = await createKey(h, { mode: "sandbox" });
    const r = await signedJson(h, sandbox, "POST", "/api/partner/sandbox/donation-claim");
    expect(r.status).toBe(200);
    expect(r.body.claim_url).toContain("?sandbox=1");
    const page = await facts(onServer(r.body.claim_url));
    expect(page).toMatchObject({ status: 200, heading: "Sandbox preview of a donation claim", state: "Sandbox preview (cannot be claimed)" });
    await browser.screenshot(page.page, "claim-sandbox.png");
  });

  test("unknown, malformed and over-long codes are one 404 page; an upper-case link still opens its claim", async () => {
    const issued = await issue(h, live, { campaign_id: "autumn", amount: "3", recipient: { wallet_address: WALLET } });
    const code: string = issued.body.claim_code;
    for (const path of [`/claim/dc_${"a".repeat(32)}`, "/claim/not-a-code", `/claim/${"x".repeat(150)}`, `/claim/${code.slice(0, -1)}`]) {
      expect(await facts(`${base}${path}`)).toMatchObject({ status: 404, heading: "No donation claim has this code", campaign: null });
    }
    await browser.screenshot(await browser.page(), "claim-not-found.png");
    expect(await facts(`${base}/claim/${code.toUpperCase()}`)).toMatchObject({ status: 200, campaign: "autumn", amount: "3" });
  });
});

test("the claim page's answer: HTML, never cached, no referrer, not indexed, not framed; HEAD too; in the public rate group", async () => {
  const issued = await issue(h, live, { campaign_id: "winter", amount: "1", recipient: { wallet_address: WALLET } });
  for (const method of ["GET", "HEAD"]) {
    const res = await fetch(onServer(issued.body.claim_url), { method });
    expect(res.status).toBe(200);
    expect(
      Object.fromEntries(["content-type", "cache-control", "referrer-policy", "x-robots-tag", "x-frame-options"].map((k) => [k, res.headers.get(k)])),
    ).toEqual({
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-robots-tag": "noindex, nofollow",
      "x-frame-options": "DENY",
    });
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
  }
  // A browser gets the 404 page; any other client the JSON envelope, as every other 404.
  const page = await fetch(`${base}/claim/nope`, { headers: { accept: "text/html,application/xhtml+xml" } });
  expect([page.status, page.headers.get("content-type")]).toEqual([404, "text/html; charset=utf-8"]);
  const missing = await fetch(`${base}/claim/nope`);
  expect(missing.status).toBe(404);
  expect(await missing.json()).toMatchObject({ success: false, error: "not_found", message: "No donation claim has this code" });
  // Past the parameter's bound (200 characters) it is no code at all: 400 naming the parameter.
  const long = await fetch(`${base}/claim/${"x".repeat(201)}`);
  expect([long.status, ((await long.json()) as { error: string }).error]).toEqual([400, "invalid_query"]);
  // The page names no recipient: the email given at issue time is not on it.
  const withEmail = await issue(h, live, { campaign_id: "winter", amount: "1", recipient: { email: "fan@example.com" } });
  expect(await (await fetch(onServer(withEmail.body.claim_url))).text()).not.toContain("fan@example.com");
});

test("the claim page shares the public per-IP limit: past it, 429 rate_limited with Retry-After", async () => {
  const limited = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "2" } });
  try {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 3; i++) {
      last = await limited.request(`/claim/dc_${"a".repeat(32)}`);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([404, 404, 429]);
    expect(((await last!.json()) as { error: string }).error).toBe("rate_limited");
    expect(last!.headers.get("retry-after")).not.toBeNull();
  } finally {
    await limited.close();
  }
});
