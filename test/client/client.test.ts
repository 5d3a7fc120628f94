/**
 * HeraldClient against a real Bun.serve on 127.0.0.1 (no mocks). The test server re-derives every signature
 * independently with node:crypto from the raw request (method, path+query as received, headers, raw body
 * bytes) and answers 401 when it does not match. Delays are observed through an injected `sleep`, never by
 * waiting, so nothing here asserts on wall time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { HeraldApiError, HeraldClient, HeraldNetworkError } from "../../src/client";

const KEY_ID = "hpk_test_client";
const SECRET = "hsk_test_secret_for_client_tests_0123";
const SECRETS: Record<string, string> = { [KEY_ID]: SECRET };

interface Seen {
  method: string;
  target: string;
  headers: Headers;
  body: string;
  signatureValid: boolean;
}

type Script = (req: Seen, attempt: number) => Response | Promise<Response>;

const seen = new Map<string, Seen[]>(); // by pathname
const scripts = new Map<string, Script>();
const usedNonces = new Set<string>();
const hanging: Array<() => void> = [];

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "x-request-id": "req_hdr_fallback", ...headers },
  });
}

function fail(status: number, error: string, message: string, extra: Record<string, unknown> = {}) {
  return json(status, { success: false, error, message, request_id: `req_${error}`, ...extra });
}

/** Independent verifier: does not import the client's signing code. */
function verify(method: string, target: string, headers: Headers, raw: Uint8Array): string | null {
  const key = headers.get("x-partner-key");
  const ts = headers.get("x-partner-timestamp");
  const sig = headers.get("x-partner-signature");
  const nonce = headers.get("x-partner-nonce") ?? "";
  if (!key || !ts || !sig) return "missing signature headers";
  const secret = SECRETS[key];
  if (!secret) return "bad key";
  if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > 300) return "bad timestamp";
  const bodyHash = createHash("sha256").update(raw).digest("hex");
  const canonical = `${method}\n${target}\n${ts}\n${nonce}\n${bodyHash}`;
  const expected = Buffer.from(createHmac("sha256", secret).update(canonical).digest("hex"), "hex");
  const given = Buffer.from(/^[0-9a-f]{64}$/.test(sig) ? sig : "", "hex");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "bad signature";
  return null;
}

let server: ReturnType<typeof Bun.serve>;
let baseUrl: string;

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const target = url.pathname + url.search;
      const raw = new Uint8Array(await req.arrayBuffer());
      const problem = verify(req.method, target, req.headers, raw);
      const entry: Seen = {
        method: req.method,
        target,
        headers: req.headers,
        body: new TextDecoder().decode(raw),
        signatureValid: problem === null,
      };
      const list = seen.get(url.pathname) ?? [];
      list.push(entry);
      seen.set(url.pathname, list);
      if (problem) return fail(401, "unauthorized", problem);

      const mutation = ["POST", "PATCH", "PUT", "DELETE"].includes(req.method);
      const nonce = req.headers.get("x-partner-nonce");
      if (mutation && (!nonce || !/^[0-9a-f]{16,128}$/.test(nonce))) return fail(401, "unauthorized", "nonce required");
      if (nonce) {
        if (usedNonces.has(nonce)) return fail(409, "replay_detected", "nonce already used");
        usedNonces.add(nonce);
      }
      if (mutation && !req.headers.get("idempotency-key")) return fail(400, "idempotency_key_required", "missing key");

      const script = scripts.get(url.pathname);
      if (script) return script(entry, list.length);
      return json(200, { success: true, echo: { method: req.method, target, body: entry.body } });
    },
  });
  baseUrl = `http://127.0.0.1:${server.port}`;
});

afterAll(() => {
  for (const release of hanging) release();
  server.stop(true);
});

function recorder() {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}

function client(extra: Partial<ConstructorParameters<typeof HeraldClient>[0]> = {}) {
  return new HeraldClient({ baseUrl, keyId: KEY_ID, secret: SECRET, ...extra });
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected the call to throw");
}

describe("(a) signing against an independent verifier", () => {
  test("GET with a query: target is path + exact query sent; no nonce, no idempotency key", async () => {
    const { sleep, delays } = recorder();
    const res = await client({ sleep }).get("/api/salutes/balance", { user_id: "42", limit: 10, skip: undefined });
    expect(res).toEqual({
      success: true,
      echo: { method: "GET", target: "/api/salutes/balance?user_id=42&limit=10", body: "" },
    });
    const [req] = seen.get("/api/salutes/balance")!;
    expect(req!.signatureValid).toBe(true);
    expect(req!.headers.get("x-partner-key")).toBe(KEY_ID);
    expect(req!.headers.get("x-partner-nonce")).toBeNull();
    expect(req!.headers.get("idempotency-key")).toBeNull();
    expect(delays).toEqual([]);
  });

  test("awkward query values (spaces, unicode, arrays, a query already in the path) still verify", async () => {
    const res = await client().get("/api/a/query-odd?pre=1", { q: "a b&c=d", name: "Zoë", tag: ["x", "y"], on: true });
    expect(res.success).toBe(true);
    const req = seen.get("/api/a/query-odd")![0]!;
    expect(req.signatureValid).toBe(true);
    expect(req.target).toBe("/api/a/query-odd?pre=1&q=a+b%26c%3Dd&name=Zo%C3%AB&tag=x&tag=y&on=true");
  });

  test("POST JSON body: exact bytes signed, content-type JSON, nonce and idempotency key present", async () => {
    const body = { user_id: "42", amount: 12.5, reason: "quest ✓", source: "partner-app" };
    const res = await client().post("/api/salutes/credit", body);
    expect(res.echo.body).toBe(JSON.stringify(body));
    const req = seen.get("/api/salutes/credit")![0]!;
    expect(req.signatureValid).toBe(true);
    expect(req.headers.get("content-type")).toBe("application/json");
    expect(req.headers.get("x-partner-nonce")).toMatch(/^[0-9a-f]{32}$/);
    expect(req.headers.get("idempotency-key")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("PATCH, PUT and DELETE are signed with nonces; a caller idempotency key and nonce are used", async () => {
    const c = client();
    await c.patch("/api/partner/users/7", { display_name: "x" });
    await c.put("/api/a/put-target", { a: 1 });
    await c.delete("/api/partner/webhooks/wh_1", { idempotencyKey: "my-key-1", nonce: "ab".repeat(10) });
    for (const path of ["/api/partner/users/7", "/api/a/put-target", "/api/partner/webhooks/wh_1"]) {
      const req = seen.get(path)![0]!;
      expect(req.signatureValid).toBe(true);
      expect(req.headers.get("x-partner-nonce")).toBeTruthy();
    }
    const del = seen.get("/api/partner/webhooks/wh_1")![0]!;
    expect(del.headers.get("idempotency-key")).toBe("my-key-1");
    expect(del.headers.get("x-partner-nonce")).toBe("ab".repeat(10));
    expect(del.headers.get("content-type")).toBeNull();
    expect(del.body).toBe("");
  });

  test("a wrong secret is rejected by the server: HeraldApiError 401 unauthorized, not retried", async () => {
    const { sleep, delays } = recorder();
    const err = await caught(client({ secret: "wrong", sleep }).get("/api/a/wrong-secret"));
    expect(err).toBeInstanceOf(HeraldApiError);
    const e = err as HeraldApiError;
    expect(e.status).toBe(401);
    expect(e.code).toBe("unauthorized");
    expect(e.message).toBe("bad signature");
    expect(e.requestId).toBe("req_unauthorized");
    expect(seen.get("/api/a/wrong-secret")).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  test("a base URL with a path prefix is part of the signed target", async () => {
    const res = await client({ baseUrl: `${baseUrl}/prefix/` }).get("/api/a/prefixed", { x: 1 });
    expect(res.echo.target).toBe("/prefix/api/a/prefixed?x=1");
    expect(seen.get("/prefix/api/a/prefixed")![0]!.signatureValid).toBe(true);
  });
});

describe("retries", () => {
  test("(b) 503 twice then 200: 3 attempts, same Idempotency-Key, fresh nonce and signature each time", async () => {
    scripts.set("/api/b/flaky", (_req, n) => (n <= 2 ? fail(503, "db_unavailable", `down ${n}`) : json(200, { success: true, attempt: n })));
    const { sleep, delays } = recorder();
    const res = await client({ sleep, random: () => 0.5 }).post("/api/b/flaky", { amount: 1 });
    expect(res).toEqual({ success: true, attempt: 3 });
    const reqs = seen.get("/api/b/flaky")!;
    expect(reqs).toHaveLength(3);
    expect(reqs.every((r) => r.signatureValid)).toBe(true);
    const keys = new Set(reqs.map((r) => r.headers.get("idempotency-key")));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toBeTruthy();
    expect(new Set(reqs.map((r) => r.headers.get("x-partner-nonce"))).size).toBe(3);
    expect(new Set(reqs.map((r) => r.headers.get("x-partner-signature"))).size).toBe(3);
    expect(delays).toEqual([500, 1000]); // full jitter with random()=0.5 over caps 1 s, 2 s
  });

  test("two logical calls get different Idempotency-Keys", async () => {
    const c = client();
    await c.post("/api/b/two-calls", { a: 1 });
    await c.post("/api/b/two-calls", { a: 1 });
    const [a, b] = seen.get("/api/b/two-calls")!;
    expect(a!.headers.get("idempotency-key")).not.toBe(b!.headers.get("idempotency-key"));
  });

  test("(c) 429 with Retry-After: 1 → the requested delay is 1000 ms", async () => {
    scripts.set("/api/c/limited", (_req, n) => (n === 1 ? withHeader(fail(429, "rate_limited", "slow down"), "1") : json(200, { success: true })));
    const { sleep, delays } = recorder();
    const res = await client({ sleep, random: () => 0 }).get("/api/c/limited");
    expect(res).toEqual({ success: true });
    expect(seen.get("/api/c/limited")).toHaveLength(2);
    expect(delays).toEqual([1000]);
  });

  test("Retry-After above 30 s is capped at 30 s", async () => {
    scripts.set("/api/c/long", (_req, n) => (n === 1 ? withHeader(fail(429, "rate_limited", "slow"), "120") : json(200, { success: true })));
    const { sleep, delays } = recorder();
    await client({ sleep }).get("/api/c/long");
    expect(delays).toEqual([30_000]);
  });

  test("backoff without Retry-After: full jitter under 1, 2, 4, 8, 16, 30, 30 s caps", async () => {
    scripts.set("/api/c/backoff", (_req, n) => (n <= 7 ? fail(503, "db_unavailable", "down") : json(200, { success: true })));
    const { sleep, delays } = recorder();
    await client({ sleep, random: () => 0.999, maxRetries: 7 }).get("/api/c/backoff");
    expect(delays).toEqual([999, 1998, 3996, 7992, 15984, 29970, 29970]);
    const zero = recorder();
    scripts.set("/api/c/backoff0", (_req, n) => (n <= 2 ? fail(503, "db_unavailable", "down") : json(200, { success: true })));
    await client({ sleep: zero.sleep, random: () => 0 }).get("/api/c/backoff0");
    expect(zero.delays).toEqual([0, 0]);
  });

  test("(d) 400 invalid_payload: no retry, HeraldApiError with the body's fields", async () => {
    scripts.set("/api/d/bad", () => fail(400, "invalid_payload", "amount must be positive", { details: [{ field: "amount", problem: "positive" }] }));
    const { sleep, delays } = recorder();
    const err = await caught(client({ sleep }).post("/api/d/bad", { amount: -1 }));
    expect(err).toBeInstanceOf(HeraldApiError);
    const e = err as HeraldApiError;
    expect(e.status).toBe(400);
    expect(e.code).toBe("invalid_payload");
    expect(e.message).toBe("amount must be positive");
    expect(e.requestId).toBe("req_invalid_payload");
    expect(e.attempts).toBe(1);
    expect((e.body as { details: unknown[] }).details).toEqual([{ field: "amount", problem: "positive" }]);
    expect(seen.get("/api/d/bad")).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  test("409 idempotency_replay is surfaced as an error with that code, not retried", async () => {
    scripts.set("/api/d/replay", () => withReplay(fail(409, "idempotency_replay", "already done", { original_status: 200, original_response: { ok: 1 } })));
    const { sleep, delays } = recorder();
    const e = (await caught(client({ sleep }).post("/api/d/replay", { a: 1 }, { idempotencyKey: "k-1" }))) as HeraldApiError;
    expect(e).toBeInstanceOf(HeraldApiError);
    expect(e.status).toBe(409);
    expect(e.code).toBe("idempotency_replay");
    expect((e.body as { original_response: unknown }).original_response).toEqual({ ok: 1 });
    expect(e.headers.get("idempotent-replayed")).toBe("true");
    expect(delays).toEqual([]);
  });

  test("409 replay_detected on a mutation with a key (a proxy resent the attempt): sent again once, at once, new nonce, same key", async () => {
    // The first copy took effect: the second attempt reads its answer (idempotency_replay), as after a lost answer.
    scripts.set("/api/d/resent", (_req, n) =>
      n === 1
        ? fail(409, "replay_detected", "This X-Partner-Nonce was already used")
        : withReplay(fail(409, "idempotency_replay", "already done", { original_status: 200, original_response: { credited: 1 } })),
    );
    const { sleep, delays } = recorder();
    const e = (await caught(client({ sleep }).post("/api/d/resent", { a: 1 }, { idempotencyKey: "k-resent" }))) as HeraldApiError;
    expect([e.status, e.code, e.attempts]).toEqual([409, "idempotency_replay", 2]);
    expect((e.body as { original_response: unknown }).original_response).toEqual({ credited: 1 });
    const reqs = seen.get("/api/d/resent")!;
    expect(reqs.map((r) => r.headers.get("idempotency-key"))).toEqual(["k-resent", "k-resent"]);
    expect(new Set(reqs.map((r) => r.headers.get("x-partner-nonce"))).size).toBe(2);
    expect(delays).toEqual([]);
    // The first copy took no effect: the second attempt applies, and its answer is the call's.
    scripts.set("/api/d/resent-once", (_req, n) => (n === 1 ? fail(409, "replay_detected", "used") : json(200, { success: true, attempt: n })));
    expect(await client({ sleep }).post("/api/d/resent-once", { a: 1 })).toEqual({ success: true, attempt: 2 });
  });

  test("replay_detected is sent again only once, and never without an Idempotency-Key or with retries off", async () => {
    const again = (n: number) => fail(409, "replay_detected", `used ${n}`);
    scripts.set("/api/d/replayed-twice", (_req, n) => again(n));
    const twice = (await caught(client().post("/api/d/replayed-twice", { a: 1 }))) as HeraldApiError;
    expect([twice.code, twice.attempts, seen.get("/api/d/replayed-twice")!.length]).toEqual(["replay_detected", 2, 2]);
    scripts.set("/api/d/replayed-keyless", (_req, n) => again(n));
    // A request without a key (a read that sends a nonce; the test server refuses a keyless mutation before its script).
    const keyless = (await caught(client().request("GET", "/api/d/replayed-keyless", { nonce: "0123456789abcdef" }))) as HeraldApiError;
    expect([keyless.code, keyless.attempts]).toEqual(["replay_detected", 1]);
    scripts.set("/api/d/replayed-no-retries", (_req, n) => again(n));
    const none = (await caught(client({ maxRetries: 0 }).post("/api/d/replayed-no-retries", { a: 1 }))) as HeraldApiError;
    expect([none.code, none.attempts]).toEqual(["replay_detected", 1]);
  });

  test("500 is not retried; a non-JSON error body falls back to http_<status> and the X-Request-ID header", async () => {
    scripts.set("/api/d/plain", () => new Response("boom", { status: 500, headers: { "x-request-id": "req_plain" } }));
    const { sleep, delays } = recorder();
    const e = (await caught(client({ sleep }).get("/api/d/plain"))) as HeraldApiError;
    expect(e).toBeInstanceOf(HeraldApiError);
    expect(e.status).toBe(500);
    expect(e.code).toBe("http_500");
    expect(e.requestId).toBe("req_plain");
    expect(e.body).toBe("boom");
    expect(delays).toEqual([]);
  });

  test("(e) gives up after maxRetries and throws the LAST error", async () => {
    scripts.set("/api/e/down", (_req, n) => fail(503, "db_unavailable", `down attempt ${n}`));
    const { sleep, delays } = recorder();
    const e = (await caught(client({ sleep, maxRetries: 2 }).post("/api/e/down", { a: 1 }))) as HeraldApiError;
    expect(e).toBeInstanceOf(HeraldApiError);
    expect(e.status).toBe(503);
    expect(e.code).toBe("db_unavailable");
    expect(e.message).toBe("down attempt 3");
    expect(e.attempts).toBe(3);
    expect(seen.get("/api/e/down")).toHaveLength(3);
    expect(delays).toHaveLength(2);
    expect(new Set(seen.get("/api/e/down")!.map((r) => r.headers.get("idempotency-key"))).size).toBe(1);
  });

  test("maxRetries: 0 makes exactly one attempt", async () => {
    scripts.set("/api/e/once", () => withHeader(fail(429, "rate_limited", "no"), "1"));
    const { sleep, delays } = recorder();
    const e = (await caught(client({ sleep, maxRetries: 0 }).get("/api/e/once"))) as HeraldApiError;
    expect(e.code).toBe("rate_limited");
    expect(seen.get("/api/e/once")).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  test("(f) a network error (closed port) is retried, then thrown as HeraldNetworkError", async () => {
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const closedPort = probe.port;
    probe.stop(true);
    const { sleep, delays } = recorder();
    const c = new HeraldClient({
      baseUrl: `http://127.0.0.1:${closedPort}`,
      keyId: KEY_ID,
      secret: SECRET,
      maxRetries: 3,
      sleep,
      random: () => 0.25,
    });
    const e = (await caught(c.post("/api/f/nowhere", { a: 1 }))) as HeraldNetworkError;
    expect(e).toBeInstanceOf(HeraldNetworkError);
    expect(e.code).toBe("network_error");
    expect(e.attempts).toBe(4);
    expect(delays).toEqual([250, 500, 1000]);
  });

  test("a timeout is retried with the same Idempotency-Key, then succeeds", async () => {
    scripts.set("/api/f/slow", (_req, n) =>
      n === 1
        ? new Promise<Response>((resolve) => hanging.push(() => resolve(json(200, { success: true, late: true }))))
        : json(200, { success: true, attempt: n }),
    );
    const { sleep, delays } = recorder();
    const res = await client({ sleep, timeoutMs: 150 }).post("/api/f/slow", { a: 1 });
    expect(res).toEqual({ success: true, attempt: 2 });
    const reqs = seen.get("/api/f/slow")!;
    expect(reqs).toHaveLength(2);
    expect(reqs[0]!.headers.get("idempotency-key")).toBe(reqs[1]!.headers.get("idempotency-key"));
    expect(reqs[0]!.headers.get("x-partner-nonce")).not.toBe(reqs[1]!.headers.get("x-partner-nonce"));
    expect(delays).toHaveLength(1);
  });

  test("timeouts exhaust retries → HeraldNetworkError code timeout", async () => {
    scripts.set("/api/f/always-slow", () => new Promise<Response>((resolve) => hanging.push(() => resolve(json(200, { success: true })))));
    const { sleep } = recorder();
    const e = (await caught(client({ sleep, timeoutMs: 100, maxRetries: 1 }).get("/api/f/always-slow"))) as HeraldNetworkError;
    expect(e).toBeInstanceOf(HeraldNetworkError);
    expect(e.code).toBe("timeout");
    expect(e.attempts).toBe(2);
  });
});

function withHeader(res: Response, retryAfter: string): Response {
  res.headers.set("retry-after", retryAfter);
  return res;
}

function withReplay(res: Response): Response {
  res.headers.set("idempotent-replayed", "true");
  return res;
}
