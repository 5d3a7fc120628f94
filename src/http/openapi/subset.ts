import { referencedComponents, type OpenApiDocument } from "./components";

// /api/openapi-transparency.yaml: the operations a reader without credentials can call — those tagged
// public or transparency — cut from the one generated document, so the subset can never disagree with it.

export const SUBSET_TAGS = ["public", "transparency"] as const;
const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

export function transparencySubset(doc: OpenApiDocument): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    const kept: Record<string, unknown> = {};
    for (const [key, op] of Object.entries(item)) {
      if (!METHODS.has(key)) continue;
      const tags = (op as { tags?: string[] }).tags ?? [];
      if (tags.some((t) => (SUBSET_TAGS as readonly string[]).includes(t))) kept[key] = op;
    }
    if (Object.keys(kept).length) paths[path] = kept;
  }
  // Only the named schemas, responses and headers the kept operations reach, and the credential schemes they name
  // (a public route may take an optional one: the audio-share track bearer).
  const all = doc.components as Record<string, Record<string, unknown> | undefined>;
  const used = referencedComponents(paths, all);
  const pick = (kind: string) => Object.fromEntries(Object.entries(all[kind] ?? {}).filter(([name]) => used.has(`#/components/${kind}/${name}`)));
  return {
    ...doc,
    info: {
      ...doc.info,
      title: "Herald public and transparency API",
      description:
        "The unauthenticated part of the Herald API: public status, proofs, transparency data and the developer portal. The full document is /api/openapi.yaml.",
    },
    tags: (doc.tags ?? []).filter((t) => (SUBSET_TAGS as readonly string[]).includes(t.name)),
    paths,
    components: {
      schemas: pick("schemas"),
      responses: pick("responses"),
      headers: pick("headers"),
      securitySchemes: schemesOf(paths, all.securitySchemes ?? {}),
    },
  };
}

function schemesOf(paths: OpenApiDocument["paths"], all: Record<string, unknown>): Record<string, unknown> {
  const names = new Set<string>();
  for (const item of Object.values(paths))
    for (const op of Object.values(item) as Array<{ security?: Array<Record<string, unknown>> }>)
      for (const s of op.security ?? []) for (const n of Object.keys(s)) names.add(n);
  return Object.fromEntries(Object.entries(all).filter(([name]) => names.has(name)));
}
