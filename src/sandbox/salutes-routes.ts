import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { PartnerRequest } from "../auth/partner-plugin";
import type { AppContext } from "../context";
import { ErrorBody } from "../http/envelope";
import { parsePage } from "../http/pagination";
import { SalutesModel } from "../salutes/model";
import { getBalance, listLedger, postEntry } from "../salutes/service";
import { entryWithDefaults } from "./defaults";
import { holdingSandbox, openSandbox } from "./fixtures";
import { SandboxModel as M } from "./model";
import { sandboxRead, sandboxWrite } from "./profile";

const errs = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody };
const tag = (summary: string) => ({ tags: ["partner"], summary: `Sandbox: ${summary}` });

/**
 * The sandbox salutes ledger: the live verbs (src/salutes/service.ts) with the sandbox owner — the same exact
 * amounts, the never-below-zero rule and the salutes.credit/debit events, on sandbox rows only.
 */
export function sandboxSalutesRoutes(ctx: AppContext, guards: Guards) {
  const idem = guards.partner.idempotency;
  const entry =
    (kind: "credit" | "debit") =>
    async ({ partner, body }: { partner: PartnerRequest; body: typeof M.entryBody.static }) => {
      const { owner } = await openSandbox(ctx, partner.actor);
      let deliveries = 0;
      const out = await idem.run(
        partner.idempotency,
        holdingSandbox(owner, async (t, fixtures) => {
          // Fields left out come from the fixture (fx-alice, 1 salute, sandbox_test, sandbox): src/sandbox/defaults.ts.
          // The record is read under the held row, so the default user is the current fx-alice even right after a reset.
          const entry = entryWithDefaults(body, fixtures);
          const r = await postEntry(t, ctx, owner, { keyId: partner.actor.keyId, idempotencyKey: partner.idempotency?.key ?? null }, kind, entry);
          deliveries = await r.deliveries;
          return { success: true as const, ...sandboxWrite(), ...r.answer };
        }),
      );
      if (deliveries) ctx.dispatcher.nudge();
      return out;
    };
  return new Elysia({ name: "herald:sandbox-salutes" })
    .use(guards.partner.plugin)
    .get(
      "/api/partner/sandbox/salutes/balance",
      async ({ partner, query }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        return {
          success: true as const,
          ...sandboxRead("sandbox_state"),
          ...(await getBalance(ctx, owner, partner.actor.keyId, query.user_id)),
          currency: "salutes" as const,
        };
      },
      {
        partner: { scope: "read", mode: "sandbox" },
        query: SalutesModel.balanceQuery,
        response: { 200: M.balance, ...errs },
        detail: tag("a sandbox user's salutes balance"),
      },
    )
    .post("/api/partner/sandbox/salutes/credit", entry("credit"), {
      partner: { scope: "credit", mutation: true, mode: "sandbox" },
      query: SalutesModel.mutationQuery,
      body: M.entryBody,
      response: { 200: M.entryResult, ...errs },
      detail: tag("credit salutes to a sandbox user (fields left out: fx-alice, 1, sandbox_test, sandbox)"),
    })
    .post("/api/partner/sandbox/salutes/debit", entry("debit"), {
      partner: { scope: "debit", mutation: true, mode: "sandbox" },
      query: SalutesModel.mutationQuery,
      body: M.entryBody,
      response: { 200: M.entryResult, ...errs },
      detail: tag("debit salutes from a sandbox user, never below zero (fields left out: fx-alice, 1, sandbox_test, sandbox)"),
    })
    .get(
      "/api/partner/sandbox/salutes/ledger",
      async ({ partner, query }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        return { success: true as const, ...sandboxRead("sandbox_state"), ...(await listLedger(ctx, owner, query, parsePage(query))) };
      },
      {
        partner: { scope: "ledger", mode: "sandbox" },
        query: SalutesModel.ledgerQuery,
        response: { 200: M.ledger, ...errs },
        detail: tag("a sandbox user's ledger entries"),
      },
    );
}
