// What the spec probes share: the query parameters the spec lists for a route, against the served document.

export type ServedDoc = { paths: Record<string, { get?: { parameters?: Array<{ name: string; in: string }> } }> };

/** Each `path ?name` the spec lists (a path or paths → their query parameters) that the document's GET of that path does not declare. */
export function undeclaredQuery(doc: ServedDoc, spec: Array<[paths: string | string[], params: string[]]>): string[] {
  const missing: string[] = [];
  for (const [paths, params] of spec) {
    for (const path of typeof paths === "string" ? [paths] : paths) {
      const names = new Set((doc.paths[path]?.get?.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name));
      for (const p of params) if (!names.has(p)) missing.push(`${path} ?${p}`);
    }
  }
  return missing;
}
