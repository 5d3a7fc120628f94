import { actorLabel } from "../../auth/actors";
import type { AppContext } from "../../context";
import { scopedHook } from "../../http/hook-scope";
import { recordExportUsage } from "./service";

// Counting the operator console's export downloads (docs/ops-alerts.md, "Export usage"). One global afterHandle
// hook rather than an opt-in per route, so an export added later is counted without anyone remembering to: a
// successful GET under /admin/ops/ whose route template ends in .csv, .zip, .png, .svg, .md, .txt, `/export`, or a
// last segment `export….json`. A read-model such as delta.json is not an export; a download_token request is
// recorded by the link inbox itself (source `token`). Bytes are those of the body the handler produced (before any
// Content-Encoding): the export's own size, whatever the client accepts.

const PREFIX = "/admin/ops/";
const EXPORT_TEMPLATE = /(\.csv|\.zip|\.png|\.svg|\.md|\.txt|\/export|\/export[^/]*\.json)$/;

export const isExportRoute = (template: string) => template.startsWith(PREFIX) && EXPORT_TEMPLATE.test(template);

/** Whether the URL's path starts with /admin/ops/, read without building a URL object. */
function underOps(url: string): boolean {
  const scheme = url.indexOf("://");
  const slash = url.indexOf("/", scheme === -1 ? 0 : scheme + 3);
  return slash !== -1 && url.startsWith(PREFIX, slash);
}

interface HookContext {
  request: Request;
  route: string;
  response: unknown;
  set: { status?: number | string };
  operator?: { actor?: Parameters<typeof actorLabel>[0] };
  admin?: { actor?: Parameters<typeof actorLabel>[0] };
}

/** The body's size when it is known without reading a stream (strings, bytes, JSON values); null for a Response. */
function plainBytes(response: unknown): number | null {
  if (response instanceof Response) return null;
  if (typeof response === "string") return Buffer.byteLength(response);
  if (response instanceof Uint8Array || response instanceof ArrayBuffer) return response.byteLength;
  if (response === undefined || response === null) return 0;
  return Buffer.byteLength(JSON.stringify(response));
}

/** The recorder: a global afterHandle hook, scoped to the GET export routes (src/app.ts hands it to the core). */
export function exportUsageHook(ctx: AppContext) {
  const notRecorded = (route: string) => (err: unknown) =>
    ctx.log.warn("export usage not recorded", { route, error: err instanceof Error ? err.message : String(err) });
  // Not awaited (the hook stays synchronous, below); a failure is logged: counting must never cost the operator the download itself.
  const record = (route: string, actor: Parameters<typeof actorLabel>[0], bytes: number) => {
    recordExportUsage(ctx, { actor: actorLabel(actor), export: route, bytes, source: "export" }).catch(notRecorded(route));
  };
  // Synchronous on purpose, and destructuring only what it reads: an async hook would make every later route's
  // handler await it, and a hook that takes the whole context makes Elysia prepare all of it for every request.
  // A Response body is read from a clone after the answer is on its way (a few microseconds later), leaving the
  // operator's Response, and its Content-Length, untouched.
  return scopedHook(
    function recordExportDownload({ request, route, response, set, operator, admin }: HookContext) {
      if (!underOps(request.url) || request.method !== "GET" || !isExportRoute(route)) return;
      // Issuing or redeeming a download token: the link inbox records the download itself (else counted twice).
      if (request.url.includes("download_token=")) return;
      const status = response instanceof Response ? response.status : typeof set.status === "number" ? set.status : 200;
      if (status < 200 || status > 299) return;
      const actor = operator?.actor ?? admin?.actor;
      if (!actor) return;
      const bytes = plainBytes(response);
      if (bytes !== null) return void record(route, actor, bytes);
      const body = (response as Response).body ? (response as Response).clone() : null;
      if (!body) return void record(route, actor, 0);
      body.arrayBuffer().then((b) => record(route, actor, b.byteLength), notRecorded(route));
    },
    (route) => route.method === "GET" && isExportRoute(route.path),
  );
}
