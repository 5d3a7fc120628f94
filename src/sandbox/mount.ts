import type { AppContext } from "../context";
import type { PartnerMount } from "../auth/partner-mount";
import type { Scope } from "../auth/scopes";
import { readErrors, writeErrors } from "../http/routes/declare";
import { entryWithDefaults } from "./defaults";
import { holdingSandbox, openSandbox } from "./fixtures";
import { readOf, SandboxModel, writeOf } from "./model";
import { sandboxRead, sandboxWrite } from "./profile";
import { simulateDelivery } from "./simulator";

/** A sandbox route's detail: its summary says "Sandbox: …". */
export const sandboxDetail = (summary: string) => ({ tags: ["partner"], summary: `Sandbox: ${summary}` });

/** A sandbox route's guard (sandbox keys only), include_meta query, answer with a read's or a write's refusals, and summary. */
export const sandboxHook = <const G extends { scope?: Scope; mutation?: true }, S>(partner: G, answer: S, summary: string) => ({
  partner: { ...partner, mode: "sandbox" as const },
  query: SandboxModel.metaQuery,
  response: { 200: answer, ...(partner.mutation ? writeErrors : readErrors) },
  detail: sandboxDetail(summary),
});

/**
 * The sandbox mount of the partner routes (src/auth/partner-mount.ts): sandbox keys only, at
 * /api/partner/sandbox. A key works on its partner's sandbox rows alone (openSandbox: the owner is the partner in
 * mode sandbox, refused for any other key, with the fixtures seeded on first use), every write's transaction holds
 * the partner's fixture row so no reset runs beside it (holdingSandbox), and every answer says it is the sandbox's.
 */
export function sandboxMount(ctx: AppContext): PartnerMount {
  return {
    mode: "sandbox",
    sandbox: true,
    prefix: "/api/partner/sandbox",
    plugin: (room) => `herald:sandbox-${room}`,
    detail: (_live, sandbox) => sandboxDetail(sandbox),
    async open(actor) {
      const { owner } = await openSandbox(ctx, actor);
      return {
        owner,
        // The record is read under the held row, so a default is the current fixture's even right after a reset.
        hold: (effect) => holdingSandbox(owner, (t, fixtures) => effect(t, { entry: (body) => entryWithDefaults(body, fixtures) })),
      };
    },
    read: sandboxRead("sandbox_state"),
    write: sandboxWrite(),
    // The live schemas with the sandbox's fields; typed as the live ones (PartnerMount.readOf).
    readOf: (live, extra) => readOf(live, extra) as unknown as typeof live,
    writeOf: (live, extra) => writeOf(live, extra) as unknown as typeof live,
    simulation: { schema: SandboxModel.simulation, of: (t, owner, deliveryId) => simulateDelivery(t, ctx, owner, deliveryId) },
  };
}
