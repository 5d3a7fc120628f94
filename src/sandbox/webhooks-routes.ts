import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { ok } from "../http/envelope";
import { parsePage } from "../http/pagination";
import { openSandbox } from "./fixtures";
import { sandboxHook as hook } from "./mount";
import { sandboxRead, sandboxWrite } from "./profile";
import { RUN_METADATA, runScenario, scenarioList } from "./simulator";
import { listSandboxDeliveries } from "./webhook-events";
import { SandboxWebhooksModel as M } from "./webhooks-model";

/**
 * The sandbox's own webhook routes, beside the live ones on its mount (src/webhooks/routes.ts): its delivery
 * records, filtered by the user their event names, and the signature simulator.
 */
export function sandboxWebhookRoutes(ctx: AppContext, guards: Guards) {
  const read = { scope: "webhooks" as const };
  return new Elysia({ name: "herald:sandbox-webhooks" })
    .use(guards.partner.plugin)
    .get(
      "/api/partner/sandbox/webhook-events",
      async ({ partner, query }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        const r = await listSandboxDeliveries(ctx, owner, { ...query, order: query.order ?? "desc" }, parsePage(query));
        return ok({ ...sandboxRead("sandbox_state"), ...r });
      },
      {
        ...hook(
          read,
          M.events,
          "sandbox delivery records, filtered by user_id and event_type (a filtered page looks through at most 10,000 deliveries: follow next_cursor while has_more)",
        ),
        query: M.eventsQuery,
      },
    )
    .get(
      "/api/partner/sandbox/webhook-simulator/scenarios",
      async ({ partner }) => {
        await openSandbox(ctx, partner.actor);
        const scenarios = scenarioList();
        return ok({ ...sandboxRead("sandbox_fixture"), scenarios_count: scenarios.length, scenarios });
      },
      hook(read, M.scenarios, "webhook scenarios the simulator can sign"),
    )
    .get(
      "/api/partner/sandbox/webhook-simulator/run",
      async ({ partner }) => {
        await openSandbox(ctx, partner.actor);
        return ok({ ...sandboxRead("sandbox_fixture"), ...RUN_METADATA });
      },
      hook(read, M.runMeta, "how to call the simulator (POST)"),
    )
    .post(
      "/api/partner/sandbox/webhook-simulator/run",
      async ({ partner, body }) => {
        const { owner } = await openSandbox(ctx, partner.actor);
        return ok({ ...sandboxWrite("sandbox_fixture"), ...(await runScenario(ctx, owner, partner.actor.keyId, body)) });
      },
      { body: M.runBody, ...hook(read, M.run, "sign a scenario's payload as a delivery would be; sends nothing") },
    );
}
