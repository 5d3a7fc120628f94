import { Elysia, t } from "elysia";
import { cached } from "../http/openapi/contract";
import { redirect, wantsHtml } from "../auth/session-plugin";
import type { AppContext } from "../context";
import { Envelope, ignoredMetaQuery, includeMetaQuery, ok, requestedMeta } from "../http/envelope";
import { compileHtml, htmlResponse } from "../http/formats/html";
import { pageSecurityHeaders, withPageSecurity } from "../http/security-headers";

// The two addresses a person types first: `/` and `/admin` (docs/api-reference.md, "The front door").
//
// `/` answers a browser (its Accept names text/html, as the console decides: src/auth/session-plugin.ts wantsHtml) with
// a small page of links to what Herald serves to people, and any other client with the same links as JSON: a script
// that probes the root learns where things are instead of meeting a 404. Both come from HOME_LINKS, so they cannot
// disagree; the answer varies by Accept and says so. The page has no script, no image and nothing from elsewhere.
//
// `/admin` (and `/admin/`) is the console's short address: 303 to /admin/console for every client. The console, not
// this route, decides who may enter: a browser without a session goes on to the sign-in form and comes back to the
// console after it, a bearer token reaches the readiness page, and a script without credentials gets the console's
// 403. So the redirect says nothing that /admin/console does not, and the sign-in rules live in one place.

export const CONSOLE_HOME = "/admin/console";

export interface HomeLink {
  readonly href: string;
  readonly title: string;
  readonly description: string;
}

/** What the front door points at, in the order a person looks; the first four are the page's main links. */
export const HOME_LINKS = {
  status_page: { href: "/status", title: "Status", description: "Is Herald up: each check, 90 days of uptime and the incidents" },
  api_reference: {
    href: "/api/docs",
    title: "API reference",
    description: "Every route with its parameters, answers and samples in curl, TypeScript and Python",
  },
  developer_portal: {
    href: "/developers",
    title: "Developer portal",
    description:
      "Guides for partners: getting started, signing, idempotency, sandbox, webhooks, errors, limits, the changelog; the signing helpers to download",
  },
  console: { href: CONSOLE_HOME, title: "Operator console", description: "For operators: readiness, alerts, incidents, keys; sign in with an admin token" },
  openapi_document: { href: "/api/openapi.yaml", title: "OpenAPI document", description: "The contract, as YAML (also /api/openapi.json)" },
  swagger_ui: { href: "/api/docs/swagger", title: "Swagger UI", description: "The same document in Swagger UI, to try requests" },
  deprecations: {
    href: "/developers/deprecations.json",
    title: "Deprecation calendar",
    description: "Announced deprecations and sunsets (JSON; RSS at /developers/deprecations.rss)",
  },
  sdk: { href: "/developers/sdk-manifest.json", title: "TypeScript SDK", description: "The @herald/client package: version, download path and checksum" },
  status_json: { href: "/api/public/system-status", title: "Status as JSON", description: "The status page's data, for monitors" },
  health: { href: "/healthz", title: "Liveness probe", description: "200 while the process answers (/readyz: ready for traffic)" },
} as const satisfies Record<string, HomeLink>;

type LinkKey = keyof typeof HOME_LINKS;
const MAIN: readonly LinkKey[] = ["status_page", "api_reference", "developer_portal", "console"];
const MORE = (Object.keys(HOME_LINKS) as LinkKey[]).filter((k) => !MAIN.includes(k));
const entries = (keys: readonly LinkKey[]) => keys.map((id) => ({ id, ...HOME_LINKS[id] }));

const CSS = `
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #f6f8fa; }
main { max-width: 720px; margin: 0 auto; padding: 24px 16px; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
p.lead, .muted { color: #59636e; }
ul.main { list-style: none; padding: 0; margin: 16px 0 0; display: grid; gap: 12px; }
ul.main li { background: #fff; border: 1px solid #d1d9e0; border-radius: 8px; padding: 12px 16px; }
ul.main a { font-size: 18px; font-weight: 600; }
ul.main p { margin: 2px 0 0; color: #59636e; font-size: 14px; }
ul.more { padding-left: 20px; font-size: 14px; }
a { color: #0969da; } code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
li, p { overflow-wrap: anywhere; }
`;

type Entry = ReturnType<typeof entries>[number];

// The stylesheet is our constant, part of the template's source; every value is escaped (src/http/formats/html.ts).
const homeHtml = compileHtml<{ main: Entry[]; more: Entry[] }>(
  "home",
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Herald</title><style>${CSS}</style></head>
<body><main><h1>Herald</h1>
<p class="lead">Partner integration and transparency service. Where to go from here:</p>
<ul class="main" id="links"><% for (const l of it.main) { %><li><a id="link-<%= l.id %>" href="<%= l.href %>"><%= l.title %></a><p><%= l.description %> · <code><%= l.href %></code></p></li><% } %></ul>
<h2>Also here</h2>
<ul class="more" id="more"><% for (const l of it.more) { %><li><a id="link-<%= l.id %>" href="<%= l.href %>"><%= l.title %></a> — <%= l.description %></li><% } %></ul>
<p class="muted">A client that asks for JSON gets these links as JSON from this address.</p>
</main></body></html>`,
);

// Rendered once: the page holds no data that changes while the process runs.
const PAGE = homeHtml({ main: entries(MAIN), more: entries(MORE) });
// The page's security headers, and Vary: Accept, since the same URL answers JSON to a client that does not ask for HTML.
const PAGE_HEADERS_VARY = Object.freeze({ ...pageSecurityHeaders(), vary: "Accept" });
const CACHE = "public, max-age=300";

const Link = t.Object({ href: t.String({ description: "A path on this server" }), title: t.String(), description: t.String() });
const HomeIndex = Envelope(
  { service: t.Literal("herald"), links: t.Object(Object.fromEntries(Object.keys(HOME_LINKS).map((k) => [k, Link])) as Record<LinkKey, typeof Link>) },
  "The links as JSON (a client whose Accept does not name text/html); a browser gets them as an HTML page",
);

/** GET / (the front door) and GET /admin (the console's short address). */
export function homeRoutes(ctx: AppContext) {
  return new Elysia({ name: "herald:home" })
    .get(
      "/",
      ({ request, set }) => {
        // Both answers are Responses of their own, so that Vary: Accept survives compression (which appends to it).
        if (wantsHtml(request)) return withPageSecurity(htmlResponse(PAGE, CACHE), PAGE_HEADERS_VARY);
        const meta = requestedMeta(request, set.headers["x-request-id"], ctx.clock.now());
        const body = ok({ service: "herald" as const, links: HOME_LINKS, ...(meta && { meta }) });
        return new Response(JSON.stringify(body), { headers: { "content-type": "application/json;charset=utf-8", "cache-control": CACHE, vary: "Accept" } });
      },
      {
        query: t.Object(includeMetaQuery),
        response: { 200: HomeIndex },
        detail: {
          tags: ["system"],
          ...cached(CACHE),
          summary:
            "The front door: for a browser (Accept: text/html) a page linking the status page, the API reference, the developer portal and the operator console; for any other client the same links as JSON",
          responses: {
            200: {
              description: "The links: an HTML page for a browser, JSON otherwise (Vary: Accept)",
              content: { "text/html": { schema: { type: "string" as const } } },
            },
          },
        },
      },
    )
    .get("/admin", () => redirect(CONSOLE_HOME), {
      query: t.Object(ignoredMetaQuery),
      detail: {
        tags: ["admin"],
        security: [],
        summary:
          "The operator console's short address (also /admin/): 303 to /admin/console for every client, which sends a browser without a session to /admin/sign-in and answers a script without credentials 403",
        responses: { 303: { description: "Location: /admin/console" } },
      },
    });
}
