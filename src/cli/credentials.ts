import { AdminTokens } from "../auth/admin";
import { FIRST_START_PARTNER, makeCredentials, newCredentialsBanner } from "../auth/first-start";
import { PartnerKeys } from "../auth/keys";
import type { Config } from "../config";
import type { AppContext } from "../context";
import { flagString, type ParsedArgs, UsageError } from "./args";
import { appErrorsAsUsage, cliActor } from "./keys";
import { emit } from "./output";

// `herald credentials new`: the way back when the first start's banner is lost. It makes what
// the first start made (a live and a sandbox key of one partner with every scope, and an operator token) and prints
// the first start's block for them (src/auth/first-start.ts). It revokes nothing unless asked: `--revoke-unused`
// disables and revokes only the never-used credentials (the lost ones), audited. Production never prints a secret on
// its own; `--production` makes these on purpose, since a live key with every scope is more than most should hand out.

export const CREDENTIALS_USAGE = "usage: herald credentials new [--partner NAME] [--revoke-unused] [--production]";

/** The operator token's name in `herald admin-token list` (the first start's is `first-start`). */
const TOKEN_NAME = "credentials-new";

/** Refuses before anything is opened when the command is not what may run here (exit 2, nothing written). */
export function checkCredentialsArgs(config: Config, args: ParsedArgs): void {
  if (args.positionals[0] !== "new" || args.positionals.length > 1) throw new UsageError(CREDENTIALS_USAGE);
  if (config.isProduction && args.flags.production !== true) {
    throw new UsageError(
      "credentials new: NODE_ENV=production. It makes a live key with every scope and an operator token and prints their secrets; " +
        "pass --production to do so on purpose, or make narrower ones (herald keys create …, herald admin-token create …)",
    );
  }
}

/** Disables the partner's keys and revokes the operator tokens that were never used; one line each, for the banner. */
async function revokeUnused(ctx: AppContext, partner: string): Promise<{ keys: string[]; tokens: number[]; lines: string[] }> {
  const actor = cliActor();
  const keys = new PartnerKeys(ctx);
  const tokens = new AdminTokens(ctx);
  const lines: string[] = [];
  const unusedKeys = (await keys.list({ partner, status: "active" })).filter((k) => k.last_used_at === null);
  for (const k of unusedKeys) {
    await keys.disable(k.key_id, "never used; replaced by herald credentials new", actor);
    lines.push(`${k.mode} key ${k.key_id} (disabled)`);
  }
  const unusedTokens = (await tokens.list()).filter((t) => t.revoked_at === null && t.last_used_at === null);
  for (const t of unusedTokens) {
    await tokens.revoke(t.id, actor);
    lines.push(`operator token ${t.id} "${t.name}" (revoked)`);
  }
  return { keys: unusedKeys.map((k) => k.key_id), tokens: unusedTokens.map((t) => t.id), lines };
}

/** Makes the three credentials (the revocations first, so they never touch the new ones) and prints them once. */
export async function credentialsCommand(ctx: AppContext, args: ParsedArgs, json: boolean): Promise<number> {
  const partner = flagString(args, "partner") ?? FIRST_START_PARTNER;
  // A partner name the keys refuse answers as `herald keys create` does.
  return appErrorsAsUsage(async () => {
    const revoked = args.flags["revoke-unused"] === true ? await revokeUnused(ctx, partner) : { keys: [], tokens: [], lines: [] };
    const { made, admin } = await makeCredentials(ctx, partner, TOKEN_NAME, cliActor());
    const banner = newCredentialsBanner(made, ctx.config.publicBaseUrl, revoked.lines);
    emit(
      json,
      {
        success: true,
        partner,
        base_url: ctx.config.publicBaseUrl,
        live: { key_id: made.live.keyId, secret: made.live.secret },
        sandbox: { key_id: made.sandbox.keyId, secret: made.sandbox.secret },
        admin_token: { id: admin.id, name: admin.name, token: admin.token },
        revoked: { keys: revoked.keys, admin_tokens: revoked.tokens },
        banner,
      },
      () => banner.replace(/^\n/, "").replace(/\n$/, ""),
    );
    return 0;
  });
}
