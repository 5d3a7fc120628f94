// A Bun macro: runs at bundle time (also under `bun run` and `bun test`), so the compiled binary carries the
// mini-app's browser script and needs no file beside it. The script is bundled from src/miniapp/browser/ by the
// same Bun, for browsers, minified: no CDN, nothing fetched when a player opens the page.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The bundled script of a browser entry under src/miniapp/browser/ (e.g. "app.ts"), as text. */
export function browserBundle(entry: string): string {
  const source = join(import.meta.dir, "browser", entry);
  const out = mkdtempSync(join(tmpdir(), "herald-miniapp-bundle-"));
  try {
    const outfile = join(out, "bundle.js");
    const r = spawnSync(process.execPath, ["build", source, "--target=browser", "--format=iife", "--minify", "--outfile", outfile], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`bundling ${entry} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
    return readFileSync(outfile, "utf8");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
