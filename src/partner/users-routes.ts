import { Elysia } from "elysia";
import { ownerOf } from "../auth/actors";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { ErrorBody, isTruthyFlag } from "../http/envelope";
import { parsePage } from "../http/pagination";
import { listUsers } from "./user-lookup";
import { UsersModel as M } from "./users-model";
import { createUser, getUserView, updateUser, USER_DOCS_LINKS, USER_LINKS } from "./users-service";
import { walletVerification } from "./wallet-verification";
import { linkWallet } from "./wallets-service";

const readErrs = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };
const writeErrs = { ...readErrs, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody, 422: ErrorBody };
const tag = (summary: string) => ({ tags: ["partner"], summary });

/** Partner users, their wallets and wallet verification (live keys; scope `read` to read, `users` to write). */
export function userRoutes(ctx: AppContext, guards: Guards) {
  const idem = guards.partner.idempotency;
  const read = { scope: "read" as const };
  const write = { scope: "users" as const, mutation: true };
  const links = { docs_links: USER_DOCS_LINKS, links: USER_LINKS };
  return new Elysia({ name: "herald:partner-users" })
    .use(guards.partner.plugin)
    .post(
      "/api/partner/users",
      async ({ partner, body, set }) => {
        const out = await idem.run(
          partner.idempotency,
          async (t) => ({ success: true as const, ...(await createUser(t, ctx, ownerOf(partner.actor), body)) }),
          201,
        );
        ctx.dispatcher.nudge();
        set.status = 201;
        return out;
      },
      {
        partner: write,
        body: M.createBody,
        response: { 201: M.created, ...writeErrs },
        detail: tag("Create a user; wallet_address becomes the primary wallet"),
      },
    )
    .get(
      "/api/partner/users",
      async ({ partner, query }) => {
        const r = await listUsers(
          ctx,
          ownerOf(partner.actor),
          { status: query.status, q: query.q, includeWallets: isTruthyFlag(query.include_wallets) },
          parsePage(query),
        );
        const { status, q, include_wallets } = r.applied;
        return {
          success: true as const,
          count: r.count,
          users: r.users,
          query: { ...r.query, status, q, include_wallets },
          pagination: r.pagination,
          ...links,
        };
      },
      { partner: read, query: M.listQuery, response: { 200: M.list, ...readErrs }, detail: tag("List your users, newest first") },
    )
    .get(
      "/api/partner/user-lookup",
      async ({ partner, query }) => {
        const filter = {
          status: query.status,
          q: query.q,
          email: query.email,
          username: query.username,
          wallet: query.wallet,
          includeWallets: isTruthyFlag(query.include_wallets),
        };
        const r = await listUsers(ctx, ownerOf(partner.actor), filter, parsePage(query));
        return { success: true as const, count: r.count, users: r.users, query: { ...r.query, ...r.applied }, pagination: r.pagination, ...links };
      },
      { partner: read, query: M.lookupQuery, response: { 200: M.lookupList, ...readErrs }, detail: tag("Find users by text, email, username or wallet") },
    )
    .get(
      "/api/partner/users/:user_id",
      async ({ partner, params, query }) => ({
        success: true as const,
        user: await getUserView(ctx, ownerOf(partner.actor), params.user_id, isTruthyFlag(query.include_wallets)),
        ...links,
      }),
      { partner: read, params: M.idParams, query: M.getQuery, response: { 200: M.one, ...readErrs }, detail: tag("One user; another partner's id is 404") },
    )
    .patch(
      "/api/partner/users/:user_id",
      async ({ partner, params, body }) => {
        const out = await idem.run(partner.idempotency, async (t) => ({
          success: true as const,
          ...(await updateUser(t, ctx, ownerOf(partner.actor), params.user_id, body)),
        }));
        ctx.dispatcher.nudge();
        return out;
      },
      { partner: write, params: M.idParams, body: M.patchBody, response: { 200: M.updated, ...writeErrs }, detail: tag("Change some of a user's fields") },
    )
    .post(
      "/api/partner/users/:user_id/wallets",
      async ({ partner, params, body }) => {
        const out = await idem.run(partner.idempotency, async (t) => ({
          success: true as const,
          ...(await linkWallet(t, ctx, ownerOf(partner.actor), params.user_id, body)),
        }));
        ctx.dispatcher.nudge();
        return out;
      },
      {
        partner: write,
        params: M.idParams,
        body: M.linkBody,
        response: { 200: M.wallets, ...writeErrs },
        detail: tag("Link or update a wallet; answers all the user's wallets"),
      },
    )
    .get(
      "/api/partner/wallet-verification/:wallet_address",
      async ({ partner, params, query }) => ({
        success: true as const,
        ...(await walletVerification(ctx, ownerOf(partner.actor), params.wallet_address, query.blockchain)),
      }),
      {
        partner: read,
        params: M.verificationParams,
        query: M.verificationQuery,
        response: { 200: M.verification, ...readErrs },
        detail: tag("A wallet's states, verification freshness and owner (linked false, owner null when none of your users has it)"),
      },
    );
}
