import type { OpenApiDocument } from "./components";
import { type OperationView, subsetOf } from "./subset";

// The API reference at /api/docs shows one audience at a time: Scalar draws every operation of its document, and the
// whole one (~280 paths) took 19 s to show anything and 76–92 s to finish. Each audience's document,
// /api/openapi/<slug>.json, is cut from the whole one, so together they hold every operation exactly once.
// An operation goes by its credentials, then its tags (PRECEDENCE): anything an operator calls (tagged admin, or
// taking the operator token) to the operators, the mini-app's to the mini-app, the signed routes to the partners,
// the rest to the public.

export interface Audience {
  slug: string;
  /** The selector's label. */
  title: string;
  /** Tags that put an operation here; an operation with tags of two audiences goes to the one listed first in PRECEDENCE. */
  tags: readonly string[];
  description: string;
}

const WHOLE =
  "The whole API in one document: /api/openapi.json and /api/openapi.yaml; this reference shows one audience at a time (the selector at the top left).";

/** In the selector's order: partners first (the reference opens there). */
export const AUDIENCES = [
  {
    slug: "partners",
    title: "Partners (signed API)",
    tags: ["partner"],
    description: "", // the whole document's description: signing, the samples' Python helper (see audienceSubset)
  },
  {
    slug: "public",
    title: "Public and transparency",
    tags: ["public", "transparency", "audio-share", "system"],
    description: "What anyone may call without credentials: public status, proofs and transparency data, audio share links, health and the API documents.",
  },
  {
    slug: "mini-app",
    title: "Mini-app (messenger)",
    tags: ["messenger"],
    description: "The players' mini-app and the messenger bot: routes called with Telegram init data (`Authorization: tma …`) or the bot's webhook secret.",
  },
  {
    slug: "operators",
    title: "Operators (admin)",
    tags: ["admin", "webhooks"],
    description: "Operator routes: the console pages and their forms, the admin JSON routes (`Authorization: Bearer hat_…`) and exports.",
  },
] as const satisfies readonly Audience[];

export type AudienceSlug = (typeof AUDIENCES)[number]["slug"];

/** Which audience wins when an operation carries tags of several. */
const PRECEDENCE: readonly AudienceSlug[] = ["operators", "mini-app", "partners", "public"];
const FALLBACK: AudienceSlug = "public";
const bySlug = new Map<string, Audience>(AUDIENCES.map((a) => [a.slug, a]));

/** Credential schemes that make an operation an operator's whatever its tags. */
const OPERATOR_SCHEMES = ["AdminBearer", "AdminSession"];

/** The audience of an operation with these tags (untagged or unknown tags: public). */
export function audienceOfTags(tags: readonly string[]): AudienceSlug {
  return PRECEDENCE.find((slug) => bySlug.get(slug)!.tags.some((t) => tags.includes(t))) ?? FALLBACK;
}

/** The audience of an operation: an operator's credential puts it with the operators, else its tags decide. */
export function audienceOf(op: OperationView): AudienceSlug {
  if ((op.security ?? []).some((s) => OPERATOR_SCHEMES.some((name) => name in s))) return "operators";
  return audienceOfTags(op.tags ?? []);
}

/** Where an old tag link `#tag/<tag>` goes: the audience that tag alone names. */
export const AUDIENCE_OF_TAG: Readonly<Record<string, AudienceSlug>> = Object.fromEntries(
  AUDIENCES.flatMap((a) => a.tags.map((t) => [t, audienceOfTags([t])] as const)),
);

/** The document of one audience: its operations and what they reach. */
export function audienceSubset(doc: OpenApiDocument, slug: AudienceSlug): OpenApiDocument {
  const audience = bySlug.get(slug)!;
  const whole = String(doc.info.description ?? "");
  return subsetOf(doc, {
    keep: (op: OperationView) => audienceOf(op) === slug,
    info: {
      title: `${String(doc.info.title)}: ${audience.title}`,
      description: `${audience.description || whole}\n\n${WHOLE}`,
    },
  });
}
