import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AUDIO_SHARE_ERRORS, AUDIO_SHARE_WARNINGS } from "../../src/audio-share/catalogs";
import { CHANNELS } from "../../src/audio-share/channels";
import { ERROR_CATALOG } from "../../src/http/errors/errors";
import type { TestApp } from "../support/app";
import { API, audioApp, expectChecksum } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const SRC = join(import.meta.dir, "../../src/audio-share");
/** Every .ts file of the domain, store/ included, named relative to it. */
const sources = () =>
  (readdirSync(SRC, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).map((f) => ({ file: f, text: readFileSync(join(SRC, f), "utf8") }));

describe("catalogs are the one source", () => {
  test("errors.json: every audio-share code, with status and title from the main catalog", async () => {
    h = await audioApp();
    const body = await expectChecksum(await h.request(`${API}/errors.json`));
    expect(body.count).toBe(Object.keys(AUDIO_SHARE_ERRORS).length);
    for (const e of body.errors) {
      const main = ERROR_CATALOG[e.code as keyof typeof ERROR_CATALOG];
      expect(main).toBeDefined();
      expect([e.http_status, e.title, e.retry_class, e.status_rationale]).toEqual([main.http_status, main.title, main.retry_class, main.status_rationale]);
      expect(e.when.length).toBeGreaterThan(10);
    }
    expect(body.by_code.destination_host_denied).toMatchObject({ http_status: 400 });
    expect(body.by_code.short_link_expired.http_status).toBe(410);
    expect(body.by_code.short_link_revoked.http_status).toBe(410);
    expect(body.by_code.short_link_not_found.http_status).toBe(404);
    // A status outside the spec's guide says why (the same text as the main catalog); a guide status says null.
    expect(body.by_code.short_link_expired.status_rationale).toContain("410 Gone");
    expect(body.by_code.destination_host_denied.status_rationale).toBeNull();
    // The partner-wide catalog lists them too.
    const all = await h.json("/developers/api-errors.json");
    for (const code of Object.keys(AUDIO_SHARE_ERRORS)) expect(all.body.by_code[code]).toBeDefined();
  });

  test("every error code and warning code the audio-share code names is in its catalog", () => {
    const used = new Set<string>();
    for (const { file, text } of sources()) {
      if (file === "catalogs.ts") continue;
      for (const m of text.matchAll(/new AppError\("([a-z_]+)"/g)) used.add(m[1]!);
      for (const m of text.matchAll(/code: "([a-z_]+)"/g)) used.add(m[1]!);
      for (const m of text.matchAll(/warningOf\("([a-z_]+)"/g)) expect(Object.keys(AUDIO_SHARE_WARNINGS)).toContain(m[1]!);
    }
    const known = new Set([...Object.keys(AUDIO_SHARE_ERRORS), ...Object.keys(AUDIO_SHARE_WARNINGS)]);
    expect([...used].filter((c) => !known.has(c))).toEqual([]);
  });

  test("routes never touch the database layer", () => {
    for (const { file, text } of sources()) {
      if (!file.includes("routes")) continue;
      expect({ file, drizzle: /drizzle-orm|\.\/tables|bun:sqlite|\.\/store\//.test(text) }).toEqual({ file, drizzle: false });
    }
  });

  test("warnings.json and guidance.json", async () => {
    h = await audioApp({ AUDIO_SHARE_TRACK_AUTH: "required", AUDIO_SHARE_TRACK_DEDUPE_SECONDS: "120" });
    const w = await expectChecksum(await h.request(`${API}/warnings.json`));
    expect(w.warnings.map((x: any) => x.code)).toEqual(Object.keys(AUDIO_SHARE_WARNINGS));
    const g = await expectChecksum(await h.request(`${API}/guidance.json`));
    expect(g.limits).toMatchObject({
      expires_in: { min_seconds: 60, max_seconds: 2_592_000, default_seconds: 604_800 },
      batch_items_max: 100,
      track_dedupe_seconds: 120,
      rate_limit_per_minute_per_ip: 90,
    });
    // The spec's four values, and no other.
    expect(Object.keys(g.track_auth.header_values)).toEqual(["optional", "required_missing_bearer", "required_invalid_bearer", "required_valid_bearer"]);
    expect(g.track_auth.mode).toBe("required");
    expect(g.event_types).toContain("copy");
  });
});

describe("channels.json, policy.json, health", () => {
  test("channels: the registry with templates, limits and capabilities", async () => {
    h = await audioApp();
    const body = await expectChecksum(await h.request(`${API}/channels.json`));
    expect(body.count).toBe(CHANNELS.length);
    const ids = body.channels.map((c: any) => c.id);
    for (const id of ["x", "telegram", "email", "slack", "whatsapp", "copy-link"]) expect(ids).toContain(id);
    expect(body.channels.find((c: any) => c.id === "x")).toMatchObject({
      kind: "microblog",
      max_message_length: 280,
      link_length: 23,
      capabilities: { text: true, intent_url: true },
    });
    expect(body.channels.find((c: any) => c.id === "slack")).toMatchObject({ kind: "workspace_chat", template: null });
    expect(body.channels.find((c: any) => c.id === "email").template).toStartWith("mailto:");
  });

  test("policy: base host first, both lists, rules, expiry bounds", async () => {
    h = await audioApp({ AUDIO_SHARE_DEFAULT_EXPIRES_SECONDS: "900" });
    const body = await expectChecksum(await h.request(`${API}/policy.json`));
    expect(body).toMatchObject({
      base_url: "http://localhost:3000",
      base_host: "localhost:3000",
      allowed_hosts: ["localhost:3000", "allowed.example", "*.cdn.example"],
      denied_hosts: ["evil.test"],
      schemes: ["https", "http"],
      max_url_length: 2048,
      expires_in: { min_seconds: 60, max_seconds: 2_592_000, default_seconds: 900 },
    });
    expect(body.redirect_params).toContain("next");
    expect(body.rules.length).toBeGreaterThan(3);
  });

  test("health: ok with the key source, policy size and link counts", async () => {
    h = await audioApp();
    await h.json(`${API}?track_url=/t/1&use_short=1`);
    const body = await expectChecksum(await h.request(`${API}/health`));
    expect(body).toEqual({
      success: true,
      status: "ok",
      database: "ok",
      signing_key: "derived",
      track_auth: "optional",
      policy: { allowed_hosts: 3, denied_hosts: 1 },
      links: { total: 1, active: 1, total_capped: false, active_capped: false },
      pending_hit_buckets: 0,
      checked_at: "2026-01-01T00:00:00.000Z",
    });
    await h.close();
    h = await audioApp({ AUDIO_SHARE_SIGNING_KEY: "ab".repeat(32) });
    expect((await h.json(`${API}/health`)).body.signing_key).toBe("configured");
  });

  test("a bad AUDIO_SHARE_* value is a config error naming it", async () => {
    const { loadConfig } = await import("../../src/config");
    expect(() => loadConfig({ AUDIO_SHARE_TRACK_AUTH: "maybe" })).toThrow(/AUDIO_SHARE_TRACK_AUTH/);
    expect(() => loadConfig({ AUDIO_SHARE_DEFAULT_EXPIRES_SECONDS: "30" })).toThrow(/AUDIO_SHARE_DEFAULT_EXPIRES_SECONDS/);
    expect(() => loadConfig({ AUDIO_SHARE_SIGNING_KEY: "short" })).toThrow(/AUDIO_SHARE_SIGNING_KEY=\*\*\*\*/);
  });
});
