// Wallet proof (issue 18): a Sign-In-With-Solana challenge signed with a real Keypair (signed by @noble/curves,
// verified by the app with node:crypto), the link to the MESSENGER_SALUTES_PARTNER user holding the wallet, the
// partner's wallet-verification report, and each refusal with its own code.
import { afterEach, describe, expect, test } from "bun:test";
import { ed25519 } from "@noble/curves/ed25519";
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import type { TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { openMessengerApp, initDataFor, tmaPost } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});
const PLAYER = 31337;
const as = (path: string, body: Record<string, unknown>, id = PLAYER) => h.json(path, tmaPost(initDataFor(h, { id }), body));
const signWith = (kp: Keypair, message: string) => bs58.encode(ed25519.sign(new TextEncoder().encode(message), kp.secretKey.slice(0, 32)));

async function partnerWithWallet(address: string): Promise<{ key: TestKey; userId: string }> {
  const key = await createKey(h, { partner: "Acme", mode: "live" });
  const user = await signedJson(h, key, "POST", "/api/partner/users", { body: { external_id: "ext-1", username: "holder" } });
  const userId = String(user.body.user.id);
  const linked = await signedJson(h, key, "POST", `/api/partner/users/${userId}/wallets`, { body: { wallet_address: address, is_primary: true } });
  expect(linked.status).toBeLessThan(300);
  return { key, userId };
}

describe("wallet proof", () => {
  test("a real Keypair signature verifies, links the partner user and marks the partner's wallet verified", async () => {
    h = await openMessengerApp({ env: { MESSENGER_SALUTES_PARTNER: "Acme" } });
    const kp = Keypair.generate();
    const address = kp.publicKey.toBase58();
    const { key, userId } = await partnerWithWallet(address);
    const before = await signedJson(h, key, "GET", `/api/partner/wallet-verification/${address}`);
    expect(before.body.verification.verified).toBe(false);

    const ch = await as("/api/messenger/wallet-proof/challenge", { address });
    expect(ch.status).toBe(200);
    const { nonce, message } = ch.body.challenge;
    expect(message).toContain("wants you to sign in with your Solana account:\n" + address);
    expect(message).toContain(`Nonce: ${nonce}`);
    expect(message).toMatch(/Issued At: .*Z\nExpiration Time: .*Z$/);
    const ok = await as("/api/messenger/wallet-claim/verify", { address, nonce, message, signature: signWith(kp, message) });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ wallet: { address }, linked_user_id: userId, partner_wallet_links_verified: 1 });

    const after = await signedJson(h, key, "GET", `/api/partner/wallet-verification/${address}`);
    expect(after.body.verification).toMatchObject({ verified: true, verified_at_utc: h.clock.now().toISOString() });
    // The proof came from the mini-app's wallet connection: a live session.
    expect(before.body.wallet_states.connected_session).toBe(false);
    expect(after.body.wallet_states).toMatchObject({ connected_session: true, verified: true });
    const identity = await as("/api/messenger/init/verify", {});
    expect(identity.body.linked_user_id).toBe(userId);
    expect(identity.body.player.linked_by).toBe("wallet_proof");

    // The same signed claim again: the nonce is spent.
    const replay = await as("/api/messenger/wallet-claim/verify", { address, nonce, message, signature: signWith(kp, message) });
    expect([replay.status, replay.body.error]).toEqual([409, "wallet_nonce_used"]);
  });

  test("another key, a mangled message, an unknown and an expired nonce each have their own code", async () => {
    h = await openMessengerApp();
    const kp = Keypair.generate();
    const other = Keypair.generate();
    const address = kp.publicKey.toBase58();
    const { nonce, message } = (await as("/api/messenger/wallet-proof/challenge", { address })).body.challenge;
    const byOther = await as("/api/messenger/wallet-claim/verify", { address, nonce, message, signature: signWith(other, message) });
    expect([byOther.status, byOther.body.error]).toEqual([401, "wallet_signature_invalid"]);
    // Not a 64-byte base58 signature at all (too short, too long, not base58): the same 401, and the nonce stays usable.
    for (const signature of ["abc", "1".repeat(150), "0OIl".repeat(20)]) {
      const r = await as("/api/messenger/wallet-claim/verify", { address, nonce, message, signature });
      expect([signature.slice(0, 8), r.status, r.body.error]).toEqual([signature.slice(0, 8), 401, "wallet_signature_invalid"]);
    }
    const mangled = message.replace("Version: 1", "Version: 2");
    const bad = await as("/api/messenger/wallet-claim/verify", { address, nonce, message: mangled, signature: signWith(kp, mangled) });
    expect([bad.status, bad.body.error]).toEqual([400, "wallet_message_mismatch"]);
    const unknown = await as("/api/messenger/wallet-claim/verify", { address, nonce: "0".repeat(32), message, signature: signWith(kp, message) });
    expect([unknown.status, unknown.body.error]).toEqual([404, "wallet_nonce_unknown"]);
    // Another player cannot use this player's challenge.
    const stranger = await as("/api/messenger/wallet-claim/verify", { address, nonce, message, signature: signWith(kp, message) }, 999);
    expect(stranger.body.error).toBe("wallet_nonce_unknown");
    h.clock.advanceSeconds(601);
    const late = await as("/api/messenger/wallet-claim/verify", { address, nonce, message, signature: signWith(kp, message) });
    expect([late.status, late.body.error]).toEqual([410, "wallet_nonce_expired"]);
    // Unlinked: no MESSENGER_SALUTES_PARTNER.
    const fresh = (await as("/api/messenger/wallet-proof/challenge", { address })).body.challenge;
    const ok = await as("/api/messenger/wallet-claim/verify", { address, nonce: fresh.nonce, message: fresh.message, signature: signWith(kp, fresh.message) });
    expect(ok.body).toMatchObject({ linked_user_id: null, partner_wallet_links_verified: 0 });
  });
});

describe("operator link", () => {
  test("an operator links and unlinks a player to a MESSENGER_SALUTES_PARTNER user, audited", async () => {
    h = await openMessengerApp({ env: { MESSENGER_SALUTES_PARTNER: "Acme" } });
    const { createAdminToken } = await import("../support/partner");
    const { jsonInit } = await import("../support/app");
    const admin = await createAdminToken(h);
    const { userId } = await partnerWithWallet(Keypair.generate().publicKey.toBase58());
    await as("/api/messenger/init/verify", {});
    const link = (id: number | string, body: unknown, auth = true) =>
      h.json(`/api/messenger/admin/players/${id}/link`, jsonInit("POST", body, auth ? { authorization: `Bearer ${admin}` } : {}));
    const linked = await link(PLAYER, { user_id: userId, reason: "support ticket 12" });
    expect(linked.status).toBe(200);
    expect(linked.body.player).toMatchObject({ telegram_user_id: PLAYER, linked_user_id: userId, linked_by: "operator" });
    expect((await as("/api/messenger/init/verify", {})).body.linked_user_id).toBe(userId);
    expect((await link(PLAYER, { user_id: "999999", reason: "typo" })).status).toBe(404);
    expect((await link(424242, { user_id: userId, reason: "no such player" })).status).toBe(404);
    expect((await link(PLAYER, { user_id: userId, reason: "x" }, false)).status).toBe(403);
    expect((await link("1.5", { user_id: userId, reason: "x" })).body.error).toBe("invalid_query");
    const unlinked = await link(PLAYER, { user_id: null, reason: "user asked" });
    expect(unlinked.body.player.linked_user_id).toBeNull();
    const audit = (await h.ctx.store.all("SELECT target, details FROM admin_audit WHERE action = 'messenger.player.link' ORDER BY id")) as Array<{
      target: string;
      details: string;
    }>;
    expect(audit.map((a) => JSON.parse(a.details))).toEqual([
      { partner: "Acme", before: null, after: userId, reason: "support ticket 12" },
      { partner: "Acme", before: userId, after: null, reason: "user asked" },
    ]);
  });
});
