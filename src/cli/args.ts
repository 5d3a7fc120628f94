import { parseArgs as parseNodeArgs } from "node:util";

export interface ParsedArgs {
  command: string | undefined;
  positionals: string[];
  flags: Record<string, string | true>;
}

export class UsageError extends Error {
  /** Whether the refusal should be followed by the usage text (a command or flag herald does not know). */
  constructor(
    message: string,
    readonly showUsage = false,
  ) {
    super(message);
  }
}

/** Flags every command takes. `--version`/`-v` and `--help`/`-h` win over the command (they never start it). */
const GLOBAL_FLAGS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/**
 * The flags of each command besides the global ones: value flags (which take a string) and booleans. A flag not
 * listed for the command is refused rather than ignored: a typo such as `--scope` for `--scopes` must not create a
 * key with other scopes than meant.
 */
export const COMMAND_FLAGS: Record<string, { values?: readonly string[]; booleans?: readonly string[] }> = {
  serve: {},
  migrate: {},
  config: {},
  jobs: { values: ["name"] },
  keys: { values: ["partner", "mode", "scopes", "ips", "reason", "overlap-hours"] },
  "admin-token": { values: ["name", "id"] },
  credentials: { values: ["partner"], booleans: ["revoke-unused", "production"] },
  sign: { values: ["key", "secret"] },
  backup: {},
  restore: { values: ["sha256", "master-key-file"] },
  "dev-rpc": { values: ["port", "holders", "transactions", "seed", "host", "plant", "lp-wallets"] },
  "migrate-to-postgres": { values: ["from", "to", "batch"], booleans: ["force"] },
  version: {},
  help: {},
};

/** The command: the first argument that is not a flag. Only boolean (global) flags may come before it. */
function commandOf(argv: string[]): string | undefined {
  for (const a of argv) {
    if (a === "--") return undefined;
    if (!a.startsWith("-")) return a;
  }
  return undefined;
}

/**
 * `herald [--json|-h|-v] <command> [sub] [--flag value | --flag=value | --bool] [-- positional…]`, parsed strictly
 * by node:util's parser against the command's own flags. Throws UsageError (exit 2) for an unknown command, an
 * unknown flag, a value flag without its value or a boolean flag given one.
 */
export function parseArgs(argv: string[]): ParsedArgs {
  const command = commandOf(argv);
  const known = command === undefined ? {} : COMMAND_FLAGS[command];
  if (known === undefined) throw new UsageError(`unknown command: ${command}`, true);
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = { ...GLOBAL_FLAGS };
  for (const name of known.values ?? []) options[name] = { type: "string" };
  for (const name of known.booleans ?? []) options[name] = { type: "boolean" };
  let parsed: ReturnType<typeof parseNodeArgs>;
  try {
    parsed = parseNodeArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw usageErrorOf(err, command);
  }
  const flags: Record<string, string | true> = {};
  for (const [name, value] of Object.entries(parsed.values)) if (value !== undefined && value !== false) flags[name] = value as string | true;
  const positionals = [...parsed.positionals];
  if (command !== undefined) positionals.shift(); // the command itself: only boolean flags can precede it
  return { command, positionals, flags };
}

/** node:util's messages name the option but suggest things that do not apply here; say it our way. */
function usageErrorOf(err: unknown, command: string | undefined): UsageError {
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  // "Unknown option '--foo'", "Option '-h, --help' does not take an argument": the long form when there is one.
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  const option = /--[\w-]+/.exec(quoted)?.[0] ?? quoted.split(" ")[0] ?? "";
  const where = command ? `herald ${command}` : "herald";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return new UsageError(`unknown option ${option} for ${where}`, true);
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    if (/does not take an argument/.test(message)) return new UsageError(`${option} takes no value`, true);
    if (/ambiguous/.test(message)) return new UsageError(`${option} needs a value; to pass one that starts with "-", write ${option}=VALUE`);
    return new UsageError(`${option} needs a value`);
  }
  return new UsageError(message, true);
}

export function flagString(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags[name];
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
}
