import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTestApp, type TestApp } from "../support/app";
import { REPO_ROOT } from "../support/process";

// What a partner's generator makes of the served documents: openapi-typescript (the real tool, pinned as a dev
// dependency) over /api/openapi.json and /api/openapi-transparency.yaml, then a small program that uses the named
// types, compiled with `tsc --strict --noEmit`. `@ts-expect-error` lines prove the types are exact (a string
// user id, a code outside the catalog or a 409 code on a 404 are compile errors).

const BIN = join(REPO_ROOT, "node_modules", ".bin");
const dir = mkdtempSync(join(tmpdir(), "herald-openapi-types-"));
let h: TestApp | undefined;
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(cmd: string[]): { code: number; out: string } {
  const p = Bun.spawnSync(cmd, { cwd: dir, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode ?? -1, out: `${p.stdout.toString()}${p.stderr.toString()}` };
}

const USES = `
import type { components, paths } from "./herald";
import type { components as publicComponents, paths as publicPaths } from "./herald-public";

type Schemas = components["schemas"];
type User = Schemas["User"];
const user: User = {
  id: 42, external_id: "player-1001", username: "ada", display_name: "", email: "", status: "active",
  is_verified: false, wallet_address: "", created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z",
  wallets: [{ blockchain: "solana", wallet_address: "4Nd1", label: "", is_primary: 1, verified: 0, verified_at: null, is_hidden: 0, session_connected_at: null }],
};
const id: number = user.id;
// @ts-expect-error user.id is an integer, never text
const textId: User = { ...user, id: "42" };

const created: paths["/api/partner/users"]["post"]["responses"][201]["content"]["application/json"] = { success: true, external_id: "player-1001", user };
const listed: Schemas["User"][] = [created.user];

const webhookId: number = ({} as Schemas["Webhook"]).id;
const deliveryWebhook: number = ({} as Schemas["WebhookEvent"]).webhook_id;
const entry: Schemas["LedgerEntry"] = { id: 1, user_id: "42", delta: 12.5, balance_after: 12.5, reason: "quest_reward", source: "game.arena", created_at: "2026-01-01T00:00:00Z" };
const balance: number = ({} as Schemas["Balance"]).balance;
const claim: string = ({} as Schemas["DonationClaim"]).claim_code;
const key: Schemas["PartnerKey"]["mode"] = "live";
const page: Schemas["Pagination"] = { has_more: false, next_offset: null, next_cursor: null };
const incident: number = ({} as Schemas["Incident"]).id;

const code: Schemas["ErrorCode"] = "not_found";
// @ts-expect-error not a code of the catalog
const unknownCode: Schemas["ErrorCode"] = "no_such_code";
const failure: Schemas["Error"] = { success: false, error: "rate_limited", message: "slow down", request_id: "req_1" };
type NotFoundBody = components["responses"]["NotFound"]["content"]["application/json"];
const notFound: NotFoundBody["error"] = "not_found";
// @ts-expect-error a 404 never carries a 409 code
const wrongStatus: NotFoundBody["error"] = "conflict";

// A signed mutation's 409 is typed: narrowed on its code, the replay carries the first answer's status and body.
type CreditConflict = paths["/api/salutes/credit"]["post"]["responses"][409]["content"]["application/json"];
function replayed(conflict: CreditConflict): number | null {
  if (conflict.error !== "idempotency_replay") {
    // @ts-expect-error only the replay carries the first answer
    return conflict.original_status;
  }
  const first: { [key: string]: unknown } = conflict.original_response;
  return first ? conflict.original_status : null;
}
const replay: Schemas["IdempotencyReplay"] = {
  success: false, error: "idempotency_replay", message: "done before", request_id: "req_1", original_status: 200, original_response: { success: true },
};
// @ts-expect-error original_status is an integer, never text
const textStatus: Schemas["IdempotencyReplay"] = { ...replay, original_status: "200" };
// @ts-expect-error a replay is never answered without the first answer's body
const noBody: Schemas["IdempotencyReplay"] = { success: false, error: "idempotency_replay", message: "m", request_id: "r", original_status: 200 };

const status: publicComponents["schemas"]["SystemStatus"]["overall"] = "ok";
type PublicStatus = publicPaths["/api/public/system-status"]["get"]["responses"][200]["content"]["application/json"];
const overall: PublicStatus["overall"] = status;

export const used = [id, textId, listed, webhookId, deliveryWebhook, entry, balance, claim, key, page, incident, code, unknownCode, failure, notFound, wrongStatus, overall, replayed, replay, textStatus, noBody];
`;

test("openapi-typescript makes named types of both served documents, and a program using them compiles under tsc --strict", async () => {
  h = await openTestApp();
  writeFileSync(join(dir, "openapi.json"), await (await h.request("/api/openapi.json")).text());
  writeFileSync(join(dir, "openapi-transparency.yaml"), await (await h.request("/api/openapi-transparency.yaml")).text());

  for (const [input, output] of [
    ["openapi.json", "herald.d.ts"],
    ["openapi-transparency.yaml", "herald-public.d.ts"],
  ] as const) {
    const gen = run([join(BIN, "openapi-typescript"), input, "-o", output]);
    expect(gen.code, gen.out).toBe(0);
  }
  const types = readFileSync(join(dir, "herald.d.ts"), "utf8");
  for (const name of [
    "User",
    "WalletLink",
    "Webhook",
    "WebhookEvent",
    "LedgerEntry",
    "Balance",
    "Conversion",
    "DonationClaim",
    "PartnerKey",
    "Incident",
    "SystemStatus",
    "ShareLink",
    "Error",
    "ErrorCode",
  ]) {
    expect(types).toMatch(new RegExp(`^\\s{8}${name}: `, "m"));
  }
  expect(types).toMatch(/^\s{8}User: \{\n\s+id: number;/m);

  writeFileSync(join(dir, "uses.ts"), USES);
  const tsc = run([
    join(BIN, "tsc"),
    "--strict",
    "--noEmit",
    "--target",
    "es2022",
    "--module",
    "esnext",
    "--moduleResolution",
    "bundler",
    "--noUnusedLocals",
    "false",
    "uses.ts",
  ]);
  expect(tsc.out).toBe("");
  expect(tsc.code).toBe(0);
}, 120_000);
