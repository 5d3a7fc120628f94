import { describe, expect, test } from "bun:test";
import { configTableRows, readmeConfigTable } from "../.ci/readme-config-table";
import { ConfigError, describeConfig, loadConfig, CONFIG_VARS } from "../src/config";
import { varsOf } from "../src/config/var-spec";
import { CONFIG_SCHEMA } from "../src/config/vars";

describe("config", () => {
  test("defaults need no environment at all", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      host: "0.0.0.0",
      dbPath: "./data/herald.db",
      publicBaseUrl: "http://localhost:3000",
      maxBodyBytes: 1048576,
      nodeEnv: "development",
      trustProxy: false,
    });
    expect(c.rateLimits).toEqual({ publicPerMin: 90, webhookPerMin: 120, sandboxPerMin: 30, partnerPerMin: 6000 });
    expect(Object.isFrozen(c)).toBe(true);
    expect(loadConfig({ PORT: "8080" }).publicBaseUrl).toBe("http://localhost:8080");
  });

  test("every bad value is reported with its name, value and what is allowed", () => {
    try {
      loadConfig({ PORT: "70000", LOG_LEVEL: "loud", TRUST_PROXY: "maybe", PUBLIC_BASE_URL: "ftp://x", MAX_BODY_BYTES: "1kb" });
      throw new Error("expected ConfigError");
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems).toContain('PORT="70000" is not valid: expected an integer from 0 to 65535');
      expect(problems).toContain('LOG_LEVEL="loud" is not valid: expected one of debug, info, warn, error, silent');
      expect(problems).toContain('TRUST_PROXY="maybe" is not valid: expected 1, 0, true, false, yes, no, on or off');
      expect(problems.find((p) => p.startsWith("PUBLIC_BASE_URL="))).toContain("absolute http(s) URL");
      expect(problems.find((p) => p.startsWith("MAX_BODY_BYTES="))).toContain("integer");
    }
  });

  test("a bad variable is refused once, not again through a default worked out from it; a default that fails on its own says it follows from other variables", () => {
    for (const port of ["70000", "abc"]) {
      try {
        loadConfig({ PORT: port });
        throw new Error("expected ConfigError");
      } catch (err) {
        // PUBLIC_BASE_URL's default (http://localhost:$PORT) fails only because PORT does: one line, PORT's.
        expect((err as ConfigError).problems).toEqual([`PORT="${port}" is not valid: expected an integer from 0 to 65535`]);
      }
    }
    try {
      // PORT itself is accepted (trimmed), but the default made from its raw text is not a URL.
      loadConfig({ PORT: " 80" });
      throw new Error("expected ConfigError");
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([
        'PUBLIC_BASE_URL is not set, and its default "http://localhost: 80", worked out from other variables, is not an absolute http(s) URL: fix those, or set PUBLIC_BASE_URL',
      ]);
    }
    // Each accepted spelling of a flag, as the refusal lists them.
    for (const [v, on] of [
      ["yes", true],
      ["on", true],
      ["TRUE", true],
      ["no", false],
      ["off", false],
      ["0", false],
    ] as const) {
      expect(loadConfig({ TRUST_PROXY: v }).trustProxy).toBe(on);
    }
  });

  test("describeConfig lists every variable with its source", () => {
    const rows = describeConfig({ PORT: "4000" });
    expect(rows.map((r) => r.name)).toEqual(Object.keys(CONFIG_VARS));
    expect(rows.find((r) => r.name === "PORT")).toMatchObject({ value: "4000", source: "env" });
    expect(rows.find((r) => r.name === "HOST")).toMatchObject({ value: "0.0.0.0", source: "default" });
  });
});

test("each variable is declared once, at one place in Config; CONFIG_VARS lists them in that order", () => {
  const names = varsOf(CONFIG_SCHEMA).map((leaf) => leaf.name);
  expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  expect(Object.keys(CONFIG_VARS)).toEqual(names);
});

test("the README's configuration table is the declarations' (bun run .ci/readme-config-table.ts rewrites it)", async () => {
  const readme = await Bun.file(new URL("../README.md", import.meta.url)).text();
  expect(readmeConfigTable(readme).rows).toEqual(configTableRows());
});

test("an empty value means unset for optional variables, not invalid", () => {
  const c = loadConfig({ ADMIN_TOKEN: "", HERALD_MASTER_KEY: "" });
  expect(c.adminToken).toBeUndefined();
  expect(c.masterKey).toBeUndefined();
  expect(() => loadConfig({ PORT: "" })).toThrow(/PORT/);
});

test("production refuses an unset or http PUBLIC_BASE_URL, as it refuses a missing master key; https passes", () => {
  const production = { NODE_ENV: "production", HERALD_MASTER_KEY: "ab".repeat(32) };
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };
  expect(problems(production)).toEqual([
    "PUBLIC_BASE_URL is required when NODE_ENV=production: the https address clients reach Herald at (e.g. https://herald.example.com, usually the TLS proxy in front of it)",
  ]);
  expect(problems({ ...production, PUBLIC_BASE_URL: "" })).toHaveLength(1);
  expect(problems({ ...production, PUBLIC_BASE_URL: "http://herald.example.com" })).toEqual([
    "PUBLIC_BASE_URL=\"http://herald.example.com\" is refused when NODE_ENV=production: it must be https (the address clients reach Herald at, usually the TLS proxy's); production's Secure cookies and Strict-Transport-Security work only over https",
  ]);
  // A bad URL is said once, as a bad URL.
  expect(problems({ ...production, PUBLIC_BASE_URL: "ftp://x" })).toEqual([expect.stringMatching(/^PUBLIC_BASE_URL="ftp:\/\/x" is not valid/)]);
  expect(loadConfig({ ...production, PUBLIC_BASE_URL: "https://herald.example.com" }).publicBaseUrl).toBe("https://herald.example.com");
  // Outside production an http address stays the default.
  expect(loadConfig({ NODE_ENV: "development" }).publicBaseUrl).toBe("http://localhost:3000");
});

test("DATABASE_URL: one host; libpq's multi-host form is refused with what to use instead, never echoing the password", () => {
  expect(loadConfig({ DATABASE_URL: "postgres://herald:s3cret@db.internal:5432/herald" }).database.url).toBe(
    "postgres://herald:s3cret@db.internal:5432/herald",
  );
  for (const url of ["postgres://herald:s3cret@h1:5432,h2:5432/herald?target_session_attrs=read-write", "postgresql://h1,h2/herald"]) {
    let err: unknown;
    try {
      loadConfig({ DATABASE_URL: url });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = (err as ConfigError).message;
    expect(text).toContain("DATABASE_URL names several hosts");
    expect(text).toContain("writer endpoint");
    expect(text).not.toContain("s3cret");
  }
  expect(() => loadConfig({ DATABASE_URL: "postgres://herald:p@ss word@db:5432/herald" })).toThrow(/DATABASE_URL/);
});
