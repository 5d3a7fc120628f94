import { afterEach, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createHmac } from "node:crypto";
import { hmacSha256Into, verifySignature, requestTarget } from "../../src/auth/signature";
import { PartnerKeys } from "../../src/auth/keys";
import { createKey, signedInit, type TestKey } from "../support/partner";
import { guardedApp, type GuardedApp } from "./support";

let g: GuardedApp;
afterEach(async () => {
  await g?.h.close();
});

describe("the server's HMAC-SHA256 (one-shot SHA-256 over prepared pads)", () => {
  test("equals node:crypto's createHmac for any key and message (keys longer than a block included)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), fc.string({ unit: "binary", maxLength: 6000 }), (secret, message) => {
        expect(Buffer.from(hmacSha256Into(secret, message)).toString("hex")).toBe(createHmac("sha256", secret).update(message).digest("hex"));
      }),
      { numRuns: 2000 },
    );
  });
  test("one secret over messages that grow past its buffer and shrink again (reused buffers and views stay right)", () => {
    const secret = "hsk_live_reused_buffers_secret";
    const lengths = [0, 10, 10, 200, 1024, 1025, 3000, 10, 20_000, 200, 0, 20_000];
    for (const [i, n] of lengths.entries()) {
      const message = "ü€".repeat(n >> 1) + String(i);
      expect(Buffer.from(hmacSha256Into(secret, message)).toString("hex")).toBe(createHmac("sha256", secret).update(message).digest("hex"));
    }
  });
  test("RFC 4231 test case 2", () => {
    expect(Buffer.from(hmacSha256Into("Jefe", "what do ya want for nothing?")).toString("hex")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });
});

describe("docs/design.md §3 vectors, verified by the server's own check", () => {
  const secret = "hsk_test_secret_0123456789abcdef";
  test("signed POST", () => {
    const body = new TextEncoder().encode('{"user_id":"42","amount":12.5,"reason":"quest","source":"partner-app"}');
    const input = { method: "POST", target: "/api/salutes/credit", timestamp: "1767225600", nonce: "9f86d081884c7d659a2feaa0c55ad015", body };
    expect(verifySignature([secret], "36cd6fd54abb4f70c1226b2e3bb58415b950ca152f9d6da0e1f575793266947d", input)).toBe(true);
    expect(verifySignature([secret], "36CD6FD54ABB4F70C1226B2E3BB58415B950CA152F9D6DA0E1F575793266947D", input)).toBe(true);
    expect(verifySignature(["other"], "36cd6fd54abb4f70c1226b2e3bb58415b950ca152f9d6da0e1f575793266947d", input)).toBe(false);
  });
  test("only the 64 hex digits themselves pass: not a longer or shorter string, not a look-alike character", () => {
    const input = {
      method: "POST",
      target: "/api/salutes/credit",
      timestamp: "1767225600",
      nonce: "9f86d081884c7d659a2feaa0c55ad015",
      body: new TextEncoder().encode('{"user_id":"42","amount":12.5,"reason":"quest","source":"partner-app"}'),
    };
    const good = "36cd6fd54abb4f70c1226b2e3bb58415b950ca152f9d6da0e1f575793266947d";
    expect(verifySignature([secret], good, input)).toBe(true);
    for (const bad of [
      good.slice(0, 63),
      good + "0",
      " " + good.slice(1),
      good.replace("c", "g"),
      good.replace("c", "\u0163"), // low byte 0x63 is "c"
      good.replace("6", "\u0136"), // low byte 0x36 is "6"
      good.replace("a", "\uff41"), // fullwidth a
      "",
    ]) {
      expect(verifySignature([secret], bad, input)).toBe(false);
    }
  });
  test("signed GET with query and no nonce", () => {
    const input = { method: "GET", target: "/api/salutes/balance?user_id=42", timestamp: "1767225600", nonce: null, body: null };
    expect(verifySignature([secret], "95695bf61005c23b37fd3e3af288b164df2355cbeb6b3d975d5308608f6687e4", input)).toBe(true);
  });
  test("the target keeps the raw query exactly as sent", () => {
    expect(requestTarget("http://localhost/api/x?b=2&a=%2F")).toBe("/api/x?b=2&a=%2F");
    expect(requestTarget("http://localhost:3000/")).toBe("/");
  });
});

describe("signed requests", () => {
  let key: TestKey;
  const setup = async (env: Record<string, string> = {}) => {
    g = await guardedApp({ env });
    key = await createKey(g.h, { scopes: ["read", "credit"] });
  };
  const read = (init: RequestInit) => g.json("/t/read", init);

  test("a correctly signed read passes and is attributed to the key in the request log", async () => {
    await setup();
    const res = await read(signedInit(g.h, key, "GET", "/t/read"));
    expect(res.status).toBe(200);
    expect(res.body.key_id).toBe(key.keyId);
    // The request log records a request after its response is sent: wait for its row, bounded.
    let rows: unknown[] = [];
    for (let i = 0; i < 200 && rows.length === 0; i++) {
      await Bun.sleep(5);
      await g.h.ctx.requestLog.flush();
      rows = await g.h.ctx.store.all("SELECT k.key_id AS partner_key_id FROM request_log r JOIN request_log_keys k ON k.ref = r.key_ref");
    }
    expect(rows).toEqual([{ partner_key_id: key.keyId }]);
  });

  test.each([["x-partner-key"], ["x-partner-timestamp"], ["x-partner-signature"]])("missing %s is 401 naming it", async (header) => {
    await setup();
    const init = signedInit(g.h, key, "GET", "/t/read");
    const headers = new Headers(init.headers);
    headers.delete(header);
    const res = await read({ ...init, headers });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("unauthorized");
    expect(res.body.message.toLowerCase()).toContain(header);
  });

  test("timestamps: non-numeric refused; ±300 s accepted; ±301 s refused", async () => {
    await setup();
    const now = Math.floor(g.h.clock.now().getTime() / 1000);
    const bad = await read({
      ...signedInit(g.h, key, "GET", "/t/read"),
      headers: { ...(signedInit(g.h, key, "GET", "/t/read").headers as Record<string, string>), "X-Partner-Timestamp": "12e5" },
    });
    expect(bad.status).toBe(401);
    for (const [offset, status] of [
      [300, 200],
      [-300, 200],
      [301, 401],
      [-301, 401],
    ] as const) {
      const res = await read(signedInit(g.h, key, "GET", "/t/read", { timestamp: now + offset }));
      expect({ offset, status: res.status }).toEqual({ offset, status });
    }
  });

  test("a signature over anything else fails: body, path, query, method, timestamp, nonce", async () => {
    await setup();
    const good = signedInit(g.h, key, "POST", "/t/credit", { body: { amount: 1 } });
    const h = good.headers as Record<string, string>;
    const variants: Array<[string, string, RequestInit]> = [
      ["body", "/t/credit", { ...good, body: '{"amount":2}' }],
      ["path", "/t/credit/", { ...good }],
      ["query", "/t/credit?x=1", { ...good }],
      ["method", "/t/credit", { ...good, method: "PUT" }],
      ["timestamp", "/t/credit", { ...good, headers: { ...h, "X-Partner-Timestamp": String(Number(h["X-Partner-Timestamp"]) - 1) } }],
      ["nonce", "/t/credit", { ...good, headers: { ...h, "X-Partner-Nonce": "00112233445566778899aabbccddeeff" } }],
    ];
    for (const [what, path, init] of variants) {
      const res = await g.call(path, init);
      expect({ what, status: res.status }).toEqual({ what, status: what === "method" ? 405 : 401 });
    }
    // The unchanged request still works (nothing above consumed its nonce).
    expect((await g.call("/t/credit", good)).status).toBe(200);
  });

  test("upper- and lower-case hex signatures are the same signature", async () => {
    await setup();
    const init = signedInit(g.h, key, "GET", "/t/read");
    const h = init.headers as Record<string, string>;
    const res = await read({ ...init, headers: { ...h, "X-Partner-Signature": h["X-Partner-Signature"]!.toUpperCase() } });
    expect(res.status).toBe(200);
  });

  test("a wrong secret and an unknown key get the same answer (no key enumeration)", async () => {
    await setup();
    const wrong = await read(signedInit(g.h, { ...key, secret: "hsk_live_wrong" }, "GET", "/t/read"));
    const unknown = await read(signedInit(g.h, { ...key, keyId: "hk_live_000000000000000000000000" }, "GET", "/t/read"));
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.body.message).toBe(wrong.body.message);
  });

  test("a disabled key is 403, but a bad signature on it is still 401 (state never leaks)", async () => {
    await setup();
    await new PartnerKeys(g.h.ctx).disable(key.keyId, "test", { kind: "cli", user: "t" });
    const good = await read(signedInit(g.h, key, "GET", "/t/read"));
    expect(good.status).toBe(403);
    expect(good.body.message).toContain("disabled");
    const bad = await read(signedInit(g.h, { ...key, secret: "nope" }, "GET", "/t/read"));
    expect(bad.status).toBe(401);
  });

  test("rotation: both secrets work during the overlap, only the new one after it", async () => {
    await setup();
    const rotated = await new PartnerKeys(g.h.ctx).rotate(key.keyId, 2, { kind: "cli", user: "t" });
    const fresh = { ...key, secret: rotated.secret };
    expect((await read(signedInit(g.h, key, "GET", "/t/read"))).status).toBe(200);
    expect((await read(signedInit(g.h, fresh, "GET", "/t/read"))).status).toBe(200);
    g.h.clock.advanceSeconds(2 * 3600 + 1);
    expect((await read(signedInit(g.h, key, "GET", "/t/read"))).status).toBe(401);
    expect((await read(signedInit(g.h, fresh, "GET", "/t/read"))).status).toBe(200);
  });

  test("a rotation overlap longer than 24 h is refused", async () => {
    await setup();
    expect(async () => await new PartnerKeys(g.h.ctx).rotate(key.keyId, 25, { kind: "cli", user: "t" })).toThrow(/0 to 24/);
  });

  test("property: flipping any byte of a signed request is refused with 401", async () => {
    await setup({ RATE_LIMIT_PARTNER_PER_MIN: "0" });
    const base = signedInit(g.h, key, "POST", "/t/credit", { body: { amount: 12.5 }, idempotencyKey: "idem-fixed-1" });
    const h = base.headers as Record<string, string>;
    const fields = {
      body: base.body as string,
      ts: h["X-Partner-Timestamp"]!,
      sig: h["X-Partner-Signature"]!,
      nonce: h["X-Partner-Nonce"]!,
      key: h["X-Partner-Key"]!,
    };
    const names = Object.keys(fields) as Array<keyof typeof fields>;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names), fc.nat(), fc.integer({ min: 1, max: 255 }), async (field, posRaw, xor) => {
        const value = fields[field];
        const pos = posRaw % value.length;
        const flipped = String.fromCharCode(value.charCodeAt(pos) ^ xor);
        const mutated = value.slice(0, pos) + flipped + value.slice(pos + 1);
        if (mutated === value) return;
        // Hex case flips are the same value; skip those (covered by the hex-case test).
        if (field === "sig" && mutated.toLowerCase() === value.toLowerCase()) return;
        const next = { ...fields, [field]: mutated };
        const init: RequestInit = {
          method: "POST",
          body: next.body,
          headers: {
            "Content-Type": "application/json",
            "Idempotency-Key": "idem-fixed-1",
            "X-Partner-Key": next.key,
            "X-Partner-Timestamp": next.ts,
            "X-Partner-Signature": next.sig,
            "X-Partner-Nonce": next.nonce,
          },
        };
        let res: Response;
        try {
          res = await g.call("/t/credit", init);
        } catch {
          return; // a byte no HTTP header may carry never reaches the server
        }
        expect(res.status).toBe(401);
      }),
      { numRuns: 300, seed: 42 },
    );
    expect(await g.effects()).toBe(0);
  });
});
