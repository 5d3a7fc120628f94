import { afterEach, describe, expect, test } from "bun:test";
import { KEY_CHANGE_POLL_MS } from "../../src/auth/keys";
import { afterResponses, openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedInit, signedJson, type TestKey } from "../support/partner";
import { sandboxApp, sandboxKey, sb } from "../sandbox/support";

// A signed GET is verified synchronously when its key row is in memory (src/auth/partner-plugin.ts,
// authenticateNow), so Elysia compiles the route without an await of the guard's. A request that must wait — its
// key not yet read, the key cache due for its check, a nonce to record, last_used_at to write — throws
// ResumeLater and the route runs again once the guard has awaited (src/http/hook-scope.ts). These tests hold both
// paths to one answer, one request-log row and one count in /metrics, and say which path ran by
// herald_http_resumed_total.

const CAPS = "/api/partner/capabilities";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

interface HistoryRow {
  method: string;
  path: string;
  composed: unknown;
}
const routeOf = (method: string, path: string) =>
  (h.app as unknown as { router: { history: HistoryRow[] } }).router.history.find((r) => r.method === method && r.path === path)!;

/** /metrics once the answered requests' after-response hooks (their counts) have run. */
async function metricsText(token: string): Promise<string> {
  await afterResponses();
  return (await h.request("/metrics", { headers: { authorization: `Bearer ${token}` } })).text();
}
const metricValue = (text: string, line: string): number => {
  const found = text.split("\n").find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : 0;
};
const resumedIn = (text: string) => metricValue(text, "herald_http_resumed_total");
const capsCount = (text: string, status: number) => metricValue(text, `herald_http_requests_total{method="GET",route="${CAPS}",status="${status}"}`);

async function logRows(): Promise<Array<{ request_id: string; status: number; partner_key_id: string | null }>> {
  await h.ctx.requestLog.flush();
  return h.ctx.store.all(
    "SELECT l.request_id, l.status, k.key_id AS partner_key_id FROM request_log l LEFT JOIN request_log_keys k ON k.ref = l.key_ref WHERE l.route = ? ORDER BY l.id",
    [CAPS],
  );
}

/** The answer's parts that must not depend on the path it took. */
const comparable = (res: { status: number; body: Record<string, unknown>; headers: Headers }) => ({
  status: res.status,
  body: res.body,
  lastModified: res.headers.get("last-modified"),
  cacheControl: res.headers.get("cache-control"),
  contentType: res.headers.get("content-type"),
});

async function caps(key: TestKey, opts: Parameters<typeof signedJson>[4] = {}) {
  return signedJson(h, key, "GET", CAPS, opts);
}

describe("a signed GET resumed after the guard awaits", () => {
  test("the route compiles synchronous; a signed mutation stays async", async () => {
    h = await openTestApp();
    const key = await createKey(h, { scopes: ["read", "credit"] });
    for (let i = 0; i < 3; i++) expect((await caps(key)).status).toBe(200);
    const credit = await signedJson(h, key, "POST", "/api/salutes/credit", { body: { user_id: "u1", amount: "1", reason: "r", source: "s" } });
    expect(credit.status).toBeLessThan(500);
    const compiled = (row: HistoryRow) => (row.composed as { constructor: { name: string } }).constructor.name;
    expect(compiled(routeOf("GET", CAPS))).toBe("Function");
    expect(compiled(routeOf("POST", "/api/salutes/credit"))).toBe("AsyncFunction");
  });

  test("a signed GET whose handler never waits compiles synchronous (Elysia takes `=> f(` and `return f(` for async)", async () => {
    h = await openTestApp();
    const key = await createKey(h, { scopes: ["read"] });
    for (let i = 0; i < 3; i++) expect((await signedJson(h, key, "GET", "/api/salutes/conversion-policy")).status).toBe(200);
    for (const path of [CAPS, "/api/salutes/conversion-policy"]) {
      const compiled = (routeOf("GET", path).composed as { constructor: { name: string } }).constructor.name;
      expect([path, compiled]).toEqual([path, "Function"]);
    }
  });

  test("a public route behind the compression hook, with a handler that never waits, compiles synchronous", async () => {
    h = await openTestApp();
    const path = "/api/public/system-status/policy";
    for (const encoding of [null, "gzip, br"]) {
      const res = await h.request(path, encoding ? { headers: { "accept-encoding": encoding } } : {});
      expect(res.status).toBe(200);
    }
    expect((routeOf("GET", path).composed as { constructor: { name: string } }).constructor.name).toBe("Function");
  });

  test("first use (key not in memory, last_used_at to write) and later uses: the same answer, one row and one count each", async () => {
    h = await openTestApp();
    const token = await createAdminToken(h);
    const key = await createKey(h);
    const before = resumedIn(await metricsText(token));

    const first = await caps(key);
    const afterFirst = resumedIn(await metricsText(token));
    // Writing last_used_at drops the cached rows, so the second request reads the row again; the third is in memory.
    const second = await caps(key);
    const third = await caps(key);
    const fourth = await caps(key);
    const text = await metricsText(token);

    expect(afterFirst - before).toBe(1);
    expect(resumedIn(text) - afterFirst).toBe(1);
    for (const res of [second, third, fourth]) expect(comparable(res)).toEqual(comparable(first));
    expect(first.status).toBe(200);
    expect(first.body.key_id).toBe(key.keyId);
    expect(capsCount(text, 200)).toBe(4);

    const rows = await logRows();
    expect(rows.map((r) => [r.status, r.partner_key_id])).toEqual(Array(4).fill([200, key.keyId]));
    const ids = [first, second, third, fourth].map((r) => r.headers.get("x-request-id"));
    expect(rows.map((r) => r.request_id)).toEqual(ids as string[]);
    expect(new Set(ids).size).toBe(4);
  });

  test("the key cache's periodic check and the minute's last_used_at write resume; the answer is unchanged", async () => {
    h = await openTestApp();
    const token = await createAdminToken(h);
    const key = await createKey(h);
    for (let i = 0; i < 3; i++) await caps(key);
    const warm = resumedIn(await metricsText(token));
    const inMemory = await caps(key);
    expect(resumedIn(await metricsText(token))).toBe(warm);

    h.clock.advanceSeconds(KEY_CHANGE_POLL_MS / 1000);
    const afterPoll = await caps(key);
    expect(resumedIn(await metricsText(token))).toBe(warm + 1);
    h.clock.advanceSeconds(60);
    const afterMinute = await caps(key);
    expect(resumedIn(await metricsText(token))).toBeGreaterThan(warm + 1);
    const lastUsed = await h.ctx.store.get<{ last_used_at: string }>("SELECT last_used_at FROM partner_keys WHERE key_id = ?", [key.keyId]);
    expect(lastUsed!.last_used_at).toBe(h.clock.now().toISOString());
    for (const res of [afterPoll, afterMinute]) expect([res.status, res.body.key_id, res.body.scopes]).toEqual([200, key.keyId, inMemory.body.scopes]);
  });

  test("refusals on the resumed path: an unknown key and a wrong secret are 401, a wrong timestamp is refused at once", async () => {
    h = await openTestApp();
    const token = await createAdminToken(h);
    const key = await createKey(h);
    const unknown = await caps({ ...key, keyId: "hk_live_000000000000000000000000" });
    const wrong = await caps({ ...key, secret: `${key.secret}x` });
    expect([unknown.status, unknown.body.error, wrong.status, wrong.body.error]).toEqual([401, "unauthorized", 401, "unauthorized"]);
    expect(unknown.body.message).toBe(wrong.body.message);
    for (const res of [unknown, wrong]) expect(res.body.request_id).toBe(res.headers.get("x-request-id"));
    // The key in memory, a stale timestamp is refused on the synchronous path with the same words as on the other.
    for (let i = 0; i < 3; i++) await caps(key);
    const stale = await caps(key, { timestamp: Math.floor(h.clock.now().getTime() / 1000) - 3600 });
    expect([stale.status, stale.body.error]).toEqual([401, "unauthorized"]);
    expect(String(stale.body.message)).toContain("behind server time");

    const text = await metricsText(token);
    expect(capsCount(text, 401)).toBe(3);
    const rows = await logRows();
    expect(rows.filter((r) => r.status === 401).length).toBe(3);
  });

  test("a GET with a nonce resumes to record it: the same nonce again is a replay", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    for (let i = 0; i < 3; i++) await caps(key);
    const nonce = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
    const once = await caps(key, { nonce });
    const again = await caps(key, { nonce });
    expect(once.status).toBe(200);
    expect([again.status, again.body.error]).toEqual([409, "replay_detected"]);
  });

  test("a signed POST that is not a mutation (a body, no nonce) resumes with its body read once", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const run = () => sb(h, key, "POST", "/webhook-simulator/run", { body: { scenario_id: "claim_created" } });
    const cold = await run();
    for (let i = 0; i < 3; i++) await run();
    const warm = await run();
    expect([cold.status, warm.status]).toEqual([200, 200]);
    expect(cold.body).toEqual(warm.body);
  });

  test("a GET with a query resumes with its query: the same window on both paths, and the same 400 for a bad value", async () => {
    h = await openTestApp();
    const token = await createAdminToken(h);
    const usage = (key: TestKey, query: string) => signedJson(h, key, "GET", `/api/partner/analytics/usage?${query}`);
    /** The query asked with a fresh key (the guard resumes), then once the key is in memory (it does not). */
    const bothPaths = async (query: string) => {
      const key = await createKey(h);
      const before = resumedIn(await metricsText(token));
      const resumed = await usage(key, query);
      expect(resumedIn(await metricsText(token))).toBe(before + 1);
      for (let i = 0; i < 3; i++) await caps(key);
      const warm = resumedIn(await metricsText(token));
      const synchronous = await usage(key, query);
      expect(resumedIn(await metricsText(token))).toBe(warm);
      return [resumed, synchronous] as const;
    };
    for (const res of await bothPaths("hours=2")) expect([res.status, (res.body.window as { hours: number }).hours]).toEqual([200, 2]);

    const [badResumed, badSynchronous] = await bothPaths("hours=abc");
    for (const res of [badResumed, badSynchronous]) expect([res.status, res.body.error]).toEqual([400, "invalid_query"]);
    expect(badResumed.body.message).toBe(badSynchronous.body.message);
  });

  test("the partner limits count a resumed request once, and its answer carries the same headers as a synchronous one", async () => {
    h = await openTestApp({ env: { RATE_LIMIT_PARTNER_PER_MIN: "100" } });
    const token = await createAdminToken(h);
    const key = await createKey(h);
    const answers: Array<{ resumed: boolean; names: string[]; remaining: string | null }> = [];
    for (let i = 0; i < 4; i++) {
      const before = resumedIn(await metricsText(token));
      const res = await h.request(CAPS, signedInit(h, key, "GET", CAPS));
      expect(res.status).toBe(200);
      answers.push({
        resumed: resumedIn(await metricsText(token)) > before,
        names: [...res.headers.keys()].sort(),
        remaining: res.headers.get("x-ratelimit-remaining"),
      });
    }
    // The first two resume (the key's first read, then the read after last_used_at was written); the rest do not.
    expect(answers.map((a) => a.resumed)).toEqual([true, true, false, false]);
    expect(answers.map((a) => a.remaining)).toEqual(["99", "98", "97", "96"]);
    for (const a of answers) expect(a.names).toEqual(answers[3]!.names);
    expect(answers[0]!.names).toContain("x-ratelimit-limit");
  });

  test("HEAD on a signed GET route answers on both paths with the GET's headers and no body", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const head = async () => h.request(CAPS, signedInit(h, key, "HEAD", CAPS));
    const cold = await head();
    for (let i = 0; i < 3; i++) await caps(key);
    const warm = await head();
    for (const res of [cold, warm]) {
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("");
      expect(res.headers.get("cache-control")).toBe("private, no-cache");
    }
  });
});
