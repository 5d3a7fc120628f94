import { systemClock } from "../clock";
import { ConfigError, describeConfig, loadConfig, type Config } from "../config";
import type { AppContext } from "../context";
import pkg from "../../package.json";
import { flagString, parseArgs, UsageError, type ParsedArgs } from "./args";
import type { KeyNeed } from "./master-key";
import { emit, table } from "./output";
import { signCommand } from "./sign";

// The app, the database and the chain client load only for the commands that use them (dynamic imports, bundled
// by `bun build --compile`): `--version`, `--help` and `sign` answer even when a module elsewhere is broken.

export const HELP = `herald ${pkg.version} — partner integration and transparency service

Usage: herald [<command>] [options]    (also: bun run src/main.ts <command>)

Commands:
  serve                 start the HTTP server and the jobs (default)
  migrate               apply the embedded database migrations and exit
  migrate-to-postgres [--from FILE] [--to URL] [--batch N] [--force]
                        copy the SQLite database into PostgreSQL, resumable, checked (docs/postgres.md)
  config                print the effective configuration (secrets masked)
  jobs list             list jobs, their schedule and last run
  jobs run NAME [NAME…] run jobs now, in order, and record each in job_runs
  keys create --partner NAME --mode sandbox|live --scopes a,b [--ips CIDR,...]
  keys list [--partner NAME] [--mode M]
  keys disable ID [--reason TEXT]
  keys rotate ID [--overlap-hours N]      (N ≤ 24, default 24)
  admin-token create --name NAME          operator token for /admin/* (shown once)
  admin-token list                        admin tokens: id, name, created, last used, revoked (never the token)
  admin-token revoke --id N               revoke a token now: its bearer calls and browser sessions stop
  credentials new [--partner NAME] [--revoke-unused] [--production]
                        new live and sandbox keys (every scope) and an operator token, printed once with the
                        first-start banner's lines to paste; revokes nothing unless --revoke-unused (the never used)
  sign --key ID --secret S METHOD URL [BODY]   print a signed curl command
  backup                consistent snapshot of the database (VACUUM INTO <db dir>/backups/)
  restore FILE [--sha256 HEX] [--master-key-file PATH]   replace the database with a backup (server stopped;
                        checks the master key it needs; see herald restore --help)
  dev-rpc [--port 8899] [--host H] [--holders N] [--transactions N] [--seed S] [--plant all|TYPES] [--lp-wallets N] [--json]
                        local Solana JSON-RPC fixture (docs/chain.md)
  version               print the version
  help                  this text

Options:
  -h, --help            print this text and exit
  -v, --version         print the version and exit
  --json                print one JSON document (every command that prints data)

Any other option, or an option a command does not take, is refused (exit 2). Configuration comes from
environment variables; see README.md. A setting that is refused, or a database whose master key this command does
not have (HERALD_MASTER_KEY, else master.key beside HERALD_DB_PATH), exits 78 and changes nothing; the list
commands and backup run without the key and say so.`;

type Command = (args: ParsedArgs, json: boolean) => Promise<number> | number;

// CLI commands log only warnings, to stderr, so stdout carries only the command's output (one JSON document with --json).
// The master key is looked for, never made (src/cli/master-key.ts): a command that needs it exits 78 and writes
// nothing; a read-only one runs without it and says so on stderr.
async function quiet(config: Config, need: KeyNeed): Promise<AppContext> {
  const [{ openContextAsync }, { createLogger }, { cliSecrets }] = await Promise.all([import("../bootstrap"), import("../log"), import("./master-key")]);
  const { secrets, note } = await cliSecrets(config, need);
  if (note) process.stderr.write(`${note}\n`);
  return openContextAsync(config, {
    secrets,
    log: createLogger(config.logLevel === "silent" ? "silent" : "warn", (line) => process.stderr.write(line + "\n")),
  });
}

async function onContext(config: Config, need: KeyNeed, run: (ctx: AppContext) => Promise<number>): Promise<number> {
  const ctx = await quiet(config, need);
  try {
    return await run(ctx);
  } finally {
    await ctx.store.close();
  }
}

const needOf = (sub: string | undefined, readOnly: string[]): KeyNeed => (readOnly.includes(sub ?? "") ? "read-only" : "needs-key");

/** A database URL as the CLI prints it: the password replaced, so that output can be pasted into a ticket. */
function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(DATABASE_URL)";
  }
}

function emitMigrated(json: boolean, db: string, result: { applied: number; total: number }): void {
  emit(json, { success: true, db, ...result }, () => `migrations: ${result.applied} applied now, ${result.total} in total (${db})`);
}

export const COMMANDS: Record<string, Command> = {
  async serve() {
    const config = loadConfig();
    const { serve } = await import("./serve");
    await serve(config);
    return -1; // keeps running
  },
  async migrate(_args, json) {
    const config = loadConfig();
    if (config.database.engine === "postgres") {
      const [{ onPostgres }, { migratePostgres }] = await Promise.all([import("./master-key"), import("../db/postgres-migrate")]);
      await onPostgres(config, async (store) => {
        emitMigrated(json, withoutPassword(config.database.url!), await migratePostgres(store, systemClock.now().toISOString()));
      });
      return 0;
    }
    const [{ openDatabase }, { migrate }] = await Promise.all([import("../db/client"), import("../db/migrate")]);
    const db = openDatabase(config.dbPath);
    const result = migrate(db);
    db.close();
    emitMigrated(json, config.dbPath, result);
    return 0;
  },
  config(_args, json) {
    const config = loadConfig(); // fail loudly on a bad value before printing
    const rows = describeConfig();
    // On stderr, so `herald config --json` stays one JSON document.
    for (const r of config.retired) process.stderr.write(`note: ${r.name} is set but no longer read: ${r.note}\n`);
    emit(json, { success: true, config: Object.fromEntries(rows.map((r) => [r.name, r.value])) }, () => table(rows, ["name", "value", "source"]));
    return 0;
  },
  async jobs(args, json) {
    const sub = args.positionals[0] ?? "list";
    const ctx = await quiet(loadConfig(), needOf(sub, ["list"]));
    try {
      if (sub === "list") {
        const jobs = await ctx.jobs.list();
        emit(json, { success: true, jobs }, () =>
          table(
            jobs.map((j) => ({ ...j, last: j.last_run ? `${j.last_run.started_at} ${j.last_run.ok ? "ok" : "failed"}` : "never" })),
            ["name", "pattern", "enabled", "last", "description"],
          ),
        );
        return 0;
      }
      if (sub === "run") {
        // Several names run in the order given and stop at the first failure (the audit walk-through runs the
        // chain jobs and the audit in one command).
        const names = args.positionals.length > 1 ? args.positionals.slice(1) : [flagString(args, "name")].filter((n): n is string => !!n);
        if (!names.length) throw new UsageError("jobs run needs a job name; see `herald jobs list`");
        for (const name of names) if (!ctx.jobs.has(name)) throw new UsageError(`unknown job ${name}; see \`herald jobs list\``);
        const runs = [];
        for (const name of names) {
          const r = await ctx.jobs.runNow(name);
          runs.push(r);
          if (!json) process.stdout.write(`${r.name}: ${r.ok ? "ok" : `failed: ${r.error}`} in ${r.duration_ms} ms (run ${r.run_id})\n`);
          if (!r.ok) break;
        }
        const ok = runs.every((r) => r.ok);
        if (json) emit(json, names.length === 1 ? { success: ok, run: runs[0] } : { success: ok, runs }, () => "");
        return ok ? 0 : 1;
      }
      throw new UsageError(`unknown jobs subcommand ${sub}; use list or run NAME`);
    } finally {
      // What the runs buffered (a job's own request-log rows, none today) and their leases go before the store does.
      await ctx.requestLog.stop();
      await ctx.jobs.stop();
      await ctx.chain.flushRecords(); // a chain job's RPC outcomes, buffered off the call path
      await ctx.store.close();
    }
  },
  keys: (args, json) =>
    onContext(loadConfig(), needOf(args.positionals[0] ?? "list", ["list"]), async (ctx) => (await import("./keys")).keysCommand(ctx, args, json)),
  "admin-token": (args, json) =>
    onContext(loadConfig(), needOf(args.positionals[0], ["list"]), async (ctx) => (await import("./keys")).adminTokenCommand(ctx, args, json)),
  async credentials(args, json) {
    const config = loadConfig();
    const { checkCredentialsArgs, credentialsCommand } = await import("./credentials");
    // Refused before the database is opened: a wrong subcommand, or production without --production (exit 2).
    checkCredentialsArgs(config, args);
    return onContext(config, "needs-key", (ctx) => credentialsCommand(ctx, args, json));
  },
  async backup(_args, json) {
    const config = loadConfig();
    // Refused before anything opens: on PostgreSQL the database's own backups apply (exit 2, src/ops/backups/engine.ts).
    const { ownBackupsApply, POSTGRES_BACKUP_HINT } = await import("../ops/backups/engine");
    if (!ownBackupsApply(config.database.engine)) throw new UsageError(`backup: DATABASE_URL points at PostgreSQL. ${POSTGRES_BACKUP_HINT}`);
    return onContext(config, "read-only", async (ctx) => {
      const [{ runBackup }, { cliActor }] = await Promise.all([import("../ops/backups/backup"), import("./keys")]);
      const { backup: b, pruned } = await runBackup(ctx, { actor: cliActor() });
      emit(json, { success: true, backup: b, pruned }, () =>
        [`backup written: ${b.path} (${b.size_bytes} bytes, sha256 ${b.sha256})`, ...pruned.map((p) => `pruned (BACKUP_KEEP): ${p.name}`)].join("\n"),
      );
      return 0;
    });
  },
  async "migrate-to-postgres"(args, json) {
    const config = loadConfig();
    return (await import("./migrate-to-postgres")).migrateToPostgresCommand(config, args, json, systemClock.now().toISOString());
  },
  restore: async (args, json) => (await import("./restore")).restoreCommand(loadConfig(), args, json),
  sign: signCommand,
  "dev-rpc": async (args, json) => (await import("./dev-rpc")).devRpcCommand(args, json),
  version(_args, json) {
    emit(json, { success: true, version: pkg.version, bun: Bun.version }, () => `herald ${pkg.version} (bun ${Bun.version})`);
    return 0;
  },
  help() {
    process.stdout.write(HELP + "\n");
    return 0;
  },
};

/** Commands with a help text of their own (`herald restore --help`); the others print the general one. */
const COMMAND_HELP: Record<string, () => Promise<string>> = {
  restore: async () => (await import("./restore")).RESTORE_HELP,
  "migrate-to-postgres": async () => (await import("./migrate-to-postgres")).MIGRATE_TO_POSTGRES_HELP,
};

/**
 * Errors that end a command with one line and no stack, matched by name so that this module does not load the server
 * to catch them; a wrong or missing master key is a configuration error (78, EX_CONFIG, as ConfigError).
 */
const EXIT_BY_ERROR_NAME: Record<string, number> = { ListenError: 1, DatabaseStartError: 1, MasterKeyRefused: 78, MasterKeyUnavailable: 78 };

/** Runs `herald <argv>`; resolves with the exit code, or -1 when the command keeps running (serve, dev-rpc). */
export async function runCli(argv: string[]): Promise<number> {
  try {
    const args = parseArgs(argv);
    // --help and --version answer and exit whatever else was asked: they must never start the server.
    if (args.flags.help === true) {
      const own = args.command ? COMMAND_HELP[args.command] : undefined;
      if (!own) return COMMANDS.help!(args, false);
      process.stdout.write(`${await own()}\n`);
      return 0;
    }
    if (args.flags.version === true) return COMMANDS.version!(args, args.flags.json === true);
    // No command keeps its historical meaning: `herald` alone serves (Dockerfile, litestream -exec).
    const command = COMMANDS[args.command ?? "serve"]!;
    return await command(args, args.flags.json === true);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`herald: ${err.message}\n${err.showUsage ? `\n${HELP}\n` : ""}`);
      return 2;
    }
    const exit = err instanceof ConfigError ? 78 : err instanceof Error ? EXIT_BY_ERROR_NAME[err.name] : undefined;
    if (exit !== undefined) {
      process.stderr.write(`herald: ${(err as Error).message}\n`);
      return exit;
    }
    throw err;
  }
}
