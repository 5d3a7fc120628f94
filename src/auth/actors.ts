import type { KeyMode, Scope } from "./scopes";

/** Who is acting. Verbs take it in their input and check scopes / filter by partner with it. */
export type Actor =
  | { kind: "partner"; keyId: string; partner: string; mode: KeyMode; scopes: readonly Scope[] }
  | { kind: "admin"; tokenId: number; name: string }
  | { kind: "cli"; user: string }
  | { kind: "job"; name: string }
  | { kind: "public" };

export type PartnerActor = Extract<Actor, { kind: "partner" }>;

export function actorLabel(actor: Actor): string {
  switch (actor.kind) {
    case "partner":
      return `partner:${actor.keyId}`;
    case "admin":
      return `admin:${actor.name}#${actor.tokenId}`;
    case "cli":
      return `cli:${actor.user}`;
    case "job":
      return `job:${actor.name}`;
    case "public":
      return "public";
  }
}

/** Whose data a request touches: partner data is always filtered by both, so sandbox never meets live. */
export interface Owner {
  partner: string;
  mode: KeyMode;
}

export const ownerOf = (a: PartnerActor): Owner => ({ partner: a.partner, mode: a.mode });
