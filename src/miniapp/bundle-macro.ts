// A Bun macro: runs at bundle time (also under `bun run` and `bun test`), so the compiled binary carries the
// mini-app's browser script and needs no file beside it. The script is bundled from src/miniapp/browser/ by the
// same Bun, for browsers, minified: no CDN, nothing fetched when a player opens the page.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Every character past ASCII written as its \uXXXX escape (the minified script has them only in strings, templates
 * and regular expressions, where the escape means the same): an all-ASCII script is scanned by V8 as one byte a
 * character instead of two, which a phone's first screen feels.
 */
const asciiOnly = (js: string) => js.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** The bundled script of a browser entry under src/miniapp/browser/ (e.g. "app.ts"), as text. */
export function browserBundle(entry: string): string {
  const source = join(import.meta.dir, "browser", entry);
  const out = mkdtempSync(join(tmpdir(), "herald-miniapp-bundle-"));
  try {
    const outfile = join(out, "bundle.js");
    const r = spawnSync(process.execPath, ["build", source, "--target=browser", "--format=iife", "--minify", "--outfile", outfile], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`bundling ${entry} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
    return asciiOnly(readFileSync(outfile, "utf8"));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
