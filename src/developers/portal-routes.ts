import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { conditionalResponse, representation, type Representation } from "../http/caching/conditional";
import { found } from "../http/errors/errors";
import { conditionalGet, downloads } from "../http/openapi/contract";
import { refuses, transparencyTag } from "../http/routes/declare";
import { pageSecurityHeaders } from "../http/security-headers";
import { DOWNLOADS_PREFIX, PORTAL_DOWNLOADS } from "./portal-downloads";
import { portalHtml } from "./portal-layout";
import { PORTAL_PAGES, type PortalPage } from "./portal-pages";
import { composePage, portalPage } from "./portal-render";
import type { Registry } from "./registry";

// The developer portal (docs/developers-portal.md): /developers and its pages, the repository's partner docs rendered
// as HTML, and the signing helpers to download. Like the API reference's pages, every answer has a strong ETag over
// its exact bytes and `public, no-cache` (a browser revalidates each visit and gets a 304 while the build is the
// same); a page carries the security headers of every page, with nothing allowed beyond its inline style.

const CACHE = "public, no-cache";
const PAGE_HEADERS = pageSecurityHeaders();
const HTML = "text/html; charset=utf-8";

const html = (summary: string) => ({
  ...transparencyTag(summary),
  ...conditionalGet("etag"),
  responses: { 200: { description: "The page (HTML, no JavaScript)", content: { "text/html": { schema: { type: "string" as const } } } } },
});

const PageParams = t.Object({
  slug: t.String({
    maxLength: 64,
    description: `One of: ${PORTAL_PAGES.filter((p) => p.slug)
      .map((p) => p.slug)
      .join(", ")}`,
    examples: ["signing"],
  }),
});

const FileParams = t.Object({
  file: t.String({ maxLength: 128, description: `One of: ${PORTAL_DOWNLOADS.map((d) => d.file).join(", ")}`, examples: ["herald_sign.py"] }),
});

const changes = (page: PortalPage) => page.parts.some((p) => "generated" in p && p.generated === "changelog");

export function portalRoutes(ctx: AppContext, registry: Registry) {
  // A page is rendered when first asked for and kept for the process (the docs are embedded: they change with a
  // deploy); the changelog is rendered per request, as a deprecation's phase moves with the clock.
  const built = new Map<string, Representation>();
  const render = (page: PortalPage) => {
    const body = composePage(page, ctx, registry);
    return representation(portalHtml(page, body.html, body.sources), HTML, CACHE);
  };
  const pageOrThrow = (slug: string): Representation => {
    const page = found(portalPage(slug), "developer portal page", slug);
    if (changes(page)) return render(page);
    let rep = built.get(slug);
    if (!rep) built.set(slug, (rep = render(page)));
    return rep;
  };
  const files = new Map(
    PORTAL_DOWNLOADS.map((d) => [
      d.file,
      { rep: representation(d.text, "text/plain; charset=utf-8", CACHE), headers: { "content-disposition": `attachment; filename="${d.file}"` } },
    ]),
  );

  return new Elysia({ name: "herald:developers-portal" })
    .get("/developers", ({ request }) => conditionalResponse(request, pageOrThrow(""), PAGE_HEADERS), {
      detail: html("Developer portal: getting started, and links to every guide (HTML rendered from the repository's docs)"),
    })
    .get("/developers/:slug", ({ request, params }) => conditionalResponse(request, pageOrThrow(params.slug), PAGE_HEADERS), {
      params: PageParams,
      response: refuses(404),
      detail: html("A developer portal page: signing, idempotency, sandbox, webhooks, errors, limits, the SDK, the changelog …"),
    })
    .get(
      `${DOWNLOADS_PREFIX}:file`,
      ({ request, params }) => {
        const file = found(files.get(params.file), "download", params.file);
        return conditionalResponse(request, file.rep, file.headers);
      },
      {
        params: FileParams,
        response: refuses(404),
        detail: {
          ...transparencyTag("A signing helper or example of the developer portal, as this build has it (herald_sign.py, herald-sign.ts, webhook-receiver.ts)"),
          ...conditionalGet("etag"),
          ...downloads(),
          responses: { 200: { description: "The file (UTF-8 text)", content: { "text/plain": { schema: { type: "string" as const } } } } },
        },
      },
    );
}
