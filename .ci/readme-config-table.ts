// Rewrites the configuration table in README.md from the declarations in src/config/vars.ts (run after adding a variable):
//   bun run .ci/readme-config-table.ts
import { CONFIG_VARS } from "../src/config";

const rows: string[] = [];
for (const spec of Object.values(CONFIG_VARS)) {
  const f =
    typeof spec.fallback === "function"
      ? "`http://localhost:$PORT`"
      : spec.fallback === undefined
        ? "(unset)"
        : spec.fallback === ""
          ? "(empty)"
          : "`" + String(spec.fallback) + "`";
  const k = spec.kind;
  const type = k.type === "int" ? `int ${k.min}–${k.max}` : k.type === "enum" ? k.values.join(" \\| ") : k.type === "string" && k.allowed ? k.allowed : k.type;
  rows.push(`| \`${spec.name}\` | ${f} | ${type} | ${spec.doc} |`);
}
const path = new URL("../README.md", import.meta.url);
const readme = await Bun.file(path).text();
const start = readme.indexOf("| variable | default | type | meaning |");
if (start < 0) throw new Error("README.md has no configuration table");
const lines = readme.slice(start).split("\n");
let end = 2;
while (lines[end]?.startsWith("| `")) end++;
await Bun.write(path, readme.slice(0, start) + [lines[0], lines[1], ...rows, ...lines.slice(end)].join("\n"));
console.log(`README.md: ${rows.length} configuration variables`);
