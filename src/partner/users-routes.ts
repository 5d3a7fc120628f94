import { Elysia, t } from "elysia";
import { ownerOf } from "../auth/actors";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { isTruthyFlag, ok } from "../http/envelope";
import { partnerTag, readErrors, writeErrors } from "../http/routes/declare";
import { NotFoundError } from "../http/errors/errors";
import { listAnswer, parsePage } from "../http/pagination";
import { LIVE, mountWrites, type PartnerMount } from "../auth/partner-mount";
import { partnerMutation } from "../auth/partner-mutation";
import { listUsers } from "./user-lookup";
import { UsersModel as M } from "./users-model";
import { createUser, getUserView, updateUser, USER_DOCS_LINKS, USER_LINKS } from "./users-service";
import { walletVerification } from "./wallet-verification";
import { linkWallet } from "./wallets-service";

/** The links of a user answer: the mount's own routes (the sandbox has no lookup, and links its salutes instead). */
const LINKS = {
  live: { docs_links: USER_DOCS_LINKS, links: USER_LINKS },
  sandbox: {
    docs_links: { users: "/api/docs#/partner", errors: "/api/partner/errors.json", verify: "/api/partner/sandbox/verify" },
    links: {
      users: "/api/partner/sandbox/users",
      self: "/api/partner/sandbox/users/USER_ID",
      wallets: "/api/partner/sandbox/users/USER_ID/wallets",
      balance: "/api/partner/sandbox/salutes/balance?user_id=USER_ID",
      ledger: "/api/partner/sandbox/salutes/ledger?user_id=USER_ID",
    },
  },
};

/** The sandbox's GET of one user may also name the user's external_id (src/partner/users-model.ts has the live query). */
const sandboxGetQuery = t.Object({
  ...M.getQuery.properties,
  external_id: t.Optional(t.String({ maxLength: 128, description: "If given, the user must also have this external_id (else 404)" })),
});

/**
 * Partner users and their wallets on a mount (scope `read` to read, `users` to write): live keys at /api/partner,
 * sandbox keys at /api/partner/sandbox, with the same verbs on their own rows — validation, conflicts and
 * users.updated events behave exactly as live.
 */
export function userRoutesFor(ctx: AppContext, guards: Guards, m: PartnerMount) {
  const mutation = partnerMutation(ctx, guards.partner.idempotency);
  const read = { scope: "read" as const, mode: m.mode };
  const write = { scope: "users" as const, mutation: true, mode: m.mode };
  const links = LINKS[m.mode];
  const held = mountWrites(m, mutation);
  return new Elysia({ name: m.plugin("users") })
    .use(guards.partner.plugin)
    .post(`${m.prefix}/users`, ({ partner, body, set }) => held(partner, (t, owner) => createUser(t, ctx, owner, body), { created: set }), {
      partner: write,
      body: M.createBody,
      response: { 201: m.writeOf(M.created), ...writeErrors },
      detail: m.detail("Create a user; wallet_address becomes the primary wallet", "create a user in the sandbox"),
    })
    .get(
      `${m.prefix}/users`,
      async ({ partner, query }) => {
        const { owner } = await m.open(partner.actor);
        const r = await listUsers(ctx, owner, { status: query.status, q: query.q, includeWallets: isTruthyFlag(query.include_wallets) }, parsePage(query));
        const { status, q, include_wallets } = r.applied;
        return ok({ ...m.read, ...listAnswer("users", r, { status, q, include_wallets }), ...links });
      },
      {
        partner: read,
        query: M.listQuery,
        response: { 200: m.readOf(M.list), ...readErrors },
        detail: m.detail("List your users, newest first", "list your sandbox users (fixtures and your own), newest first"),
      },
    )
    .get(
      `${m.prefix}/users/:user_id`,
      async ({ partner, params, query }) => {
        const { owner } = await m.open(partner.actor);
        const user = await getUserView(ctx, owner, params.user_id, isTruthyFlag(query.include_wallets));
        // Only the sandbox's query names an external_id: a mismatching one is answered like an unknown user, since
        // the pair did not name one of your users.
        const externalId = m.sandbox ? (query as typeof sandboxGetQuery.static).external_id : undefined;
        if (externalId !== undefined && externalId !== user.external_id) throw new NotFoundError("user", `${params.user_id} with external_id ${externalId}`);
        return ok({ ...m.read, user, ...links });
      },
      {
        partner: read,
        params: M.idParams,
        query: m.sandbox ? sandboxGetQuery : M.getQuery,
        response: { 200: m.readOf(M.one), ...readErrors },
        detail: m.detail("One user; another partner's id is 404", "one sandbox user; optional external_id must match"),
      },
    )
    .patch(`${m.prefix}/users/:user_id`, ({ partner, params, body }) => held(partner, (t, owner) => updateUser(t, ctx, owner, params.user_id, body)), {
      partner: write,
      params: M.idParams,
      body: M.patchBody,
      response: { 200: m.writeOf(M.updated), ...writeErrors },
      detail: m.detail("Change some of a user's fields", "change some of a sandbox user's fields"),
    })
    .post(`${m.prefix}/users/:user_id/wallets`, ({ partner, params, body }) => held(partner, (t, owner) => linkWallet(t, ctx, owner, params.user_id, body)), {
      partner: write,
      params: M.idParams,
      body: M.linkBody,
      response: { 200: m.writeOf(M.wallets), ...writeErrors },
      detail: m.detail("Link or update a wallet; answers all the user's wallets", "link or update a sandbox user's wallet"),
    });
}

/** The live user routes, with the two the sandbox has not: lookup and wallet verification. */
export function userRoutes(ctx: AppContext, guards: Guards) {
  const read = { scope: "read" as const };
  return new Elysia({ name: "herald:partner-users" })
    .use(guards.partner.plugin)
    .use(userRoutesFor(ctx, guards, LIVE))
    .get(
      "/api/partner/user-lookup",
      async ({ partner, query }) => {
        // The query's filters as they are (listUsers reads status, q, email, username and wallet of it).
        const r = await listUsers(ctx, ownerOf(partner.actor), { ...query, includeWallets: isTruthyFlag(query.include_wallets) }, parsePage(query));
        return ok({ ...listAnswer("users", r, r.applied), ...LINKS.live });
      },
      {
        partner: read,
        query: M.lookupQuery,
        response: { 200: M.lookupList, ...readErrors },
        detail: partnerTag("Find users by text, email, username or wallet"),
      },
    )
    .get(
      "/api/partner/wallet-verification/:wallet_address",
      async ({ partner, params, query }) => ok(await walletVerification(ctx, ownerOf(partner.actor), params.wallet_address, query.blockchain)),
      {
        partner: read,
        params: M.verificationParams,
        query: M.verificationQuery,
        response: { 200: M.verification, ...readErrors },
        detail: partnerTag("A wallet's states, verification freshness and owner (linked false, owner null when none of your users has it)"),
      },
    );
}
