// The probe set that keeps the binary and the source from drifting apart (issue: "the binary that ships answers
// like the source that is tested"). Each probe is a request with a known refusal — numeric bounds, enums, bodies,
// auth failures — sent to two served Heralds (the source and a built binary), and their status and error code
// compared. A build flag that turns a check off shows here as a difference, whatever the cause.
import { newNonce, signRequest } from "../../src/client/sign";
import { createAdminToken, createKey, type TestKey } from "./partner";
import { startTarget, type Target, type TargetApp } from "./target";

type Credential = "none" | "live" | "sandbox" | "admin" | "bad-signature" | "stale" | "unknown-key" | "bad-token";

export interface Probe {
  label: string;
  method: string;
  path: string;
  credential: Credential;
  /** Raw body text; sent as application/json unless contentType says otherwise. */
  body?: string;
  contentType?: string;
  /** Send the same signed request twice and keep the second answer (a replayed nonce). */
  replay?: boolean;
}

const json = (v: unknown) => JSON.stringify(v);

export const PROBES: readonly Probe[] = [
  // Numeric query bounds: the checks the minified binary skipped.
  { label: "dlq hours=1e308", method: "GET", path: "/api/partner/webhooks/dlq?hours=1e308", credential: "live" },
  { label: "dlq hours=-1", method: "GET", path: "/api/partner/webhooks/dlq?hours=-1", credential: "live" },
  { label: "dlq hours=1.5", method: "GET", path: "/api/partner/webhooks/dlq?hours=1.5", credential: "live" },
  { label: "dlq hours=abc", method: "GET", path: "/api/partner/webhooks/dlq?hours=abc", credential: "live" },
  { label: "dlq hours=24 (valid)", method: "GET", path: "/api/partner/webhooks/dlq?hours=24", credential: "live" },
  { label: "webhooks limit=1e308", method: "GET", path: "/api/partner/webhooks?limit=1e308", credential: "live" },
  { label: "webhooks limit=0", method: "GET", path: "/api/partner/webhooks?limit=0", credential: "live" },
  { label: "webhooks offset=-1", method: "GET", path: "/api/partner/webhooks?offset=-1", credential: "live" },
  { label: "users limit=201", method: "GET", path: "/api/partner/users?limit=201", credential: "live" },
  { label: "share link expires_in=-3", method: "GET", path: "/api/public/audio-share-links?track_url=%2Ft&expires_in=-3", credential: "none" },
  { label: "share link expires_in=Infinity", method: "GET", path: "/api/public/audio-share-links?track_url=%2Ft&expires_in=Infinity", credential: "none" },
  { label: "share stats hours=1e308", method: "GET", path: "/api/public/audio-share-links/stats?code=abc&hours=1e308", credential: "none" },
  { label: "QR size=1e308", method: "GET", path: "/s/audio/abcdefgh/qr.png?size=1e308", credential: "none" },
  { label: "status trend limit=-5", method: "GET", path: "/api/public/system-status/trend?limit=-5", credential: "none" },
  { label: "audit top_limit=0x10", method: "GET", path: "/transparency/audit-anomalies/summary.json?top_limit=0x10", credential: "none" },
  { label: "status trend limit given twice", method: "GET", path: "/api/public/system-status/trend?limit=2&limit=3", credential: "none" },
  { label: "users limit given twice (signed)", method: "GET", path: "/api/partner/users?limit=2&limit=3", credential: "live" },
  { label: "403 digest hours=1e308", method: "GET", path: "/admin/ops/403-digest?hours=1e308", credential: "admin" },
  // Enums and path parameters.
  { label: "webhooks is_active=maybe", method: "GET", path: "/api/partner/webhooks?is_active=maybe", credential: "live" },
  { label: "webhook id=abc", method: "POST", path: "/api/partner/webhooks/abc/test", credential: "live" },
  { label: "webhook id=1e308", method: "POST", path: "/api/partner/webhooks/1e308/test", credential: "live" },
  { label: "unknown route", method: "GET", path: "/api/partner/no-such-route", credential: "none" },
  // The players' mini-app: the page, and a script name that is not the embedded one's.
  { label: "mini-app page", method: "GET", path: "/app", credential: "none" },
  { label: "mini-app unknown script", method: "GET", path: "/app/assets/app-0000000000000000.js", credential: "none" },
  // Bodies.
  { label: "credit malformed JSON", method: "POST", path: "/api/salutes/credit", credential: "live", body: '{"user_id":' },
  {
    label: "credit amount as text",
    method: "POST",
    path: "/api/salutes/credit",
    credential: "live",
    body: json({ user_id: "1", amount: "2", reason: "probe" }),
  },
  { label: "credit amount -1", method: "POST", path: "/api/salutes/credit", credential: "live", body: json({ user_id: "1", amount: -1, reason: "probe" }) },
  {
    label: "credit unknown field",
    method: "POST",
    path: "/api/salutes/credit",
    credential: "live",
    body: json({ user_id: "1", amount: 1, reason: "p", extra: 1 }),
  },
  {
    label: "webhook description holding U+0000",
    method: "POST",
    path: "/api/partner/webhooks",
    credential: "live",
    body: json({ event_type: "webhook.test", target_url: "https://hooks.example.com/x", description: "a\u0000b" }),
  },
  { label: "credit body is an array", method: "POST", path: "/api/salutes/credit", credential: "live", body: "[]" },
  { label: "credit as text/plain", method: "POST", path: "/api/salutes/credit", credential: "live", body: "amount=1", contentType: "text/plain" },
  { label: "user create missing external_id", method: "POST", path: "/api/partner/users", credential: "live", body: json({ username: "x" }) },
  {
    label: "webhook create bad event_type",
    method: "POST",
    path: "/api/partner/webhooks",
    credential: "live",
    body: json({ event_type: 7, target_url: "http://127.0.0.1:9/x" }),
  },
  {
    label: "maintenance bad dates",
    method: "POST",
    path: "/admin/status/maintenance",
    credential: "admin",
    body: json({ starts_at: "yesterday", ends_at: 3, title: "x" }),
  },
  // Authentication and authorisation.
  { label: "signed route unsigned", method: "GET", path: "/api/partner/capabilities", credential: "none" },
  { label: "signed route bad signature", method: "GET", path: "/api/partner/capabilities", credential: "bad-signature" },
  { label: "signed route stale timestamp", method: "GET", path: "/api/partner/capabilities", credential: "stale" },
  { label: "signed route unknown key", method: "GET", path: "/api/partner/capabilities", credential: "unknown-key" },
  { label: "live route with a sandbox key", method: "GET", path: "/api/partner/webhooks", credential: "sandbox" },
  { label: "replayed nonce", method: "POST", path: "/api/partner/users", credential: "live", body: json({ external_id: "probe-replay" }), replay: true },
  { label: "admin route no token", method: "GET", path: "/admin/jobs", credential: "none" },
  { label: "admin route bad token", method: "GET", path: "/admin/jobs", credential: "bad-token" },
];

export interface ProbeAnswer {
  label: string;
  status: number;
  /** The envelope's error code, "(success)" on a 2xx, or what else came back. */
  code: string;
}

interface Credentials {
  live: TestKey;
  sandbox: TestKey;
  admin: string;
}

function headersFor(p: Probe, c: Credentials, nonce: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (p.body !== undefined) headers["content-type"] = p.contentType ?? "application/json";
  if (p.credential === "admin") headers.authorization = `Bearer ${c.admin}`;
  if (p.credential === "bad-token") headers.authorization = "Bearer hat_not_a_real_token_0000000000000000";
  const keyed =
    p.credential === "live" || p.credential === "sandbox" || p.credential === "bad-signature" || p.credential === "stale" || p.credential === "unknown-key";
  if (!keyed) return headers;
  const key = p.credential === "sandbox" ? c.sandbox : c.live;
  const mutation = p.method !== "GET";
  const now = Math.floor(Date.now() / 1000);
  const signed = signRequest({
    keyId: p.credential === "unknown-key" ? "hk_live_000000000000000000000000" : key.keyId,
    secret: p.credential === "bad-signature" ? "hsk_live_wrong_secret_00000000000000" : key.secret,
    method: p.method,
    target: p.path,
    body: p.body ?? "",
    nonce: mutation ? nonce : null,
    timestamp: p.credential === "stale" ? now - 3600 : now,
  });
  Object.assign(headers, signed.headers as unknown as Record<string, string>);
  if (mutation) headers["idempotency-key"] = crypto.randomUUID();
  return headers;
}

async function answerOf(res: Response): Promise<string> {
  const text = await res.text();
  if (res.status < 300) return "(success)";
  if (res.status < 400) return `(redirect ${res.headers.get("location") ?? ""})`;
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body.error === "string" ? body.error : "(JSON without error)";
  } catch {
    return `(non-JSON: ${text.slice(0, 40)})`;
  }
}

/** Sends every probe to `h` in order and records status and error code. */
export async function runProbes(h: TargetApp, probes: readonly Probe[] = PROBES): Promise<ProbeAnswer[]> {
  const c: Credentials = {
    live: await createKey(h, { partner: "Parity", mode: "live" }),
    sandbox: await createKey(h, { partner: "Parity", mode: "sandbox" }),
    admin: await createAdminToken(h, "parity-operator"),
  };
  const out: ProbeAnswer[] = [];
  for (const p of probes) {
    const nonce = newNonce();
    const send = () => h.request(p.path, { method: p.method, headers: headersFor(p, c, nonce), body: p.body });
    if (p.replay) await (await send()).arrayBuffer();
    const res = await send();
    out.push({ label: p.label, status: res.status, code: await answerOf(res) });
  }
  return out;
}

/** Lines naming each probe whose status or code differs; empty when the two agree. */
export function probeDifferences(expected: ProbeAnswer[], actual: ProbeAnswer[], names = ["source", "binary"]): string[] {
  const diffs: string[] = [];
  for (const e of expected) {
    const a = actual.find((x) => x.label === e.label);
    if (!a) diffs.push(`${e.label}: no answer from the ${names[1]}`);
    else if (a.status !== e.status || a.code !== e.code) diffs.push(`${e.label}: ${names[0]} ${e.status} ${e.code}, ${names[1]} ${a.status} ${a.code}`);
  }
  return diffs;
}

/** Starts `target`, runs the probes, stops it. A target that cannot start is reported, not thrown. */
export async function probeTarget(target: Target): Promise<{ answers: ProbeAnswer[] } | { startError: string }> {
  let h: TargetApp;
  try {
    h = await startTarget({ target, env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0", RATE_LIMIT_PARTNER_PER_MIN: "0", RATE_LIMIT_WEBHOOK_PER_MIN: "0" } });
  } catch (err) {
    return { startError: (err as Error).message };
  }
  try {
    return { answers: await runProbes(h) };
  } finally {
    await h.stop();
  }
}

/** Probes the source and `binary` (both served) and returns what differs, or why the binary could not be probed. */
export async function checkParity(binary: Target): Promise<{ ok: boolean; lines: string[]; source: ProbeAnswer[] }> {
  const source = await probeTarget({ kind: "source", binary: null, label: "bun src/main.ts serve" });
  if ("startError" in source) throw new Error(`the source did not start: ${source.startError}`);
  const built = await probeTarget(binary);
  if ("startError" in built) return { ok: false, lines: [`${binary.label} did not start: ${built.startError.slice(0, 600)}`], source: source.answers };
  const lines = probeDifferences(source.answers, built.answers);
  return { ok: lines.length === 0, lines, source: source.answers };
}
