// Design audit: the examples of docs/partner-users.md and docs/partner-auth.md (not marked `sh example`, so the
// README examples test does not run them) sent as written to the real app, signed by hand (docs/design.md §3).
import { afterEach, expect, test } from "bun:test";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, type TestKey } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

/** What `herald sign … METHOD URL [BODY] | sh` sends: a fresh nonce and Idempotency-Key on mutations. */
function signed(k: TestKey, method: string, target: string, body = "") {
  const ts = String(Math.floor(h.clock.now().getTime() / 1000));
  const mutation = method !== "GET";
  const nonce = mutation ? randomBytes(16).toString("hex") : "";
  const canonical = `${method}\n${target}\n${ts}\n${nonce}\n${createHash("sha256").update(body).digest("hex")}`;
  const headers: Record<string, string> = {
    "X-Partner-Key": k.keyId,
    "X-Partner-Timestamp": ts,
    "X-Partner-Signature": createHmac("sha256", k.secret).update(canonical).digest("hex"),
  };
  if (mutation) Object.assign(headers, { "X-Partner-Nonce": nonce, "Idempotency-Key": crypto.randomUUID() });
  if (body) headers["Content-Type"] = "application/json";
  return h.json(target, { method, headers, body: body || undefined });
}

// docs/partner-users.md: the create, lookup, PATCH and wallet examples, in order, as printed.
test("docs/partner-users.md examples: create, lookup by email with wallets, PATCH, link a wallet", async () => {
  h = await openTestApp();
  const k = await createKey(h);
  const created = await signed(
    k,
    "POST",
    "/api/partner/users",
    '{"external_id":"u-1@app","username":"alice_01","email":"alice@example.com","wallet_address":"4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi"}',
  );
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ success: true, external_id: "u-1@app" });
  expect(created.body.user.wallets[0]).toMatchObject({ is_primary: 1, wallet_address: "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi" });
  const id = created.body.user.id as number;

  const lookup = await signed(k, "GET", "/api/partner/user-lookup?email=alice@example.com&include_wallets=1");
  expect(lookup.status).toBe(200);
  expect(lookup.body.users.map((u: { id: number }) => u.id)).toEqual([id]);
  expect(lookup.body.users[0].wallets.length).toBe(1);
  expect(Object.keys(lookup.body.links).sort()).toEqual(["lookup", "self", "users", "wallet_verification", "wallets"]);

  const patched = await signed(k, "PATCH", `/api/partner/users/${id}`, '{"display_name":"Alice B.","status":"suspended"}');
  expect(patched.status).toBe(200);
  expect(patched.body.user).toMatchObject({ display_name: "Alice B.", status: "suspended" });

  const linked = await signed(
    k,
    "POST",
    `/api/partner/users/${id}/wallets`,
    '{"wallet_address":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin","label":"hot","is_primary":true,"verified":true}',
  );
  expect(linked.status).toBeLessThan(300);
  expect(linked.body.wallets[0]).toMatchObject({ wallet_address: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", is_primary: 1, verified: 1, label: "hot" });
  expect(linked.body.wallets.length).toBe(2);
});

// docs/partner-auth.md §13: the operator's curl creating a key; §7 herald sign examples (capabilities, credit).
test("docs/partner-auth.md examples: the admin key creation curl, then capabilities and a credit with the new key", async () => {
  h = await openTestApp();
  const admin = await createAdminToken(h);
  const made = await h.json("/admin/partners/keys", {
    method: "POST",
    headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
    body: '{"partner":"Acme","mode":"sandbox","scopes":["read","credit"]}',
  });
  expect(made.status).toBe(201);
  expect(Object.keys(made.body.key)).toEqual(
    expect.arrayContaining([
      "key_id",
      "partner",
      "mode",
      "scopes",
      "allowed_ips",
      "status",
      "created_at",
      "updated_at",
      "last_used_at",
      "previous_secret_valid_until",
      "disabled_reason",
    ]),
  );
  const sandbox: TestKey = { keyId: made.body.key.key_id, secret: made.body.secret, mode: "sandbox" };
  expect((await signed(sandbox, "GET", "/api/partner/capabilities")).status).toBe(200);

  const live = await createKey(h);
  const u = await signed(live, "POST", "/api/partner/users", '{"external_id":"u-42","username":"ada"}');
  expect(u.status).toBe(201);
  const c = await signed(live, "POST", "/api/salutes/credit", `{"user_id":"${u.body.user.id}","amount":12.5,"reason":"quest","source":"partner-app"}`);
  expect(c.status).toBe(200);
  expect(c.body).toMatchObject({ success: true, balance: 12.5, delta: 12.5 });
  expect(typeof c.body.idempotency_key).toBe("string");
});
