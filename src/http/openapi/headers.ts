/**
 * The key a signed mutation's `detail` carries (src/auth/partner-plugin.ts) until the document is built: whether
 * its callers must send X-Partner-Nonce, and the formats the guard itself tests (its own regular expressions, so
 * the document cannot drift from them). `signedMutationHeaders` turns it into header parameters and removes it.
 */
export const SIGNED_MUTATION = "x-herald-signed-mutation";

export interface SignedMutationMark {
  /** A signed route that is not a mutation: X-Partner-Nonce only, optional (no Idempotency-Key). */
  read: boolean;
  nonceRequired: boolean;
  noncePattern: string;
  keyPattern: string;
}

/** A signed read's nonce: optional, and used up when sent (docs/partner-auth.md §3 and §11). */
export const READ_NONCE =
  "Optional on a read. When sent it is part of the signed string and used up like a mutation's: the same nonce again is refused " +
  "with 409 replay_detected — also when a load balancer resent the request after the instance serving it died (deploy/haproxy.cfg " +
  "resends GET and HEAD). A read changes nothing, so sign it again with a new nonce and send it again; or send reads without one";

/**
 * A signed mutation lists X-Partner-Nonce and Idempotency-Key as header parameters, with the formats the partner
 * guard accepts (the mark's patterns) and whether this deployment requires them; a signed read lists X-Partner-Nonce,
 * optional, which the guard checks and uses up the same way (its 409 replay_detected). The signature headers
 * themselves are the security schemes.
 */
export function signedMutationHeaders(op: Record<string, unknown> & { parameters?: object[] }, idempotencyRequired: boolean): void {
  const mark = op[SIGNED_MUTATION] as SignedMutationMark | undefined;
  if (!mark) return;
  delete op[SIGNED_MUTATION];
  if (mark.read) {
    op.parameters = [
      ...(op.parameters ?? []),
      { in: "header", name: "X-Partner-Nonce", required: false, description: READ_NONCE, schema: { type: "string", pattern: mark.noncePattern } },
    ];
    return;
  }
  op.parameters = [
    ...(op.parameters ?? []),
    {
      in: "header",
      name: "X-Partner-Nonce",
      required: mark.nonceRequired,
      description:
        "A fresh nonce for each request, part of the signed string; a nonce used before is refused with 409 replay_detected" +
        (mark.nonceRequired ? "" : " (optional for sandbox keys unless SANDBOX_NONCE_REQUIRED=1)"),
      schema: { type: "string", pattern: mark.noncePattern },
    },
    {
      in: "header",
      name: "Idempotency-Key",
      required: idempotencyRequired,
      description:
        "A unique key per logical request (a UUID works), kept IDEMPOTENCY_TTL_HOURS. Sent again with the same method, target and body once " +
        "the first request completed, it does nothing again and answers 409 idempotency_replay (IdempotencyReplay) with the first answer in " +
        "original_status and original_response and the header Idempotent-Replayed: true; while the first is still running, 409 " +
        "idempotency_in_progress with Retry-After; with another method, target or body, 422 idempotency_key_reused. A refused request " +
        "stores nothing: its key may be used again",
      schema: { type: "string", pattern: mark.keyPattern },
    },
  ];
}
