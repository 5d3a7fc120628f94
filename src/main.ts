#!/usr/bin/env bun
// The only impure entry: parses the command line and hands over to the CLI (serve opens the DB and listens).
// No top-level await: `bun build --compile --bytecode` needs a module without it.
import { runCli } from "./cli/commands";

runCli(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`herald: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
