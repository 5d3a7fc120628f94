#!/usr/bin/env bun
// The only impure entry: parses the command line and hands over to the CLI (serve opens the DB and listens).
import { parseArgs } from "./cli/args";
import { runCli } from "./cli/commands";

const code = await runCli(parseArgs(process.argv.slice(2)));
if (code >= 0) process.exit(code);
