export interface ParsedArgs {
  command: string | undefined;
  positionals: string[];
  flags: Record<string, string | true>;
}

/** `herald <command> [sub] [--flag value | --flag=value | --bool]`: small on purpose, no option parser needed. */
export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
      else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("--") && !BOOLEAN_FLAGS.has(a.slice(2))) flags[a.slice(2)] = argv[++i]!;
      else flags[a.slice(2)] = true;
    } else positionals.push(a);
  }
  return { command: positionals.shift(), positionals, flags };
}

const BOOLEAN_FLAGS = new Set(["json", "help", "force"]);

export class UsageError extends Error {}

export function flagString(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags[name];
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
}
