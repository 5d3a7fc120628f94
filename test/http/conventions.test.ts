import { afterEach, describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { httpCore, RequestStates } from "../../src/http/core";
import { RouteIndex } from "../../src/http/routes/route-index";
import { Envelope } from "../../src/http/envelope";
import { createLogger } from "../../src/log";
import { openTestApp, jsonInit, type TestApp } from "../support/app";

let h: TestApp;
afterEach(() => h?.close());

describe("error envelope", () => {
  test("unknown path is a JSON 404 not_found with a request id", async () => {
    h = await openTestApp();
    const { status, body, headers } = await h.json("/nope");
    expect(status).toBe(404);
    expect(body).toMatchObject({ success: false, error: "not_found" });
    expect(body.request_id).toBe(headers.get("x-request-id")!);
    expect(body.message).toContain("/nope");
  });

  test("wrong method on a known path is 405 method_not_allowed with Allow", async () => {
    h = await openTestApp();
    const { status, body, headers } = await h.json("/healthz", { method: "DELETE" });
    expect(status).toBe(405);
    expect(body.error).toBe("method_not_allowed");
    expect(headers.get("allow")).toContain("GET");
  });
});

describe("request id", () => {
  test("echoes a sane client id and replaces an unsafe one", async () => {
    h = await openTestApp();
    const echoed = await h.request("/healthz", { headers: { "x-request-id": "client-id-123456" } });
    expect(echoed.headers.get("x-request-id")).toBe("client-id-123456");
    const unsafe = await h.request("/healthz", { headers: { "x-request-id": "bad id <script>" } });
    expect(unsafe.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{24}$/);
    const none = await h.request("/healthz");
    expect(none.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{24}$/);
  });
});

describe("include_meta", () => {
  test("adds meta with request id and generation time only when asked", async () => {
    h = await openTestApp();
    const plain = await h.json("/api/partner/errors.json");
    expect(plain.body.meta).toBeUndefined();
    for (const flag of ["1", "true"]) {
      const { body, headers } = await h.json(`/api/partner/errors.json?include_meta=${flag}`);
      expect(body.meta).toEqual({ request_id: headers.get("x-request-id")!, generated_at_utc: "2026-01-01T00:00:00.000Z" });
    }
    const off = await h.json("/api/partner/errors.json?include_meta=0");
    expect(off.body.meta).toBeUndefined();
  });
});

/** A scratch app over the real HTTP core, with routes that exercise body parsing and failures. */
async function coreApp(maxBodyBytes = 1024) {
  h = await openTestApp({ env: { MAX_BODY_BYTES: String(maxBodyBytes) } });
  const states = new RequestStates();
  const routes = new RouteIndex();
  const app = new Elysia()
    .use(httpCore(h.ctx, states, routes))
    .post("/echo", ({ body, request }) => ({ success: true as const, body, raw_bytes: states.get(request)?.rawBody?.byteLength ?? -1 }), {
      body: t.Object({ amount: t.Number(), kind: t.Union([t.Literal("credit"), t.Literal("debit")]) }),
    })
    .get("/boom", () => {
      throw new Error("SELECT secret FROM partner_keys");
    })
    .get("/typed", () => ({ success: true as const, n: 1 }), { response: Envelope({ n: t.Integer() }) });
  routes.load(app.routes);
  return (path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init));
}

describe("bad input never 500s", () => {
  test("malformed JSON is 400 invalid_payload", async () => {
    const call = await coreApp();
    const res = await call("/echo", jsonInit("POST", "{not json"));
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ success: false, error: "invalid_payload" });
    expect(body.details).toEqual([{ field: "body", problem: "must be valid JSON (InvalidSymbol at character 1)" }]);
  });

  test("wrong types and unknown enum values name each field", async () => {
    const call = await coreApp();
    const res = await call("/echo", jsonInit("POST", { amount: true, kind: "steal" }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error).toBe("invalid_payload");
    const fields = Object.fromEntries(body.details.map((d: { field: string; problem: string }) => [d.field, d.problem]));
    expect(fields.amount).toBe("must be a number");
    expect(fields.kind).toBe("must be one of: credit, debit");
    // A number written as text is refused as such (test/http/json-numbers.test.ts), never converted.
    const text = (await (await call("/echo", jsonInit("POST", { amount: "12", kind: "credit" }))).json()) as any;
    expect(text.details).toEqual([{ field: "amount", problem: "must be a number written as a JSON number, not text" }]);
  });

  test("missing body is 400 with the required fields", async () => {
    const call = await coreApp();
    const res = await call("/echo", { method: "POST", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toBe("invalid_payload");
  });

  test("a body over MAX_BODY_BYTES by Content-Length is 413 payload_too_large", async () => {
    const call = await coreApp(1024);
    const res = await call("/echo", jsonInit("POST", JSON.stringify({ amount: 1, kind: "credit", pad: "x".repeat(2000) })));
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error).toBe("payload_too_large");
  });

  test("a chunked body with no Content-Length is counted while read", async () => {
    const call = await coreApp(1024);
    const chunk = new TextEncoder().encode("x".repeat(600));
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"amount":1,"kind":"credit","pad":"'));
        c.enqueue(chunk);
        c.enqueue(chunk);
        c.enqueue(new TextEncoder().encode('"}'));
        c.close();
      },
    });
    const req = new Request("http://localhost/echo", { method: "POST", headers: { "content-type": "application/json" }, body: stream });
    expect(req.headers.get("content-length")).toBeNull();
    const res = await call("/echo", { method: "POST", headers: { "content-type": "application/json" }, body: stream, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error).toBe("payload_too_large");
  });

  test("the exact raw body bytes are kept for signature checks", async () => {
    const call = await coreApp();
    const raw = '{ "amount" : 12.5, "kind":"credit" }';
    const res = await call("/echo", jsonInit("POST", raw));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).raw_bytes).toBe(Buffer.byteLength(raw));
  });

  test("a non-JSON content type is 415", async () => {
    const call = await coreApp();
    const res = await call("/echo", { method: "POST", headers: { "content-type": "text/plain" }, body: "amount=1" });
    expect(res.status).toBe(415);
    expect(((await res.json()) as any).error).toBe("unsupported_media_type");
  });

  test("a thrown error is 500 server_error with nothing internal in the body", async () => {
    const lines: string[] = [];
    const call = await coreApp();
    (h.ctx as { log: unknown }).log = createLogger("error", (line) => lines.push(line));
    const res = await call("/boom");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("SELECT");
    expect(text).not.toContain("at ");
    const body = JSON.parse(text);
    expect(body).toMatchObject({ success: false, error: "server_error" });
    expect(body.request_id).toMatch(/^req_/);
    // The operators' log has the detail the caller does not get.
    expect(lines.join("\n")).toContain("SELECT secret FROM partner_keys");
  });
});
