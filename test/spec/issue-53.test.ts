// Issue 53 (the contract partners generate clients from), re-verified the way its outside check worked: walk the
// served document's operations and compare what the server does with what the document says.
// - "429 is missing on 30 public operations that share the public limit": with a public limit of 1 a minute, every
//   operation that answers 429 documents 429.
// - "nosniff everywhere; CSP, frame and referrer policies on every HTML page": on every public GET answer.
// - "14 of them document their 403 without content while sending JSON": no refusal (4xx/5xx) is documented without
//   content, since every refusal Herald makes itself has a body.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { BROWSER_ACCEPT, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";

let h: TestApp;
type Res = { content?: Record<string, unknown>; $ref?: string };
type Op = { security?: unknown[]; responses: Record<string, Res>; requestBody?: unknown };
let doc: { paths: Record<string, Record<string, Op>>; components: { responses: Record<string, Res> } };
beforeAll(async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "1", TRUST_PROXY: "1" } });
  // The document itself is public and limited: fetched from an address of its own.
  doc = (await h.json("/api/openapi.json", { headers: { "x-forwarded-for": "192.0.2.250" } })).body as typeof doc;
});
afterAll(() => h?.close());

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
const SAMPLE: Record<string, string> = { badge: "api", code: "abcdefgh", slug: "quickstart", claim_code: "nope", file: "nope" };
const concrete = (path: string) => path.replace(/\{([^}]+)\}/g, (_, name: string) => SAMPLE[name] ?? "1");

function publicOps() {
  const out: Array<{ path: string; method: string; op: Op }> = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = ops[method];
      if (op && Array.isArray(op.security) && op.security.length === 0) out.push({ path, method, op });
    }
  }
  return out;
}

test("every public operation that answers 429 under the public limit documents 429", async () => {
  const ops = publicOps();
  expect(ops.length).toBeGreaterThan(60);
  const undocumented: string[] = [];
  let limited = 0;
  for (const [i, { path, method, op }] of ops.entries()) {
    const ip = `198.51.${100 + Math.floor(i / 250)}.${(i % 250) + 1}`;
    const init = (): RequestInit => ({
      method: method.toUpperCase(),
      headers: { "x-forwarded-for": ip, ...(method === "get" ? {} : { "content-type": "application/json" }) },
      body: method === "get" ? undefined : "{}",
    });
    await (await h.request(concrete(path), init())).arrayBuffer();
    const second = await h.request(concrete(path), init());
    await second.arrayBuffer();
    if (second.status !== 429) continue;
    limited++;
    if (!("429" in op.responses)) undocumented.push(`${method.toUpperCase()} ${path}`);
  }
  expect(limited).toBeGreaterThan(40);
  expect(undocumented).toEqual([]);
});

test("every public GET answer carries nosniff; every HTML one its CSP, X-Frame-Options and Referrer-Policy", async () => {
  const wrong: string[] = [];
  for (const [i, { path, method }] of publicOps().entries()) {
    if (method !== "get") continue;
    const r = await h.request(concrete(path), { headers: { "x-forwarded-for": `203.0.113.${(i % 250) + 1}`, accept: "text/html,*/*;q=0.8" } });
    await r.arrayBuffer();
    const hd = (n: string) => r.headers.get(n);
    if (hd("x-content-type-options") !== "nosniff") wrong.push(`${path} ${r.status}: no nosniff`);
    // The players' mini-app is framed by Telegram's web client: its CSP's frame-ancestors says by whom (X-Frame-Options
    // cannot name an origin), as test/http/security-headers.test.ts holds.
    const framing = hd("x-frame-options") || hd("content-security-policy")?.includes("frame-ancestors");
    if (hd("content-type")?.includes("text/html") && (!hd("content-security-policy") || !framing || !hd("referrer-policy"))) {
      wrong.push(`${path} ${r.status}: HTML without CSP/XFO/Referrer-Policy`);
    }
  }
  expect(wrong).toEqual([]);
});

test("no refusal is documented without content", () => {
  const bare: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = ops[method];
      if (!op) continue;
      for (const [status, res] of Object.entries(op.responses)) {
        if (!/^[45]\d\d$/.test(status) || status === "431") continue;
        const resolved = res.$ref ? doc.components.responses[res.$ref.split("/").pop()!]! : res;
        if (!resolved.content || Object.keys(resolved.content).length === 0) bare.push(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
  }
  expect(bare).toEqual([]);
});

// "every credential-bearing operation flagged when its credential is missing": each operation whose document names
// a credential it requires refuses a request that carries none (401 or 403, the envelope), whatever its path and body.
test("every operation that declares a credential refuses a request without one", async () => {
  const wrong: string[] = [];
  let checked = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = ops[method];
      // `{}` among the alternatives: the credential is optional (the track bearer in its default mode).
      if (!op || !Array.isArray(op.security) || op.security.length === 0 || op.security.some((s) => Object.keys(s as object).length === 0)) continue;
      checked++;
      const body = method === "get" || method === "delete" ? undefined : "{}";
      const r = await h.request(concrete(path), {
        method: method.toUpperCase(),
        headers: { "x-forwarded-for": `192.0.2.${(checked % 250) + 1}`, ...(body ? { "content-type": "application/json" } : {}) },
        body,
      });
      const text = await r.text();
      if (![401, 403].includes(r.status) || !text.includes('"success":false')) wrong.push(`${method.toUpperCase()} ${path}: ${r.status} ${text.slice(0, 80)}`);
    }
  }
  expect(checked).toBeGreaterThan(150);
  expect(wrong).toEqual([]);
});

// "Six console pages … answer a browser's out-of-range parameter (`/admin/console/403-digest?hours=999`) with raw
// JSON; … re-render the page with the message, as the docs promise for every page": every console page the document
// lists, each integer parameter one past its maximum, asked by a signed-in browser.
test("every console page answers a browser's out-of-range number or unknown enum value with the page (400, HTML) naming the parameter", async () => {
  const cookie = await signedInCookie(h, await createAdminToken(h));
  type P = { name: string; in: string; schema?: { type?: string; maximum?: number; enum?: unknown[] } };
  const wrong: string[] = [];
  let checked = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    const op = ops.get as (Op & { parameters?: P[] }) | undefined;
    if (!op || !path.startsWith("/admin") || path.includes("{") || !op.responses["200"]?.content?.["text/html"]) continue;
    for (const p of op.parameters ?? []) {
      if (p.in !== "query") continue;
      const bad = p.schema?.type === "integer" && p.schema.maximum !== undefined ? String(p.schema.maximum + 1) : p.schema?.enum ? "zz_not_one" : null;
      if (bad === null) continue;
      checked++;
      const r = await h.request(`${path}?${p.name}=${bad}`, { headers: { cookie, accept: BROWSER_ACCEPT } });
      const text = await r.text();
      if (r.status !== 400 || !r.headers.get("content-type")?.includes("text/html") || !text.includes(p.name)) {
        wrong.push(`${path}?${p.name}=${bad}: ${r.status} ${r.headers.get("content-type")}`);
      }
    }
  }
  expect(checked).toBeGreaterThan(10);
  expect(wrong).toEqual([]);
});
