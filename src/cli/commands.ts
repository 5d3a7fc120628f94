import { openContext } from "../bootstrap";
import { ConfigError, describeConfig, loadConfig, type Config } from "../config";
import { openDatabase } from "../db/client";
import { migrate } from "../db/migrate";
import { createLogger } from "../log";
import pkg from "../../package.json";
import { flagString, UsageError, type ParsedArgs } from "./args";
import { emit, table } from "./output";
import { ListenError, serve } from "./serve";
import { adminTokenCommand, keysCommand } from "./keys";
import { signCommand } from "./sign";
import { runBackup } from "../ops/backup";
import { devRpcCommand } from "./dev-rpc";

export const HELP = `herald ${pkg.version} — partner integration and transparency service

Usage: herald <command> [options]      (also: bun run src/main.ts <command>)

Commands:
  serve                 start the HTTP server and the jobs (default)
  migrate               apply the embedded database migrations and exit
  config                print the effective configuration (secrets masked)
  jobs list             list jobs, their schedule and last run
  jobs run NAME         run one job now and record it in job_runs
  keys create --partner NAME --mode sandbox|live --scopes a,b [--ips CIDR,...]
  keys list [--partner NAME] [--mode M]
  keys disable ID [--reason TEXT]
  keys rotate ID [--overlap-hours N]      (N ≤ 24, default 24)
  admin-token create --name NAME          operator token for /admin/* (shown once)
  sign --key ID --secret S METHOD URL [BODY]   print a signed curl command
  backup                consistent snapshot of the database (VACUUM INTO <db dir>/backups/)
  dev-rpc [--port 8899] [--holders N] [--seed S] [--json]   local Solana JSON-RPC fixture (docs/chain.md)
  version               print the version
  help                  this text

Every command that prints data accepts --json. Configuration comes from environment variables; see README.md.`;

type Command = (args: ParsedArgs, json: boolean) => Promise<number> | number;

// CLI commands log only warnings, so their stdout stays clean for --json consumers.
// Their logs go to stderr so stdout carries only the command's output (one JSON document with --json).
const quiet = (config: Config) =>
  openContext(config, { log: createLogger(config.logLevel === "silent" ? "silent" : "warn", (line) => process.stderr.write(line + "\n")) });

export const COMMANDS: Record<string, Command> = {
  async serve() {
    await serve(loadConfig());
    return -1; // keeps running
  },
  migrate(_args, json) {
    const config = loadConfig();
    const db = openDatabase(config.dbPath);
    const result = migrate(db);
    db.close();
    emit(json, { success: true, db: config.dbPath, ...result }, () => `migrations: ${result.applied} applied now, ${result.total} in total (${config.dbPath})`);
    return 0;
  },
  config(_args, json) {
    loadConfig(); // fail loudly on a bad value before printing
    const rows = describeConfig();
    emit(json, { success: true, config: Object.fromEntries(rows.map((r) => [r.name, r.value])) }, () => table(rows, ["name", "value", "source"]));
    return 0;
  },
  async jobs(args, json) {
    const sub = args.positionals[0] ?? "list";
    const ctx = quiet(loadConfig());
    try {
      if (sub === "list") {
        const jobs = ctx.jobs.list();
        emit(json, { success: true, jobs }, () =>
          table(jobs.map((j) => ({ ...j, last: j.last_run ? `${j.last_run.started_at} ${j.last_run.ok ? "ok" : "failed"}` : "never" })), ["name", "pattern", "enabled", "last", "description"]),
        );
        return 0;
      }
      if (sub === "run") {
        const name = args.positionals[1] ?? flagString(args, "name");
        if (!name) throw new UsageError("jobs run needs a job name; see `herald jobs list`");
        if (!ctx.jobs.has(name)) throw new UsageError(`unknown job ${name}; see \`herald jobs list\``);
        const r = await ctx.jobs.runNow(name);
        emit(json, { success: r.ok, run: r }, () => `${r.name}: ${r.ok ? "ok" : `failed: ${r.error}`} in ${r.duration_ms} ms (run ${r.run_id})`);
        return r.ok ? 0 : 1;
      }
      throw new UsageError(`unknown jobs subcommand ${sub}; use list or run NAME`);
    } finally {
      ctx.db.close();
    }
  },
  keys(args, json) {
    const ctx = quiet(loadConfig());
    try {
      return keysCommand(ctx, args, json);
    } finally {
      ctx.db.close();
    }
  },
  "admin-token"(args, json) {
    const ctx = quiet(loadConfig());
    try {
      return adminTokenCommand(ctx, args, json);
    } finally {
      ctx.db.close();
    }
  },
  backup(_args, json) {
    const ctx = quiet(loadConfig());
    try {
      const b = runBackup(ctx);
      emit(json, { success: true, backup: b }, () => `backup written: ${b.path} (${b.size_bytes} bytes, sha256 ${b.sha256})`);
      return 0;
    } finally {
      ctx.db.close();
    }
  },
  sign(args, json) {
    return signCommand(args, json);
  },
  "dev-rpc"(args, json) {
    return devRpcCommand(args, json);
  },
  version(_args, json) {
    emit(json, { success: true, version: pkg.version, bun: Bun.version }, () => `herald ${pkg.version} (bun ${Bun.version})`);
    return 0;
  },
  help() {
    process.stdout.write(HELP + "\n");
    return 0;
  },
};

export async function runCli(args: ParsedArgs): Promise<number> {
  const name = args.command ?? "serve";
  const command = COMMANDS[name];
  const json = args.flags.json === true;
  if (args.flags.help === true || !command) {
    if (!command) process.stderr.write(`unknown command: ${name}\n\n`);
    process.stdout.write(HELP + "\n");
    return command ? 0 : 2;
  }
  try {
    return await command(args, json);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`herald: ${err.message}\n`);
      return 78; // EX_CONFIG
    }
    if (err instanceof UsageError) {
      process.stderr.write(`herald: ${err.message}\n`);
      return 2;
    }
    if (err instanceof ListenError) {
      process.stderr.write(`herald: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
