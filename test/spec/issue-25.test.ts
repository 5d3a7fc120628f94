// Issue 25 (the binary that ships answers like the source), re-verified over HTTP: "Against dist/herald built by
// npm run build: GET /api/partner/webhooks/dlq?hours=1e308, hours=-1, ?limit=1e308 on list routes, expires_in=-3
// on audio-share links, size=1e308 on QR codes: 400 with the JSON envelope naming the parameter, never 5xx."
// test/binary/parity.test.ts compares status and code only; this reads the envelope's words too. Run it against the
// binary with HERALD_TEST_TARGET=dist/herald (in process by default).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { dirname, join } from "node:path";
import { readFileSync } from "node:fs";
import { baselineFor } from "../support/fuzz-baseline";
import { operationsOf } from "../support/fuzz-operations";
import { createFuzzTarget } from "../support/fuzz-target";
import { queryString } from "../support/fuzz-variants";
import { createKey, signedInit, type TestKey } from "../support/partner";
import { startTarget, TARGET, type TargetApp } from "../support/target";

let h: TargetApp;
let key: TestKey;
beforeAll(async () => {
  h = await startTarget();
  key = await createKey(h);
});
afterAll(() => h?.stop());

const signed = [
  "/api/partner/webhooks/dlq?hours=1e308",
  "/api/partner/webhooks/dlq?hours=-1",
  "/api/partner/webhooks?limit=1e308",
  "/api/partner/users?limit=1e308",
];
const open = [
  "/api/public/system-status/trend?limit=1e308",
  "/api/public/audio-share-links?track_url=%2Ft&expires_in=-3",
  "/s/audio/abcdefgh/qr.png?size=1e308",
];

describe(`issue 25: bounded numbers refused with the envelope naming the parameter (${TARGET.label})`, () => {
  test.each([...signed, ...open])("%s → 400 invalid_query naming query.<param>", async (path) => {
    const param = path.match(/[?&](hours|limit|expires_in|size)=/)![1]!;
    const init = signed.includes(path) ? signedInit(h, key, "GET", path) : {};
    const res = await h.request(path, init);
    expect(res.headers.get("content-type") ?? "").toContain("application/json");
    const body = (await res.json()) as { success: boolean; error: string; message: string };
    expect({ status: res.status, success: body.success, error: body.error }).toEqual({ status: 400, success: false, error: "invalid_query" });
    expect(body.message).toContain(`query.${param}`);
  });
});

// The outside fuzz found "every bounded numeric query parameter: limit, hours, days, day_offset, …" answered
// 5xx by the minified binary. Each such parameter of the served document, given 1e308 on top of its operation's valid
// request: 400 invalid_query naming it. (include_fields_max is clamped, not refused, by the spec: src/ops/preflight.)
test(`every bounded numeric query parameter given 1e308: 400 invalid_query naming it (${TARGET.label})`, async () => {
  const t = await createFuzzTarget();
  try {
    const ops = operationsOf(await (await t.h.request("/api/openapi.json")).json());
    const wrong: string[] = [];
    let probed = 0;
    for (const op of ops) {
      const numeric = op.parameters.filter((p) => p.in === "query" && ["integer", "number"].includes(p.schema?.type) && p.name !== "include_fields_max");
      if (!numeric.length) continue;
      const base = await baselineFor(op, t);
      const body = op.method !== "GET" && base.body !== undefined ? new TextEncoder().encode(JSON.stringify(base.body)) : undefined;
      for (const p of numeric) {
        probed++;
        const a = await t.send(op, {
          variant: `query.${p.name}=1e308`,
          pathParams: base.pathParams,
          query: queryString({ ...base.query, [p.name]: "1e308" }),
          body,
        });
        const e = a.status === 400 ? (JSON.parse(a.text) as { error: string; message: string }) : null;
        if (e?.error !== "invalid_query" || !e.message.includes(`query.${p.name}`)) wrong.push(`${op.id} query.${p.name}: ${a.status} ${a.text.slice(0, 120)}`);
      }
    }
    expect(probed).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  } finally {
    await t.close();
  }
}, 300_000);

// Issue 25: "Herald's users run dist/herald (README step 4, the Dockerfile, fly.toml)". The Dockerfile's build stage
// copied only package*.json, tsconfig.json, src, drizzle and sdk ("only what the build reads"), but the build also
// embeds files under docs/ (src/developers/portal-pages.ts imports docs/*.md as text, src/http/openapi/samples.ts
// docs/python/herald_sign.py, portal-downloads.ts docs/examples/webhook-receiver.ts through a macro): `npm run build`
// in a folder holding just those copies fails with 'Could not resolve: "../../docs/sdk.md"' and ten more. It copies docs/ now.
const ROOT = join(import.meta.dir, "../..");
test("issue 25: the Dockerfile's build stage copies every repository folder the build embeds files from", () => {
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  const buildStage = dockerfile.split(/^FROM /m)[1] ?? "";
  const copied = new Set(
    [...buildStage.matchAll(/^COPY\s+(?!--from)(.+?)\s+\S+\s*$/gm)].flatMap((m) => m[1]!.split(/\s+/)).map((p) => p.replace(/^\.\//, "").split("/")[0]!),
  );
  const needed = new Set<string>();
  for (const file of new Glob("src/**/*.ts").scanSync(ROOT)) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const m of text.matchAll(/from\s+"((?:\.\.\/)+[^"]+)"\s+with\s+\{\s*type:\s*"(?:text|file)"/g)) {
      const top = join(dirname(file), m[1]!).split("/")[0]!;
      if (top !== "node_modules") needed.add(top);
    }
    for (const m of text.matchAll(/repositoryText\("([^"]+)"\)/g)) needed.add(m[1]!.split("/")[0]!);
  }
  expect([...needed].filter((top) => !copied.has(top)).sort()).toEqual([]);
});
