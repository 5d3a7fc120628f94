import { userInfo } from "node:os";
import { AdminTokens } from "../auth/admin";
import { PartnerKeys } from "../auth/keys";
import type { KeyMode } from "../auth/scopes";
import type { AppContext } from "../context";
import { AppError } from "../http/errors/errors";
import { flagString, UsageError, type ParsedArgs } from "./args";
import { emit, table } from "./output";

// The audit trail names the OS account that ran the command.
export const cliActor = () => ({ kind: "cli", user: safeUser() }) as const;
function safeUser(): string {
  try {
    return userInfo().username || "operator";
  } catch {
    return "operator";
  }
}

function required(args: ParsedArgs, name: string): string {
  const v = flagString(args, name);
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
}

/** A refusal of the verbs (a partner name the keys refuse, an unknown key id) answers as bad usage: exit 2. */
export async function appErrorsAsUsage<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(err.message);
    throw err;
  }
}

type Subcommands<S> = Record<string, (service: S, args: ParsedArgs, json: boolean) => Promise<void>>;

/** Runs the subcommand `sub` of the table, or refuses with `unknown` (exit 2). */
async function runSubcommand<S>(subs: Subcommands<S>, sub: string | undefined, unknown: string, service: S, args: ParsedArgs, json: boolean): Promise<number> {
  const run = sub !== undefined && Object.hasOwn(subs, sub) ? subs[sub] : undefined;
  if (!run) throw new UsageError(unknown);
  return appErrorsAsUsage(async () => {
    await run(service, args, json);
    return 0;
  });
}

const KEY_SUBCOMMANDS: Subcommands<PartnerKeys> = {
  async create(keys, args, json) {
    const mode = keyMode(required(args, "mode"));
    const k = await keys.create(
      { partner: required(args, "partner"), mode, scopes: required(args, "scopes"), allowedIps: flagString(args, "ips") ?? "" },
      cliActor(),
    );
    emit(json, { key_id: k.key_id, secret: k.secret, mode: k.mode, scopes: k.scopes, partner: k.partner, allowed_ips: k.allowed_ips }, () =>
      [
        `key id : ${k.key_id}`,
        `secret : ${k.secret}`,
        `mode   : ${k.mode}`,
        `scopes : ${k.scopes.join(",")}`,
        `ips    : ${k.allowed_ips.join(",") || "any"}`,
        "",
        "The secret is shown once; store it now.",
      ].join("\n"),
    );
  },
  async list(keys, args, json) {
    const mode = flagString(args, "mode");
    const list = await keys.list({ partner: flagString(args, "partner"), mode: mode === undefined ? undefined : keyMode(mode) });
    emit(json, { keys: list }, () =>
      table(
        list.map((k) => ({ ...k, scopes: k.scopes.join(","), allowed_ips: k.allowed_ips.join(",") || "any" })),
        ["key_id", "partner", "mode", "status", "scopes", "allowed_ips", "last_used_at"],
      ),
    );
  },
  async disable(keys, args, json) {
    const id = args.positionals[1];
    if (!id) throw new UsageError("keys disable needs a key id");
    const k = await keys.disable(id, flagString(args, "reason") ?? "disabled by operator", cliActor());
    emit(json, { key: k }, () => `${k.key_id}: ${k.status}`);
  },
  async rotate(keys, args, json) {
    const id = args.positionals[1];
    if (!id) throw new UsageError("keys rotate needs a key id");
    const overlap = flagString(args, "overlap-hours");
    if (overlap !== undefined && !/^\d{1,2}$/.test(overlap)) throw new UsageError("--overlap-hours must be a whole number of hours from 0 to 24");
    const k = await keys.rotate(id, overlap === undefined ? 24 : Number(overlap), cliActor());
    emit(json, { key_id: k.key_id, secret: k.secret, previous_secret_valid_until: k.previous_secret_valid_until }, () =>
      [`key id : ${k.key_id}`, `secret : ${k.secret}`, `old secret valid until: ${k.previous_secret_valid_until ?? "now (no overlap)"}`].join("\n"),
    );
  },
};

/** `herald keys create|list|disable|rotate`: the same operations as /admin/partners/keys. */
export async function keysCommand(ctx: AppContext, args: ParsedArgs, json: boolean): Promise<number> {
  const sub = args.positionals[0] ?? "list";
  return runSubcommand(KEY_SUBCOMMANDS, sub, `unknown keys subcommand ${sub}; use create, list, disable or rotate`, new PartnerKeys(ctx), args, json);
}

const ADMIN_TOKEN_USAGE = "usage: herald admin-token create --name NAME | admin-token list | admin-token revoke --id N";

const ADMIN_TOKEN_SUBCOMMANDS: Subcommands<AdminTokens> = {
  async create(tokens, args, json) {
    const t = await tokens.create(required(args, "name"), cliActor());
    emit(json, { token: t.token, id: t.id, name: t.name }, () => `admin token (shown once): ${t.token}`);
  },
  async list(tokens, _args, json) {
    const list = await tokens.list();
    emit(json, { tokens: list }, () => table(list, ["id", "name", "created_at", "last_used_at", "revoked_at"]));
  },
  async revoke(tokens, args, json) {
    const raw = required(args, "id");
    if (!/^[1-9]\d{0,15}$/.test(raw)) throw new UsageError(`--id must be a token id as \`herald admin-token list\` shows it; got ${JSON.stringify(raw)}`);
    const r = await tokens.revoke(Number(raw), cliActor());
    emit(json, { token: r.token, already_revoked: r.alreadyRevoked, sessions_ended: r.sessionsEnded }, () =>
      r.alreadyRevoked
        ? `admin token ${r.token.id} (${r.token.name}) was already revoked at ${r.token.revoked_at}`
        : `admin token ${r.token.id} (${r.token.name}) revoked at ${r.token.revoked_at}; ${r.sessionsEnded} browser session(s) ended`,
    );
  },
};

/** `herald admin-token create --name N` (prints the token once), `list` (never a token), `revoke --id N`. */
export async function adminTokenCommand(ctx: AppContext, args: ParsedArgs, json: boolean): Promise<number> {
  if (args.positionals.length > 1) throw new UsageError(ADMIN_TOKEN_USAGE);
  return runSubcommand(ADMIN_TOKEN_SUBCOMMANDS, args.positionals[0], ADMIN_TOKEN_USAGE, new AdminTokens(ctx), args, json);
}

/** `--mode`'s value: a typo is a usage error (exit 2), never a filter that matches nothing. */
function keyMode(mode: string): KeyMode {
  if (mode !== "sandbox" && mode !== "live") throw new UsageError("--mode must be sandbox or live");
  return mode;
}
