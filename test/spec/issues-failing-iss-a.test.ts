// Failing probes of the iss-a re-verification (issues 2–4): each shows a claim that does not hold on main.
import { afterEach, expect, test } from "bun:test";
import { newNonce } from "../../src/client/sign";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedInit, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

// Issue 3: "Nonce store with expiry; reuse → 409 replay_detected"; docs/design.md §3: "single use per key for 2× the
// skew window"; src/auth/nonces.ts: "any request still inside the timestamp window finds its nonce here". The nonce
// is kept until (time of use + 2 × skew), but a request signed 300 s ahead stays inside the timestamp window until
// floor(time of use) + 601 s: for up to a second after the nonce lapses, the captured request is accepted again.
// Idempotency-Key is not signed, so a fresh one makes the replay a second effect.
test("issue 3: a request signed at the +300 s edge, replayed 600.5 s later with another Idempotency-Key, is refused as a replay", async () => {
  h = await openTestApp();
  const k = await createKey(h);
  const user = await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "edge-1" } });
  const body = { user_id: String(user.body.user.id), amount: 5, reason: "r", source: "s" };
  const ahead = Math.floor(h.clock.now().getTime() / 1000) + 300;
  const captured = signedInit(h, k, "POST", "/api/salutes/credit", { body, nonce: newNonce(), timestamp: ahead, idempotencyKey: "first" });
  expect((await h.json("/api/salutes/credit", captured)).status).toBe(200);

  h.clock.advance(600_500);
  const headers = { ...(captured.headers as Record<string, string>), "Idempotency-Key": "attacker-chosen" };
  const replay = await h.json("/api/salutes/credit", { ...captured, headers });
  const balance = (await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${body.user_id}`)).body.balance;
  expect({ status: replay.status, error: replay.body.error, balance }).toEqual({ status: 409, error: "replay_detected", balance: 5 });
});
