import type { PartnerActor } from "./actors";
import type { DeferredNonce, IdempotencyClaim } from "./idempotency";
import type { KeyRow } from "./keys";
import type { KeyMode, Scope } from "./scopes";
import { AppError } from "../http/errors/errors";

// What the partner guard (src/auth/partner-plugin.ts) is told per route, what it gives the handler, and the small
// pieces it reads a request with: the X-Partner-* headers, the timestamp, its refusals' words.

export interface PartnerGuard {
  /** The scope the route needs; omit for routes any valid key may call (capabilities, status). */
  scope?: Scope;
  /** Mutations need a nonce and (unless IDEMPOTENCY_REQUIRED=0) an Idempotency-Key. */
  mutation?: boolean;
  /** Which keys may call: live (default), sandbox, or any. */
  mode?: KeyMode | "any";
  /**
   * The handler commits through `idempotency.run(…, nonce)`, which records the nonce in the effect's own
   * transaction instead of a write of its own before the handler: that insert, the transaction's first statement,
   * refuses a nonce already used. If the handler never gets there (a 400 body, a thrown error), the nonce is
   * recorded after the response.
   */
  nonceInEffect?: boolean;
}

/** What a signed route's handler receives as `partner`. */
export interface PartnerRequest {
  actor: PartnerActor;
  idempotency: IdempotencyClaim | null;
  /** Set on nonceInEffect routes: the nonce idempotency.run must record. */
  pendingNonce: DeferredNonce | null;
  requestId: string;
  /** updated_at of the key row the signature was checked against (capabilities' Last-Modified). */
  keyUpdatedAt: string;
}

/** The X-Partner-* headers of a request; null where absent. */
export interface PartnerHeaders {
  key: string | null;
  timestamp: string | null;
  signature: string | null;
  nonce: string | null;
}

/**
 * Read one by one rather than from Elysia's headers object: a hook that reads `context.headers` makes the route
 * copy every header of every request into an object (Headers.toJSON), which cost a signed GET more than these four
 * reads (bench/README.md, "signed").
 */
export const partnerHeaders = (request: Request): PartnerHeaders => {
  const headers = request.headers;
  return {
    key: headers.get("x-partner-key"),
    timestamp: headers.get("x-partner-timestamp"),
    signature: headers.get("x-partner-signature"),
    nonce: headers.get("x-partner-nonce"),
  };
};

/** 1–12 ASCII digits as a number; -1 for anything else. */
export function unixSecondsOf(raw: string): number {
  if (raw.length > 12) return -1;
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const d = raw.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

export const unauthorized = (message: string) => new AppError("unauthorized", message);
export const forbidden = (message: string) => new AppError("forbidden", message);

/** The signed partner routes that take a key of either mode (declared `mode: "any"`), named in the wrong-mode 403. */
export const ANY_KEY_ROUTES = ["/api/partner/capabilities", "/api/partner/status", "/api/partner/analytics/usage"] as const;

/**
 * A key of the wrong mode is the first wall a new partner hits (a sandbox key on the live routes), so the 403
 * says where this key does work and the exact command that makes the other kind, for this partner and scopes.
 * Partner names are letters, digits, spaces and `._-` (validated at creation), so single quotes are enough.
 */
export function wrongModeMessage(row: Readonly<KeyRow>, needed: KeyMode): string {
  const create = `herald keys create --partner '${row.partner}' --mode ${needed} --scopes ${row.scopes}`;
  return row.mode === "sandbox"
    ? `This route needs a live key; ${row.key_id} is a sandbox key, which works on the sandbox routes under /api/partner/sandbox/ (docs/sandbox.md lists them) and on ${ANY_KEY_ROUTES.join(", ")}. An operator creates a live key with: ${create}`
    : `This route needs a sandbox key; ${row.key_id} is a live key, which works on the live routes under /api/partner/ and /api/salutes/ outside /api/partner/sandbox/. An operator creates a sandbox key with: ${create}`;
}

// Verifies unknown key ids against a throwaway secret, so "no such key" costs the same as "wrong signature".
export const DECOY_SECRETS = ["hsk_decoy_secret_never_valid_0000000000000000"];
