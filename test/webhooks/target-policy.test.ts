import { afterEach, describe, expect, test } from "bun:test";
import { linkInboxSender } from "../../src/ops/link-inbox/outbox";
import { checkResolvedTarget, checkTargetUrl, isPublicAddress, normaliseHost } from "../../src/webhooks/target-policy";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";
import { plantAlertRun } from "../ops/support";

// The webhook target policy sees a host in one canonical form (trailing dots, case, IDNA, every numeric IPv4
// spelling), at creation and at delivery, for partner webhooks, status subscribers and the link inbox alike.

let h: TestApp | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  rx?.stop();
  rx = undefined;
  await h?.close();
  h = undefined;
});

const strict = { allowPrivateTargets: false, requireHttps: false };

/** Local spellings that must be refused, each with the canonical host the refusal names. */
const LOCAL_FORMS: Array<[string, string]> = [
  ["http://localhost.:38700/hook", "local host name (localhost)"],
  ["http://LOCALHOST./hook", "local host name (localhost)"],
  ["http://localhost../hook", "local host name (localhost)"],
  ["http://localhost%2e/hook", "local host name (localhost)"],
  ["http://ｌｏｃａｌｈｏｓｔ/hook", "local host name (localhost)"],
  ["http://api.localhost./hook", "local host name (api.localhost)"],
  ["http://metadata.google.internal./computeMetadata", "local host name (metadata.google.internal)"],
  ["http://0x7f000001/hook", "non-public address (127.0.0.1)"],
  ["http://2130706433/hook", "non-public address (127.0.0.1)"],
  ["http://127.1/hook", "non-public address (127.0.0.1)"],
  ["http://0177.0.0.1/hook", "non-public address (127.0.0.1)"],
  ["http://127.0.0.1./hook", "non-public address (127.0.0.1)"],
  ["http://[::1]/hook", "non-public address (::1)"],
  ["http://[::ffff:127.0.0.1]/hook", "non-public address (::ffff:7f00:1)"],
  ["http://[::127.0.0.1]/hook", "non-public address (::7f00:1)"],
  ["http://[fd00::1]/hook", "non-public address (fd00::1)"],
  ["http://169.254.169.254/latest/meta-data", "non-public address (169.254.169.254)"],
  ["http://10.0.0.1/hook", "non-public address (10.0.0.1)"],
];

describe("host normalisation", () => {
  test("trailing dots, case, IDNA, brackets and every numeric IPv4 form come out canonical", () => {
    expect(
      [
        "LOCALHOST.",
        "localhost..",
        "[::1]",
        "[FD00::1]",
        "Bücher.Example.",
        "0x7f000001",
        "2130706433",
        "127.1",
        "0177.0.0.1",
        "0x7f.1",
        "hooks.example.com",
      ].map(normaliseHost),
    ).toEqual([
      "localhost",
      "localhost",
      "::1",
      "fd00::1",
      "xn--bcher-kva.example",
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "hooks.example.com",
    ]);
  });

  test("the IPv4-compatible IPv6 form is judged by the IPv4 address inside it", () => {
    expect([isPublicAddress("::7f00:1"), isPublicAddress("::a00:1"), isPublicAddress("::808:808")]).toEqual([false, false, true]);
  });

  test.each(LOCAL_FORMS)("%s is refused: %s", (url, why) => {
    expect(checkTargetUrl(url, strict)).toBe(`points at a ${why}`);
  });

  test("public names keep working in any spelling, and the operator's opt-in still allows local targets", () => {
    for (const url of ["https://hooks.example.com./x", "https://HOOKS.example.com/x", "https://bücher.example/x", "https://8.8.8.8/x"]) {
      expect({ url, problem: checkTargetUrl(url, strict) }).toEqual({ url, problem: null });
    }
    expect(checkTargetUrl("http://localhost.:38700/hook", { allowPrivateTargets: true, requireHttps: false })).toBeNull();
  });

  test("at delivery the same forms are refused before any DNS lookup or connection", async () => {
    for (const [url, why] of LOCAL_FORMS) expect({ url, problem: await checkResolvedTarget(url, strict) }).toEqual({ url, problem: `points at a ${why}` });
  });
});

describe("where the policy is applied", () => {
  test("POST /api/partner/webhooks refuses every local spelling with 400 (http://localhost.:38700 was accepted with 201)", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    for (const [url, why] of LOCAL_FORMS) {
      const r = await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: url } });
      expect({ url, status: r.status, error: r.body.error, problem: r.body.details?.[0]?.problem }).toEqual({
        url,
        status: 400,
        error: "invalid_payload",
        problem: `points at a ${why}`,
      });
    }
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM webhooks")).toEqual({ n: 0 });
  });

  test("status subscribers use the same policy", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}`, "content-type": "application/json" };
    const r = await h.json("/admin/status/subscribers", { method: "POST", headers: auth, body: JSON.stringify({ url: "http://localhost.:38700/hook" }) });
    expect([r.status, r.body.details?.[0]?.problem]).toEqual([400, "points at a local host name (localhost)"]);
  });

  test("a link-inbox target spelled localhost. is refused at delivery and reported by the read-model, never called", async () => {
    rx = startReceiver();
    const port = new URL(rx.url("/x")).port;
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "0", LINK_INBOX_WEBHOOK_URLS: `http://localhost.:${port}/x` } });
    await plantAlertRun(h.ctx.store, { runId: "r1", at: h.ctx.clock.now().toISOString(), source: "status", name: "database", status: "fail", value: "3" });
    await linkInboxSender(h.ctx).runOnce();
    expect(rx.received).toHaveLength(0);
    const events = await h.ctx.store.all<{ error: string | null }>("SELECT error FROM ops_link_events");
    expect(events.map((e) => e.error)).toEqual(["target refused: points at a local host name (localhost)"]);
    const s = await h.json("/admin/ops/link-inbox/verification-summary.json", { headers: { authorization: `Bearer ${await createAdminToken(h)}` } });
    expect(s.body.targets.map((t: { policy_problem: string | null }) => t.policy_problem)).toEqual(["points at a local host name (localhost)"]);
  });
});
