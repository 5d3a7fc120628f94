/**
 * docs/partner-auth.md's worked example is checked against the code: the canonical strings, body hash and
 * signatures in the page come out of src/client/sign.ts, the server's verifySignature accepts them, the page's
 * openssl recipe and TypeScript snippet print the same signature, and the page's HTTP request passes the real
 * partner guard at the example's time.
 *
 * The page marks what this test reads with fenced-block info strings: ```text canonical-post, ```text
 * signature-post, ```json body-post, ```http request-post, ```bash openssl-post, ```ts sign-example, etc.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Elysia, t } from "elysia";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildGuards } from "../../src/auth/guards";
import { verifySignature } from "../../src/auth/signature";
import { canonicalString, EMPTY_BODY_SHA256, newNonce, sha256Hex, signRequest } from "../../src/client/sign";
import { httpCore, RequestStates } from "../../src/http/core";
import { RouteIndex } from "../../src/http/routes/route-index";
import { openTestApp, type TestApp } from "../support/app";
import { REPO_ROOT } from "../support/process";
import { reportOptional } from "../support/skipped";

// Two tests spawn bash/bun; bun's default per-test timeout (5 s) is tight on a loaded machine.
setDefaultTimeout(30_000);

const DOC_PATH = join(REPO_ROOT, "docs", "partner-auth.md");
const doc = readFileSync(DOC_PATH, "utf8");

/** The content of the ONE fenced block whose info string is `<lang> <marker>` (without the final newline). */
function block(marker: string): string {
  const lines = doc.split("\n");
  const starts = lines.flatMap((l, i) => (/^```\S+ (\S+)$/.exec(l)?.[1] === marker ? [i] : []));
  if (starts.length !== 1) throw new Error(`docs/partner-auth.md must have exactly one fenced block marked "${marker}", found ${starts.length}`);
  const start = starts[0]!;
  const end = lines.findIndex((l, i) => i > start && l === "```");
  if (end === -1) throw new Error(`the "${marker}" block in docs/partner-auth.md is not closed`);
  return lines.slice(start + 1, end).join("\n");
}

// docs/design.md §3's vector: the inputs are fixed here, so the page cannot drift from them unnoticed.
const KEY_ID = "hk_test_0123456789abcdef01234567";
const SECRET = "hsk_test_secret_0123456789abcdef";
const TIMESTAMP = "1767225600";
const NONCE = "9f86d081884c7d659a2feaa0c55ad015";
const BODY = '{"user_id":"42","amount":12.5,"reason":"quest","source":"partner-app"}';
const POST = { method: "POST", target: "/api/salutes/credit", timestamp: TIMESTAMP, nonce: NONCE, body: BODY };
const GET = { method: "GET", target: "/api/salutes/balance?user_id=42", timestamp: TIMESTAMP, nonce: null, body: null };
const DESIGN_POST_SIGNATURE = "36cd6fd54abb4f70c1226b2e3bb58415b950ca152f9d6da0e1f575793266947d";
const DESIGN_GET_SIGNATURE = "95695bf61005c23b37fd3e3af288b164df2355cbeb6b3d975d5308608f6687e4";

const HEX64 = /^[0-9a-f]{64}$/;
const documented = {
  body: block("body-post"),
  bodySha256: block("body-sha256-post").trim(),
  canonicalPost: block("canonical-post"),
  signaturePost: block("signature-post").trim(),
  canonicalGet: block("canonical-get"),
  signatureGet: block("signature-get").trim(),
};

describe("docs/partner-auth.md worked example", () => {
  test("the page shows docs/design.md's vector: its body, the body's sha256 and both signatures", () => {
    expect(documented.body).toBe(BODY);
    expect(documented.bodySha256).toMatch(HEX64);
    expect(documented.bodySha256).toBe(sha256Hex(BODY));
    expect(documented.bodySha256).toStartWith("340fda32");
    expect(documented.signaturePost).toBe(DESIGN_POST_SIGNATURE);
    expect(documented.signatureGet).toBe(DESIGN_GET_SIGNATURE);
  });

  test("canonicalString() builds exactly the documented canonical strings", () => {
    expect(canonicalString(POST)).toBe(documented.canonicalPost);
    expect(canonicalString(GET)).toBe(documented.canonicalGet);
    // Five fields, an empty nonce line on the read, no trailing newline.
    expect(documented.canonicalPost.split("\n")).toEqual(["POST", POST.target, TIMESTAMP, NONCE, documented.bodySha256]);
    expect(documented.canonicalGet.split("\n")).toEqual(["GET", GET.target, TIMESTAMP, "", EMPTY_BODY_SHA256]);
  });

  test("signRequest() gives the documented signatures and headers", () => {
    const post = signRequest({ keyId: KEY_ID, secret: SECRET, ...POST });
    expect(post.canonical).toBe(documented.canonicalPost);
    expect(post.signature).toBe(documented.signaturePost);
    expect(post.headers).toEqual({
      "X-Partner-Key": KEY_ID,
      "X-Partner-Timestamp": TIMESTAMP,
      "X-Partner-Signature": documented.signaturePost,
      "X-Partner-Nonce": NONCE,
    });
    const get = signRequest({ keyId: KEY_ID, secret: SECRET, ...GET });
    expect(get.canonical).toBe(documented.canonicalGet);
    expect(get.signature).toBe(documented.signatureGet);
    expect(get.headers["X-Partner-Nonce"]).toBeUndefined();
  });

  test("the server's verifySignature accepts the documented signatures (any hex case) and only under the secret", () => {
    const post = { ...POST, body: new TextEncoder().encode(BODY) };
    expect(verifySignature([SECRET], documented.signaturePost, post)).toBe(true);
    expect(verifySignature([SECRET], documented.signaturePost.toUpperCase(), post)).toBe(true);
    expect(verifySignature(["hsk_test_some_other_secret"], documented.signaturePost, post)).toBe(false);
    expect(verifySignature([SECRET], documented.signaturePost, { ...post, target: "/api/salutes/credit?" })).toBe(false);
    expect(verifySignature([SECRET], documented.signatureGet, GET)).toBe(true);
    expect(verifySignature([SECRET], documented.signatureGet, { ...GET, nonce: NONCE })).toBe(false);
  });
});

const openssl = Bun.which("openssl");
if (!openssl) reportOptional("test/auth/docs-example.test.ts", "openssl recipe", "openssl is not on PATH");

async function bash(script: string): Promise<{ stdout: string; stderr: string; code: number }> {
  const p = Bun.spawn(["bash", "-c", script], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "" } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

describe("the page's recipes print the documented signatures", () => {
  test.skipIf(!openssl)("openssl recipe (skipped when openssl is not installed)", async () => {
    const post = await bash(block("openssl-post"));
    expect(post.stderr).toBe("");
    expect(post.code).toBe(0);
    expect(post.stdout.trim()).toBe(documented.signaturePost);
    const get = await bash(block("openssl-get"));
    expect(get.code).toBe(0);
    expect(get.stdout.trim()).toBe(documented.signatureGet);
  });

  const tmp = mkdtempSync(join(tmpdir(), "herald-docs-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  test("TypeScript signRequest snippet", async () => {
    const snippet = block("sign-example");
    expect(snippet).toContain('from "./src/client/sign"');
    const file = join(tmp, "sign-example.ts");
    writeFileSync(file, snippet.replaceAll('"./src/client/', `"${join(REPO_ROOT, "src", "client")}/`));
    const p = Bun.spawn([process.execPath, file], { stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(documented.bodySha256);
    expect(stdout).toContain(documented.canonicalPost);
    expect(lines.at(-1)).toBe(documented.signaturePost);
  });
});

/** Parses the page's ```http block: request line, headers, blank line, body. */
function documentedRequest() {
  const [head, body] = block("request-post").split("\n\n") as [string, string];
  const [requestLine, ...headerLines] = head.split("\n");
  const [method, target] = requestLine!.split(" ") as [string, string];
  const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]));
  return { method, target, headers, body };
}

describe("the page's HTTP request passes the real partner guard at the example's time", () => {
  // FakeClock starts at 2026-01-01T00:00:00Z = 1767225600, the example's timestamp.
  let h: TestApp;
  let app: ReturnType<typeof guardedCredits>;
  afterAll(async () => {
    await h?.close();
  });
  const credits = async () => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM credits"))!.n;

  // The signing vector's paths, guarded for sandbox keys (the key in the example is hk_test_); each credit is a
  // row of a scratch table, written in the idempotency transaction.
  function guardedCredits(t0: TestApp) {
    const states = new RequestStates();
    const routes = new RouteIndex();
    const guards = buildGuards(t0.ctx, states);
    const built = new Elysia()
      .use(httpCore(t0.ctx, states, routes))
      .use(guards.partner.plugin)
      .post(
        "/api/salutes/credit",
        ({ partner, body }) =>
          guards.partner.idempotency.run(partner.idempotency, async (tx) => {
            const row = await tx.get<{ id: number }>("INSERT INTO credits (user_id, amount) VALUES (?, ?) RETURNING id", [body.user_id, body.amount]);
            return { success: true as const, credit_id: row!.id };
          }),
        {
          partner: { scope: "credit", mutation: true, mode: "sandbox" },
          body: t.Object({ user_id: t.String(), amount: t.Number(), reason: t.String(), source: t.String() }),
        },
      )
      .get("/api/salutes/balance", ({ query }) => ({ success: true as const, user_id: query.user_id }), { partner: { scope: "read", mode: "sandbox" } });
    routes.load(built.routes);
    return built;
  }

  beforeAll(async () => {
    h = await openTestApp();
    const now = h.clock.now().toISOString();
    await h.ctx.store.run(
      "INSERT INTO partner_keys (key_id, partner, mode, scopes, allowed_ips, status, secret_ciphertext, created_at, updated_at) VALUES (?, 'Docs', 'sandbox', 'credit,read', '', 'active', ?, ?, ?)",
      [KEY_ID, h.ctx.secrets.seal(SECRET, KEY_ID), now, now],
    );
    // The one column type the two dialects spell differently: an auto-numbered key.
    const id = h.ctx.store.dialect === "postgres" ? "id bigserial PRIMARY KEY" : "id INTEGER PRIMARY KEY";
    await h.ctx.store.run(`CREATE TABLE credits (${id}, user_id TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)`);
    app = guardedCredits(h);
  });
  const send = async (target: string, init: RequestInit) => {
    const res = await app.handle(new Request(`http://localhost${target}`, init));
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };

  test("POST as documented → 200; the same bytes again → 409 replay_detected; re-signed, same key → 409 idempotency_replay", async () => {
    const req = documentedRequest();
    expect(req).toMatchObject({ method: "POST", target: POST.target, body: BODY });
    expect(req.headers).toMatchObject({
      "X-Partner-Key": KEY_ID,
      "X-Partner-Timestamp": TIMESTAMP,
      "X-Partner-Nonce": NONCE,
      "X-Partner-Signature": documented.signaturePost,
    });
    const { Host: _host, ...headers } = req.headers;

    const first = await send(req.target, { method: req.method, headers, body: req.body });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, credit_id: 1 });

    // §9: a reused nonce is a replay, whatever the Idempotency-Key says.
    const replayed = await send(req.target, { method: req.method, headers, body: req.body });
    expect(replayed.status).toBe(409);
    expect(replayed.body.error).toBe("replay_detected");

    // §11: a retry re-signs with a new nonce (and timestamp) but keeps the Idempotency-Key → no second effect.
    const retry = signRequest({
      keyId: KEY_ID,
      secret: SECRET,
      method: "POST",
      target: POST.target,
      body: BODY,
      timestamp: Number(TIMESTAMP) + 1,
      nonce: newNonce(),
    });
    const again = await send(req.target, {
      method: "POST",
      headers: { ...retry.headers, "Idempotency-Key": headers["Idempotency-Key"]!, "Content-Type": "application/json" },
      body: BODY,
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: "idempotency_replay", original_status: 200, original_response: { success: true, credit_id: 1 } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await credits()).toBe(1);
  });

  test("GET as documented (no nonce) → 200", async () => {
    const res = await send(GET.target, {
      headers: { "X-Partner-Key": KEY_ID, "X-Partner-Timestamp": TIMESTAMP, "X-Partner-Signature": documented.signatureGet },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, user_id: "42" });
    expect(res.headers.get("x-ratelimit-limit")).toBe("30"); // sandbox keys: 30 per minute (§10)
  });
});
