// Rewrites the configuration table in README.md from the declarations in src/config/vars.ts (run after adding a variable):
//   bun run .ci/readme-config-table.ts
// test/config.test.ts holds the README's table to configTableRows().
import { CONFIG_VARS } from "../src/config";

const HEADER = "| variable | default | type | meaning |";

/** The table's rows, one per variable in declaration order. */
export function configTableRows(): string[] {
  return Object.values(CONFIG_VARS).map((spec) => {
    const f =
      typeof spec.fallback === "function"
        ? spec.fallbackDoc
        : spec.fallback === undefined
          ? "(unset)"
          : spec.fallback === ""
            ? "(empty)"
            : "`" + String(spec.fallback) + "`";
    const k = spec.kind;
    const type =
      k.type === "int" ? `int ${k.min}–${k.max}` : k.type === "enum" ? k.values.join(" \\| ") : k.type === "string" && k.allowed ? k.allowed : k.type;
    return `| \`${spec.name}\` | ${f} | ${type} | ${spec.doc} |`;
  });
}

/** The rows of README.md's table as they stand, and the text around them. */
export function readmeConfigTable(readme: string): { before: string; rows: string[]; after: string[]; head: string[] } {
  const start = readme.indexOf(HEADER);
  if (start < 0) throw new Error("README.md has no configuration table");
  const lines = readme.slice(start).split("\n");
  let end = 2;
  while (lines[end]?.startsWith("| `")) end++;
  return { before: readme.slice(0, start), head: lines.slice(0, 2), rows: lines.slice(2, end), after: lines.slice(end) };
}

if (import.meta.main) {
  const path = new URL("../README.md", import.meta.url);
  const table = readmeConfigTable(await Bun.file(path).text());
  const rows = configTableRows();
  await Bun.write(path, table.before + [...table.head, ...rows, ...table.after].join("\n"));
  console.log(`README.md: ${rows.length} configuration variables`);
}
