// Issue 72 (reads that cost the same at 10M rows), re-verified: "Bounded offsets: offset paging beyond a documented
// limit answers 400 with a catalog code that names the cursor to use instead; the limit in the OpenAPI document."
// test/http/pagination.test.ts checks four lists over HTTP; this walks every list whose offset the served document
// says is limited, and sends each the first offset past the limit.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAX_OFFSET } from "../../src/http/pagination";
import { openTestApp, type TestApp } from "../support/app";
import { messengerEnv } from "../messenger/support";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";

let h: TestApp;
let live: TestKey;
let sandbox: TestKey;
let admin: Record<string, string>;
beforeAll(async () => {
  h = await openTestApp({ env: messengerEnv() });
  live = await createKey(h);
  sandbox = await createKey(h, { mode: "sandbox" });
  admin = { authorization: `Bearer ${await createAdminToken(h)}` };
});
afterAll(() => h?.close());

type Param = { name: string; in: string; description?: string; schema?: { description?: string } };
type Op = { parameters?: Param[]; security?: Array<Record<string, unknown>> };

/** GET lists without path parameters whose offset the document says is refused past MAX_OFFSET. */
async function limitedLists(): Promise<Array<{ path: string; op: Op }>> {
  const doc = (await h.json("/api/openapi.json")).body as { paths: Record<string, Record<string, Op>> };
  const out: Array<{ path: string; op: Op }> = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    const op = ops.get;
    if (!op || path.includes("{")) continue;
    const offset = op.parameters?.find((p) => p.name === "offset" && p.in === "query");
    const text = `${offset?.description ?? ""} ${offset?.schema?.description ?? ""}`;
    if (text.includes("offset_too_large")) out.push({ path, op });
  }
  return out;
}

async function call(path: string, op: Op, offset: number) {
  const target = `${path}?offset=${offset}`;
  const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
  if (schemes.includes("PartnerKey")) return signedJson(h, path.startsWith("/api/partner/sandbox/") ? sandbox : live, "GET", target);
  return h.json(target, { headers: admin });
}

test("every list the document says is limited answers at the limit and refuses past it with offset_too_large naming the cursor", async () => {
  const lists = await limitedLists();
  expect(lists.length).toBeGreaterThan(4);
  const wrong: string[] = [];
  for (const { path, op } of lists) {
    // Lists that need more than an offset (a required query parameter) answer 400 for that first: not judged here.
    if (op.parameters?.some((p) => p.in === "query" && (p as { required?: boolean }).required)) continue;
    const at = await call(path, op, MAX_OFFSET);
    const past = await call(path, op, MAX_OFFSET + 1);
    const pastCode = (past.body as { error?: string }).error;
    const pastMessage = String((past.body as { message?: string }).message ?? "");
    if (at.status !== 200) wrong.push(`${path}: offset=${MAX_OFFSET} answered ${at.status} ${(at.body as { error?: string }).error}`);
    if (past.status !== 400 || pastCode !== "offset_too_large" || !pastMessage.includes("cursor")) {
      wrong.push(`${path}: offset=${MAX_OFFSET + 1} answered ${past.status} ${pastCode ?? ""}`);
    }
  }
  expect(wrong).toEqual([]);
});
