import { Elysia } from "elysia";
import { ownerOf } from "../auth/actors";
import type { Guards } from "../auth/guards";
import type { PartnerRequest } from "../auth/partner-plugin";
import type { AppContext } from "../context";
import { ErrorBody } from "../http/envelope";
import { ValidationError } from "../http/errors";
import { parsePage } from "../http/pagination";
import { conversionPolicy, convert } from "./conversion";
import { SalutesModel as M } from "./model";
import { getBalance, listLedger, postEntry, type EntryAuthor } from "./service";

const errs = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody };
const tag = (summary: string) => ({ tags: ["partner"], summary });

const authorOf = (partner: PartnerRequest): EntryAuthor => ({ keyId: partner.actor.keyId, idempotencyKey: partner.idempotency?.key ?? null });

/**
 * Elysia's body normaliser silently drops properties a schema does not declare, even with
 * additionalProperties: false. A misspelt field on a money route ("ammount") must be a 400, not ignored, so the
 * parsed body's keys are noted before validation (transform) and refused after authentication (handler).
 */
function unknownFieldGuard() {
  const seen = new WeakMap<Request, string[]>();
  return {
    note: (allowed: readonly string[]) => ({ request, body }: { request: Request; body: unknown }) => {
      if (!body || typeof body !== "object" || Array.isArray(body)) return;
      const extra = Object.keys(body).filter((k) => !allowed.includes(k));
      if (extra.length) seen.set(request, extra);
    },
    refuse(request: Request): void {
      const extra = seen.get(request);
      if (!extra) return;
      throw new ValidationError(`Unknown field${extra.length > 1 ? "s" : ""}: ${extra.join(", ")}`, extra.map((field) => ({ field, problem: "is not a known field" })));
    },
  };
}

/** The salutes ledger (DESIGN.md §5): live keys; `user_id` is always one of the caller's users. */
export function salutesRoutes(ctx: AppContext, guards: Guards) {
  const idem = guards.partner.idempotency;
  const fields = unknownFieldGuard();
  const entryFields = fields.note(Object.keys(M.mutationBody.properties));
  const entry = (kind: "credit" | "debit") => ({ partner, body, request }: { partner: PartnerRequest; body: typeof M.mutationBody.static; request: Request }) => {
    fields.refuse(request);
    let deliveries = 0;
    const out = idem.run(partner.idempotency, () => {
      const r = postEntry(ctx, ownerOf(partner.actor), authorOf(partner), kind, body);
      deliveries = r.deliveries;
      return { success: true as const, ...r.answer };
    });
    if (deliveries) ctx.dispatcher.nudge();
    return out;
  };
  return new Elysia({ name: "herald:salutes" })
    .use(guards.partner.plugin)
    .get("/api/salutes/balance", ({ partner, query }) => ({ success: true as const, ...getBalance(ctx, ownerOf(partner.actor), partner.actor.keyId, query.user_id) }),
      { partner: { scope: "read" }, query: M.balanceQuery, response: { 200: M.balance, ...errs }, detail: tag("A user's salutes balance") })
    .post("/api/salutes/credit", entry("credit"),
      { partner: { scope: "credit", mutation: true }, query: M.mutationQuery, body: M.mutationBody, transform: entryFields, response: { 200: M.mutationResult, ...errs }, detail: tag("Credit salutes: one ledger entry and a salutes.credit event") })
    .post("/api/salutes/debit", entry("debit"),
      { partner: { scope: "debit", mutation: true }, query: M.mutationQuery, body: M.mutationBody, transform: entryFields, response: { 200: M.mutationResult, ...errs }, detail: tag("Debit salutes (never below zero): one ledger entry and a salutes.debit event") })
    .get("/api/salutes/ledger", ({ partner, query }) => {
      const page = parsePage(query);
      return { success: true as const, ...listLedger(ctx, ownerOf(partner.actor), query, page) };
    }, { partner: { scope: "ledger" }, query: M.ledgerQuery, response: { 200: M.ledger, ...errs }, detail: tag("A user's ledger entries, newest first by default") })
    .get("/api/salutes/conversion-policy", () => ({ success: true as const, policy: conversionPolicy(ctx) }),
      { partner: { scope: "read" }, query: M.policyQuery, response: { 200: M.policy, ...errs }, detail: tag("The conversion policy: rate, bounds and daily cap") })
    .post("/api/salutes/convert", ({ partner, body, request }) => {
      fields.refuse(request);
      let deliveries = 0;
      const out = idem.run(partner.idempotency, () => {
        const r = convert(ctx, ownerOf(partner.actor), authorOf(partner), body);
        deliveries = r.deliveries;
        return { success: true as const, ...r.answer };
      });
      if (deliveries) ctx.dispatcher.nudge();
      return out;
    }, { partner: { scope: "debit", mutation: true }, query: M.mutationQuery, body: M.convertBody, transform: fields.note(Object.keys(M.convertBody.properties)), response: { 200: M.converted, ...errs }, detail: tag("Convert salutes under the policy: debits the ledger and records the conversion") });
}
