import { Elysia } from "elysia";
import { ownerOf } from "../auth/actors";
import type { Guards } from "../auth/guards";
import type { PartnerRequest } from "../auth/partner-plugin";
import type { AppContext } from "../context";
import type { Queryable } from "../db/port";
import { ok } from "../http/envelope";
import { parsePage } from "../http/pagination";
import { partnerMutation } from "../auth/partner-mutation";
import { LIVE, type PartnerMount } from "../auth/partner-mount";
import { conversionPolicy, convert } from "./conversion";
import { SalutesModel as M } from "./model";
import { balanceGroup, type EntryAuthor, type EntryBody, getBalance, listLedger, postEntry } from "./service";
import { partnerTag, readErrors, writeErrors } from "../http/routes/declare";

const authorOf = (partner: PartnerRequest): EntryAuthor => ({ keyId: partner.actor.keyId, idempotencyKey: partner.idempotency?.key ?? null });

/**
 * The salutes ledger (docs/design.md §5) on a mount: live keys at /api/salutes, sandbox keys at
 * /api/partner/sandbox/salutes — the same exact amounts, the never-below-zero rule and the salutes.credit/debit
 * events, on the key's own rows; `user_id` is always one of the caller's users.
 */
export function salutesRoutesFor(ctx: AppContext, guards: Guards, m: PartnerMount) {
  const mutation = partnerMutation(ctx, guards.partner.idempotency);
  const base = m.sandbox ? `${m.prefix}/salutes` : "/api/salutes";
  const entry =
    (kind: "credit" | "debit") =>
    async ({ partner, body }: { partner: PartnerRequest; body: typeof M.sandboxMutationBody.static }) => {
      const { owner, hold } = await m.open(partner.actor);
      let deliveries: Promise<number> | undefined;
      const effect = hold(async (t, fixtures) => {
        // The sandbox fills the fields a call leaves out from its fixtures (fx-alice, 1 salute, sandbox_test, sandbox);
        // the live schema requires every field.
        const input = fixtures ? fixtures.entry(body) : (body as EntryBody);
        const r = await postEntry(t, ctx, owner, authorOf(partner), kind, input);
        deliveries = r.deliveries;
        return ok({ ...m.write, ...r.answer });
      });
      // Live credits, debits and conversions are the busiest writes: their transactions, with the request's nonce in
      // them, share commits on the user's balance. A credit or a debit decides only by conditional statements and
      // unique claims, so those on one balance may run beside each other. A sandbox write holds its partner's fixture
      // row instead, and runs alone.
      const balance = m.sandbox ? undefined : balanceGroup(body.user_id!);
      return mutation(partner, effect, { nudge: () => deliveries, balance, conditionalOnly: true });
    };
  /** A credit's or debit's guard, query, body, answers and summary on this mount. */
  const entryHook = (kind: "credit" | "debit", live: string, sandbox: string) => ({
    partner: { scope: kind, mutation: true, mode: m.mode, nonceInEffect: !m.sandbox },
    query: M.mutationQuery,
    body: m.sandbox ? M.sandboxMutationBody : M.mutationBody,
    response: { 200: m.writeOf(M.mutationResult), ...writeErrors },
    detail: m.detail(live, `${sandbox} (fields left out: fx-alice, 1, sandbox_test, sandbox)`),
  });
  return new Elysia({ name: m.plugin("salutes") })
    .use(guards.partner.plugin)
    .get(
      `${base}/balance`,
      async ({ partner, query }) => {
        const { owner } = await m.open(partner.actor);
        return ok({
          ...m.read,
          ...(await getBalance(ctx, owner, partner.actor.keyId, query.user_id)),
          ...(m.sandbox && { currency: "salutes" as const }),
        });
      },
      {
        partner: { scope: "read", mode: m.mode },
        query: M.balanceQuery,
        response: { 200: m.readOf(M.balance, M.sandboxBalance), ...readErrors },
        detail: m.detail("A user's salutes balance", "a sandbox user's salutes balance"),
      },
    )
    .post(
      `${base}/credit`,
      entry("credit"),
      entryHook("credit", "Credit salutes: one ledger entry and a salutes.credit event", "credit salutes to a sandbox user"),
    )
    .post(
      `${base}/debit`,
      entry("debit"),
      entryHook("debit", "Debit salutes (never below zero): one ledger entry and a salutes.debit event", "debit salutes from a sandbox user, never below zero"),
    )
    .get(
      `${base}/ledger`,
      async ({ partner, query }) => {
        const { owner } = await m.open(partner.actor);
        return ok({ ...m.read, ...(await listLedger(ctx, owner, query, parsePage(query))) });
      },
      {
        partner: { scope: "ledger", mode: m.mode },
        query: M.ledgerQuery,
        response: { 200: m.readOf(M.ledger), ...readErrors },
        detail: m.detail("A user's ledger entries, newest first by default", "a sandbox user's ledger entries"),
      },
    );
}

/** The live salutes routes, with the conversion the sandbox has not. */
export function salutesRoutes(ctx: AppContext, guards: Guards) {
  const mutation = partnerMutation(ctx, guards.partner.idempotency);
  // GET conversion-policy's answer is written out rather than ok(…), as GET /api/partner/capabilities's says why.
  return new Elysia({ name: "herald:salutes" })
    .use(guards.partner.plugin)
    .use(salutesRoutesFor(ctx, guards, LIVE))
    .get("/api/salutes/conversion-policy", () => ({ success: true as const, policy: conversionPolicy(ctx) }), {
      partner: { scope: "read" },
      query: M.policyQuery,
      response: { 200: M.policy, ...readErrors },
      detail: partnerTag("The conversion policy: rate, bounds and daily cap"),
    })
    .post(
      "/api/salutes/convert",
      async ({ partner, body }) => {
        let deliveries = 0;
        const effect = async (t: Queryable) => {
          const r = await convert(t, ctx, ownerOf(partner.actor), authorOf(partner), body);
          deliveries = r.deliveries;
          return ok(r.answer);
        };
        return mutation(partner, effect, { nudge: () => deliveries, balance: balanceGroup(body.user_id) });
      },
      {
        partner: { scope: "debit", mutation: true, nonceInEffect: true },
        query: M.mutationQuery,
        body: M.convertBody,
        response: { 200: M.converted, ...writeErrors },
        detail: partnerTag("Convert salutes under the policy: debits the ledger and records the conversion"),
      },
    );
}
