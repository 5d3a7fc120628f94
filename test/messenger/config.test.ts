// The messenger's configuration (issue 18, Configuration): names, defaults, checks, and masking in `herald config`.
import { describe, expect, test } from "bun:test";
import { type ConfigError, describeConfig, loadConfig } from "../../src/config";
import { BOT_TOKEN, WEBHOOK_SECRET } from "./support";

describe("messenger configuration", () => {
  test("defaults, parsing and masking", () => {
    const c = loadConfig({ NODE_ENV: "test" }).messenger;
    expect(c).toEqual({
      botToken: undefined,
      webhookSecret: undefined,
      botApiBase: "https://api.telegram.org",
      initDataMaxAgeSeconds: 86400,
      initDataMode: "hmac",
      ed25519Keys: "production",
      salutesPartner: undefined,
      botUsername: undefined,
      miniAppPath: "/app",
      miniAppUrl: undefined,
      initDataMaxFutureSkewSeconds: 60,
      rateLimits: { playerPerMin: 120, ipPerMin: 600, initDataFailuresPerMin: 30, webhookUnauthorizedPerMin: 30 },
    });
    const env = {
      NODE_ENV: "test",
      MESSENGER_BOT_TOKEN: BOT_TOKEN,
      MESSENGER_WEBHOOK_SECRET: WEBHOOK_SECRET,
      MESSENGER_BOT_API_BASE: "http://127.0.0.1:9/",
      MESSENGER_INIT_DATA_MODE: "either",
      MESSENGER_INIT_DATA_MAX_AGE_SECONDS: "600",
    };
    const set = loadConfig(env).messenger;
    expect(set).toMatchObject({
      botToken: BOT_TOKEN,
      webhookSecret: WEBHOOK_SECRET,
      botApiBase: "http://127.0.0.1:9",
      initDataMode: "either",
      initDataMaxAgeSeconds: 600,
    });
    const shown = Object.fromEntries(describeConfig(env).map((v) => [v.name, v.value]));
    expect(shown.MESSENGER_BOT_TOKEN).toBe("****");
    expect(shown.MESSENGER_WEBHOOK_SECRET).toBe("****");
    expect(shown.MESSENGER_INIT_DATA_MODE).toBe("either");
  });

  test("bad values are refused naming the variable, never echoing a secret", () => {
    const bad = (env: Record<string, string>) => {
      try {
        loadConfig({ NODE_ENV: "test", ...env });
      } catch (err) {
        return (err as ConfigError).problems.join("\n");
      }
      return "accepted";
    };
    expect(bad({ MESSENGER_INIT_DATA_MODE: "rsa" })).toContain("MESSENGER_INIT_DATA_MODE");
    expect(bad({ MESSENGER_INIT_DATA_MAX_AGE_SECONDS: "5" })).toContain("MESSENGER_INIT_DATA_MAX_AGE_SECONDS");
    expect(bad({ MESSENGER_INIT_DATA_MAX_FUTURE_SKEW_SECONDS: "3601" })).toContain("MESSENGER_INIT_DATA_MAX_FUTURE_SKEW_SECONDS");
    expect(bad({ MESSENGER_INIT_DATA_MAX_FUTURE_SKEW_SECONDS: "-1" })).toContain("MESSENGER_INIT_DATA_MAX_FUTURE_SKEW_SECONDS");
    expect(bad({ MESSENGER_RATE_LIMIT_PLAYER_PER_MIN: "fast" })).toContain("MESSENGER_RATE_LIMIT_PLAYER_PER_MIN");
    expect(bad({ MESSENGER_BOT_USERNAME: "@HeraldBot" })).toContain("MESSENGER_BOT_USERNAME");
    // Telegram opens a mini-app over https only: an http:// page would make every /start reply a 400 from the Bot API.
    expect(bad({ MESSENGER_MINI_APP_URL: "http://play.example.com/app" })).toContain("MESSENGER_MINI_APP_URL");
    expect(bad({ MESSENGER_MINI_APP_URL: "https:// play.example.com" })).toContain("MESSENGER_MINI_APP_URL");
    // The page's own path: never one of Herald's.
    for (const path of ["/api", "/api/x", "/admin/app", "/s", "/status", "/claim/x", "/healthz", "app", "/App", "/a/b/c/d", "/app/"])
      expect(bad({ MESSENGER_MINI_APP_PATH: path })).toContain("MESSENGER_MINI_APP_PATH");
    for (const path of ["/play", "/play/tg", "/apps", "/statuses", "/g/play-2"])
      expect(loadConfig({ NODE_ENV: "test", MESSENGER_MINI_APP_PATH: path }).messenger.miniAppPath).toBe(path);
    expect(loadConfig({ NODE_ENV: "test", MESSENGER_MINI_APP_URL: "https://play.example.com/app?from=bot" }).messenger.miniAppUrl).toBe(
      "https://play.example.com/app?from=bot",
    );
    expect(loadConfig({ NODE_ENV: "test", MESSENGER_BOT_USERNAME: "HeraldBot", MESSENGER_RATE_LIMIT_IP_PER_MIN: "0" }).messenger).toMatchObject({
      botUsername: "HeraldBot",
      rateLimits: { ipPerMin: 0 },
    });
    const secretProblem = bad({ MESSENGER_BOT_TOKEN: "not a token secretvalue" });
    expect(secretProblem).toContain("MESSENGER_BOT_TOKEN=****");
    expect(secretProblem).not.toContain("secretvalue");
  });
});
