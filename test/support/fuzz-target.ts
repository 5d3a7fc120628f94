// The fuzz suite's view of Herald (test/fuzz): a real app over a fresh database (a SQLite file, or PostgreSQL under
// HERALD_TEST_ENGINE=postgres), the credentials each route needs, a few objects to aim path parameters at, and one
// `send` that signs and times a request exactly as a partner's client would. Requests go to the suite's target
// (test/support/target.ts): the app in this process through app.handle by default, or a served `herald serve` — the
// built binary in .ci/run — over a socket. The app's own peer, the Solana RPC, is the deterministic fixture server
// on 127.0.0.1 (as in test/chain), so chain routes answer from real data instead of "not configured".
import { createHmac } from "node:crypto";
import bs58 from "bs58";
import { signRequest, newNonce } from "../../src/client/sign";
import { requestTarget } from "../../src/auth/signature";
import { createAdminToken, createKey, type TestKey } from "./partner";
import { chainEnv, startSolanaRpc } from "./solana-rpc";
import { startTarget, type TargetApp } from "./target";

export type Credential = "public" | "admin" | "live" | "sandbox" | "messenger" | "messenger-webhook";

/** One operation of the served OpenAPI document. */
export interface FuzzOperation {
  /** "GET /api/partner/webhooks/dlq" — the OpenAPI path template, method upper case. */
  id: string;
  method: string;
  path: string;
  credential: Credential;
  parameters: OpenApiParameter[];
  /** The JSON schema of the request body, when the document declares one. */
  bodySchema: JsonSchema | null;
  raw: Record<string, any>;
}

export interface OpenApiParameter {
  name: string;
  in: "query" | "path" | "header" | "cookie";
  required?: boolean;
  schema?: JsonSchema;
}

export type JsonSchema = Record<string, any>;

/** A request to one operation: everything raw, so malformed input reaches the server byte for byte. */
export interface FuzzRequest {
  /** What was changed from the valid request, e.g. `query.hours="1.5"`; shown in failure reports. */
  variant: string;
  /** Path parameter values, already percent-encoded as they go on the wire. */
  pathParams: Record<string, string>;
  /** Raw query string without the `?` ("" = none). */
  query: string;
  /** Exact body bytes; undefined = no body. */
  body?: Uint8Array;
  /** Content-Type to send; undefined = application/json when there is a body; null = none at all. */
  contentType?: string | null;
  /** The variant must be refused with a 4xx (a number field given as text), not only answered within the conventions. */
  mustRefuse?: boolean;
}

export interface FuzzAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** Wall time of app.handle plus reading the body (performance.now). */
  ms: number;
  /** True when the app did not answer within HANG_MS (an async hang; a sync one blocks the loop instead). */
  hung: boolean;
  /** Sent over a socket with a request line past the runtime's header limit (see checkAnswer). */
  pastHeaderLimit?: boolean;
}

/** The runtime's header limit the served targets run with (package.json's start flags, the binary's exec argv). */
const HEADER_LIMIT_BYTES = 65_536;

/** Past this an unanswered request is recorded as a hang and the run moves on. */
export const HANG_MS = 15_000;

/**
 * How many clients send each operation's variants, each request as soon as that client's previous one is
 * answered: HERALD_FUZZ_CLIENTS=<n> (1–64), default 1 (one request in flight, in the variants' order). With
 * several, requests to one route overlap as they do when many partners (or many instances' clients) call it at
 * once — on PostgreSQL, concurrent transactions on separate connections.
 */
export const FUZZ_CLIENTS = fuzzClients(process.env.HERALD_FUZZ_CLIENTS);

function fuzzClients(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 1;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1 || n > 64) throw new Error(`HERALD_FUZZ_CLIENTS: expected an integer from 1 to 64, got ${JSON.stringify(raw)}`);
  return n;
}

export interface FuzzFixtures {
  liveUserId: string;
  sandboxUserId: string;
  walletAddress: string;
  liveWebhookId: string;
  sandboxWebhookId: string;
  claimCode: string;
  shortCode: string;
  trackTokenId: string;
  maintenanceId: string;
  deliveryId: string;
  jobName: string;
  victimKeyId: string;
  promotePartner: string;
  scenarioId: string;
}

export interface FuzzTarget {
  h: TargetApp;
  keys: Record<"live" | "sandbox" | "sandboxReset" | "isolatedLive" | "isolatedSandbox", TestKey>;
  adminToken: string;
  fixtures: FuzzFixtures;
  /** Sends `req` to `op` with `credential`'s valid credentials (fresh nonce and Idempotency-Key on mutations). */
  send(op: FuzzOperation, req: FuzzRequest): Promise<FuzzAnswer>;
  /** Fresh objects for routes that destroy what they are aimed at; each returns the id, ready for a path. */
  /** A webhook of the shared partner, or (isolated) of the partner the deleting routes run as. */
  createWebhook(mode: "live" | "sandbox", isolated?: boolean): Promise<string>;
  createMaintenance(): Promise<string>;
  createTrackToken(): Promise<string>;
  createShortCode(): Promise<string>;
  createKeyId(partner: string): Promise<string>;
  readonly requests: number;
  close(): Promise<void>;
}

const FUZZ_BOT_TOKEN = "7000000009:AAE_fuzz-token_0123456789abcdefghijk";
const FUZZ_WEBHOOK_SECRET = "fuzz_webhook_secret";

/** Telegram init data for one fuzz player, signed as Telegram does (WebAppData HMAC over the sorted fields). */
function fuzzInitData(nowMs: number): string {
  const fields: Record<string, string> = { auth_date: String(Math.floor(nowMs / 1000)), user: JSON.stringify({ id: 900001, first_name: "Fuzz" }) };
  const dcs = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join("\n");
  const secret = createHmac("sha256", "WebAppData").update(FUZZ_BOT_TOKEN).digest();
  return new URLSearchParams({ ...fields, hash: createHmac("sha256", secret).update(dcs).digest("hex") }).toString();
}

// Rate limits off: thousands of requests from one IP and key in one fake-clock minute would otherwise turn
// the run into a 429 test. Webhook receivers on 127.0.0.1 (a closed port: deliveries fail at once, no DNS).
const FUZZ_ENV: Record<string, string> = {
  RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
  RATE_LIMIT_WEBHOOK_PER_MIN: "0",
  PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "0",
  RATE_LIMIT_PARTNER_PER_MIN: "0",
  MESSENGER_RATE_LIMIT_PLAYER_PER_MIN: "0",
  MESSENGER_RATE_LIMIT_IP_PER_MIN: "0",
  MESSENGER_RATE_LIMIT_INIT_DATA_FAILURES_PER_MIN: "0",
  MESSENGER_RATE_LIMIT_WEBHOOK_UNAUTHORIZED_PER_MIN: "0",
  WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
  WEBHOOK_TIMEOUT_SECONDS: "1",
  WEBHOOK_MAX_ATTEMPTS: "1",
  // Open, so /api/salutes/convert reaches its verb instead of answering conversion_disabled.
  SALUTES_CONVERSION_ENABLED: "1",
  AUDIO_SHARE_ALLOWED_HOSTS: "allowed.example",
  // The messenger routes verify init data signed with this token (FUZZ_INIT_DATA) and the webhook's secret header.
  MESSENGER_BOT_TOKEN: FUZZ_BOT_TOKEN,
  MESSENGER_WEBHOOK_SECRET: FUZZ_WEBHOOK_SECRET,
};

export const WEBHOOK_TARGET = "http://127.0.0.1:9/fuzz-hook";
export const solAddress = (n: number) => bs58.encode(new Uint8Array(32).fill(n));

const MUTATIONS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const encoder = new TextEncoder();

/** Fills an OpenAPI path template: `{name}` → the already-encoded value. */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`fuzz suite: no value for path parameter {${name}} of ${template}`);
    return v;
  });
}

/** The chain jobs that fill the snapshots the transparency routes read, and the status snapshot. */
const SEED_JOBS = ["token-snapshot", "holders-snapshot", "mint-authority-snapshot", "transaction-sync", "holder-growth", "status-snapshot"];

export async function createFuzzTarget(): Promise<FuzzTarget> {
  const rpc = startSolanaRpc({ holders: 50, transactions: 10, seed: "fuzz" });
  const h = await startTarget({ env: { ...chainEnv(rpc, [rpc.url], { SOLANA_RPC_RETRIES: "0" }), ...FUZZ_ENV } });
  const live = await createKey(h, { partner: "Acme", mode: "live" });
  const sandbox = await createKey(h, { partner: "Acme", mode: "sandbox" });
  // The reset route deletes its partner's sandbox state: it gets a partner of its own, so the sandbox fixtures
  // the other routes aim at survive.
  const sandboxReset = await createKey(h, { partner: "FuzzReset", mode: "sandbox" });
  // The deleting routes run as a partner of their own too: their variants send every id a fuzzer can think
  // of ("1", "+1", "1.0" …), and as the shared partner they would delete the shared fixtures.
  const isolatedLive = await createKey(h, { partner: "FuzzIsolated", mode: "live" });
  const isolatedSandbox = await createKey(h, { partner: "FuzzIsolated", mode: "sandbox" });
  const adminToken = await createAdminToken(h, "fuzz-operator");
  let requests = 0;

  const credentialHeaders = (credential: Credential, method: string, target: string, body: Uint8Array | undefined, key: TestKey | null) => {
    if (credential === "public") return {};
    if (credential === "admin") return { authorization: `Bearer ${adminToken}` };
    if (credential === "messenger") return { authorization: `tma ${fuzzInitData(h.clock.now().getTime())}` };
    if (credential === "messenger-webhook") return { "x-messenger-bot-api-secret-token": FUZZ_WEBHOOK_SECRET };
    const k = key ?? (credential === "sandbox" ? sandbox : live);
    const mutation = MUTATIONS.has(method);
    const nonce = mutation ? newNonce() : null;
    const signed = signRequest({
      keyId: k.keyId,
      secret: k.secret,
      method,
      target,
      body: body ?? "",
      nonce,
      timestamp: Math.floor(h.clock.now().getTime() / 1000),
    });
    const headers: Record<string, string> = { ...(signed.headers as unknown as Record<string, string>) };
    if (mutation) headers["idempotency-key"] = crypto.randomUUID();
    return headers;
  };

  /** Routes that must not act on the shared fixtures get a key of their own. */
  const OWN_KEY: Record<string, TestKey> = {
    "POST /api/partner/sandbox/reset": sandboxReset,
    "DELETE /api/partner/webhooks/{webhook_id}": isolatedLive,
    "DELETE /api/partner/sandbox/webhooks/{webhook_id}": isolatedSandbox,
  };
  const keyFor = (op: FuzzOperation): TestKey | null => OWN_KEY[op.id] ?? null;

  async function send(op: FuzzOperation, req: FuzzRequest): Promise<FuzzAnswer> {
    // Time moves on between requests, as it does for real clients: with the clock frozen, every backup of
    // POST /admin/backup/run would be named after the same millisecond and collide with the first.
    if (h.target.kind === "app") h.clock.advance(1);
    const path = fillPath(op.path, req.pathParams);
    // Sign what the server will read: the URL after WHATWG parsing (which percent-encodes spaces, controls and
    // non-ASCII), not the string we built — otherwise every odd query would be a 401 of our own making.
    const url = new URL(`http://localhost${path}${req.query === "" ? "" : `?${req.query}`}`);
    const target = requestTarget(url.href);
    const headers: Record<string, string> = credentialHeaders(op.credential, op.method, target, req.body, keyFor(op));
    if (req.body !== undefined) {
      const type = req.contentType === undefined ? "application/json" : req.contentType;
      if (type !== null) headers["content-type"] = type;
      headers["content-length"] = String(req.body.byteLength);
    }
    requests++;
    const started = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hang = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), HANG_MS);
    });
    try {
      const answered = (async () => {
        // A Uint8Array body makes the runtime add no Content-Type of its own (a string body would get text/plain).
        const res = await h.request(url.pathname + url.search, { method: op.method, headers, body: req.body });
        return { res, text: await res.text() };
      })();
      const out = await Promise.race([answered, hang]);
      const ms = performance.now() - started;
      if (out === null) return { status: 0, headers: new Headers(), text: "", ms, hung: true };
      const pastHeaderLimit = h.target.kind !== "app" && url.pathname.length + url.search.length > HEADER_LIMIT_BYTES;
      return { status: out.res.status, headers: out.res.headers, text: out.text, ms, hung: false, pastHeaderLimit };
    } finally {
      clearTimeout(timer);
    }
  }

  let shortLinks = 0;
  const target: FuzzTarget = {
    h,
    keys: { live, sandbox, sandboxReset, isolatedLive, isolatedSandbox },
    adminToken,
    fixtures: undefined as unknown as FuzzFixtures,
    send,
    async createWebhook(mode, isolated = false) {
      const path = mode === "live" ? "/api/partner/webhooks" : "/api/partner/sandbox/webhooks";
      // Sent as the DELETE route itself would be, so the webhook belongs to the partner that route runs as.
      const as = isolated ? `DELETE ${path}/{webhook_id}` : undefined;
      return String((await call(target, mode, "POST", path, { event_type: "salutes.credit", target_url: WEBHOOK_TARGET }, as)).webhook.id);
    },
    async createMaintenance() {
      const now = h.clock.now().getTime();
      const body = { starts_at: new Date(now + 3_600_000).toISOString(), ends_at: new Date(now + 7_200_000).toISOString(), title: "fuzz window" };
      return String((await call(target, "admin", "POST", "/admin/status/maintenance", body)).window.id);
    },
    async createTrackToken() {
      return String((await call(target, "admin", "POST", "/admin/audio-share/track-tokens", { name: "fuzz" })).track_token.id);
    },
    async createShortCode() {
      const track = encodeURIComponent(`/tracks/${++shortLinks}`);
      return String((await call(target, "public", "GET", `/api/public/audio-share-links?track_url=${track}&use_short=1`)).short_code);
    },
    async createKeyId(partner) {
      return (await createKey(h, { partner, mode: "live" })).keyId;
    },
    get requests() {
      return requests;
    },
    async close() {
      await h.stop();
      void rpc.stop();
    },
  };
  target.fixtures = await seedFixtures(target);
  return target;
}

/** A happy-path call used to build fixtures; any refusal here is a bug in the suite, so it throws. */
async function call(t: FuzzTarget, credential: Credential, method: string, path: string, body?: unknown, keyOf?: string): Promise<any> {
  // `keyOf` borrows another operation's key choice (see OWN_KEY); the method and path sent are this call's own.
  const op: FuzzOperation = { id: keyOf ?? `${method} ${path}`, method, path: path.split("?")[0]!, credential, parameters: [], bodySchema: null, raw: {} };
  const query = path.includes("?") ? path.slice(path.indexOf("?") + 1) : "";
  const res = await t.send(op, { variant: "fixture", pathParams: {}, query, body: body === undefined ? undefined : encoder.encode(JSON.stringify(body)) });
  if (res.status >= 300) throw new Error(`fuzz suite: fixture ${method} ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return JSON.parse(res.text);
}

async function seedFixtures(t: FuzzTarget): Promise<FuzzFixtures> {
  const walletAddress = solAddress(7);
  const user = await call(t, "live", "POST", "/api/partner/users", { external_id: "fuzz-user-1", username: "fuzzuser", email: "fuzz@example.com" });
  const liveUserId = String(user.user.id);
  await call(t, "live", "POST", `/api/partner/users/${liveUserId}/wallets`, { wallet_address: walletAddress, is_primary: true, verified: true });
  await call(t, "live", "POST", "/api/salutes/credit", { user_id: liveUserId, amount: 1000, reason: "fuzz_seed", source: "fuzz" });
  const liveWebhookId = await t.createWebhook("live");
  const tested = await call(t, "live", "POST", `/api/partner/webhooks/${liveWebhookId}/test`);
  const deliveryId = String(tested.delivery_id ?? tested.event_id);
  const claim = await call(t, "live", "POST", "/api/partner/donation-claim", {
    campaign_id: "fuzz",
    amount: 5,
    recipient: { wallet_address: walletAddress },
    user_id: liveUserId,
  });
  const claimCode = String(claim.claim_code ?? claim.claim?.claim_code);
  const sbUser = await call(t, "sandbox", "POST", "/api/partner/sandbox/users", { external_id: "fuzz-sandbox-user-1" });
  const sandboxUserId = String(sbUser.user.id);
  const sandboxWebhookId = await t.createWebhook("sandbox");
  const shortCode = await t.createShortCode();
  const trackTokenId = await t.createTrackToken();
  const maintenanceId = await t.createMaintenance();
  const scenarios = await call(t, "sandbox", "GET", "/api/partner/sandbox/webhook-simulator/scenarios");
  const scenarioId = String(scenarios.scenarios?.[0]?.id ?? scenarios.scenarios?.[0]?.scenario_id);
  for (const job of SEED_JOBS) {
    const run = await t.h.ctx.jobs.runNow(job);
    if (!run.ok) throw new Error(`fuzz suite: seeding job ${job} failed: ${JSON.stringify(run).slice(0, 300)}`);
  }
  // Key disable/rotate act on keys nobody else uses (each gets a fresh one); promote on a partner of its own.
  const victimKeyId = await t.createKeyId("FuzzVictim");
  await createKey(t.h, { partner: "FuzzPromote", mode: "sandbox" });
  const fixtures: FuzzFixtures = {
    liveUserId,
    sandboxUserId,
    walletAddress,
    liveWebhookId,
    sandboxWebhookId,
    claimCode,
    shortCode,
    trackTokenId,
    maintenanceId,
    deliveryId,
    // A job that only prunes old rows: running it repeatedly is harmless.
    jobName: "job-runs-prune",
    victimKeyId,
    promotePartner: "FuzzPromote",
    scenarioId,
  };
  for (const [name, value] of Object.entries(fixtures)) {
    if (!value || value === "undefined") throw new Error(`fuzz suite: fixture ${name} came back empty; the seeding code reads the wrong field`);
  }
  return fixtures;
}
