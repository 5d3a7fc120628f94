// Reading the repository's Markdown the way the docs tests need it: fenced blocks with their info strings, and
// the JSON documents in a command's output.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO_ROOT } from "../support/process";

export interface FencedBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word (`sh`, `ts`, `json` …) and the words after it (`example`, `setup`). */
  lang: string;
  markers: string[];
  /** The content, with the fence's own indentation removed (fences inside list items are indented). */
  text: string;
}

/** Every fenced block of a Markdown text (``` fences, any indentation); an unclosed fence is an error. */
export function fencedBlocks(markdown: string, file: string): FencedBlock[] {
  const lines = markdown.split("\n");
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})\s*([^`\s]*)\s*([^`]*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open as unknown as [string, string, string, string, string];
    const close = new RegExp(`^\\s*${fence}\\s*$`);
    const end = lines.findIndex((l, j) => j > i && close.test(l));
    if (end === -1) throw new Error(`${file}:${i + 1}: the fenced block is not closed`);
    const body = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()));
    blocks.push({ file, line: i + 1, lang, markers: rest.trim().split(/\s+/).filter(Boolean), text: body.join("\n") });
    i = end;
  }
  return blocks;
}

/** README.md and every Markdown file under docs/ (recursively), as [repo-relative path, text]. */
export function documentationFiles(): Array<[string, string]> {
  const out: Array<[string, string]> = [["README.md", readFileSync(join(REPO_ROOT, "README.md"), "utf8")]];
  const walk = (dir: string, depth: number) => {
    if (depth > 5) return; // docs/ is shallow; the bound keeps a symlink loop from hanging the test
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, depth + 1);
      else if (entry.name.endsWith(".md")) out.push([relative(REPO_ROOT, path), readFileSync(path, "utf8")]);
    }
  };
  walk(join(REPO_ROOT, "docs"), 0);
  return out;
}

/**
 * The top-level JSON objects in a command's output, in order: curl prints each answer without a newline, so
 * several documents can share a line. Text between them (YAML, HTML, a shell message) is skipped.
 */
export function jsonObjectsIn(output: string): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < output.length; i++) {
    const c = output[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === "{") {
      if (depth++ === 0) start = i;
    } else if (c === "}" && depth > 0 && --depth === 0) {
      try {
        const value = JSON.parse(output.slice(start, i + 1));
        if (value && typeof value === "object" && !Array.isArray(value)) found.push(value);
      } catch {
        // not JSON after all (a shell brace, a template): skip it
      }
    }
  }
  return found;
}
