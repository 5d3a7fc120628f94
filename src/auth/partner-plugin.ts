import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { StoreUnavailable } from "../db/port";
import { epochMs } from "../clock";
import type { RequestState, RequestStates } from "../http/core";
import { AppError } from "../http/errors/errors";
import { ResumeLater, synchronousHook } from "../http/hook-scope";
import { SIGNED_MUTATION, type SignedMutationMark } from "../http/openapi/headers";
import { repeatedQueryKey, repeatedScalarIn } from "../http/query-once";
import { rateLimitHeaders } from "../http/rate-limit/rate-limit";
import type { PartnerActor } from "./actors";
import { IdempotencyStore, isValidIdempotencyKey, KEY_FORMAT, requestFingerprint, type DeferredNonce, type IdempotencyClaim } from "./idempotency";
import { ipAllowed, parseAllowList } from "./ip-allow";
import { PartnerKeys, type KeyRow } from "./keys";
import { isValidNonce, NONCE_FORMAT, NonceStore, replayDetected } from "./nonces";
import type { Scope } from "./scopes";
import { requestTarget, verifySignature } from "./signature";
import {
  DECOY_SECRETS,
  forbidden,
  type PartnerGuard,
  type PartnerHeaders,
  partnerHeaders,
  type PartnerRequest,
  unauthorized,
  unixSecondsOf,
  wrongModeMessage,
} from "./partner-request";

export type { PartnerGuard, PartnerRequest } from "./partner-request";

const NO_LIST_PARAMETERS: ReadonlySet<string> = new Set();

/**
 * `partner: { scope, mutation, mode }` on a route runs, before body validation:
 * IP flood guard → key → timestamp → signature → per-key rate limit → status → IP → mode → scope → nonce →
 * idempotency key.
 * Status and IP are checked only after the signature, so a bad credential learns nothing about a key
 * (whether it exists, is disabled, or has an allow-list). Every failure is a catalog error.
 */
export function partnerAuth(ctx: AppContext, states: RequestStates) {
  const keys = new PartnerKeys(ctx);
  const nonces = new NonceStore(ctx);
  const idempotency = new IdempotencyStore(ctx, nonces);
  // The older names of herald_db_commits_total and herald_db_transactions_total (src/bootstrap.ts), kept for the
  // dashboards that read them; the same counts on either engine (they once counted only the SQLite writer's).
  const counts = ctx.store.health.counts;
  ctx.metrics.counter(
    "herald_group_commits",
    "The same as herald_db_commits_total (an older name): commits since start, each carrying a group of transactions.",
    () => counts.commits,
  );
  ctx.metrics.counter(
    "herald_grouped_effects",
    "The same as herald_db_transactions_total (an older name): transactions those commits carried (÷ commits = mean group size).",
    () => counts.transactions,
  );
  const skew = ctx.config.signatureSkewSeconds;

  /**
   * What the checks need from a key row, worked out once per row: key rows are immutable objects replaced on
   * every change (PartnerKeys.find), so a WeakMap keyed by the row can never serve stale scopes or ranges.
   */
  interface PreparedKey {
    actor: Readonly<PartnerActor>;
    scopes: readonly Scope[];
    ranges: ReturnType<typeof parseAllowList>["ranges"];
    /** The current secret alone, and with the previous one while its rotation overlap lasts (until previousUntilMs). */
    current: readonly string[];
    withPrevious: readonly string[];
    previousUntilMs: number;
  }
  const prepared = new WeakMap<Readonly<KeyRow>, PreparedKey>();
  const prepare = (row: Readonly<KeyRow>): PreparedKey => {
    let p = prepared.get(row);
    if (!p) {
      const scopes = Object.freeze(row.scopes.split(",") as Scope[]);
      const { current, previous } = keys.secretsOf(row);
      p = {
        scopes,
        ranges: parseAllowList(row.allowed_ips).ranges,
        actor: Object.freeze({ kind: "partner" as const, keyId: row.key_id, partner: row.partner, mode: row.mode, scopes: scopes as Scope[] }),
        current: Object.freeze([current]),
        withPrevious: Object.freeze(previous ? [current, previous.secret] : [current]),
        previousUntilMs: previous ? previous.validUntilMs : -Infinity,
      };
      prepared.set(row, p);
    }
    return p;
  };

  /**
   * Two limits, both RATE_LIMIT_PARTNER_PER_MIN. The per-KEY limit of the key's group, counted once the signature is
   * verified: nobody can spend a partner's quota by naming its (non-secret) key id. And a per-IP flood guard over
   * requests refused before a key was proven (`unproven`), checked before the signature work: it bounds what an
   * unauthenticated client can cause, yet never refuses a partner's valid requests for another partner's traffic
   * from the same address (several partners behind one NAT share an address, not a budget).
   */
  function floodGuard(state: RequestState) {
    const limit = ctx.config.rateLimits.partnerPerMin;
    if (limit <= 0) return;
    // The client address is read only when a limit needs it (src/http/request-state.ts: each read asks the kernel).
    const ip = state.ip;
    const decision = ctx.rateLimiter.peek("partner-ip", ip, limit);
    if (!decision.allowed) {
      throw new AppError("rate_limited", `Too many unauthenticated partner requests from ${ip}; retry after ${decision.retryAfterSeconds} s`, {
        headers: rateLimitHeaders(decision),
      });
    }
  }

  /** A 401 before any key is proven, counted against the client's address by the flood guard. */
  function unproven(state: RequestState, message: string): AppError {
    const limit = ctx.config.rateLimits.partnerPerMin;
    if (limit > 0) ctx.rateLimiter.hit("partner-ip", state.ip, limit);
    return unauthorized(message);
  }

  function keyLimit(path: string, row: Readonly<KeyRow>, headers: Record<string, string>) {
    const limits = ctx.config.rateLimits;
    if (limits.sandboxPerMin <= 0 && limits.webhookPerMin <= 0 && limits.partnerPerMin <= 0) return;
    const [group, limit] =
      row.mode === "sandbox"
        ? (["sandbox", limits.sandboxPerMin] as const)
        : /^\/api\/partner\/webhook/.test(path)
          ? (["webhook", limits.webhookPerMin] as const)
          : (["partner", limits.partnerPerMin] as const);
    if (limit <= 0) return;
    const decision = ctx.rateLimiter.hit(group, row.key_id, limit);
    Object.assign(headers, rateLimitHeaders(decision));
    if (!decision.allowed) {
      throw new AppError("rate_limited", `Rate limit of ${limit} requests per minute for this key exceeded; retry after ${decision.retryAfterSeconds} s`);
    }
  }

  /** The partner headers, checked at `nowMs` before any key is looked up (after the per-IP flood guard). */
  function headerChecks(headers: PartnerHeaders, state: RequestState, nowMs: number) {
    const keyId = headers.key;
    floodGuard(state);
    if (!keyId) throw unproven(state, "Missing X-Partner-Key header");

    const tsRaw = headers.timestamp;
    if (!tsRaw) throw unproven(state, "Missing X-Partner-Timestamp header (unix seconds)");
    const ts = unixSecondsOf(tsRaw);
    if (ts < 0) throw unproven(state, "X-Partner-Timestamp must be unix seconds (digits only)");
    const drift = ts - Math.floor(nowMs / 1000);
    if (Math.abs(drift) > skew) {
      throw unproven(
        state,
        `X-Partner-Timestamp is ${Math.abs(drift)} s ${drift > 0 ? "ahead of" : "behind"} server time; allowed ±${skew} s (server time ${new Date(nowMs).toISOString()})`,
      );
    }
    const signature = headers.signature;
    if (!signature) throw unproven(state, "Missing X-Partner-Signature header");
    return { keyId, tsRaw, nowMs, signature, nonce: headers.nonce };
  }

  /**
   * The signature against the key row (null: no such key, checked against a decoy secret), then the per-key limit,
   * status, IP, mode, scope and the query's repetitions. Throws the refusal; returns the proven key.
   */
  function keyChecks(
    request: Request,
    url: string,
    state: RequestState,
    guard: PartnerGuard,
    sent: ReturnType<typeof headerChecks>,
    row: Readonly<KeyRow> | null,
  ): { row: Readonly<KeyRow>; key: PreparedKey; target: string } {
    const key = row ? prepare(row) : null;
    const secrets = key ? (sent.nowMs < key.previousUntilMs ? key.withPrevious : key.current) : DECOY_SECRETS;
    const target = requestTarget(url);
    const valid = verifySignature(secrets, sent.signature, {
      method: request.method,
      target,
      timestamp: sent.tsRaw,
      nonce: sent.nonce,
      body: state.rawBody,
    });
    if (!valid || !row || !key) {
      throw unproven(
        state,
        "X-Partner-Signature does not match this request for X-Partner-Key; check the secret and the canonical string (docs/partner-auth.md)",
      );
    }
    state.partnerKeyId = row.key_id;
    keyLimit(target, row, state.headers);

    if (row.status !== "active") throw forbidden(`Key ${row.key_id} is disabled; ask the operators for a new key`);
    if (key.ranges.length > 0 && !ipAllowed(state.ip, key.ranges)) throw forbidden(`Requests from ${state.ip} are not in this key's IP allow-list`);
    const mode = guard.mode ?? "live";
    if (mode !== "any" && row.mode !== mode) throw forbidden(wrongModeMessage(row, mode));
    if (guard.scope && !key.scopes.includes(guard.scope)) throw forbidden(`Key ${row.key_id} lacks the "${guard.scope}" scope this route needs`);
    // A scalar query parameter is given once (src/http/query-once.ts), judged here for signed routes — after the
    // signature — where the core's own check (a before-handle hook) would cost every signed request ~3 µs (bench/README).
    // Signed routes declare no list parameters (test/http/params-convention.test.ts), so none may repeat.
    const repeated = repeatedScalarIn(target, NO_LIST_PARAMETERS);
    if (repeated !== null) throw repeatedQueryKey(repeated);
    return { row, key, target };
  }

  const proven = (
    row: Readonly<KeyRow>,
    key: PreparedKey,
    state: RequestState,
    claim: IdempotencyClaim | null,
    pendingNonce: DeferredNonce | null,
  ): PartnerRequest => ({
    actor: key.actor,
    idempotency: claim,
    pendingNonce,
    requestId: state.id,
    keyUpdatedAt: row.updated_at,
  });

  /**
   * The whole check, synchronously, for a request that needs no await: not a mutation, no nonce, its key row in
   * memory (PartnerKeys.cached) and last_used_at written within the minute. Undefined, before anything is counted or
   * refused, when the request needs `authenticate` instead; it then gets exactly the same checks and answers.
   */
  function authenticateNow(request: Request, url: string, headers: PartnerHeaders, state: RequestState, guard: PartnerGuard): PartnerRequest | undefined {
    const keyId = headers.key;
    if (guard.mutation || keyId === null || keyId.length > 128 || headers.nonce !== null) return undefined;
    const nowMs = epochMs(ctx.clock);
    const row = keys.cached(keyId, nowMs);
    if (!row || !keys.usedWithinMinute(row, nowMs)) return undefined;
    const sent = headerChecks(headers, state, nowMs);
    const { key } = keyChecks(request, url, state, guard, sent, row);
    return proven(row, key, state, null, null);
  }

  async function authenticate(request: Request, url: string, headers: PartnerHeaders, state: RequestState, guard: PartnerGuard): Promise<PartnerRequest> {
    const sent = headerChecks(headers, state, epochMs(ctx.clock));
    const { keyId, nowMs, nonce } = sent;
    const found = keyId.length <= 128 ? (keys.cached(keyId, nowMs) ?? (await keys.find(keyId, nowMs))) : null;
    const { row, key, target } = keyChecks(request, url, state, guard, sent, found);

    const isMutation = guard.mutation ?? false;
    const nonceRequired = isMutation && (row.mode === "live" || ctx.config.sandboxNonceRequired);
    let pendingNonce: DeferredNonce | null = null;
    if (nonce !== null) {
      if (!isValidNonce(nonce)) throw unauthorized("X-Partner-Nonce must be 16–128 hex characters");
      // A nonce left to the effect is not read here: its insert, the transaction's first statement, refuses a replay
      // (a round trip saved on every credit), and a request refused before the effect records it then (refuse below,
      // or after the response).
      if (isMutation && guard.nonceInEffect) pendingNonce = { keyId: row.key_id, nonce, recorded: false };
      else if (!(await nonces.use(row.key_id, nonce))) throw replayDetected();
    } else if (nonceRequired) {
      throw unauthorized("Missing X-Partner-Nonce header: mutations need a fresh 16–128 hex character nonce");
    }

    let claim: IdempotencyClaim | null = null;
    if (isMutation) {
      const idemKey = request.headers.get("idempotency-key");
      const refuse = async (message: string) => {
        // A request refused here has still used its nonce; a deferred one is recorded now (a replay is one first).
        if (pendingNonce && !(await nonces.use(pendingNonce.keyId, pendingNonce.nonce))) return replayDetected();
        return new AppError("idempotency_key_required", message);
      };
      if (idemKey === null) {
        if (ctx.config.idempotencyRequired) throw await refuse("Missing Idempotency-Key header: every mutation needs a unique key (a UUID works)");
      } else {
        if (!isValidIdempotencyKey(idemKey)) throw await refuse("Idempotency-Key must be 1–255 visible ASCII characters");
        claim = { keyId: row.key_id, key: idemKey, fingerprint: requestFingerprint(request.method, target, state.rawBody) };
      }
    }
    if (!keys.usedWithinMinute(row, nowMs)) await keys.markUsed(row, nowMs);
    return proven(row, key, state, claim, pendingNonce);
  }

  /** What the guard's transform reads of Elysia's context, and sets on it (`partner`, for the handler). */
  interface TransformContext {
    request: Request;
    url?: string;
    set: { headers: Record<string, string | number> };
    partner?: PartnerRequest;
  }
  const resumeAfterAuthentication = (request: Request, url: string, headers: PartnerHeaders, state: RequestState, guard: PartnerGuard) =>
    new ResumeLater(async () => {
      state.partner = await authenticate(request, url, headers, state, guard);
    });

  // The result rides on the request's existing state (a second WeakMap keyed by every request made the GC's work
  // per request measurably larger, bench/README.md, signed), and reaches the handler as `partner` on the context
  // the transform hook was given, which is the handler's own: one hook per request, no resolve hook.
  const resultOf = (request: Request) => states.get(request)?.partner as PartnerRequest | null | undefined;
  /**
   * Declares `partner` on the handler's context for TypeScript (Elysia types a macro's context from its resolve
   * hooks). At run time the list is empty, so no resolve hook runs: the transform has set `partner` already.
   */
  const typedPartner = [] as unknown as [() => { partner: PartnerRequest }];
  return {
    idempotency,
    nonces,
    keys,
    plugin: new Elysia({ name: "herald:partner-auth" }).macro({
      partner: (guard: PartnerGuard) => ({
        // A mutation always awaits (its nonce, its idempotency key): its transform is async. Every other signed route
        // verifies synchronously when it can (authenticateNow) and otherwise throws ResumeLater: the route runs again
        // once `authenticate` has proven the request, or answers its refusal (src/http/hook-scope.ts). So the compiled
        // handler of a signed GET has no await of the guard's (bench/README.md, "signed"). Elysia reads each hook's
        // source: passing the whole context to a call would make every such route parse its cookies and body too,
        // hence the context given to ResumeLater by assignment and the URL and headers read in the hook itself.
        transform: guard.mutation
          ? async function partnerVerified(context: TransformContext) {
              const state = states.get(context.request)!;
              try {
                const url = context.url ?? context.request.url;
                const partner = await authenticate(context.request, url, partnerHeaders(context.request), state, guard);
                state.partner = partner;
                // The handler's context is this object: the handler reads `partner` from it.
                context.partner = partner;
              } finally {
                Object.assign(context.set.headers, state.headers);
              }
            }
          : synchronousHook(function partnerVerifiedNow(context: TransformContext) {
              const state = states.get(context.request)!;
              try {
                let partner = state.partner as PartnerRequest | null;
                if (partner === null) {
                  const url = context.url ?? context.request.url;
                  const headers = partnerHeaders(context.request);
                  partner = authenticateNow(context.request, url, headers, state, guard) ?? null;
                  if (partner === null) {
                    const pause = resumeAfterAuthentication(context.request, url, headers, state, guard);
                    pause.context = context;
                    throw pause;
                  }
                  state.partner = partner;
                }
                context.partner = partner;
              } finally {
                Object.assign(context.set.headers, state.headers);
              }
            }),
        resolve: typedPartner,
        // A deferred nonce whose handler never recorded it (a refused body, an error before the effect): record
        // it now, so that request cannot be replayed either. Only routes that defer their nonce need the hook.
        ...(guard.nonceInEffect
          ? {
              async afterResponse({ request }: { request: Request }) {
                const pending = resultOf(request)?.pendingNonce;
                if (pending && !pending.recorded) {
                  try {
                    pending.recorded = true;
                    await nonces.use(pending.keyId, pending.nonce);
                  } catch (err) {
                    // The database is away (its outage is logged once, src/db/health.ts): the request had no effect
                    // either (it was answered 503), so there is nothing a replay could repeat twice.
                    if (err instanceof StoreUnavailable) return;
                    ctx.log.error("recording a nonce after the response failed", { key_id: pending.keyId, error: (err as Error).message });
                  }
                }
              },
            }
          : {}),
        detail: {
          security: [{ PartnerKey: [], PartnerTimestamp: [], PartnerSignature: [] }],
          description: [
            `Signed partner route (${guard.mode === "any" ? "live or sandbox" : (guard.mode ?? "live")} keys${guard.scope ? `, scope \`${guard.scope}\`` : ""}).`,
            guard.mutation ? "Mutation: send X-Partner-Nonce and Idempotency-Key." : "",
          ].join(" "),
          // A read takes a nonce too (optional), used up as a mutation's: the document lists it with its 409.
          [SIGNED_MUTATION]: {
            read: !guard.mutation,
            nonceRequired: guard.mutation === true && ((guard.mode ?? "live") === "live" || ctx.config.sandboxNonceRequired),
            noncePattern: NONCE_FORMAT.source,
            keyPattern: KEY_FORMAT.source,
          } satisfies SignedMutationMark,
        },
      }),
    }),
  };
}
