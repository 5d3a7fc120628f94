import { Elysia } from "elysia";
import { answersPages, cached } from "../http/openapi/contract";
import type { AppContext } from "../context";
import { clientIp } from "../http/core";
import { refuses } from "../http/routes/declare";
import { hitRecorder } from "./hits";
import { AudioShareModel as M } from "./model";
import { qrPng, qrSvg, QR_PNG_DEFAULT_SIZE } from "../http/formats/qr";
import { followLink, REDIRECT_ROUTE, usableOrPage } from "./redirect";
import { shortUrlOf } from "./short-links";

// A browser that follows a link gone or unknown gets a page saying so (redirect.ts usableOrPage). `cache`: the
// Cache-Control of the route's success (redirect.ts: a redirect is never stored; a QR code may be kept 5 minutes).
const QR_CACHE = "public, max-age=300";
const detail = (summary: string, cache: string) => ({ tags: ["audio-share"], summary, ...answersPages(), ...cached(cache) });
const image = (type: string) => ({
  200: { description: `The QR code (${type})`, content: { [type]: { schema: { type: "string" as const, contentMediaType: type } } } },
});
const errs = refuses(403, 404, 410);

/**
 * GET /s/audio/{code}: 302 to the destination; HEAD answers the same and is counted apart. Plus QR codes.
 * `herald serve` answers the redirect itself through nativeRedirectRoutes (redirect.ts), the same followLink.
 */
export function redirectRoutes(ctx: AppContext) {
  /** The QR code of a usable link's short URL; the page saying so for a link gone or unknown. */
  const qr = async (code: string, request: Request, headers: Record<string, unknown>, type: string, draw: (url: string) => Promise<string | Uint8Array>) => {
    const link = await usableOrPage(ctx, code, request, String(headers["x-request-id"] ?? ""));
    if (link instanceof Response) return link;
    return new Response(await draw(shortUrlOf(ctx, link.row.code)), { headers: { "content-type": type, "cache-control": QR_CACHE } });
  };
  return new Elysia({ name: "herald:audio-share-redirects" })
    .get(
      REDIRECT_ROUTE,
      ({ params, request, server, set }) =>
        followLink(ctx, hitRecorder(ctx), request, params.code, clientIp(ctx, request, server), String(set.headers["x-request-id"] ?? "")),
      {
        params: M.codeParams,
        response: errs,
        detail: {
          ...detail("Follow a short link: 302 to its destination; 404 unknown, 410 expired or revoked (an HTML page for browsers)", "private, no-store"),
          responses: { 302: { description: "To the link's destination (Location)" } },
        },
      },
    )
    .get("/s/audio/:code/qr.svg", ({ params, request, set }) => qr(params.code, request, set.headers, "image/svg+xml; charset=utf-8", qrSvg), {
      params: M.codeParams,
      response: errs,
      detail: { ...detail("QR code (SVG) of the short URL", QR_CACHE), responses: image("image/svg+xml") },
    })
    .get(
      "/s/audio/:code/qr.png",
      ({ params, query, request, set }) =>
        qr(params.code, request, set.headers, "image/png", async (url) => new Uint8Array(await qrPng(url, query.size ?? QR_PNG_DEFAULT_SIZE))),
      {
        params: M.codeParams,
        query: M.qrQuery,
        response: errs,
        detail: { ...detail("QR code (PNG, size 64…1024 px, default 256) of the short URL", QR_CACHE), responses: image("image/png") },
      },
    );
}
