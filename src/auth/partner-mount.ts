import type { TObject, TProperties, TSchema } from "@sinclair/typebox";
import { type Owner, ownerOf, type PartnerActor } from "./actors";
import type { PartnerRequest } from "./partner-request";
import type { Queryable, TxScope } from "../db/port";
import { ok } from "../http/envelope";
import type { Mutation, MutationEffect, MutationOptions } from "./partner-mutation";

// The partner routes that have a sandbox twin (users, salutes, webhooks) are declared once, by their room, as a
// function of the mount they serve, and mounted twice by src/app.ts: live (LIVE, below) and sandbox
// (src/sandbox/mount.ts). A mount is what differs between the two — the path prefix, the key mode, whose rows a key
// works on, the fields every answer adds, the summary's prefix and the sandbox's few features of its own; a route
// that does something only in the sandbox says `m.sandbox` where it does it.

type EntryFields = { user_id: string; amount: number; reason: string; source: string };

/** What a sandbox write learns from the fixture record its transaction holds; nothing on the live mount. */
export interface HeldFixtures {
  /** A salutes entry with the fields a call left out filled from the fixture (src/sandbox/defaults.ts). */
  entry(body: Partial<EntryFields>): EntryFields;
}

/** A write's effect as a mount runs it, in its transaction `t`. */
export type HeldEffect<T> = (t: TxScope, fixtures?: HeldFixtures) => Promise<T>;

/** The calling key's side of a mount: whose rows it works on, and how its writes' transactions hold them. */
export interface Opened {
  owner: Owner;
  hold<T>(effect: HeldEffect<T>): MutationEffect<T>;
}

export interface PartnerMount {
  mode: "live" | "sandbox";
  sandbox: boolean;
  /** Where the partner routes of this mount are: /api/partner or /api/partner/sandbox. */
  prefix: string;
  /** The Elysia plugin name of a room's routes on this mount (two plugins of one name would be deduplicated). */
  plugin(room: string): string;
  /** A route's detail: its summary on this mount (the sandbox's says "Sandbox: …"). */
  detail(live: string, sandbox: string): { tags: string[]; summary: string };
  /** The owner of the calling key (the sandbox's seeds its fixtures on first use) and how its writes hold it. */
  open(actor: PartnerActor): Promise<Opened>;
  /** Spread into every answer of a read, after `success` (the sandbox's mode, fixture_profile and source). */
  read: object;
  /** Spread into every answer of a write, after `success` (the sandbox's also say live_side_effects_performed). */
  write: object;
  /**
   * A read's (a write's) answer schema on this mount: the live one, with the sandbox's `read` (`write`) fields and
   * the route's `extra` on the sandbox mount. Typed as the live schema; the response validator checks the rest.
   */
  readOf<T extends TObject>(live: T, extra?: TProperties): T;
  writeOf<T extends TObject>(live: T, extra?: TProperties): T;
  /** The sandbox's webhook simulator: the headers and body a delivery is (or would be) sent with. */
  simulation?: { schema: TSchema; of(t: Queryable, owner: Owner, deliveryId: number): Promise<object> };
}

const liveHold = <T>(effect: HeldEffect<T>): MutationEffect<T> => effect;

/** The live mount: a key works on its partner's live rows, and answers are the live schemas as they are. */
export const LIVE: PartnerMount = {
  mode: "live",
  sandbox: false,
  prefix: "/api/partner",
  plugin: (room) => `herald:live-${room}`,
  detail: (live) => ({ tags: ["partner"], summary: live }),
  open: async (actor) => ({ owner: ownerOf(actor), hold: liveHold }),
  read: {},
  write: {},
  readOf: (live) => live,
  writeOf: (live) => live,
};

/**
 * A room's writes on a mount: `effect` runs in the transaction that holds the caller's rows (its owner given), under
 * the request's Idempotency-Key, and answers `success`, the mount's write fields, then its own.
 */
export const mountWrites =
  (m: PartnerMount, mutation: Mutation) =>
  async <T extends object>(partner: PartnerRequest, effect: (t: Queryable, owner: Owner) => Promise<T>, opts?: MutationOptions) => {
    const { owner, hold } = await m.open(partner.actor);
    return mutation(
      partner,
      hold(async (t) => ok({ ...m.write, ...(await effect(t, owner)) })),
      opts,
    );
  };
