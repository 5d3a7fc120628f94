import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { ErrorBody, isTruthyFlag } from "../http/envelope";
import { NotFoundError } from "../http/errors";
import { parsePage } from "../http/pagination";
import { listUsers } from "../partner/service";
import { createUser, getUserView, updateUser } from "../partner/users-service";
import { linkWallet } from "../partner/wallets-service";
import { holdingSandbox, openSandbox } from "./fixtures";
import { SandboxModel as M } from "./model";
import { sandboxRead, sandboxWrite } from "./profile";

const readErrs = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };
const writeErrs = { ...readErrs, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody, 422: ErrorBody };
const tag = (summary: string) => ({ tags: ["partner"], summary: `Sandbox: ${summary}` });

const SANDBOX_USER_LINKS = {
  users: "/api/partner/sandbox/users",
  self: "/api/partner/sandbox/users/USER_ID",
  wallets: "/api/partner/sandbox/users/USER_ID/wallets",
  balance: "/api/partner/sandbox/salutes/balance?user_id=USER_ID",
  ledger: "/api/partner/sandbox/salutes/ledger?user_id=USER_ID",
};
const SANDBOX_USER_DOCS = { users: "/api/docs#/partner", errors: "/api/partner/errors.json", verify: "/api/partner/sandbox/verify" };
const links = { docs_links: SANDBOX_USER_DOCS, links: SANDBOX_USER_LINKS };

/**
 * Sandbox users and wallets: the live verbs (src/partner) called with the sandbox owner, so validation,
 * conflicts and users.updated events behave exactly as live — in the sandbox rows only.
 */
export function sandboxUserRoutes(ctx: AppContext, guards: Guards) {
  const idem = guards.partner.idempotency;
  const read = { scope: "read" as const, mode: "sandbox" as const };
  const write = { scope: "users" as const, mutation: true, mode: "sandbox" as const };
  return new Elysia({ name: "herald:sandbox-users" })
    .use(guards.partner.plugin)
    .get(
      "/api/partner/sandbox/users",
      async ({ partner, query }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const r = await listUsers(ctx, owner, { status: query.status, q: query.q, includeWallets: isTruthyFlag(query.include_wallets) }, parsePage(query));
        const { status, q, include_wallets } = r.applied;
        return {
          success: true as const,
          ...sandboxRead("sandbox_state"),
          count: r.count,
          users: r.users,
          query: { ...r.query, status, q, include_wallets },
          pagination: r.pagination,
          ...links,
        };
      },
      {
        partner: read,
        query: M.userListQuery,
        response: { 200: M.userList, ...readErrs },
        detail: tag("list your sandbox users (fixtures and your own), newest first"),
      },
    )
    .post(
      "/api/partner/sandbox/users",
      async ({ partner, body, set }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const out = await idem.run(
          partner.idempotency,
          holdingSandbox(owner, async (t) => ({ success: true as const, ...sandboxWrite(), ...(await createUser(t, ctx, owner, body)) })),
          201,
        );
        ctx.dispatcher.nudge();
        set.status = 201;
        return out;
      },
      { partner: write, body: M.userCreateBody, response: { 201: M.userCreated, ...writeErrs }, detail: tag("create a user in the sandbox") },
    )
    .get(
      "/api/partner/sandbox/users/:user_id",
      async ({ partner, params, query }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const user = await getUserView(ctx, owner, params.user_id, isTruthyFlag(query.include_wallets));
        // A mismatching external_id is answered like an unknown user: the pair did not name one of your users.
        if (query.external_id !== undefined && query.external_id !== user.external_id)
          throw new NotFoundError("user", `${params.user_id} with external_id ${query.external_id}`);
        return { success: true as const, ...sandboxRead("sandbox_state"), user, ...links };
      },
      {
        partner: read,
        params: M.userIdParams,
        query: M.userGetQuery,
        response: { 200: M.userOne, ...readErrs },
        detail: tag("one sandbox user; optional external_id must match"),
      },
    )
    .patch(
      "/api/partner/sandbox/users/:user_id",
      async ({ partner, params, body }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const out = await idem.run(
          partner.idempotency,
          holdingSandbox(owner, async (t) => ({
            success: true as const,
            ...sandboxWrite(),
            ...(await updateUser(t, ctx, owner, params.user_id, body)),
          })),
        );
        ctx.dispatcher.nudge();
        return out;
      },
      {
        partner: write,
        params: M.userIdParams,
        body: M.userPatchBody,
        response: { 200: M.userUpdated, ...writeErrs },
        detail: tag("change some of a sandbox user's fields"),
      },
    )
    .post(
      "/api/partner/sandbox/users/:user_id/wallets",
      async ({ partner, params, body }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const out = await idem.run(
          partner.idempotency,
          holdingSandbox(owner, async (t) => ({
            success: true as const,
            ...sandboxWrite(),
            ...(await linkWallet(t, ctx, owner, params.user_id, body)),
          })),
        );
        ctx.dispatcher.nudge();
        return out;
      },
      {
        partner: write,
        params: M.userIdParams,
        body: M.walletBody,
        response: { 200: M.wallets, ...writeErrs },
        detail: tag("link or update a sandbox user's wallet"),
      },
    );
}
