// A Bun macro: runs at bundle time (also under `bun run` and `bun test`), so the compiled binary carries the text of
// the repository files the developer portal offers for download. A TypeScript file cannot be imported as text
// (`with { type: "text" }`) without TypeScript taking it for a module, hence the macro.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

/** The text of a file of this repository, by its path from the repository's root. */
export function repositoryText(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}
