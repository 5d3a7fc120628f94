// The contract check: each recorded exchange (test/support/contract-log.ts) against the OpenAPI document — its
// status documented on the operation (explicitly: `default` documents nothing), its media type among that
// status's, a JSON body valid against the status's schema (Ajv, JSON Schema 2020-12, $refs followed through the
// whole document), and every response header declared on that status but the framing ones HTTP itself defines.
// Once all are checked, `unsent()`: a header the document declares only where the server always sends it
// (ALWAYS_SENT: a file's name, a validator, a redirect's target) that none of an operation's recorded answers carried.
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { Exchange } from "./contract-log";

type Json = Record<string, any>;
export type Doc = { paths: Record<string, Record<string, Json>>; components: Record<string, Record<string, Json>> };

/**
 * Headers of HTTP's own framing and content negotiation, described by HTTP rather than by an API document. Cache-Control
 * is not one of them: how long an answer may be kept is the API's word, declared where it is sent (contract.ts).
 */
const FRAMING = new Set(["content-type", "content-length", "date", "connection", "keep-alive", "transfer-encoding", "content-encoding", "vary"]);

export interface Violation {
  kind: "status" | "media type" | "body" | "header" | "security";
  operation: string;
  status: number | null;
  detail: string;
}

/** Headers declared only where every answer of that status carries them: one that no answer of its operation carried is reported. */
const ALWAYS_SENT = ["content-disposition", "etag", "location", "last-modified", "x-request-id", "x-content-type-options"];

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

export class ContractCheck {
  private readonly routes: Array<{ re: RegExp; template: string; literal: number }>;
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly validators = new Map<string, ValidateFunction>();
  readonly unmatched = new Map<string, number>();
  /** Per operation and status: the ALWAYS_SENT headers declared there, and those any recorded answer carried. */
  private readonly carried = new Map<string, { operation: string; status: number; declared: string[]; seen: Set<string> }>();

  constructor(private readonly doc: Doc) {
    addFormats(this.ajv);
    this.ajv.addSchema(doc as object, "doc");
    this.routes = Object.keys(doc.paths)
      .map((template) => ({
        template,
        re: new RegExp(`^${template.replace(/[.+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`),
        literal: template.split("/").filter((s) => s && !s.startsWith("{")).length,
      }))
      .sort((a, b) => b.literal - a.literal);
  }

  /** Operations the document gives no `security` (public ones must say `security: []`). */
  securityGaps(): Violation[] {
    const out: Violation[] = [];
    for (const [path, item] of Object.entries(this.doc.paths))
      for (const [method, op] of Object.entries(item))
        if (!Array.isArray(op.security))
          out.push({
            kind: "security",
            operation: `${method.toUpperCase()} ${path}`,
            status: null,
            detail: "no security (public operations say security: [])",
          });
    return out;
  }

  /** After every exchange is checked: the ALWAYS_SENT headers an operation's status declares that none of its answers carried. */
  unsent(): Violation[] {
    const out: Violation[] = [];
    for (const c of this.carried.values())
      for (const h of c.declared)
        if (!c.seen.has(h)) out.push({ kind: "header", operation: c.operation, status: c.status, detail: `declares ${h}, which none of its answers sent` });
    return out;
  }

  check(x: Exchange): Violation[] {
    const method = x.method === "HEAD" ? "get" : x.method.toLowerCase();
    const route = this.routes.find((r) => r.re.test(x.path) && this.doc.paths[r.template]![method]);
    if (!route) {
      const key = `${x.method} ${x.path.split("/").slice(0, 4).join("/")}`;
      this.unmatched.set(key, (this.unmatched.get(key) ?? 0) + 1);
      return [];
    }
    const operation = `${method.toUpperCase()} ${route.template}`;
    const op = this.doc.paths[route.template]![method]!;
    let path = ["paths", route.template, method, "responses", String(x.status)];
    let response = op.responses?.[String(x.status)] as Json | undefined;
    if (!response) return [{ kind: "status", operation, status: x.status, detail: `answered ${x.status}, which the operation does not document` }];
    if (typeof response.$ref === "string") {
      path = (response.$ref as string).slice(2).split("/");
      response = this.doc.components.responses?.[path[2]!];
      if (!response) return [{ kind: "status", operation, status: x.status, detail: `${x.status} refers to a missing response` }];
    }
    const out: Violation[] = [];
    const declared = new Set(Object.keys(response.headers ?? {}).map((h) => h.toLowerCase()));
    const key = `${operation} ${x.status}`;
    let carried = this.carried.get(key);
    if (!carried) this.carried.set(key, (carried = { operation, status: x.status, declared: ALWAYS_SENT.filter((h) => declared.has(h)), seen: new Set() }));
    for (const h of carried.declared) if (x.headers[h] !== undefined) carried.seen.add(h);
    for (const name of Object.keys(x.headers))
      if (!FRAMING.has(name) && !declared.has(name)) out.push({ kind: "header", operation, status: x.status, detail: `sends ${name}, not declared` });
    const type = (x.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    const content = (response.content ?? {}) as Record<string, Json>;
    if (x.bytes > 0) {
      const media = Object.keys(content).find((m) => m.toLowerCase() === type);
      if (!media) {
        out.push({
          kind: "media type",
          operation,
          status: x.status,
          detail: `answers ${type || "a body without Content-Type"}; documented: ${Object.keys(content).join(", ") || "no body"}`,
        });
      } else if (x.body !== null && /json$/.test(type) && content[media]!.schema) {
        const ref = `doc#/${pointer(...path, "content", media, "schema")}`;
        let validate = this.validators.get(ref);
        if (!validate) {
          validate = this.ajv.compile({ $ref: ref });
          this.validators.set(ref, validate);
        }
        let value: unknown;
        try {
          value = JSON.parse(x.body);
        } catch {
          out.push({ kind: "body", operation, status: x.status, detail: "the body is not JSON" });
          return out;
        }
        if (!validate(value)) {
          const e = validate.errors?.[0];
          out.push({
            kind: "body",
            operation,
            status: x.status,
            detail: `${e?.instancePath || "/"} ${e?.message}${e?.params ? ` ${JSON.stringify(e.params)}` : ""}`,
          });
        }
      }
    }
    return out;
  }
}

/** Violations grouped by what they are, with how often each was seen: for a report a person can act on. */
export function summarise(violations: Violation[]): Array<{ violation: Violation; count: number }> {
  const groups = new Map<string, { violation: Violation; count: number }>();
  for (const v of violations) {
    const key = `${v.kind}|${v.operation}|${v.status}|${v.kind === "body" ? v.detail.replace(/\d+/g, "N") : v.detail}`;
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { violation: v, count: 1 });
  }
  return [...groups.values()].sort((a, b) => a.violation.operation.localeCompare(b.violation.operation));
}
