import { describe, expect, test } from "bun:test";
import { ConfigError, describeConfig, loadConfig, CONFIG_VARS } from "../src/config";

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
      expect(problems).toContain('TRUST_PROXY="maybe" is not valid: expected 1, 0, true or false');
      expect(problems.find((p) => p.startsWith("PUBLIC_BASE_URL="))).toContain("absolute http(s) URL");
      expect(problems.find((p) => p.startsWith("MAX_BODY_BYTES="))).toContain("integer");
    }
  });

  test("describeConfig lists every variable with its source", () => {
    const rows = describeConfig({ PORT: "4000" });
    expect(rows.map((r) => r.name)).toEqual(Object.keys(CONFIG_VARS));
    expect(rows.find((r) => r.name === "PORT")).toMatchObject({ value: "4000", source: "env" });
    expect(rows.find((r) => r.name === "HOST")).toMatchObject({ value: "0.0.0.0", source: "default" });
  });
});

test("the README documents every configuration variable", async () => {
  const readme = await Bun.file(new URL("../README.md", import.meta.url)).text();
  const missing = Object.keys(CONFIG_VARS).filter((name) => !readme.includes(`| \`${name}\` |`));
  expect(missing).toEqual([]);
});

test("an empty value means unset for optional variables, not invalid", () => {
  const c = loadConfig({ ADMIN_TOKEN: "", HERALD_MASTER_KEY: "" });
  expect(c.adminToken).toBeUndefined();
  expect(c.masterKey).toBeUndefined();
  expect(() => loadConfig({ PORT: "" })).toThrow(/PORT/);
});
