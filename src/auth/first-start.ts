import type { AppContext } from "../context";
import { AdminTokens } from "./admin";
import { PartnerKeys } from "./keys";
import { SCOPES } from "./scopes";

export interface FirstStartCredentials {
  keyId: string;
  secret: string;
  adminToken: string;
}

/**
 * Start-up credential work, run by `serve` (never by buildApp): registers ADMIN_TOKEN from the environment,
 * and on an EMPTY database outside production creates one sandbox key with every scope and one admin token,
 * returned once so the caller can print them. A database that already has keys or tokens gets nothing new.
 */
export function prepareCredentials(ctx: AppContext): FirstStartCredentials | null {
  const keys = new PartnerKeys(ctx);
  const tokens = new AdminTokens(ctx);
  const empty = keys.count() === 0 && tokens.count() === 0;
  if (ctx.config.adminToken) tokens.ensureBootstrap(ctx.config.adminToken);
  if (!empty || ctx.config.isProduction || !ctx.config.bootstrapCredentials) return null;
  const actor = { kind: "cli", user: "first-start" } as const;
  const key = keys.create({ partner: "Local Sandbox", mode: "sandbox", scopes: [...SCOPES] }, actor);
  const admin = tokens.create("first-start", actor);
  return { keyId: key.key_id, secret: key.secret, adminToken: admin.token };
}

export function firstStartBanner(c: FirstStartCredentials, baseUrl: string): string {
  return [
    "",
    "================ Herald first start (development) ================",
    "A sandbox partner key and an operator token were created. They are shown ONCE; store them now.",
    "",
    `  sandbox key id : ${c.keyId}`,
    `  sandbox secret : ${c.secret}`,
    `  admin token    : ${c.adminToken}`,
    "",
    "Try a signed request (prints a ready curl command):",
    `  node_modules/.bin/bun src/main.ts sign --key ${c.keyId} --secret '${c.secret}' GET ${baseUrl}/api/partner/capabilities | sh`,
    "Or an operator request:",
    `  curl -H 'Authorization: Bearer ${c.adminToken}' ${baseUrl}/admin/partners/keys`,
    "===================================================================",
    "",
  ].join("\n");
}
