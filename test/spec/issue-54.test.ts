// Issue 54 claims that did not hold (each test failed before its fix): every engine-only skip named in the runner's
// NOT RUN block, and a sandbox key's wrong-mode 403 naming every route it works on.
import { expect, setDefaultTimeout, test } from "bun:test";
import { openTestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { BUN, exitWithin, REPO_ROOT } from "../support/process";

setDefaultTimeout(120_000);

// Issue 54, item 3: "Name every skip and why in the summary"; README "Test it": "Every test that did not run is named
// at the end, in a `NOT RUN:` block, with why and the command that runs it". test/ops/monitoring.test.ts skips its
// PostgreSQL pool test on the SQLite pass with a bare `test.skipIf(testEngine() !== "postgres")` (so does
// test/conventions/internals.test.ts's "Bun's SQL client on PostgreSQL" block): bun counts "1 skip", and the runner
// prints no NOT RUN block at all. Fix: skip them through test/support/skipped.ts (the `engine` kind), as the other
// engine-only tests do.
test("issue 54: npm test's runner names an engine-only test that did not run on the SQLite pass", async () => {
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  delete env.HERALD_TEST_ENGINE;
  delete env.HERALD_SKIPPED_REPORT;
  const p = Bun.spawn([BUN, "run", "test/run.ts", "test/ops/monitoring.test.ts"], { cwd: REPO_ROOT, env, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  expect(await exitWithin(p, 110_000)).toBe(0);
  const output = out + err;
  // bun ran the file and skipped the PostgreSQL-only test ...
  expect(output).toContain("(skip) the PostgreSQL pool's use and its exhaustion are counted as they happen");
  // ... so the runner's summary must name it.
  expect(output).toContain("NOT RUN:");
  expect(output.slice(output.indexOf("NOT RUN:"))).toContain("the PostgreSQL pool's use and its exhaustion are counted as they happen");
});

// Issue 54 ("the banner says what each credential may call"; README step 1: a sandbox key may call "only the sandbox
// routes, /api/partner/sandbox/*", and "a key used on the other mode's routes gets 403 forbidden naming the routes it
// does work on"). Since 692963b (2026-11-29) a sandbox key is also answered by /api/partner/status and
// /api/partner/analytics/usage (and always was by /api/partner/capabilities), yet the 403 it gets on a live route
// (src/auth/partner-request.ts:83, wrongModeMessage) and the first-start banner (src/auth/first-start.ts:128) still say
// it works only under /api/partner/sandbox/. Fix: name those three routes in the message, the banner and README's
// table (or keep one list of "any key" routes and print it).
test("issue 54: a sandbox key's wrong-mode 403 names every route it does work on", async () => {
  const h = await openTestApp();
  try {
    const sandbox = await createKey(h, { mode: "sandbox" });
    expect((await signedJson(h, sandbox, "GET", "/api/partner/status")).status).toBe(200);
    const refused = await signedJson(h, sandbox, "GET", "/api/partner/token-status");
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain("/api/partner/status");
  } finally {
    await h.close();
  }
});

test("the routes the wrong-mode 403 names for a sandbox key are exactly those the document marks for either mode", async () => {
  const { ANY_KEY_ROUTES } = await import("../../src/auth/partner-request");
  const h = await openTestApp();
  try {
    const doc = (await h.json("/api/openapi.json")).body;
    const either = Object.entries(doc.paths as Record<string, Record<string, { description?: string }>>)
      .filter(([, ops]) => Object.values(ops).some((op) => op?.description?.includes("Signed partner route (live or sandbox keys")))
      .map(([path]) => path);
    expect(either.sort()).toEqual([...ANY_KEY_ROUTES].sort());
  } finally {
    await h.close();
  }
});
