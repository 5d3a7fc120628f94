import { referencedComponents, type OpenApiDocument } from "./components";

// Documents cut from the one generated document, so that a part can never disagree with the whole: the public and
// transparency operations (/api/openapi-transparency.yaml) and one audience's (/api/openapi/<audience>.json).

export const SUBSET_TAGS = ["public", "transparency"] as const;
/** The keys of a path item that are operations. */
export const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** An operation as the cut reads it. */
export interface OperationView {
  tags?: string[];
  security?: Array<Record<string, unknown>>;
}

/** What a cut keeps and how it names itself; the rest (openapi, servers) is the whole document's. */
export interface Cut {
  keep: (op: OperationView, path: string) => boolean;
  info: { title: string; description: string };
  /** The document's tags listed; by default those the kept operations carry. */
  tags?: readonly string[];
}

/**
 * The operations `cut.keep` keeps, with only the named schemas, responses and headers they reach, the credential
 * schemes they name (a public route may take an optional one: the audio-share track bearer) and the tags they carry.
 */
export function subsetOf(doc: OpenApiDocument, cut: Cut): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  const tags = new Set<string>();
  const schemes: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    const kept: Record<string, unknown> = {};
    for (const [key, op] of Object.entries(item) as Array<[string, OperationView]>) {
      if (!METHODS.has(key) || !cut.keep(op, path)) continue;
      kept[key] = op;
      for (const t of op.tags ?? []) tags.add(t);
      for (const s of op.security ?? []) schemes.push(...Object.keys(s).map((n) => `#/components/securitySchemes/${n}`));
    }
    if (Object.keys(kept).length) paths[path] = kept;
  }
  const all = doc.components as Record<string, Record<string, unknown> | undefined>;
  const used = referencedComponents(paths, all).union(new Set(schemes));
  const pick = (kind: string) => Object.fromEntries(Object.entries(all[kind] ?? {}).filter(([name]) => used.has(`#/components/${kind}/${name}`)));
  return {
    ...doc,
    info: { ...doc.info, ...cut.info },
    tags: (doc.tags ?? []).filter((t) => (cut.tags ? cut.tags.includes(t.name) : tags.has(t.name))),
    paths,
    components: {
      schemas: pick("schemas"),
      responses: pick("responses"),
      headers: pick("headers"),
      securitySchemes: pick("securitySchemes"),
    },
  };
}

export function transparencySubset(doc: OpenApiDocument): OpenApiDocument {
  return subsetOf(doc, {
    keep: (op) => (op.tags ?? []).some((t) => (SUBSET_TAGS as readonly string[]).includes(t)),
    info: {
      title: "Herald public and transparency API",
      description:
        "The unauthenticated part of the Herald API: public status, proofs, transparency data and the developer portal. The full document is /api/openapi.yaml.",
    },
    tags: SUBSET_TAGS,
  });
}
