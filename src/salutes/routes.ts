import { Elysia } from "elysia";
import { ownerOf } from "../auth/actors";
import type { Guards } from "../auth/guards";
import type { PartnerRequest } from "../auth/partner-plugin";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { ErrorBody } from "../http/envelope";
import { parsePage } from "../http/pagination";
import { conversionPolicy, convert } from "./conversion";
import { SalutesModel as M } from "./model";
import { balanceGroup, getBalance, listLedger, postEntry, type EntryAuthor } from "./service";

const errs = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody };
const tag = (summary: string) => ({ tags: ["partner"], summary });

const authorOf = (partner: PartnerRequest): EntryAuthor => ({ keyId: partner.actor.keyId, idempotencyKey: partner.idempotency?.key ?? null });

/** The salutes ledger (docs/design.md §5): live keys; `user_id` is always one of the caller's users. */
export function salutesRoutes(ctx: AppContext, guards: Guards) {
  const idem = guards.partner.idempotency;
  // Credits, debits and conversions are the busiest writes: their transactions, with the request's nonce in them,
  // share commits on SQLite (the engine's group commit).
  const commit = async <A extends object>(
    partner: PartnerRequest,
    userId: string,
    effect: (t: Queryable, pending: (work: Promise<unknown>) => void) => Promise<{ answer: A; deliveries: Promise<number> }>,
  ) => {
    let deliveries: Promise<number> | null = null;
    const out = await idem.run(
      partner.idempotency,
      async (t, pending) => {
        const r = await effect(t, pending);
        deliveries = r.deliveries;
        return { success: true as const, ...r.answer };
      },
      200,
      partner.pendingNonce,
      balanceGroup(userId),
    );
    if (await deliveries) ctx.dispatcher.nudge();
    return out;
  };
  const entry =
    (kind: "credit" | "debit") =>
    ({ partner, body }: { partner: PartnerRequest; body: typeof M.mutationBody.static }) =>
      commit(partner, body.user_id, (t, pending) => postEntry(t, ctx, ownerOf(partner.actor), authorOf(partner), kind, body, pending));
  return new Elysia({ name: "herald:salutes" })
    .use(guards.partner.plugin)
    .get(
      "/api/salutes/balance",
      async ({ partner, query }) => ({ success: true as const, ...(await getBalance(ctx, ownerOf(partner.actor), partner.actor.keyId, query.user_id)) }),
      { partner: { scope: "read" }, query: M.balanceQuery, response: { 200: M.balance, ...errs }, detail: tag("A user's salutes balance") },
    )
    .post("/api/salutes/credit", entry("credit"), {
      partner: { scope: "credit", mutation: true, nonceInEffect: true },
      query: M.mutationQuery,
      body: M.mutationBody,
      response: { 200: M.mutationResult, ...errs },
      detail: tag("Credit salutes: one ledger entry and a salutes.credit event"),
    })
    .post("/api/salutes/debit", entry("debit"), {
      partner: { scope: "debit", mutation: true, nonceInEffect: true },
      query: M.mutationQuery,
      body: M.mutationBody,
      response: { 200: M.mutationResult, ...errs },
      detail: tag("Debit salutes (never below zero): one ledger entry and a salutes.debit event"),
    })
    .get(
      "/api/salutes/ledger",
      async ({ partner, query }) => {
        const page = parsePage(query);
        return { success: true as const, ...(await listLedger(ctx, ownerOf(partner.actor), query, page)) };
      },
      {
        partner: { scope: "ledger" },
        query: M.ledgerQuery,
        response: { 200: M.ledger, ...errs },
        detail: tag("A user's ledger entries, newest first by default"),
      },
    )
    .get("/api/salutes/conversion-policy", () => ({ success: true as const, policy: conversionPolicy(ctx) }), {
      partner: { scope: "read" },
      query: M.policyQuery,
      response: { 200: M.policy, ...errs },
      detail: tag("The conversion policy: rate, bounds and daily cap"),
    })
    .post(
      "/api/salutes/convert",
      ({ partner, body }) =>
        commit(partner, body.user_id, async (t) => {
          const r = await convert(t, ctx, ownerOf(partner.actor), authorOf(partner), body);
          return { answer: r.answer, deliveries: Promise.resolve(r.deliveries) };
        }),
      {
        partner: { scope: "debit", mutation: true, nonceInEffect: true },
        query: M.mutationQuery,
        body: M.convertBody,
        response: { 200: M.converted, ...errs },
        detail: tag("Convert salutes under the policy: debits the ledger and records the conversion"),
      },
    );
}
