// Long request targets over a real socket. app.handle never sees Bun's own HTTP limits: a request line longer
// than the runtime's --max-http-header-size (16 KiB by default) is refused by Bun with a bare 431 — empty body,
// no X-Request-ID — before any Herald code runs. So this test starts Herald the way `npm start` does (the
// runtime flags of package.json's start script, read from it) on 127.0.0.1, port 0, and checks that a 20 KB
// query string gets Herald's own JSON refusal on every kind of route (Elysia's, and the native short-link
// door that bypasses Elysia), and that past the raised limit the answer is still a clean 431, not a 5xx, a
// reset or a hang. The server runs on the test run's engine (a SQLite file, or PostgreSQL under
// HERALD_TEST_ENGINE=postgres): the limits are the runtime's, whatever the database.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isErrorCode } from "../../src/http/errors/errors";
import { BUN, exitWithin, MAIN } from "../support/process";
import { type ServedDatabase, servedDatabase } from "../support/served-database";
import { startFlags } from "../support/target";

let dir: string;
let database: ServedDatabase | null = null;
let proc: ReturnType<typeof Bun.spawn> | null = null;
let base = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "herald-fuzz-server-"));
  database = await servedDatabase(dir);
  proc = Bun.spawn([BUN, ...startFlags(), MAIN, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      NODE_ENV: "test",
      ...database.env,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      JOBS_ENABLED: "0",
      BOOTSTRAP_CREDENTIALS: "0",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  // The listening line carries the port the OS chose; bounded in time and in bytes read.
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + 20_000;
  let text = "";
  while (!base && Date.now() < deadline && text.length < 1_000_000) {
    const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)]);
    if (!chunk || chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
    for (const line of text.split("\n")) {
      if (!line.includes('"herald listening"')) continue;
      base = (JSON.parse(line) as { url: string }).url;
    }
  }
  reader.releaseLock();
  if (!base) throw new Error(`herald serve did not report listening within 20 s; stdout: ${text.slice(0, 500)}`);
}, 30_000);

afterAll(async () => {
  if (proc) {
    proc.kill("SIGTERM");
    await exitWithin(proc, 10_000);
  }
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

interface Seen {
  label: string;
  status: number | string;
  ms: number;
  requestId: string | null;
  body: string;
}

async function get(label: string, path: string): Promise<Seen> {
  const started = performance.now();
  try {
    const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(10_000), redirect: "manual" });
    const body = await res.text();
    return { label, status: res.status, ms: performance.now() - started, requestId: res.headers.get("x-request-id"), body };
  } catch (err) {
    return { label, status: `no answer (${(err as Error).name}: ${(err as Error).message})`, ms: performance.now() - started, requestId: null, body: "" };
  }
}

/** What is wrong with a refusal that should be Herald's JSON envelope; null when it is fine. */
function envelopeProblem(s: Seen): string | null {
  if (typeof s.status !== "number") return s.status;
  if (s.ms > 1_000) return `answered in ${Math.round(s.ms)} ms`;
  if (s.status >= 500) return `${s.status}`;
  if (s.status < 400) return null;
  if (s.status === 431 && s.body === "")
    return "a bare 431 from Bun (empty body, no X-Request-ID): the request line never reached Herald — is the server started with a raised --max-http-header-size?";
  let body: any;
  try {
    body = JSON.parse(s.body);
  } catch {
    return `${s.status} with a non-JSON body ${JSON.stringify(s.body.slice(0, 80))}`;
  }
  if (body.success !== false || !isErrorCode(String(body.error)) || typeof body.message !== "string" || typeof body.request_id !== "string") {
    return `${s.status} body is not the envelope with a catalog code: ${s.body.slice(0, 120)}`;
  }
  if (!s.requestId) return `${s.status} without X-Request-ID`;
  return null;
}

const pad = (bytes: number) => `pad=${"q".repeat(bytes)}`;

test(`a 20 KB query string gets Herald's JSON refusal over a real socket (runtime flags: ${startFlags().join(" ") || "none"})`, async () => {
  const healthy = await get("GET /healthz", "/healthz");
  expect(healthy.status).toBe(200);
  const seen = [
    await get("GET /healthz (public)", `/healthz?${pad(20 * 1024)}`),
    await get("GET /api/partner/users (signed route, unsigned)", `/api/partner/users?limit=10&${pad(20 * 1024)}`),
    await get("GET /admin/jobs (admin route, no token)", `/admin/jobs?${pad(20 * 1024)}`),
    await get("GET /s/audio/{code} (native redirect door)", `/s/audio/abcdefghijklmnop?${pad(20 * 1024)}`),
  ];
  const problems = seen.map((s) => [s, envelopeProblem(s)] as const).filter(([, p]) => p !== null);
  if (problems.length) {
    throw new Error(["20 KB query string:", ...problems.map(([s, p]) => `  ${s.label} → ${s.status} in ${Math.round(s.ms)} ms: ${p}`)].join("\n"));
  }
}, 30_000);

test("a query string past the runtime's header limit is a clean 431 (or Herald's refusal), never a 5xx, reset or hang", async () => {
  const s = await get("GET /healthz with a 70 KB query", `/healthz?${pad(70 * 1024)}`);
  const clean431 = s.status === 431;
  const problem = clean431 ? null : envelopeProblem(s);
  if (problem) throw new Error(`${s.label} → ${s.status} in ${Math.round(s.ms)} ms: ${problem}`);
  // The server is still serving afterwards.
  expect((await get("GET /healthz", "/healthz")).status).toBe(200);
}, 30_000);
