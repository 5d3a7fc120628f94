import { Elysia } from "elysia";
import scalarBundlePath from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };
import swaggerBundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { conditionalResponse, fileRepresentation, representation, type Representation } from "../conditional";
import { inlineScriptSources, type PagePolicy, pageSecurityHeaders } from "../security-headers";

// The two documentation pages, served offline: their scripts are npm packages embedded in the binary at build
// time, never a CDN (the machines that run Herald may have no outside network).
// - /api/docs: the API reference (Scalar): request and response examples beside the code samples of each
//   operation (x-codeSamples: curl with `herald sign`, TypeScript, Python).
// - /api/docs/swagger: the Swagger UI, which was at /api/docs before; old Swagger deep links
//   (/api/docs#/partner/post_api_partner_users) are sent there by the reference page, and tag links
//   (/api/docs#/partner) open the tag in the reference.

const SCALAR_CONFIG = {
  url: "/api/openapi.json",
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

const REFERENCE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Herald API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}</style>
<script>
// Links written for the Swagger UI that used to live here: #/tag opens the tag, #/tag/operation opens Swagger.
function swaggerLink() {
  var m = /^#\\/([^/]+)(\\/.*)?$/.exec(location.hash);
  if (m && m[2]) location.replace("/api/docs/swagger" + location.hash);
  else if (m) history.replaceState(null, "", "#tag/" + m[1]);
}
swaggerLink();
addEventListener("hashchange", swaggerLink);
</script></head>
<body><div id="app"></div>
<noscript>The API reference needs JavaScript; the raw documents are <a href="/api/openapi.yaml">/api/openapi.yaml</a> and <a href="/api/openapi.json">/api/openapi.json</a>.</noscript>
<script src="/api/docs/assets/scalar-api-reference.js"></script>
<script>Scalar.createApiReference("#app", ${JSON.stringify(SCALAR_CONFIG)});</script>
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
const docsPageHeaders = (html: string, draws: Pick<PagePolicy, "styles" | "images">) =>
  pageSecurityHeaders({ scripts: ["'self'", ...inlineScriptSources(html)], connect: ["'self'"], ...draws });
/** Scalar adds its styles at run time (inline <style> elements). */
const REFERENCE_DRAWS = { styles: ["'unsafe-inline'"] };
/** The Swagger UI's stylesheet is Herald's own file; its icons are data: URLs. */
const SWAGGER_DRAWS = { styles: ["'self'"], images: ["data:"] };
const docsPage = (html: string, draws: Pick<PagePolicy, "styles" | "images">): Representation => {
  const rep = representation(html, "text/html; charset=utf-8", PAGE_CACHE);
  return { ...rep, headers: { ...rep.headers, ...docsPageHeaders(html, draws) } };
};

/** An embedded file served with a strong ETag, hashed on first request (4 MB: not at start, not per request). */
function assetRoute(file: string, contentType: string) {
  let rep: Promise<Representation> | null = null;
  return async ({ request }: { request: Request }) =>
    conditionalResponse(request, await (rep ??= fileRepresentation(Bun.file(file), contentType, ASSET_CACHE)));
}

export function docsUiRoutes() {
  const hide = { detail: { hide: true } };
  const reference = docsPage(REFERENCE_HTML, REFERENCE_DRAWS);
  const swagger = docsPage(SWAGGER_HTML, SWAGGER_DRAWS);
  return new Elysia({ name: "herald:docs-ui" })
    .get("/api/docs", ({ request }) => conditionalResponse(request, reference), hide)
    .get("/api/docs/swagger", ({ request }) => conditionalResponse(request, swagger), hide)
    .get("/api/docs/assets/scalar-api-reference.js", assetRoute(scalarBundlePath, "text/javascript; charset=utf-8"), hide)
    .get("/api/docs/assets/swagger-ui-bundle.js", assetRoute(swaggerBundlePath, "text/javascript; charset=utf-8"), hide)
    .get("/api/docs/assets/swagger-ui.css", assetRoute(swaggerCssPath, "text/css; charset=utf-8"), hide);
}
