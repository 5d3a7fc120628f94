/**
 * `npm run build:sdk`: packs src/client/ as the `@herald/client` tarball that Herald serves (docs/sdk.md).
 *
 *   1. tsc (sdk/tsconfig.json) compiles src/client/*.ts to ESM .js + .d.ts in a staging copy of sdk/;
 *   2. `npm pack` turns that into herald-client-<version>.tgz (npm fixes every file's mtime, so the same
 *      sources give the same bytes);
 *   3. the tarball and sdk-build.json (what it is, its sha256, when it was built, and a hash of the inputs)
 *      land in dist/sdk/, each written to a temporary name and renamed, so a reader never sees half a file.
 *
 * The server embeds dist/sdk/ at bundle time through src/developers/sdk-artifact-macro.ts, which calls this
 * build itself when sdk-build.json is missing or its inputs hash no longer matches the sources.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const REPO_ROOT = join(import.meta.dir, "..");
export const SDK_DIR = join(REPO_ROOT, "sdk");
export const CLIENT_DIR = join(REPO_ROOT, "src", "client");
export const DEFAULT_OUT_DIR = join(REPO_ROOT, "dist", "sdk");
export const STAMP_FILE = "sdk-build.json";

export interface SdkBuild {
  name: string;
  version: string;
  api_version: string;
  /** The tarball's file name in the output directory (npm pack's name). */
  file: string;
  sha256: string;
  size_bytes: number;
  generated_at: string;
  /** sha256 over every input file (sources, package.json, tsconfig, README, this script). */
  inputs_sha256: string;
}

/** Every file the tarball is made from, in a fixed order. */
function inputFiles(): string[] {
  const client = readdirSync(CLIENT_DIR)
    .filter((f) => f.endsWith(".ts"))
    .sort()
    .map((f) => join(CLIENT_DIR, f));
  return [...client, ...["package.json", "tsconfig.json", "README.md", "build.ts"].map((f) => join(SDK_DIR, f))];
}

export function sdkInputsHash(): string {
  const h = createHash("sha256");
  for (const file of inputFiles()) h.update(`${file.slice(REPO_ROOT.length)}\0`).update(readFileSync(file)).update("\0");
  return h.digest("hex");
}

/** The last build in `outDir`, or null when there is none or it was made from other sources. */
export function currentBuild(outDir = DEFAULT_OUT_DIR): SdkBuild | null {
  const stampPath = join(outDir, STAMP_FILE);
  if (!existsSync(stampPath)) return null;
  const stamp = JSON.parse(readFileSync(stampPath, "utf8")) as SdkBuild;
  if (stamp.inputs_sha256 !== sdkInputsHash() || !existsSync(join(outDir, stamp.file))) return null;
  return stamp;
}

function run(cmd: string[], cwd: string): string {
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } });
  if (r.status !== 0) throw new Error(`${cmd.join(" ")} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

export function buildSdk(outDir = DEFAULT_OUT_DIR): SdkBuild {
  const inputs = sdkInputsHash();
  const stage = mkdtempSync(join(tmpdir(), "herald-sdk-build-"));
  try {
    const pkgDir = join(stage, "package");
    mkdirSync(pkgDir);
    cpSync(join(SDK_DIR, "package.json"), join(pkgDir, "package.json"));
    cpSync(join(SDK_DIR, "README.md"), join(pkgDir, "README.md"));
    run([join(REPO_ROOT, "node_modules", ".bin", "tsc"), "-p", join(SDK_DIR, "tsconfig.json"), "--outDir", join(pkgDir, "dist")], REPO_ROOT);
    const packed = JSON.parse(run(["npm", "pack", "--json", "--ignore-scripts", "--pack-destination", stage], pkgDir)) as Array<{ filename: string }>;
    const file = packed[0]!.filename.replace(/^@/, "").replace("/", "-");
    const bytes = readFileSync(join(stage, file));
    const pkg = JSON.parse(readFileSync(join(SDK_DIR, "package.json"), "utf8")) as { name: string; version: string; herald: { apiVersion: string } };
    const build: SdkBuild = {
      name: pkg.name,
      version: pkg.version,
      api_version: pkg.herald.apiVersion,
      file,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      size_bytes: bytes.length,
      generated_at: new Date().toISOString(),
      inputs_sha256: inputs,
    };
    mkdirSync(outDir, { recursive: true });
    const tmp = `.${process.pid}-${Date.now()}`;
    writeFileSync(join(outDir, file + tmp), bytes);
    renameSync(join(outDir, file + tmp), join(outDir, file));
    writeFileSync(join(outDir, STAMP_FILE + tmp), JSON.stringify(build, null, 2) + "\n");
    renameSync(join(outDir, STAMP_FILE + tmp), join(outDir, STAMP_FILE));
    return build;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const at = process.argv.indexOf("--out");
  const outDir = at > 0 && process.argv[at + 1] ? process.argv[at + 1]! : DEFAULT_OUT_DIR;
  const b = buildSdk(outDir);
  console.log(`${b.name}@${b.version} → ${join(outDir, b.file)} (${b.size_bytes} bytes, sha256 ${b.sha256})`);
}
