import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Config } from "../config";
import { CONFIG_VARS } from "../config/vars";
import type { AppContext } from "../context";
import { shellQuote } from "../http/formats/curl";
import type { Actor } from "./actors";
import { AdminTokens } from "./admin";
import { PartnerKeys } from "./keys";
import { SCOPES } from "./scopes";
import { ANY_KEY_ROUTES } from "./partner-request";
import { anyKeyUsed } from "./store/keys";
import { anyTokenUsed } from "./store/tokens";

export interface KeyCredentials {
  keyId: string;
  secret: string;
}

export interface FirstStartCredentials {
  /** Calls the live routes (/api/partner/*, /api/salutes/*): what the README's examples use. */
  live: KeyCredentials;
  /** Calls the sandbox routes (/api/partner/sandbox/*) and the routes that take either mode (ANY_KEY_ROUTES). */
  sandbox: KeyCredentials;
  adminToken: string;
}

/** The operator console's address (src/console/routes.ts); a browser without a session is sent on to the sign-in form. */
export const CONSOLE_PATH = "/admin/console";

/** Both first-start keys belong to one partner, so the sandbox-then-live story of docs/sandbox.md holds locally. */
export const FIRST_START_PARTNER = "Local Dev";

/**
 * Start-up credential work before listening, run by `serve` (never by buildApp): registers ADMIN_TOKEN from the
 * environment, so that it works from the first request. Resolves with whether the database held no key and no
 * token before that (createFirstStartCredentials' question).
 */
export async function registerConfiguredToken(ctx: AppContext): Promise<{ empty: boolean }> {
  const tokens = new AdminTokens(ctx);
  const empty = (await new PartnerKeys(ctx).count()) === 0 && (await tokens.count()) === 0;
  if (ctx.config.adminToken) await tokens.ensureBootstrap(ctx.config.adminToken);
  return { empty };
}

/**
 * On a database that was EMPTY, outside production, creates a live key and a sandbox key (every scope, one
 * partner) and one admin token, returned once so the caller can print them. A live key is made too because most
 * routes a newcomer tries first (users, salutes, status) refuse sandbox keys. A database that already had keys or
 * tokens gets nothing new. `serve` calls this only once its port is bound: a start that cannot listen must not
 * make credentials that nobody will see.
 */
export async function createFirstStartCredentials(ctx: AppContext, { empty }: { empty: boolean }): Promise<FirstStartCredentials | null> {
  // A key that cannot open this database's secrets seals nothing (and a restored database is not new anyway).
  if (!empty || ctx.config.isProduction || !ctx.config.bootstrapCredentials || ctx.secrets.mismatch) return null;
  return (await makeCredentials(ctx, FIRST_START_PARTNER, "first-start", { kind: "cli", user: "first-start" })).made;
}

/**
 * A live key and a sandbox key of `partner` (every scope) and an admin token named `tokenName`: the first start's
 * three credentials, and `herald credentials new`'s (src/cli/credentials.ts), with what each verb answered.
 */
export async function makeCredentials(ctx: AppContext, partner: string, tokenName: string, actor: Actor) {
  const keys = new PartnerKeys(ctx);
  const live = await keys.create({ partner, mode: "live", scopes: [...SCOPES] }, actor);
  const sandbox = await keys.create({ partner, mode: "sandbox", scopes: [...SCOPES] }, actor);
  const admin = await new AdminTokens(ctx).create(tokenName, actor);
  const made: FirstStartCredentials = {
    live: { keyId: live.key_id, secret: live.secret },
    sandbox: { keyId: sandbox.key_id, secret: sandbox.secret },
    adminToken: admin.token,
  };
  return { made, admin };
}

/** Both steps at once (registerConfiguredToken, then createFirstStartCredentials), for a context that is not serving. */
export async function prepareCredentials(ctx: AppContext): Promise<FirstStartCredentials | null> {
  return createFirstStartCredentials(ctx, await registerConfiguredToken(ctx));
}

/**
 * `herald credentials new` as a command that runs as printed in a fresh shell (no `herald` function, no `bun` on
 * PATH), for when the first start's credentials are lost: this herald by absolute path, after the settings the
 * command must share with this server (a different SALUTES_DECIMALS is refused). A setting that must not go into a
 * log (DATABASE_URL with its password, HERALD_MASTER_KEY) is only named in `also_set`.
 */
export function newCredentialsHint(config: Config): { command: string; also_set?: string[] } {
  const env = [
    // The SQLite file, or on PostgreSQL where the development master.key lies (beside that path).
    `HERALD_DB_PATH=${shellQuote(resolve(config.dbPath))}`,
    `PUBLIC_BASE_URL=${shellQuote(config.publicBaseUrl)}`,
    ...(String(config.salutes.decimals) === CONFIG_VARS.SALUTES_DECIMALS.fallback ? [] : [`SALUTES_DECIMALS=${config.salutes.decimals}`]),
  ];
  const unprinted = [...(config.database.engine === "postgres" ? ["DATABASE_URL"] : []), ...(config.masterKey ? ["HERALD_MASTER_KEY"] : [])];
  return { command: [...env, heraldCommand(), "credentials", "new"].join(" "), ...(unprinted.length > 0 && { also_set: unprinted }) };
}

/**
 * Whether a start should say how to make new credentials: outside production, the database has keys or tokens
 * (the first start's, printed once) and none of them was ever used — no signed call, no bearer call and no
 * console sign-in (each writes last_used_at on its first use) — so their holder may well have lost them with the
 * first start's output. Not when ADMIN_TOKEN is set: its holder knows it and can reach everything with it.
 */
export async function credentialsNeverUsed(ctx: AppContext): Promise<boolean> {
  if (ctx.config.isProduction || ctx.config.adminToken) return false;
  if ((await new PartnerKeys(ctx).count()) === 0 && (await new AdminTokens(ctx).count()) === 0) return false;
  return !(await anyKeyUsed(ctx.store)) && !(await anyTokenUsed(ctx.store));
}

/**
 * The command line that runs this same herald from any directory: the compiled binary itself, or bun with the
 * entry file (absolute paths, so the printed examples work wherever they are pasted).
 */
export function heraldCommand(): string {
  // A compiled binary's entry lives in Bun's embedded file system.
  const compiled = Bun.main.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(Bun.main);
  if (compiled) return shellQuote(process.execPath);
  // From a checkout, the npm-installed bun by its usual name rather than the file it links to (…/bun.exe).
  const npmBun = join(dirname(dirname(Bun.main)), "node_modules", ".bin", "bun");
  return [existsSync(npmBun) ? npmBun : process.execPath, Bun.main].map(shellQuote).join(" ");
}

/** The three credentials' labels, the lines to paste and the examples: the body the two banners below share. */
function credentialsBlock(c: FirstStartCredentials, baseUrl: string, herald: string): string[] {
  return [
    "  LIVE partner key      works on /api/partner/* and /api/salutes/* (not on /api/partner/sandbox/*)",
    `    key id : ${c.live.keyId}`,
    `    secret : ${c.live.secret}`,
    "  SANDBOX partner key   works on /api/partner/sandbox/* (practice data, kept apart from live)",
    `                        and on ${ANY_KEY_ROUTES.join(", ")}`,
    `    key id : ${c.sandbox.keyId}`,
    `    secret : ${c.sandbox.secret}`,
    "  ADMIN token           for /admin/* as Authorization: Bearer",
    `    token  : ${c.adminToken}`,
    `    console: ${baseUrl}${CONSOLE_PATH} (a browser signs in with this token)`,
    "",
    "Paste these lines into another shell (bash or zsh); README.md's examples use them:",
    `  herald() { ${herald} "$@"; }`,
    `  export HERALD=${shellQuote(baseUrl)}`,
    `  export HERALD_KEY_ID=${shellQuote(c.live.keyId)} HERALD_SECRET=${shellQuote(c.live.secret)}`,
    `  export HERALD_SANDBOX_KEY_ID=${shellQuote(c.sandbox.keyId)} HERALD_SANDBOX_SECRET=${shellQuote(c.sandbox.secret)}`,
    `  export HERALD_ADMIN_TOKEN=${shellQuote(c.adminToken)}`,
    "",
    "Then try (`herald sign` prints a signed curl command; `| sh` runs it):",
    `  herald sign --key "$HERALD_KEY_ID" --secret "$HERALD_SECRET" GET "$HERALD/api/partner/status" | sh; echo`,
    `  herald sign --key "$HERALD_SANDBOX_KEY_ID" --secret "$HERALD_SANDBOX_SECRET" GET "$HERALD/api/partner/sandbox/verify" | sh; echo`,
    `  curl -sS -w '\\n' -H "Authorization: Bearer $HERALD_ADMIN_TOKEN" "$HERALD/admin/partners/keys"`,
  ];
}

const banner = (heading: string[], c: FirstStartCredentials, baseUrl: string, herald: string) =>
  ["", ...heading, "", ...credentialsBlock(c, baseUrl, herald), "===================================================================", ""].join("\n");

/** The first start's banner; its examples run as printed (test/docs/readme-examples.test.ts runs them against a fresh server). */
export function firstStartBanner(c: FirstStartCredentials, baseUrl: string, herald = heraldCommand()): string {
  const heading = "================ Herald first start (development) ================";
  return banner([heading, "Three credentials were created for this empty database. They are shown ONCE: store them now."], c, baseUrl, herald);
}

/**
 * What `herald credentials new` prints (src/cli/credentials.ts): the paste-in lines of a lost banner again, with what
 * `--revoke-unused` revoked (test/cli/credentials.test.ts pastes them in a clean shell).
 */
export function newCredentialsBanner(c: FirstStartCredentials, baseUrl: string, revoked: readonly string[], herald = heraldCommand()): string {
  const heading = [
    "=================== Herald: new credentials ===================",
    "Three new credentials were created (herald credentials new). They are shown ONCE: store them now.",
    ...(revoked.length
      ? ["Revoked, as never used (--revoke-unused):", ...revoked.map((r) => `  ${r}`)]
      : ["Nothing was revoked: the earlier credentials still work."]),
  ];
  return banner(heading, c, baseUrl, herald);
}
