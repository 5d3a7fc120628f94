import { newNonce, signRequest } from "../../src/client/sign";
import { PartnerKeys } from "../../src/auth/keys";
import { AdminTokens } from "../../src/auth/admin";
import type { KeyMode, Scope } from "../../src/auth/scopes";
import { SCOPES } from "../../src/auth/scopes";
import type { TestApp } from "./app";

export interface TestKey {
  keyId: string;
  secret: string;
  mode: KeyMode;
}

export async function createKey(h: TestApp, opts: { mode?: KeyMode; scopes?: readonly Scope[]; ips?: string; partner?: string } = {}): Promise<TestKey> {
  const k = await new PartnerKeys(h.ctx).create(
    { partner: opts.partner ?? "Acme", mode: opts.mode ?? "live", scopes: [...(opts.scopes ?? SCOPES)], allowedIps: opts.ips ?? "" },
    { kind: "cli", user: "test" },
  );
  return { keyId: k.key_id, secret: k.secret, mode: k.mode };
}

export async function createAdminToken(h: TestApp, name = "test-operator"): Promise<string> {
  return (await new AdminTokens(h.ctx).create(name, { kind: "cli", user: "test" })).token;
}

export interface SignOptions {
  body?: unknown;
  /** A nonce to send; default: a fresh one on mutations, none on reads. null = send none. */
  nonce?: string | null;
  /** Idempotency-Key; default: a fresh one on mutations. null = send none. */
  idempotencyKey?: string | null;
  headers?: Record<string, string>;
  /** Override the signed timestamp (unix seconds). */
  timestamp?: number;
}

const MUTATIONS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** A RequestInit signed exactly as a partner's client would, at the test clock's time. */
export function signedInit(h: TestApp, key: TestKey, method: string, target: string, opts: SignOptions = {}): RequestInit {
  const mutation = MUTATIONS.has(method.toUpperCase());
  const body = opts.body === undefined ? "" : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
  const nonce = opts.nonce === undefined ? (mutation ? newNonce() : null) : opts.nonce;
  const timestamp = opts.timestamp ?? Math.floor(h.clock.now().getTime() / 1000);
  const signed = signRequest({ keyId: key.keyId, secret: key.secret, method, target, body, nonce, timestamp });
  const headers: Record<string, string> = { ...(signed.headers as unknown as Record<string, string>) };
  const idem = opts.idempotencyKey === undefined ? (mutation ? crypto.randomUUID() : null) : opts.idempotencyKey;
  if (idem !== null) headers["Idempotency-Key"] = idem;
  if (body !== "") headers["Content-Type"] = "application/json";
  return { method, headers: { ...headers, ...opts.headers }, body: body === "" ? undefined : body };
}

export async function signedJson(h: TestApp, key: TestKey, method: string, target: string, opts: SignOptions = {}) {
  return h.json(target, signedInit(h, key, method, target, opts));
}

/** A signed call's answer as the outage tests read it. */
export interface SignedAnswer {
  status: number;
  retryAfter: string | null;
  body: Record<string, any>;
}

/** A live key made over HTTP by the operator token `admin` on a running `herald serve` at `base`, and signed calls with it. */
export async function liveKeyCaller(base: string, admin: string, partner: string, scopes: string[]) {
  const res = await fetch(`${base}/admin/partners/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify({ partner, mode: "live", scopes }),
    signal: AbortSignal.timeout(30_000),
  });
  const created = (await res.json()) as { key: { key_id: string }; secret: string };
  return signedCaller(base, { id: created.key.key_id, secret: created.secret });
}

/**
 * Signed calls to a running `herald serve` at `base` (a child process, on the wall clock): a fresh nonce each, the
 * Idempotency-Key when given, a deadline on the client's side.
 */
export function signedCaller(base: string, key: { id: string; secret: string }) {
  return async (method: "GET" | "POST", path: string, body: unknown, idem: string | null, timeoutMs = 30_000): Promise<SignedAnswer> => {
    const raw = body === null ? "" : JSON.stringify(body);
    const s = signRequest({ keyId: key.id, secret: key.secret, method, target: path, body: raw, nonce: newNonce(), timestamp: Math.floor(Date.now() / 1000) });
    const headers: Record<string, string> = { ...(s.headers as unknown as Record<string, string>) };
    if (method === "POST") headers["content-type"] = "application/json";
    if (idem) headers["idempotency-key"] = idem;
    const res = await fetch(`${base}${path}`, { method, headers, body: method === "POST" ? raw : undefined, signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as Record<string, any> };
  };
}
