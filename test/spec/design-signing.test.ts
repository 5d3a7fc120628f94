// Design audit: partner request signing (docs/design.md §3). Every signature here is built by hand from
// docs/design.md's text with node:crypto, never with Herald's own signing helper.
import { afterEach, describe, expect, test } from "bun:test";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, type TestKey } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

// docs/design.md §3: canonical = METHOD "\n" REQUEST_TARGET "\n" TIMESTAMP "\n" NONCE "\n" hex(sha256(RAW_BODY))
const canonical = (method: string, target: string, ts: string, nonce: string, body: string) =>
  `${method}\n${target}\n${ts}\n${nonce}\n${createHash("sha256").update(body).digest("hex")}`;
const hmac = (secret: string, text: string) => createHmac("sha256", secret).update(text).digest("hex");
const hexNonce = (bytes = 16) => randomBytes(bytes).toString("hex");

interface HandSigned {
  method: string;
  /** The target sent (path + raw query). */
  target: string;
  body?: string;
  nonce?: string | null;
  /** Seconds added to the test clock's now. */
  skew?: number;
  /** Sign something other than what is sent. */
  signedMethod?: string;
  signedTarget?: string;
  signedBody?: string;
  signedTimestamp?: string;
  sentTimestamp?: string;
  idem?: string | null;
  secret?: string;
}

function handInit(k: TestKey, o: HandSigned): RequestInit {
  const now = Math.floor(h.clock.now().getTime() / 1000) + (o.skew ?? 0);
  const ts = String(now);
  const body = o.body ?? "";
  const nonce = o.nonce === undefined ? (o.method === "GET" ? null : hexNonce()) : o.nonce;
  const sig = hmac(
    o.secret ?? k.secret,
    canonical(o.signedMethod ?? o.method, o.signedTarget ?? o.target, o.signedTimestamp ?? o.sentTimestamp ?? ts, nonce ?? "", o.signedBody ?? body),
  );
  const headers: Record<string, string> = { "X-Partner-Key": k.keyId, "X-Partner-Timestamp": o.sentTimestamp ?? ts, "X-Partner-Signature": sig };
  if (nonce !== null) headers["X-Partner-Nonce"] = nonce;
  if (o.method !== "GET") {
    const idem = o.idem === undefined ? crypto.randomUUID() : o.idem;
    if (idem !== null) headers["Idempotency-Key"] = idem;
  }
  if (body !== "") headers["Content-Type"] = "application/json";
  return { method: o.method, headers, body: body === "" ? undefined : body };
}
const send = (k: TestKey, o: HandSigned) => h.json(o.target, handInit(k, o));

const newUser = async (k: TestKey, ext: string) =>
  (await send(k, { method: "POST", target: "/api/partner/users", body: JSON.stringify({ external_id: ext, username: `u${ext}`, display_name: "U" }) })).body
    .user.id as number;

describe("docs/design.md §3 test vectors", () => {
  // docs/design.md §3 table: both rows and the outgoing webhook vector, reproduced from the text alone.
  test("the canonical string as written reproduces docs/design.md's three published signatures", () => {
    const secret = "hsk_test_secret_0123456789abcdef";
    const body = '{"user_id":"42","amount":12.5,"reason":"quest","source":"partner-app"}';
    expect(createHash("sha256").update(body).digest("hex")).toMatch(/^340fda32.*0472c5$/);
    expect(hmac(secret, canonical("POST", "/api/salutes/credit", "1767225600", "9f86d081884c7d659a2feaa0c55ad015", body))).toBe(
      "36cd6fd54abb4f70c1226b2e3bb58415b950ca152f9d6da0e1f575793266947d",
    );
    expect(hmac(secret, canonical("GET", "/api/salutes/balance?user_id=42", "1767225600", "", ""))).toBe(
      "95695bf61005c23b37fd3e3af288b164df2355cbeb6b3d975d5308608f6687e4",
    );
    const wh = '{"event_id":"evt_01","event_type":"salutes.credit","data":{"user_id":"42","delta":12.5}}';
    expect(hmac("whsec_test_0123456789", `1767225600.${wh}`)).toBe("63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81");
  });

  // docs/design.md §3 outgoing webhook vector, §6: the service's own verifier agrees with it.
  test("POST /api/partner/webhooks/signature/verify accepts docs/design.md's webhook vector and refuses a one-byte change", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const payload = '{"event_id":"evt_01","event_type":"salutes.credit","data":{"user_id":"42","delta":12.5}}';
    const good = "63bbdaa4257d74150db2b2fd269934b1d09d24f4e4b7b4376bd9afcf17c97d81";
    const ask = (p: string) =>
      send(k, {
        method: "POST",
        target: "/api/partner/webhooks/signature/verify",
        body: JSON.stringify({ signature: good, timestamp: "1767225600", payload: p, secret: "whsec_test_0123456789" }),
      });
    const ok = await ask(payload);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ success: true, valid: true, expected_signature: good });
    const bad = await ask(payload.replace("12.5", "12.6"));
    expect(bad.body.valid).toBe(false);
  });
});

describe("docs/design.md §3 canonical string against the live guard", () => {
  // "METHOD upper case; REQUEST_TARGET the path and raw query exactly as sent"
  test("a GET signed by hand over path + raw query is accepted; the same query signed in another order is 401", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const id = await newUser(k, "sig1");
    const target = `/api/partner/users?limit=10&offset=0`;
    expect((await send(k, { method: "GET", target })).status).toBe(200);
    const reordered = await send(k, { method: "GET", target, signedTarget: "/api/partner/users?offset=0&limit=10" });
    expect(reordered.status).toBe(401);
    expect(reordered.body.error).toBe("unauthorized");
    // Path alone signed while a query is sent.
    expect((await send(k, { method: "GET", target: `/api/partner/users/${id}?include_meta=1`, signedTarget: `/api/partner/users/${id}` })).status).toBe(401);
    // Percent-encoding is part of the raw target: signing the decoded form does not match.
    expect((await send(k, { method: "GET", target: "/api/partner/users?q=a%20b" })).status).toBe(200);
    expect((await send(k, { method: "GET", target: "/api/partner/users?q=a%20b", signedTarget: "/api/partner/users?q=a b" })).status).toBe(401);
  });

  // "METHOD upper case"
  test("a signature over a lower-case method is refused", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    expect((await send(k, { method: "GET", target: "/api/partner/capabilities", signedMethod: "get" })).status).toBe(401);
    expect((await send(k, { method: "GET", target: "/api/partner/capabilities", signedMethod: "GET" })).status).toBe(200);
  });

  // "RAW_BODY the exact bytes (empty string for none)"
  test("the body hash covers the exact bytes: whitespace or key order changed after signing is 401", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const body = '{"external_id":"b1","username":"ub1","display_name":"U"}';
    const spaced = '{"external_id": "b1", "username": "ub1", "display_name": "U"}';
    const r1 = await send(k, { method: "POST", target: "/api/partner/users", body: spaced, signedBody: body });
    expect(r1.status).toBe(401);
    const r2 = await send(k, { method: "POST", target: "/api/partner/users", body: spaced });
    expect(r2.status).toBe(201);
    // A bodiless GET signs sha256("") = e3b0c442…
    expect((await send(k, { method: "GET", target: "/api/partner/capabilities" })).status).toBe(200);
  });

  // "TIMESTAMP the X-Partner-Timestamp value (unix seconds)" … "Accepted skew ±300 s"
  test("±300 s is accepted, 301 s either way is 401 unauthorized", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    for (const skew of [300, -300, 0]) expect((await send(k, { method: "GET", target: "/api/partner/capabilities", skew })).status).toBe(200);
    for (const skew of [301, -301, 3600]) {
      const r = await send(k, { method: "GET", target: "/api/partner/capabilities", skew });
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("unauthorized");
    }
    // The timestamp signed must be the one sent.
    const now = Math.floor(h.clock.now().getTime() / 1000);
    expect((await send(k, { method: "GET", target: "/api/partner/capabilities", signedTimestamp: String(now - 1) })).status).toBe(401);
    // Milliseconds are not unix seconds.
    expect((await send(k, { method: "GET", target: "/api/partner/capabilities", sentTimestamp: String(now * 1000) })).status).toBe(401);
  });

  // "NONCE the X-Partner-Nonce value or empty" … "required on mutations, 16–128 hex chars"
  test("nonce: required on a live mutation (401), 16 and 128 hex accepted, 15, 129 and non-hex refused", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const mk = (ext: string, nonce: string | null) =>
      send(k, { method: "POST", target: "/api/partner/users", nonce, body: JSON.stringify({ external_id: ext, username: `u${ext}`, display_name: "U" }) });
    const none = await mk("n0", null);
    expect(none.status).toBe(401);
    expect(none.body.error).toBe("unauthorized");
    expect((await mk("n1", "a".repeat(15))).status).toBe(401);
    expect((await mk("n2", "b".repeat(129))).status).toBe(401);
    expect((await mk("n3", "g".repeat(32))).status).toBe(401);
    expect((await mk("n4", "c".repeat(16))).status).toBe(201);
    expect((await mk("n5", "d".repeat(128))).status).toBe(201);
    // The nonce is part of the canonical string: a signature over another nonce is 401.
    const other = handInit(k, { method: "POST", target: "/api/partner/users", body: '{"external_id":"n6","username":"un6","display_name":"U"}' });
    (other.headers as Record<string, string>)["X-Partner-Nonce"] = hexNonce();
    expect((await h.json("/api/partner/users", other)).status).toBe(401);
  });

  // "single use per key for 2× the skew window → reuse is 409 replay_detected"
  test("a nonce used once is 409 replay_detected on a second request (any route, new timestamp) until 2×300 s have passed", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "rp1");
    const nonce = hexNonce();
    const credit = (n: string, amount: number) =>
      send(k, { method: "POST", target: "/api/salutes/credit", nonce: n, body: JSON.stringify({ user_id: String(uid), amount, reason: "r", source: "s" }) });
    expect((await credit(nonce, 1)).status).toBe(200);
    h.clock.advance(5_000);
    const again = await credit(nonce, 2);
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("replay_detected");
    // The same nonce on another mutation route.
    const other = await send(k, { method: "POST", target: "/api/partner/users", nonce, body: '{"external_id":"rp2","username":"urp2","display_name":"U"}' });
    expect(other.status).toBe(409);
    expect(other.body.error).toBe("replay_detected");
    // Upper-case spelling of the same hex nonce.
    const upper = await credit(nonce.toUpperCase(), 3);
    expect(upper.status).toBe(409);
    // A different key may use the same nonce ("single use per key").
    const k2 = await createKey(h, { partner: "Other" });
    const u2 = (await send(k2, { method: "POST", target: "/api/partner/users", body: '{"external_id":"rp3","username":"urp3","display_name":"U"}' })).body.user
      .id as number;
    const r2 = await send(k2, {
      method: "POST",
      target: "/api/salutes/credit",
      nonce,
      body: JSON.stringify({ user_id: String(u2), amount: 1, reason: "r", source: "s" }),
    });
    expect(r2.status).toBe(200);
    const bal = await send(k, { method: "GET", target: `/api/salutes/balance?user_id=${uid}` });
    expect(bal.body.balance).toBe(1);
  });

  // "the status does not leak whether the key exists"; 403 for key disabled only after a valid signature.
  test("unknown key and wrong secret are both 401; a disabled key is 401 with a bad signature and 403 with a good one", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const unknown = await send({ ...k, keyId: "hk_live_doesnotexist000000" }, { method: "GET", target: "/api/partner/capabilities" });
    const wrong = await send(k, { method: "GET", target: "/api/partner/capabilities", secret: "not-the-secret" });
    expect([unknown.status, wrong.status]).toEqual([401, 401]);
    expect([unknown.body.error, wrong.body.error]).toEqual(["unauthorized", "unauthorized"]);
    const admin = await createAdminToken(h);
    const dis = await h.json(`/admin/partners/keys/${k.keyId}/disable`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ reason: "audit" }),
    });
    expect(dis.status).toBe(200);
    h.clock.advance(2_000);
    const disabledGood = await send(k, { method: "GET", target: "/api/partner/capabilities" });
    expect([disabledGood.status, disabledGood.body.error]).toEqual([403, "forbidden"]);
    const disabledBad = await send(k, { method: "GET", target: "/api/partner/capabilities", secret: "not-the-secret" });
    expect(disabledBad.status).toBe(401);
  });

  // "403 forbidden (scope missing, key disabled, IP not allowed, wrong mode)"
  test("scope missing, IP not allowed and wrong mode are 403 forbidden after a valid signature", async () => {
    h = await openTestApp();
    const noRead = await createKey(h, { scopes: ["credit"] });
    const r1 = await send(noRead, { method: "GET", target: "/api/salutes/balance?user_id=1" });
    expect([r1.status, r1.body.error]).toEqual([403, "forbidden"]);
    const ipKey = await createKey(h, { ips: "203.0.113.0/24" });
    const r2 = await send(ipKey, { method: "GET", target: "/api/partner/users" });
    expect([r2.status, r2.body.error]).toEqual([403, "forbidden"]);
    const sandbox = await createKey(h, { mode: "sandbox" });
    const r3 = await send(sandbox, { method: "GET", target: "/api/partner/users" });
    expect([r3.status, r3.body.error]).toEqual([403, "forbidden"]);
  });
});

describe("docs/design.md §3 REQUEST_TARGET over a real socket", () => {
  // "REQUEST_TARGET the path and raw query exactly as sent": bytes a client may send unencoded in a query
  // (quote, pipe, braces, caret, backtick), signed as they are on the wire.
  test("a query sent with characters a URL parser would re-encode verifies against the target as sent", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const port = server.server!.port!;
      const raw = async (target: string) => {
        const init = handInit(k, { method: "GET", target });
        const headers = Object.entries(init.headers as Record<string, string>)
          .map(([n, v]) => `${n}: ${v}\r\n`)
          .join("");
        const { connect } = await import("node:net");
        return new Promise<string>((resolve, reject) => {
          const sock = connect(port, "127.0.0.1", () => sock.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${headers}\r\n`));
          let out = "";
          sock.on("data", (d) => (out += d.toString("latin1")));
          sock.on("end", () => resolve(out.split("\r\n")[0]!));
          sock.on("error", reject);
        });
      };
      expect(await raw("/api/partner/users?q=a%27b")).toContain(" 200");
      // Raw quotes, spaces and non-ASCII are re-encoded by the URL parser: docs/partner-auth.md §3 "Target as sent"
      // documents that choice (send them percent-encoded), so they are not probed here.
      expect(await raw("/api/partner/users?q=a|b")).toContain(" 200");
      expect(await raw("/api/partner/users?q={x}")).toContain(" 200");
      expect(await raw("/api/partner/users?q=a^b`c")).toContain(" 200");
    } finally {
      await server.stop(true);
    }
  });
});

describe("partner key rotation (README `keys rotate`: the old secret stays valid ≤ 24 h)", () => {
  test("after a rotation with overlap_hours 1 both secrets sign for the hour, then only the new one; 25 h is refused", async () => {
    h = await openTestApp();
    const admin = await createAdminToken(h);
    const k = await createKey(h);
    const rotate = (hours: number) =>
      h.json(`/admin/partners/keys/${k.keyId}/rotate`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: JSON.stringify({ overlap_hours: hours }),
      });
    expect((await rotate(25)).status).toBe(400);
    const r = await rotate(1);
    expect(r.status).toBe(200);
    const fresh: TestKey = { ...k, secret: r.body.secret };
    h.clock.advanceSeconds(30 * 60);
    expect((await send(k, { method: "GET", target: "/api/partner/capabilities" })).status).toBe(200);
    expect((await send(fresh, { method: "GET", target: "/api/partner/capabilities" })).status).toBe(200);
    h.clock.advanceSeconds(31 * 60);
    expect((await send(k, { method: "GET", target: "/api/partner/capabilities" })).status).toBe(401);
    expect((await send(fresh, { method: "GET", target: "/api/partner/capabilities" })).status).toBe(200);
  });
});
