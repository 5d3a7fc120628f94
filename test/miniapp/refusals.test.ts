import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REFUSALS } from "../../src/miniapp/browser/refusals";
import type { TestApp } from "../support/app";
import { openMessengerApp } from "../messenger/support";

// The mini-app's advice against what its routes can answer. Every code a route the page calls can refuse with — the
// codes of each error status the served OpenAPI document declares for the route (and 500, its `default`), among the
// catalog's codes of the messenger's endpoint group (errors.json) — either has the player's words
// (src/miniapp/browser/refusals.ts) or is listed below with the reason the generic message ("Something went wrong:
// try again in a moment") is the right one. A new refusal on the server fails here until it is given one or the other.

/** Codes the page answers with the generic message on purpose, and why. */
const GENERIC: Record<string, string> = {
  invalid_payload: "the page sends only bodies it built and checked (a promo code's shape first): a refusal is the page's fault",
  invalid_query: "the page's only query is the history's fixed limit",
  offset_too_large: "the page reads no list by offset or cursor",
  unauthorized: "a partner's or operator's credential; a player's init data is refused with the init_data_* codes",
  forbidden: "operator routes and download links; the page's routes refuse a player with codes of their own",
  not_found: "a path no route serves: the page calls only mounted routes",
  webhook_secret_invalid: "the bot webhook's (Telegram's posts): the page never calls it",
  campaign_not_found: "operator routes: campaigns are edited there",
  audience_group_not_found: "operator routes: audience groups are edited there",
  player_not_found: "operator routes: a player is looked up there",
  campaign_overlap: "operator routes: campaigns are edited there",
  promo_cap_below_claims: "operator routes: promos are edited there",
  revision_conflict: "operator routes: missions are edited there",
  payload_too_large: "the page's bodies are a few hundred bytes",
  uri_too_long: "the page's paths are short and fixed",
  unsupported_media_type: "the page always sends JSON",
  master_key_mismatch: "the service cannot read its own secrets: nothing a player can do or wait for, the operators must act",
  server_error: "the server's own fault: nothing the player did, and trying again is the advice",
};
/** The page's own codes (refusals.ts PageErrorCode) with words: a call that got no answer. */
const PAGE_CODES_WITH_WORDS = ["timeout", "network"];

const BROWSER = join(import.meta.dir, "../../src/miniapp/browser");
/** The paths the page's code calls (its query, where it has one, cut off). */
const calledPaths = [
  ...new Set(
    readdirSync(BROWSER)
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) => [...readFileSync(join(BROWSER, f), "utf8").matchAll(/api\(\s*"(\/api\/messenger\/[^"?]+)/g)].map((m) => m[1]!)),
  ),
].sort();

type Json = Record<string, any>;
let h: TestApp;
/** Each code a route the page calls can answer → the paths that can. */
const answerable = new Map<string, Set<string>>();

beforeAll(async () => {
  h = await openMessengerApp();
  const doc = (await h.json<Json>("/api/openapi.json")).body;
  const catalog = (await h.json<{ entries: Array<{ error_code: string; http_status: number; endpoint_groups: string[] }> }>("/api/partner/errors.json")).body
    .entries;
  const messenger = new Set(catalog.filter((e) => e.endpoint_groups.includes("messenger")).map((e) => e.error_code));
  const ofStatus = (status: number) => catalog.filter((e) => e.http_status === status).map((e) => e.error_code);
  for (const path of calledPaths) {
    for (const op of Object.values<Json>(doc.paths[path] ?? {})) {
      const codes: string[] = ofStatus(500);
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const ref = /^#\/components\/responses\/(.+)$/.exec(response.$ref ?? "")?.[1];
        if (!/^[45]\d\d$/.test(status) || !ref) continue;
        const schema = doc.components.responses[ref].content["application/json"].schema;
        codes.push(...(schema.allOf?.[1].properties.error.enum ?? ofStatus(Number(status))));
      }
      for (const code of codes.filter((c) => messenger.has(c))) answerable.set(code, (answerable.get(code) ?? new Set()).add(path));
    }
  }
});
afterAll(() => h.close());

test("the page calls the messenger's routes, each one the served document describes", async () => {
  expect(calledPaths.length).toBeGreaterThanOrEqual(15);
  const doc = (await h.json<Json>("/api/openapi.json")).body;
  expect(calledPaths.filter((p) => !doc.paths[p])).toEqual([]);
  // The statuses every route declares are there: a refusal of the player's (403), of the game's state (409), a limit (429).
  for (const code of ["promo_not_eligible", "game_state_conflict", "rate_limited", "init_data_expired", "db_unavailable", "server_error"]) {
    expect(answerable.get(code)?.size).toBe(calledPaths.length);
  }
});

test("every code the page's routes can answer has the player's words or is generic on purpose", () => {
  const unhandled = [...answerable.keys()].filter((code) => !(code in REFUSALS) && !(code in GENERIC));
  expect(unhandled.map((code) => `${code} (${[...answerable.get(code)!][0]} …)`)).toEqual([]);
});

test("the generic list holds only codes the routes answer and the page has no words for", () => {
  expect(Object.keys(GENERIC).filter((code) => !answerable.has(code))).toEqual([]);
  expect(Object.keys(GENERIC).filter((code) => code in REFUSALS)).toEqual([]);
  for (const reason of Object.values(GENERIC)) expect(reason.length).toBeGreaterThan(20);
});

test("the page has words only for codes its routes answer, and for its own calls that got no answer", () => {
  const extra = Object.keys(REFUSALS).filter((code) => !answerable.has(code));
  expect(extra.sort()).toEqual([...PAGE_CODES_WITH_WORDS].sort());
});
