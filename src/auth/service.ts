import type { KeyMode } from "./scopes";
import type { PartnerKeys } from "./keys";
import { queryProblem } from "../http/errors/errors";

// The spec's deterministic onboarding order, per key mode.
const ORDER: Record<KeyMode, Array<{ path: string; purpose: string }>> = {
  sandbox: [
    { path: "/api/partner/capabilities", purpose: "what this key may do" },
    { path: "/api/partner/sandbox/verify", purpose: "a signed round trip against the sandbox" },
    { path: "/api/partner/sandbox/token-status", purpose: "fixture token data" },
    { path: "/api/partner/sandbox/promotion-report", purpose: "readiness for a live key" },
    { path: "/api/partner/errors.json", purpose: "error codes to branch on" },
  ],
  live: [
    { path: "/api/partner/capabilities", purpose: "what this key may do" },
    { path: "/api/partner/status", purpose: "service and delivery health for this key" },
    { path: "/api/partner/token-status", purpose: "live token data" },
    { path: "/api/partner/errors.json", purpose: "error codes to branch on" },
  ],
};

/** Never returns a secret: only whether the key id exists, its state and mode, and where to start. */
export async function verifyKeyPreview(keys: PartnerKeys, keyId: string, client: string | null) {
  // A pasted secret is refused, never looked up or echoed: the route takes key ids only.
  if (keyId.startsWith("hsk_")) throw queryProblem("api_key", "is a key's secret (hsk_…); pass its key id (hk_…), and keep the secret to yourself");
  const row = await keys.find(keyId);
  const mode: KeyMode | null = row?.mode ?? (keyId.startsWith("hk_test_") ? "sandbox" : keyId.startsWith("hk_live_") ? "live" : null);
  const steps = ORDER[mode ?? "sandbox"].map((s, i) => ({
    step: i + 1,
    method: "GET" as const,
    path: s.path,
    signed: s.path !== "/api/partner/errors.json",
    purpose: s.purpose,
  }));
  return {
    key_id: keyId,
    client,
    exists: Boolean(row),
    active: row?.status === "active",
    key_mode: row?.mode ?? null,
    onboarding_order: steps,
    signing_docs: "/api/docs",
  };
}
