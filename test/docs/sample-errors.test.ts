import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken, createKey, type TestKey } from "../support/partner";
import { BUN, MAIN, REPO_ROOT } from "../support/process";
import { reportOptional } from "../support/skipped";

// The code samples show Herald's refusals, not only its successes (issue 74, item 3): every sample language the
// project ships — the x-codeSamples of /api/openapi.json (curl, TypeScript, Python; src/http/openapi/samples.ts) and
// the Python signer they import (docs/python/herald_sign.py) — run as printed against a real Herald on 127.0.0.1,
// once for a success and once for a 4xx, and what they print names Herald's `error` code, its message and the
// request id. Before, the Python samples ended a 404 in urllib's HTTPError traceback, without the code. Runs on
// either engine (HERALD_TEST_ENGINE).

const PYTHON = Bun.which("python3");
const CURL = Bun.which("curl");
if (!PYTHON) reportOptional("test/docs/sample-errors.test.ts", "the Python samples' refusals", "python3 is not on PATH");
if (!CURL) reportOptional("test/docs/sample-errors.test.ts", "the curl samples' refusals", "curl is not on PATH");

type Json = Record<string, any>;
let h: TestApp;
let key: TestKey;
let admin: string;
let base = "";
let doc: { paths: Record<string, Record<string, Json>> };
const dir = mkdtempSync(join(tmpdir(), "herald-sample-errors-"));

beforeAll(async () => {
  // The server's clock is now: the samples sign with the real time.
  h = await openTestApp({ clock: new FakeClock(new Date()) });
  key = await createKey(h, { mode: "live" });
  admin = await createAdminToken(h);
  h.app.listen({ hostname: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${h.app.server!.port}`;
  doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as typeof doc;
  // `herald` as a partner has it, for the curl samples: the CLI, here run from source.
  writeFileSync(join(dir, "herald"), `#!/bin/sh\nexec ${JSON.stringify(BUN)} ${JSON.stringify(MAIN)} "$@"\n`, { mode: 0o755 });
}, 60_000);
afterAll(async () => {
  await h.app.server?.stop(true);
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The sample of `lang` for an operation, pointed at this server. */
function sample(path: string, method: string, lang: "shell" | "typescript" | "python"): string {
  const samples = doc.paths[path]![method]!["x-codeSamples"] as Array<{ lang: string; source: string }>;
  return samples.find((s) => s.lang === lang)!.source.replaceAll("http://localhost:3000", base);
}

/** Runs a sample file as a partner would, asynchronously (the server answers from this process's event loop). */
async function run(file: string, source: string, argv: string[], env: Record<string, string> = {}) {
  writeFileSync(join(dir, file), source);
  const p = Bun.spawn([...argv, join(dir, file)], {
    env: {
      ...process.env,
      PATH: `${dir}:${process.env.PATH}`,
      PYTHONPATH: join(REPO_ROOT, "docs", "python"),
      HERALD_KEY_ID: key.keyId,
      HERALD_SECRET: key.secret,
      HERALD_ADMIN_TOKEN: admin,
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out, err };
}

const REQUEST_ID = /\(request_id req_[A-Za-z0-9_-]+\)/;
const USER = "/api/partner/users/{user_id}"; // user 42: none in a fresh database (the one created is 1), so 404 not_found
// The SDK tarball by another name than the one this server has: 404 not_found (a public route whose 200 is a file).
const TARBALL = "/developers/sdk/{file}";

describe.skipIf(!PYTHON)("Python", () => {
  test("a signed route's sample prints the answer; refused, it exits 1 with Herald's code, message and request id", async () => {
    const created = await run("create.py", sample("/api/partner/users", "post", "python"), [PYTHON!]);
    expect([created.code, created.err]).toEqual([0, ""]);
    expect(created.out).toContain("'external_id': 'player-1001'");
    const missing = await run("missing.py", sample(USER, "get", "python"), [PYTHON!]);
    expect([missing.code, missing.out]).toEqual([1, ""]);
    expect(missing.err).toStartWith('404 not_found: user "42" was not found');
    expect(missing.err).toMatch(REQUEST_ID);
    expect(missing.err).not.toContain("Traceback");
  }, 60_000);

  test("a public and an operator route's samples: the same, from urllib's HTTPError and its JSON body", async () => {
    const tarball = await run("tarball.py", sample(TARBALL, "get", "python"), [PYTHON!]);
    expect([tarball.code, tarball.out]).toEqual([1, ""]);
    expect(tarball.err).toMatch(/^404 not_found: SDK tarball "FILE" was not found \(request_id req_[A-Za-z0-9_-]+\)\n$/);
    const status = await run("status.py", sample("/api/public/system-status", "get", "python"), [PYTHON!]);
    expect([status.code, status.err]).toEqual([0, ""]);
    expect(status.out).toContain("'success': True");
    const jobs = await run("jobs.py", sample("/admin/jobs", "get", "python"), [PYTHON!], { HERALD_ADMIN_TOKEN: "hat_not_a_token" });
    expect([jobs.code, jobs.err.split(":")[0]]).toEqual([1, "403 forbidden"]);
    expect(jobs.err).toMatch(REQUEST_ID);
  }, 60_000);

  test("herald() raises HeraldError with the status, the code, the message, the request id and the body", async () => {
    const script = [
      "import json, os",
      "from herald_sign import herald, HeraldError",
      "try:",
      `    herald("GET", "${base}/api/partner/users/42")`,
      "except HeraldError as e:",
      "    print(json.dumps({'status': e.status, 'code': e.code, 'message': e.message, 'request_id': e.request_id, 'body': e.body, 'text': str(e)}))",
    ].join("\n");
    const r = await run("raise.py", script, [PYTHON!]);
    expect([r.code, r.err]).toEqual([0, ""]);
    const e = JSON.parse(r.out);
    expect([e.status, e.code, e.body.success, e.body.error]).toEqual([404, "not_found", false, "not_found"]);
    expect(e.request_id).toMatch(/^req_/);
    expect(e.text).toBe(`404 not_found: ${e.message} (request_id ${e.request_id})`);
  }, 60_000);
});

test("TypeScript: a signed route's sample prints the answer; refused, it prints HeraldApiError's status, code, message and request id", async () => {
  // The published package's name is resolved to this repository's client (what the SDK tarball ships).
  const client = JSON.stringify(join(REPO_ROOT, "src", "client", "index.ts"));
  const ts = (path: string, method: string) => sample(path, method, "typescript").replace('"@herald/client"', client);
  const caps = await run("caps.ts", ts("/api/partner/capabilities", "get"), [BUN]);
  expect([caps.code, caps.err]).toEqual([0, ""]);
  expect(caps.out).toContain(key.keyId);
  const missing = await run("missing.ts", ts(USER, "get"), [BUN]);
  expect([missing.code, missing.out]).toEqual([1, ""]);
  expect(missing.err).toMatch(/^404 not_found user "42" was not found req_[A-Za-z0-9_-]+\n$/);
  // A public route's fetch sample prints the status and the refusal's body.
  const tarball = await run("tarball.ts", sample(TARBALL, "get", "typescript"), [BUN]);
  expect(tarball.code).toBe(0);
  expect(tarball.out).toStartWith("404 ");
  expect(JSON.parse(tarball.out.slice(4)).error).toBe("not_found");
}, 60_000);

test.skipIf(!CURL)(
  "curl: a signed route's sample prints the refusal's body, with its error code and request id",
  async () => {
    const missing = await run("missing.sh", sample(USER, "get", "shell"), ["bash"]);
    expect(missing.code).toBe(0);
    const body = JSON.parse(missing.out);
    expect([body.success, body.error]).toEqual([false, "not_found"]);
    expect(body.request_id).toMatch(/^req_/);
  },
  60_000,
);
