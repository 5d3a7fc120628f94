import { Elysia } from "elysia";
import { conditionalGet } from "../http/openapi/contract";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { notModifiedSince } from "../http/caching/conditional";
import { refuses } from "../http/routes/declare";
import { capabilitiesFor } from "./capabilities";
import { PartnerModel } from "./model";

const authErrors = refuses(403);

export function partnerRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:partner" }).use(guards.partner.plugin).get(
    "/api/partner/capabilities",
    ({ partner, request, set }) => {
      // Last-Modified: the later of the key's last change and this process's start (a deploy may add capabilities).
      const keyUpdated = Date.parse(partner.keyUpdatedAt);
      const lastModified = Math.floor(Math.max(keyUpdated, ctx.startedAt.getTime()) / 1000) * 1000;
      set.headers["last-modified"] = new Date(lastModified).toUTCString();
      set.headers["cache-control"] = "private, no-cache";
      // No ETag here: If-Modified-Since alone decides (an If-None-Match never matches an answer without one).
      if (notModifiedSince(request, null, new Date(lastModified).toISOString()))
        return new Response(null, { status: 304, headers: set.headers as Record<string, string> });
      // Written out rather than ok(…): Elysia guesses a handler that returns a call (`return f(`) is async, and the
      // route would compile to a promise (docs/architecture.md, "internals"; test/http/resume.test.ts).
      return { success: true as const, ...capabilitiesFor(partner.actor, ctx.config.signatureSkewSeconds) };
    },
    {
      partner: { mode: "any" },
      query: PartnerModel.metaQuery,
      response: { 200: PartnerModel.capabilities, ...authErrors },
      detail: { tags: ["partner"], summary: "What this key may do; supports If-Modified-Since", ...conditionalGet("last-modified") },
    },
  );
}
