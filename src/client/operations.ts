/**
 * Typed methods over the partner API. The types come from api-types.ts, which is generated from the OpenAPI
 * document (`npm run sdk:generate`); this file only names the operations. `satisfies` makes the compiler
 * refuse a name whose operation the document does not have, and test/client/api-types.test.ts checks the
 * other direction (every partner operation of the served document has a method here).
 */
import type { Operations } from "./api-types.js";
import type { Query, RequestOptions, SignedRequester } from "./request-types.js";

export type OperationKey = keyof Operations;
export type OperationInput<K extends OperationKey> = Operations[K]["input"];
export type OperationResponse<K extends OperationKey> = Operations[K]["response"];

/** Per-call options beside the operation's input: idempotency key, nonce, extra headers. */
export type CallOptions = Pick<RequestOptions, "idempotencyKey" | "nonce" | "headers">;

/** The argument list of an operation: optional when none of its input is required. */
export type CallArgs<K extends OperationKey> =
  // biome-ignore lint/complexity/noBannedTypes: `{} extends T` is how a type asks "has T no required key?"
  {} extends OperationInput<K> ? [input?: OperationInput<K> & CallOptions] : [input: OperationInput<K> & CallOptions];

export const OPERATIONS = {
  // discovery and health of the integration
  capabilities: "GET /api/partner/capabilities",
  errorCatalog: "GET /api/partner/errors.json",
  partnerStatus: "GET /api/partner/status",
  usageAnalytics: "GET /api/partner/analytics/usage",
  // users and wallets
  createUser: "POST /api/partner/users",
  listUsers: "GET /api/partner/users",
  lookupUser: "GET /api/partner/user-lookup",
  getUser: "GET /api/partner/users/{user_id}",
  updateUser: "PATCH /api/partner/users/{user_id}",
  addUserWallet: "POST /api/partner/users/{user_id}/wallets",
  walletVerification: "GET /api/partner/wallet-verification/{wallet_address}",
  // salutes
  salutesBalance: "GET /api/salutes/balance",
  salutesCredit: "POST /api/salutes/credit",
  salutesDebit: "POST /api/salutes/debit",
  salutesLedger: "GET /api/salutes/ledger",
  salutesConversionPolicy: "GET /api/salutes/conversion-policy",
  salutesConvert: "POST /api/salutes/convert",
  // donations
  createDonationClaim: "POST /api/partner/donation-claim",
  getDonationClaim: "GET /api/partner/donation-claims/{claim_code}",
  redeemDonationClaim: "POST /api/partner/donation-claims/{claim_code}/redeem",
  // token and chain data
  tokenStatus: "GET /api/partner/token-status",
  walletInfo: "GET /api/partner/wallet-info/{wallet_address}",
  // webhooks
  webhookEventTypes: "GET /api/partner/webhooks/event-types",
  listWebhooks: "GET /api/partner/webhooks",
  createWebhook: "POST /api/partner/webhooks",
  deleteWebhook: "DELETE /api/partner/webhooks/{webhook_id}",
  testWebhook: "POST /api/partner/webhooks/{webhook_id}/test",
  rotateWebhookSecret: "POST /api/partner/webhooks/{webhook_id}/rotate-secret",
  recoverWebhook: "POST /api/partner/webhooks/{webhook_id}/recover",
  webhookDeadLetters: "GET /api/partner/webhooks/dlq",
  checkWebhookSignature: "POST /api/partner/webhooks/signature/verify",
  listWebhookEvents: "GET /api/partner/webhook-events",
  replayWebhookEvents: "POST /api/partner/webhook-events/replay",
  // sandbox (sandbox keys)
  sandboxVerify: "GET /api/partner/sandbox/verify",
  sandboxTokenStatus: "GET /api/partner/sandbox/token-status",
  sandboxPromotionReport: "GET /api/partner/sandbox/promotion-report",
  sandboxReset: "POST /api/partner/sandbox/reset",
  sandboxCreateDonationClaim: "POST /api/partner/sandbox/donation-claim",
  sandboxListUsers: "GET /api/partner/sandbox/users",
  sandboxCreateUser: "POST /api/partner/sandbox/users",
  sandboxGetUser: "GET /api/partner/sandbox/users/{user_id}",
  sandboxUpdateUser: "PATCH /api/partner/sandbox/users/{user_id}",
  sandboxAddUserWallet: "POST /api/partner/sandbox/users/{user_id}/wallets",
  sandboxSalutesBalance: "GET /api/partner/sandbox/salutes/balance",
  sandboxSalutesCredit: "POST /api/partner/sandbox/salutes/credit",
  sandboxSalutesDebit: "POST /api/partner/sandbox/salutes/debit",
  sandboxSalutesLedger: "GET /api/partner/sandbox/salutes/ledger",
  sandboxListWebhooks: "GET /api/partner/sandbox/webhooks",
  sandboxCreateWebhook: "POST /api/partner/sandbox/webhooks",
  sandboxDeleteWebhook: "DELETE /api/partner/sandbox/webhooks/{webhook_id}",
  sandboxTestWebhook: "POST /api/partner/sandbox/webhooks/{webhook_id}/test",
  sandboxListWebhookEvents: "GET /api/partner/sandbox/webhook-events",
  sandboxReplayWebhookEvents: "POST /api/partner/sandbox/webhook-events/replay",
  sandboxWebhookScenarios: "GET /api/partner/sandbox/webhook-simulator/scenarios",
  sandboxWebhookSimulatorInfo: "GET /api/partner/sandbox/webhook-simulator/run",
  sandboxRunWebhookSimulator: "POST /api/partner/sandbox/webhook-simulator/run",
} as const satisfies Record<string, OperationKey>;

export type OperationName = keyof typeof OPERATIONS;

/** `client.api.<name>(input)`: one typed method per partner operation. */
export type HeraldApi = {
  [N in OperationName]: (...args: CallArgs<(typeof OPERATIONS)[N]>) => Promise<OperationResponse<(typeof OPERATIONS)[N]>>;
};

type LooseInput = { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown } & CallOptions;

/** Splits "METHOD /path/{x}" and fills the path parameters (each percent-encoded as one segment). */
export function resolveOperation(op: string, input: LooseInput = {}): { method: string; path: string } {
  const space = op.indexOf(" ");
  const method = op.slice(0, space);
  const path = op.slice(space + 1).replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = input.path?.[name];
    if (value === undefined || value === null || value === "") throw new TypeError(`${op}: path parameter ${name} is required`);
    return encodeURIComponent(String(value));
  });
  return { method, path };
}

/** Runs one operation through the client's signed request (retries, nonces, idempotency keys included). */
export function callOperation(client: SignedRequester, op: string, input: LooseInput = {}): Promise<unknown> {
  const { method, path } = resolveOperation(op, input);
  return client.request(method, path, {
    query: input.query as Query | undefined,
    body: input.body,
    idempotencyKey: input.idempotencyKey,
    nonce: input.nonce,
    headers: input.headers,
  });
}

export function createApi(client: SignedRequester): HeraldApi {
  const api: Record<string, (input?: LooseInput) => Promise<unknown>> = {};
  for (const [name, op] of Object.entries(OPERATIONS)) api[name] = (input) => callOperation(client, op, input);
  return api as unknown as HeraldApi;
}
