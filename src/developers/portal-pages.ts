import apiReference from "../../docs/api-reference.md" with { type: "text" };
import gettingStarted from "../../docs/getting-started.md" with { type: "text" };
import httpConventions from "../../docs/http-conventions.md" with { type: "text" };
import partnerAuth from "../../docs/partner-auth.md" with { type: "text" };
import partnerStatus from "../../docs/partner-status.md" with { type: "text" };
import partnerUsers from "../../docs/partner-users.md" with { type: "text" };
import salutes from "../../docs/salutes.md" with { type: "text" };
import sandbox from "../../docs/sandbox.md" with { type: "text" };
import sdk from "../../docs/sdk.md" with { type: "text" };
import webhooks from "../../docs/webhooks.md" with { type: "text" };

// The developer portal's pages (docs/developers-portal.md): each is made of parts of the repository's docs, which are
// embedded in the binary at build time and rendered, never copied into a second text. A part is a whole document, or
// some of its `##` sections named by their GitHub ids ("" for the introduction); a page may end with a part the
// portal writes itself from what the code holds (the Python signer's file, the error catalog, the deprecation
// registry). The order here is the navigation's.

/** The docs the portal renders, by repository path. */
export const PORTAL_DOCS: Readonly<Record<string, string>> = {
  "docs/getting-started.md": gettingStarted,
  "docs/partner-auth.md": partnerAuth,
  "docs/http-conventions.md": httpConventions,
  "docs/sandbox.md": sandbox,
  "docs/webhooks.md": webhooks,
  "docs/sdk.md": sdk,
  "docs/partner-users.md": partnerUsers,
  "docs/salutes.md": salutes,
  "docs/partner-status.md": partnerStatus,
  "docs/api-reference.md": apiReference,
};

/** What the portal writes itself: the Python signer and the downloads, the error catalog, the changelog. */
export type GeneratedPart = "signers" | "catalog" | "changelog" | "pages";

export type Part = { readonly doc: string; readonly sections?: readonly string[] } | { readonly generated: GeneratedPart };

export interface PortalPage {
  /** The page's path under /developers/ ("" is /developers itself). */
  readonly slug: string;
  readonly title: string;
  /** One line: what a partner finds there (the index page lists it). */
  readonly summary: string;
  readonly parts: readonly Part[];
}

const AUTH = "docs/partner-auth.md";
const HTTP = "docs/http-conventions.md";

/** A page of the portal: its slug, title, summary and parts. */
const page = (slug: string, title: string, summary: string, ...parts: Part[]): PortalPage => ({ slug, title, summary, parts });

export const PORTAL_PAGES: readonly PortalPage[] = [
  page(
    "",
    "Getting started",
    "Credentials, the first signed call in curl, TypeScript and Python, and where each topic is",
    { doc: "docs/getting-started.md" },
    { generated: "pages" },
  ),
  page(
    "signing",
    "Signing requests",
    "Keys and modes, the canonical string with test vectors, openssl and curl, herald sign, TypeScript and Python",
    {
      doc: AUTH,
      sections: [
        "",
        "1-keys-and-modes",
        "2-headers",
        "3-the-canonical-string",
        "4-worked-example",
        "5-the-same-signature-with-openssl-and-curl",
        "6-typescript",
        "7-herald-sign",
        "12-secret-rotation",
      ],
    },
    { generated: "signers" },
  ),
  page("idempotency", "Idempotency, retries and replays", "One effect per operation: Idempotency-Key, 409 idempotency_replay, what to retry and how", {
    doc: AUTH,
    sections: ["8-idempotency", "11-retries"],
  }),
  page("sandbox", "Sandbox", "Practice data of your own: every sandbox route, fixtures, reset, webhooks, promotion to live", { doc: "docs/sandbox.md" }),
  page(
    "webhooks",
    "Webhooks and signature verification",
    "Deliveries, their signatures (and Standard Webhooks), retries, the webhook routes, a complete receiver",
    { doc: "docs/webhooks.md" },
  ),
  page(
    "errors",
    "Errors and the error catalog",
    "The refusal body, the order of the checks, every error code with its status and retry advice",
    { doc: AUTH, sections: ["9-error-answers"] },
    { doc: HTTP, sections: ["statuses-outside-the-specs-status-guide"] },
    { generated: "catalog" },
  ),
  page(
    "limits",
    "Limits",
    "Requests per minute per key, the rate-limit headers, and what a request body may be",
    { doc: AUTH, sections: ["10-rate-limits"] },
    { doc: HTTP, sections: ["rate-limits", "request-bodies"] },
  ),
  page("sdk", "TypeScript SDK", "@herald/client, served by every Herald: download, check, install and call", { doc: "docs/sdk.md" }),
  page("users", "Users and wallets", "Your users, their wallets and wallet verification", { doc: "docs/partner-users.md" }),
  page("salutes", "Salutes", "Exact amounts, credits and debits, the ledger, conversion", { doc: "docs/salutes.md" }),
  page("status", "Partner status and usage", "Your key's health and your traffic, as Herald counts it", { doc: "docs/partner-status.md" }),
  page("api-reference", "API reference and OpenAPI", "The OpenAPI document, what every operation states, generating a client, the code samples", {
    doc: "docs/api-reference.md",
  }),
  page("changelog", "Changelog and deprecations", "Versioning, the notice Herald gives, the deprecation calendar and the migration steps", {
    generated: "changelog",
  }),
];

export const pagePath = (slug: string) => (slug ? `/developers/${slug}` : "/developers");
