import { Elysia } from "elysia";
import scalarBundlePath from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };
import swaggerBundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { conditionalResponse, fileRepresentation, representation, type Representation } from "../caching/conditional";
import { inlineScriptSources, type PagePolicy, pageSecurityHeaders } from "../security-headers";
import { AUDIENCE_OF_TAG, AUDIENCES } from "./audiences";

// The two documentation pages, served offline: their scripts are npm packages embedded in the binary at build
// time, never a CDN (the machines that run Herald may have no outside network).
// - /api/docs: the API reference (Scalar): request and response examples beside the code samples of each
//   operation (x-codeSamples: curl with `herald sign`, TypeScript, Python). One audience at a time, chosen in
//   Scalar's document selector (src/http/openapi/audiences.ts: Scalar draws every operation of the document it
//   shows, and the whole one took over a minute); the partners' document first. The page lists the operations
//   itself until Scalar has drawn (seconds on a slow CPU). Its links carry the audience
//   (`#partners/tag/partner/POST/api/partner/users`); a link from before the split (`#tag/partner/…`) is sent to
//   its operation's audience.
// - /api/docs/swagger: the Swagger UI, which was at /api/docs before, over the whole document; old Swagger deep
//   links (/api/docs#/partner/post_api_partner_users) are sent there by the reference page, and tag links
//   (/api/docs#/partner) open the tag in the reference.

const SCALAR_CONFIG = {
  sources: AUDIENCES.map((a, i) => ({ title: a.title, slug: a.slug, url: `/api/openapi/${a.slug}.json`, default: i === 0 })),
  // Offline: no web fonts from Scalar's servers, no telemetry, no MCP/agent integration, no request proxy.
  withDefaultFonts: false,
  telemetry: false,
  mcp: { disabled: true },
  agent: { disabled: true },
  showDeveloperTools: "never",
  hideClientButton: false,
  documentDownloadType: "both",
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
  // The document's own samples come first; Scalar's generated clients for other languages would not sign.
  hiddenClients: true,
  theme: "default",
};

/**
 * The operations' list (src/http/openapi/reference-index.ts), the audience the address names, over the page until
 * Scalar has loaded its document: Scalar mounts beneath it (mounting into the list's element would empty it at once,
 * seconds before Scalar draws anything), and the list goes when Scalar says it has loaded (onLoaded).
 */
const INDEX_STYLE =
  ".ix{position:fixed;inset:0;z-index:2147483647;overflow:auto;background:#fff;color:#1b1b1b;padding:1rem max(1.5rem,calc(50vw - 30rem));line-height:1.45}" +
  ".ix section{display:none}.ix ul{list-style:none;margin:0 0 1rem;padding:0}" +
  ".ix li a{display:block;padding:.25rem 0;color:inherit;text-decoration:none}.ix li a:hover{text-decoration:underline}" +
  ".ix b{display:inline-block;min-width:4.5em;font-size:.8em}.ix h2{font-size:1.1rem;margin:1.2rem 0 .4rem}" +
  AUDIENCES.map((a) => `html[data-audience="${a.slug}"] .ix section[data-audience="${a.slug}"]{display:block}`).join("") +
  `html:not([data-audience]) .ix section[data-audience="${AUDIENCES[0].slug}"]{display:block}`;

/**
 * Links written before the reference was split by audience (run after the list, before Scalar starts). For the
 * Swagger UI that used to live here: #/tag opens the tag, #/tag/operation opens Swagger (done in the page's head, at
 * once). For the one-document reference: #tag/<tag>/<METHOD><path>, #tag/<tag>, #description/…, #models/… get the
 * audience in front (#partners/tag/partner/POST/api/partner/users): the operation's, found in the list (an operation
 * may carry the tag of another audience: the messenger's consoles are the operators'), else the one the tag names,
 * else the partners'.
 */
const OLD_LINKS = `var AUDIENCES = ${JSON.stringify(AUDIENCES.map((a) => a.slug))};
var AUDIENCE_OF_TAG = ${JSON.stringify(AUDIENCE_OF_TAG)};
function audienceOfOperation(operation) {
  var links = document.querySelectorAll(".ix [data-operation] a");
  for (var i = 0; i < links.length; i++) {
    var href = decodeURIComponent(links[i].getAttribute("href").slice(1)).split("/");
    if (href.slice(3).join("/") === operation) return href[0];
  }
  return null;
}
function oldLink() {
  var m = /^#\\/([^/]+)(\\/.*)?$/.exec(location.hash);
  if (m && m[2]) return false; // on its way to the Swagger UI
  var id = m ? "tag/" + m[1] : location.hash.slice(1);
  var parts = decodeURIComponent(id).split("/");
  if (!id || AUDIENCES.indexOf(parts[0]) >= 0) return false;
  var audience = (parts[0] === "tag" && (audienceOfOperation(parts.slice(2).join("/")) || AUDIENCE_OF_TAG[parts[1]])) || AUDIENCES[0];
  history.replaceState(null, "", "#" + audience + "/" + id);
  return true;
}
oldLink();
// The list shows the audience the address names (the partners' by default) until Scalar has drawn.
var shown = decodeURIComponent(location.hash.slice(1)).split("/")[0];
document.documentElement.setAttribute("data-audience", AUDIENCES.indexOf(shown) >= 0 ? shown : AUDIENCES[0]);
// An old link followed on the page already open: Scalar reads the document from the address only when it starts.
addEventListener("hashchange", function () {
  if (/^#\\/[^/]+\\/./.test(location.hash)) location.replace("/api/docs/swagger" + location.hash);
  else if (oldLink()) location.reload();
});`;

/** The reference page around the operations' list `index` (HTML, escaped by its writer). */
const referenceHtml = (index: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Herald API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}${INDEX_STYLE}</style>
<script>
// A Swagger UI operation link (#/partner/post_api_partner_users) goes to the Swagger UI, which used to live here.
if (/^#\\/[^/]+\\/./.test(location.hash)) location.replace("/api/docs/swagger" + location.hash);
</script></head>
<body>${index}
<script>
${OLD_LINKS}
</script>
<div id="app"></div>
<noscript>The API reference needs JavaScript; the raw documents are <a href="/api/openapi.yaml">/api/openapi.yaml</a> and <a href="/api/openapi.json">/api/openapi.json</a>, and one per audience: ${AUDIENCES.map((a) => `<a href="/api/openapi/${a.slug}.json">${a.title}</a>`).join(", ")}.</noscript>
<script src="/api/docs/assets/scalar-api-reference.js"></script>
<script>
Scalar.createApiReference("#app", Object.assign(${JSON.stringify(SCALAR_CONFIG)}, {
  // Scalar has its document: the operations' list gives way once Scalar has drawn (two frames on).
  onLoaded: function () {
    requestAnimationFrame(function () { requestAnimationFrame(function () { var ix = document.querySelector(".ix"); if (ix) ix.remove(); }); });
  },
}));
</script>
</body></html>`;

const SWAGGER_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Herald API (Swagger UI)</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css"></head>
<body><div id="docs"></div>
<noscript>The interactive explorer needs JavaScript; the raw document is at <a href="/api/openapi.yaml">/api/openapi.yaml</a>.</noscript>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: "/api/openapi.json", dom_id: "#docs", deepLinking: true });</script>
</body></html>`;

// Pages revalidate on every load (cheap 304s); the bundles change only with a deploy, so they are cached a day.
const PAGE_CACHE = "public, no-cache";
const ASSET_CACHE = "public, max-age=86400";

/**
 * The two pages run scripts, unlike every other page (src/http/security-headers.ts): only Herald's own bundles and
 * each page's inline scripts, named by their hashes, which fetch the document from Herald. Nothing may come from
 * elsewhere. Beyond that, each page is allowed what its bundle needs to draw, and no more (the browser test,
 * test/http/api-reference.browser.test.ts, fails on anything the policy refuses).
 */
const docsPage = (html: string, draws: Pick<PagePolicy, "styles" | "images">): Representation => {
  const rep = representation(html, "text/html; charset=utf-8", PAGE_CACHE);
  const policy = pageSecurityHeaders({ scripts: ["'self'", ...inlineScriptSources(html)], connect: ["'self'"], ...draws });
  return { ...rep, headers: { ...rep.headers, ...policy } };
};
/** Scalar adds its styles at run time (inline <style> elements). */
const REFERENCE_DRAWS = { styles: ["'unsafe-inline'"] };
/** The Swagger UI's stylesheet is Herald's own file; its icons are data: URLs. */
const SWAGGER_DRAWS = { styles: ["'self'"], images: ["data:"] };

/** An embedded file served with a strong ETag, hashed on first request (4 MB: not at start, not per request). */
function assetRoute(file: string, contentType: string) {
  let rep: Promise<Representation> | null = null;
  return async ({ request }: { request: Request }) =>
    conditionalResponse(request, await (rep ??= fileRepresentation(Bun.file(file), contentType, ASSET_CACHE)));
}

/** /api/docs with the operations' list `index` in it: built with the documents (in the worker under `herald serve`). */
export const referencePage = (index: string): Representation => docsPage(referenceHtml(index), REFERENCE_DRAWS);

/** The docs pages; `reference` is /api/docs, awaited like the documents it lists (src/http/openapi/documents.ts). */
export function docsUiRoutes(reference: () => Promise<Representation>) {
  const hide = { detail: { hide: true } };
  const swagger = docsPage(SWAGGER_HTML, SWAGGER_DRAWS);
  return new Elysia({ name: "herald:docs-ui" })
    .get("/api/docs", async ({ request }) => conditionalResponse(request, await reference()), hide)
    .get("/api/docs/swagger", ({ request }) => conditionalResponse(request, swagger), hide)
    .get("/api/docs/assets/scalar-api-reference.js", assetRoute(scalarBundlePath, "text/javascript; charset=utf-8"), hide)
    .get("/api/docs/assets/swagger-ui-bundle.js", assetRoute(swaggerBundlePath, "text/javascript; charset=utf-8"), hide)
    .get("/api/docs/assets/swagger-ui.css", assetRoute(swaggerCssPath, "text/css; charset=utf-8"), hide);
}
