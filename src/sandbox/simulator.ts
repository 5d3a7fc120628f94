import type { Static } from "elysia";
import { createHash } from "node:crypto";
import type { Owner } from "../auth/actors";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { AppError, found, ValidationError } from "../http/errors/errors";
import { deliveryHeaders, getWebhookOrThrow, WebhookSecrets, type EventType } from "../webhooks/service";
import { derivedAddress, FIXTURE_PROFILE } from "./profile";
import { deliverySourceOf } from "./store";
import type { SandboxWebhooksModel } from "./webhooks-model";

/**
 * A fixed, public secret the simulator signs with when the caller names neither a secret nor a webhook, so a
 * bare `{ scenario_id }` works (the spec's only required field) and a receiver's verifier can be tested at once.
 */
export const SIMULATOR_DEFAULT_SECRET = "whsec_sandbox_simulator_default";

const scenario = (id: string, title: string, event_type: EventType, description: string, data: Record<string, unknown>) => ({
  id,
  title,
  event_type,
  description,
  data,
});

const claimCode = "dc_" + "sandboxpreview".padEnd(32, "a");
const claim = { claim_code: claimCode, campaign_id: "spring-drive", amount: "25" };
const SCENARIOS = [
  scenario("claim_created", "Donation Claim Created", "donation.claim", "A donation claim was issued (what POST /api/partner/donation-claim sends).", {
    ...claim,
    recipient: { email: "alice@sandbox.example.com", wallet_address: null },
    user_id: "1",
  }),
  scenario("claim_redeemed", "Donation Claim Redeemed", "donation.claim_redeemed", "The recipient redeemed a donation claim.", {
    ...claim,
    redeemed_at: "2026-01-01T00:00:00.000Z",
    redeemed_by: "alice@sandbox.example.com",
  }),
  scenario(
    "delivery_failed",
    "Webhook Delivery Failed",
    "webhook.delivery_failed",
    "A delivery to another of your webhooks was dead-lettered after its last attempt.",
    {
      delivery_id: 1,
      event_id: "evt_000000000000000000000001",
      event_type: "salutes.credit",
      webhook_id: 1,
      reason_tag: "http_error",
      last_error: "receiver answered HTTP 500",
    },
  ),
  scenario("salutes_credit", "Salutes Credited", "salutes.credit", "Salutes were credited to a user.", {
    user_id: "1",
    delta: 12.5,
    balance: 112.5,
    ledger_entry_id: 1,
    reason: "quest_reward",
    source: "partner-app",
  }),
  scenario("salutes_debit", "Salutes Debited", "salutes.debit", "Salutes were debited from a user (delta is negative).", {
    user_id: "1",
    delta: -10,
    balance: 102.5,
    ledger_entry_id: 2,
    reason: "shop_purchase",
    source: "partner-app",
  }),
  scenario("user_updated", "User Updated", "users.updated", "A user or one of their wallets changed.", {
    user_id: "1",
    external_id: "fx-alice",
    changes: ["wallets"],
    wallet_address: derivedAddress("scenario-wallet"),
  }),
];

export const scenarioList = () => SCENARIOS.map(({ id, title, event_type, description }) => ({ id, title, event_type, description }));

export const RUN_METADATA = {
  method: "POST" as const,
  path: "/api/partner/sandbox/webhook-simulator/run",
  required_fields: ["scenario_id"],
  optional_fields: ["secret", "key_id"],
  field_notes: {
    scenario_id: "one of GET /api/partner/sandbox/webhook-simulator/scenarios",
    secret: "sign with this secret (e.g. your receiver's); default: the public sandbox simulator secret",
    key_id: "the X-Partner-Key value to show; default: the calling key",
    webhook_id: "also accepted instead of secret: sign with that sandbox webhook's secret",
  },
};

/** Header names as a receiver's docs write them (Node lower-cases them on arrival anyway). */
const canonicalNames = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase()), v]));

/**
 * The exact bytes the dispatcher sends for a sandbox event (src/webhooks/dispatcher.ts builds it the same way), and
 * the headers a delivery of them carries, signed at `now`'s second.
 */
function signedEnvelope(eventId: string, eventType: string, data: unknown, now: Date, secret: string, previous: string | null) {
  const body = JSON.stringify({ event_id: eventId, event_type: eventType, data, sandbox: true });
  const timestamp = Math.floor(now.getTime() / 1000);
  const headers = deliveryHeaders({ eventPublicId: eventId, eventType, body, timestampSeconds: timestamp, secret, previousSecret: previous });
  return { body, timestamp, headers: canonicalNames(headers) };
}

export type RunInput = Static<typeof SandboxWebhooksModel.runBody>;

async function secretFor(
  ctx: AppContext,
  owner: Owner,
  input: RunInput,
): Promise<{ secret: string; previous: string | null; source: "provided" | "webhook" | "sandbox_default" }> {
  if (input.secret !== undefined && input.webhook_id !== undefined) {
    throw new ValidationError("Send either secret or webhook_id, not both", [{ field: "webhook_id", problem: "cannot be combined with secret" }]);
  }
  if (input.secret !== undefined) return { secret: input.secret, previous: null, source: "provided" };
  if (input.webhook_id === undefined) return { secret: SIMULATOR_DEFAULT_SECRET, previous: null, source: "sandbox_default" };
  const w = await getWebhookOrThrow(ctx.store, owner, input.webhook_id);
  const { current, previous } = new WebhookSecrets(ctx).forSigning({ ...w, webhook_id: w.id }, ctx.clock.now());
  return { secret: current, previous, source: "webhook" };
}

/**
 * POST /api/partner/sandbox/webhook-simulator/run: signs a scenario's envelope exactly as a delivery would be
 * signed and returns the body and headers, so a partner can replay them at their receiver. Sends nothing and
 * writes nothing. The event id is derived from the key and scenario, so the same call gives the same body.
 */
export async function runScenario(ctx: AppContext, owner: Owner, callerKeyId: string, input: RunInput) {
  const scenario = SCENARIOS.find((s) => s.id === input.scenario_id);
  if (!scenario) {
    const valid = SCENARIOS.map((s) => s.id);
    throw new AppError("not_found", `No simulator scenario ${JSON.stringify(input.scenario_id)}; valid ids: ${valid.join(", ")}`, {
      details: { scenario_id: input.scenario_id, valid_scenario_ids: valid },
    });
  }
  const { secret, previous, source } = await secretFor(ctx, owner, input);
  const eventId = "evt_" + createHash("sha256").update(`${FIXTURE_PROFILE}:${callerKeyId}:${scenario.id}`).digest("hex").slice(0, 24);
  const { body, timestamp, headers } = signedEnvelope(eventId, scenario.event_type, scenario.data, ctx.clock.now(), secret, previous);
  return {
    selected_scenario_id: scenario.id,
    scenario: { id: scenario.id, title: scenario.title, event_type: scenario.event_type },
    payload: JSON.parse(body) as Record<string, unknown>,
    simulation: {
      headers: { ...headers, "X-Partner-Key": input.key_id ?? callerKeyId },
      body,
      signed_string: `${timestamp}.${body}`,
      secret_source: source,
      ...(source === "sandbox_default" ? { secret: SIMULATOR_DEFAULT_SECRET } : {}),
      sent: false as const,
    },
  };
}

/**
 * The headers and body a sandbox delivery carries, signed with its webhook's secret(s) at the current second.
 * The dispatcher signs again when it sends: a send in a later second (or a retry) carries a later timestamp
 * and so another signature; X-Webhook-Id, X-Webhook-Event and the body are the same bytes. `q`: the store, or
 * the transaction that just queued the delivery.
 */
export async function simulateDelivery(q: Queryable, ctx: Pick<AppContext, "clock" | "rng" | "secrets">, owner: Owner, deliveryId: number) {
  const d = found(await deliverySourceOf(q, owner, deliveryId), "delivery", deliveryId);
  const now = ctx.clock.now();
  const { current, previous } = new WebhookSecrets(ctx).forSigning(d, now);
  const { body, headers } = signedEnvelope(d.event_public_id, d.event_type, JSON.parse(d.event_data), now, current, previous);
  return { headers, body, target_url: d.target_url, delivery_id: d.id };
}
