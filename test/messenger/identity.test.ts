// Init-data identity (issue 18, Identity): Telegram's HMAC scheme checked against an independent signer and the
// library's own `sign`; every tampering refused with its own code; the Ed25519 mode; not configured → 503.
import { afterEach, describe, expect, test } from "bun:test";
import { generateKeyPairSync, sign as ed25519Sign } from "node:crypto";
import { sign } from "@telegram-apps/init-data-node";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { initDataFromHeader } from "../../src/messenger/init-data";
import { BOT_TOKEN, openMessengerApp, initDataFor, signInitData, tmaPost } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const verify = (init: RequestInit) => h.json("/api/messenger/init/verify", init);

describe("POST /api/messenger/init/verify", () => {
  test("init data signed by an independent implementation verifies, in all three places it may be sent", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 4242, username: "ada", is_premium: true, language_code: "en" }, { start_param: "promo_SPRING" });
    const viaHeader = await verify(tmaPost(init));
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body.identity).toMatchObject({
      telegram_user_id: 4242,
      username: "ada",
      is_premium: true,
      language_code: "en",
      scheme: "hmac",
      start_param: "promo_SPRING",
    });
    expect(viaHeader.body.balances).toEqual({ free_spin_balance: 0, missile_balance: 0, points_balance: 0 });
    expect(viaHeader.body.linked_user_id).toBeNull();
    const viaBody = await verify(jsonInit("POST", { init_data: init }));
    expect(viaBody.status).toBe(200);
    const viaQuery = await h.json(`/api/messenger/init/verify?init_data=${encodeURIComponent(init)}`, jsonInit("POST", {}));
    expect(viaQuery.status).toBe(200);
    // The init data in the header or the query and no body at all: the route's fields are optional.
    const noBody = await verify({ method: "POST", headers: { authorization: `tma ${init}` } });
    expect([noBody.status, noBody.body.identity?.telegram_user_id]).toEqual([200, 4242]);
    const queryNoBody = await h.json(`/api/messenger/init/verify?init_data=${encodeURIComponent(init)}`, { method: "POST" });
    expect(queryNoBody.status).toBe(200);
    const row = await h.ctx.store.get("SELECT username, is_premium FROM messenger_players WHERE telegram_user_id = 4242");
    expect(row).toEqual({ username: "ada", is_premium: 1 });
  });

  test("init data signed by the library's own sign verifies", async () => {
    h = await openMessengerApp();
    const init = sign({ user: { id: 77, first_name: "Lib", username: "lib" } } as Parameters<typeof sign>[0], BOT_TOKEN, h.clock.now());
    const res = await verify(tmaPost(init));
    expect(res.status).toBe(200);
    expect(res.body.identity.telegram_user_id).toBe(77);
  });

  test("each tampering fails with its own code", async () => {
    h = await openMessengerApp();
    const now = Math.floor(h.clock.now().getTime() / 1000);
    const good = initDataFor(h, { id: 1, username: "one" });
    const cases: Array<[string, string | null, string]> = [
      ["missing", null, "init_data_missing"],
      ["changed field", good.replace("one", "two"), "init_data_signature_invalid"],
      ["duplicated key", `${good}&auth_date=${now}`, "init_data_malformed"],
      [
        "wrong bot token",
        signInitData({ auth_date: String(now), user: JSON.stringify({ id: 1 }) }, "7000000002:AAE_other-token_0123456789abcdefghijk"),
        "init_data_signature_invalid",
      ],
      ["expired auth_date", initDataFor(h, { id: 1 }, {}, now - 86_401), "init_data_expired"],
      ["no hash", good.replace(/&hash=[0-9a-f]+/, ""), "init_data_malformed"],
      ["no user", signInitData({ auth_date: String(now) }), "init_data_malformed"],
      ["not a number auth_date", signInitData({ auth_date: "soon", user: JSON.stringify({ id: 1 }) }), "init_data_malformed"],
    ];
    for (const [name, init, code] of cases) {
      const res = await verify(init === null ? jsonInit("POST", {}) : tmaPost(init));
      expect({ name, status: res.status, error: res.body.error }).toEqual({ name, status: 401, error: code });
      expect(res.body.message.length).toBeGreaterThan(20);
    }
    const failures = await h.ctx.store.all(
      "SELECT label, SUM(count) AS n FROM messenger_counters WHERE metric = 'init_data_failures' GROUP BY label ORDER BY label",
    );
    expect(failures).toEqual([
      { label: "init_data_expired", n: 1 },
      { label: "init_data_malformed", n: 4 },
      { label: "init_data_missing", n: 1 },
      { label: "init_data_signature_invalid", n: 2 },
    ]);
  });

  test("MESSENGER_INIT_DATA_MAX_AGE_SECONDS bounds the age exactly", async () => {
    h = await openMessengerApp({ env: { MESSENGER_INIT_DATA_MAX_AGE_SECONDS: "300" } });
    const now = Math.floor(h.clock.now().getTime() / 1000);
    expect((await verify(tmaPost(initDataFor(h, { id: 5 }, {}, now - 300)))).status).toBe(200);
    const old = await verify(tmaPost(initDataFor(h, { id: 5 }, {}, now - 301)));
    expect(old.body.error).toBe("init_data_expired");
    expect(old.body.details).toEqual({ auth_date: now - 301, max_age_seconds: 300 });
  });

  test("init data dated in the future is refused past MESSENGER_INIT_DATA_MAX_FUTURE_SKEW_SECONDS (60 s by default), with its own code", async () => {
    h = await openMessengerApp();
    const now = Math.floor(h.clock.now().getTime() / 1000);
    expect((await verify(tmaPost(initDataFor(h, { id: 7 }, {}, now + 60)))).status).toBe(200);
    const ahead = await verify(tmaPost(initDataFor(h, { id: 7 }, {}, now + 61)));
    expect(ahead.status).toBe(401);
    expect(ahead.body.error).toBe("init_data_future_dated");
    expect(ahead.body.details).toEqual({ auth_date: now + 61, server_time: now, max_future_skew_seconds: 60 });
    // Ten years ahead: refused, where it used to be accepted and never expire.
    const decade = await verify(tmaPost(initDataFor(h, { id: 7 }, {}, now + 10 * 365 * 86_400)));
    expect(decade.body.error).toBe("init_data_future_dated");
    const failures = await h.ctx.store.get("SELECT SUM(count) AS n FROM messenger_counters WHERE label = 'init_data_future_dated'");
    expect(failures).toEqual({ n: 2 });
    await h.close();
    h = await openMessengerApp({ env: { MESSENGER_INIT_DATA_MAX_FUTURE_SKEW_SECONDS: "0" } });
    const t0 = Math.floor(h.clock.now().getTime() / 1000);
    expect((await verify(tmaPost(initDataFor(h, { id: 7 }, {}, t0)))).status).toBe(200);
    expect((await verify(tmaPost(initDataFor(h, { id: 7 }, {}, t0 + 1)))).body.error).toBe("init_data_future_dated");
  });

  test("the Ed25519 path refuses future-dated init data too", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const publicHex = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url").toString("hex");
    h = await openMessengerApp({ env: { MESSENGER_INIT_DATA_MODE: "ed25519", MESSENGER_INIT_DATA_ED25519_KEYS: publicHex } });
    const botId = BOT_TOKEN.split(":")[0];
    const signedAt = (authDate: number) => {
      const fields: Record<string, string> = { auth_date: String(authDate), user: JSON.stringify({ id: 5152, first_name: "Grace" }) };
      const checkString = `${botId}:WebAppData\n${Object.keys(fields)
        .sort()
        .map((k) => `${k}=${fields[k]}`)
        .join("\n")}`;
      const signature = ed25519Sign(null, Buffer.from(checkString), privateKey).toString("base64url");
      return new URLSearchParams({ ...fields, signature }).toString();
    };
    const now = Math.floor(h.clock.now().getTime() / 1000);
    expect((await verify(tmaPost(signedAt(now + 30)))).body.identity).toMatchObject({ telegram_user_id: 5152, scheme: "ed25519" });
    const res = await verify(tmaPost(signedAt(now + 10 * 365 * 86_400)));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("init_data_future_dated");
  });

  test("init data verified once is still refused once it ages past the limit (the per-process cache re-checks the age)", async () => {
    h = await openMessengerApp({ env: { MESSENGER_INIT_DATA_MAX_AGE_SECONDS: "300" } });
    const init = initDataFor(h, { id: 6 });
    expect((await verify(tmaPost(init))).status).toBe(200);
    expect((await verify(tmaPost(init))).status).toBe(200);
    h.clock.advanceSeconds(301);
    expect((await verify(tmaPost(init))).body.error).toBe("init_data_expired");
  });

  test("ed25519 mode refuses HMAC-only init data and a bad Ed25519 signature; either mode accepts the HMAC", async () => {
    h = await openMessengerApp({ env: { MESSENGER_INIT_DATA_MODE: "ed25519" } });
    const hmacOnly = initDataFor(h, { id: 9 });
    expect((await verify(tmaPost(hmacOnly))).body.error).toBe("init_data_malformed");
    const forged = initDataFor(h, { id: 9 }, { signature: Buffer.alloc(64, 7).toString("base64url") });
    expect((await verify(tmaPost(forged))).body.error).toBe("init_data_signature_invalid");
    await h.close();
    h = await openMessengerApp({ env: { MESSENGER_INIT_DATA_MODE: "either" } });
    expect((await verify(tmaPost(initDataFor(h, { id: 9 }, { signature: Buffer.alloc(64, 7).toString("base64url") })))).status).toBe(200);
    expect((await verify(tmaPost(initDataFor(h, { id: 9 }).replace(/hash=[0-9a-f]+/, `hash=${"0".repeat(64)}`)))).body.error).toBe(
      "init_data_signature_invalid",
    );
  });

  test("an Ed25519 signature over Telegram's third-party check string verifies with the configured public key; tampering fails", async () => {
    // Telegram's private keys are Telegram's: the test signs with a key of its own, configured as the verifying key.
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const publicHex = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url").toString("hex");
    h = await openMessengerApp({ env: { MESSENGER_INIT_DATA_MODE: "ed25519", MESSENGER_INIT_DATA_ED25519_KEYS: publicHex } });
    const botId = BOT_TOKEN.split(":")[0];
    // Built here from Telegram's documentation, independently of src/messenger/init-data.ts: "<bot_id>:WebAppData",
    // then every field but hash and signature as key=value, sorted, joined by "\n".
    const fields: Record<string, string> = {
      auth_date: String(Math.floor(h.clock.now().getTime() / 1000)),
      query_id: "AAHdF6IQAAAAAN0XohDhrOrc",
      user: JSON.stringify({ id: 5151, first_name: "Grace", username: "grace" }),
    };
    const checkString = `${botId}:WebAppData\n${Object.keys(fields)
      .sort()
      .map((k) => `${k}=${fields[k]}`)
      .join("\n")}`;
    const signature = ed25519Sign(null, Buffer.from(checkString), privateKey).toString("base64url");
    const signed = new URLSearchParams({ ...fields, signature, hash: "0".repeat(64) }).toString();
    const ok = await verify(tmaPost(signed));
    expect(ok.status).toBe(200);
    expect(ok.body.identity).toMatchObject({ telegram_user_id: 5151, username: "grace", scheme: "ed25519" });
    // A changed field, the signature of another key, a truncated signature: each refused.
    const changed = signed.replace("Grace", "Grack");
    expect((await verify(tmaPost(changed))).body.error).toBe("init_data_signature_invalid");
    const other = generateKeyPairSync("ed25519").privateKey;
    const byOther = new URLSearchParams({ ...fields, signature: ed25519Sign(null, Buffer.from(checkString), other).toString("base64url") }).toString();
    expect((await verify(tmaPost(byOther))).body.error).toBe("init_data_signature_invalid");
    const truncated = new URLSearchParams({ ...fields, signature: signature.slice(0, 60) }).toString();
    expect((await verify(tmaPost(truncated))).body.error).toBe("init_data_signature_invalid");
    // Telegram's published production key (the default) does not accept this key's signature.
    await h.close();
    h = await openMessengerApp({ env: { MESSENGER_INIT_DATA_MODE: "ed25519" } });
    expect((await verify(tmaPost(signed))).body.error).toBe("init_data_signature_invalid");
  });

  test("the Authorization scheme is `tma` in any case, then whitespace, then the init data", () => {
    expect(initDataFromHeader("tma a=1&b=2")).toBe("a=1&b=2");
    expect(initDataFromHeader("  TMA\t\t a=1 ")).toBe("a=1");
    expect(initDataFromHeader("Tma a b")).toBe("a b");
    for (const none of [null, "", "tma", "tma   ", "tmaa=1", "Bearer a=1", "tm a=1"]) expect(initDataFromHeader(none)).toBeNull();
  });

  test("without MESSENGER_BOT_TOKEN init data cannot be checked: 503 messenger_not_configured; no init data is still 401", async () => {
    h = await openTestApp();
    const res = await verify(tmaPost(signInitData({ auth_date: "1700000000", user: JSON.stringify({ id: 5 }) })));
    expect(res.status).toBe(503);
    expect(res.body.error).toBe("messenger_not_configured");
    const none = await verify(jsonInit("POST", {}));
    expect([none.status, none.body.error]).toEqual([401, "init_data_missing"]);
  });

  test("unknown body fields are refused", async () => {
    h = await openMessengerApp();
    const res = await verify(tmaPost(initDataFor(h, { id: 3 }), { init_data: "x", extra: 1 }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_payload");
  });
});
