// The operations of the served OpenAPI document, each with the credential it needs (test/fuzz).
import type { Credential, FuzzOperation, JsonSchema, OpenApiParameter } from "./fuzz-target";

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const;

/**
 * The credential an operation needs, from its OpenAPI `security` and its path: an operator token for
 * AdminBearer; for the partner signature, a sandbox key under /api/partner/sandbox/ and a live key elsewhere;
 * nothing for an operation without security. The partner plugin's description names the mode it enforces
 * ("Signed partner route (sandbox keys…"), which wins when present, so a sandbox route outside the prefix
 * still gets the right key.
 */
export function credentialOf(path: string, op: Record<string, any>): Credential {
  const schemes = new Set<string>((op.security ?? []).flatMap((s: Record<string, unknown>) => Object.keys(s)));
  if (schemes.has("AdminBearer")) return "admin";
  // Messenger routes (docs/messenger.md): Telegram init data, and the bot webhook's secret-token header.
  if (path === "/api/messenger/webhook") return "messenger-webhook";
  if (path.startsWith("/api/messenger/")) return "messenger";
  if (schemes.has("PartnerKey") || schemes.has("PartnerSignature")) {
    const mode = /Signed partner route \((live|sandbox|any) keys/.exec(String(op.description ?? ""))?.[1];
    if (mode === "sandbox") return "sandbox";
    if (mode === "live") return "live";
    return path.startsWith("/api/partner/sandbox/") ? "sandbox" : "live";
  }
  return "public";
}

/** Every path × method of an OpenAPI document (as parsed from /api/openapi.json). */
export function operationsOf(document: unknown): FuzzOperation[] {
  const paths = (document as { paths?: unknown } | null)?.paths;
  if (!paths || typeof paths !== "object") throw new Error("fuzz suite: the OpenAPI document has no paths object");
  const out: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(paths as Record<string, Record<string, any>>)) {
    const shared: OpenApiParameter[] = item.parameters ?? [];
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const own: OpenApiParameter[] = op.parameters ?? [];
      const parameters = [...own, ...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in))];
      const bodySchema: JsonSchema | null = op.requestBody?.content?.["application/json"]?.schema ?? null;
      out.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        credential: credentialOf(path, op),
        parameters,
        bodySchema,
        raw: op,
      });
    }
  }
  return out;
}
