import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { declaresFormBody } from "../body/form-body";
import { strictJsonNumbers } from "../json-numbers";
import { repeatableKeysOf } from "../query-once";

interface RouteRow {
  method: string;
  path: string;
  /** Elysia's compiled handler of the route (compiled on its first call), given the request's context. */
  composed?: unknown;
  hooks?: { body?: unknown; query?: unknown; params?: unknown; detail?: unknown };
}

export interface RouteSchemas {
  body: TSchema | null;
  query: TSchema | null;
  params: TSchema | null;
}

const NONE: RouteSchemas = { body: null, query: null, params: null };

/**
 * The app's route table, read once after every route is registered:
 * - which methods exist for a path, so an unmatched request says 405 (with Allow) instead of 404 when the path
 *   is right and the method wrong;
 * - each route's request schemas, so the HTTP core can check a body against its schema itself (and never hand
 *   an invalid value to Elysia's validator, whose error message stringifies it) and name a bad query parameter.
 */
export class RouteIndex {
  private patterns: Array<{ re: RegExp; method: string }> = [];
  private schemas = new Map<string, RouteSchemas>();
  private bodyChecks = new Map<string, TypeCheck<TSchema>>();
  private emptyBodies = new Map<string, boolean>();
  private forms = new Set<string>();
  private repeatable = new Map<string, ReadonlySet<string>>();
  private rows = new Map<string, RouteRow>();

  load(routes: ReadonlyArray<RouteRow>): void {
    this.rows = new Map(routes.map((r) => [`${r.method} ${r.path}`, r]));
    this.patterns = routes
      .filter((r) => r.method !== "ALL")
      .map((r) => ({
        method: r.method,
        re: new RegExp(
          "^" +
            r.path
              .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
              .replace(/\/:[^/]+/g, "/[^/]+")
              .replace(/\*/g, ".*") +
            "/?$",
        ),
      }));
    this.schemas = new Map(
      routes.map((r) => [
        `${r.method} ${r.path}`,
        { body: (r.hooks?.body as TSchema) ?? null, query: (r.hooks?.query as TSchema) ?? null, params: (r.hooks?.params as TSchema) ?? null },
      ]),
    );
    this.forms = new Set(routes.filter((r) => declaresFormBody(r.hooks?.detail)).map((r) => `${r.method} ${r.path}`));
  }

  /**
   * The route's compiled handler, to run it again with a request's context (ResumeLater, src/http/hook-scope.ts). A HEAD request
   * is served by its GET route. Read when called: Elysia replaces its lazy entry with the compiled one.
   */
  handlerOf(method: string, route: string): ((context: object) => unknown) | null {
    const row = this.rows.get(`${method} ${route}`) ?? (method === "HEAD" ? this.rows.get(`GET ${route}`) : undefined);
    return typeof row?.composed === "function" ? (row.composed as (context: object) => unknown) : null;
  }

  /** Whether the route takes an HTML form body instead of JSON (src/http/body/form-body.ts: the sign-in forms). */
  takesForm(method: string, route: string): boolean {
    return this.forms.size > 0 && this.forms.has(`${method} ${route}`);
  }

  methodsFor(pathname: string): string[] {
    const methods = new Set<string>();
    for (const p of this.patterns) if (p.re.test(pathname)) methods.add(p.method);
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods];
  }

  /** The request schemas of the route `route` (Elysia's path pattern, e.g. `/api/partner/users/:user_id`). */
  schemasOf(method: string, route: string): RouteSchemas {
    return this.schemas.get(`${method} ${route}`) ?? NONE;
  }

  /** The route's query parameters that may be given more than once (its list parameters), worked out once. */
  repeatableQueryKeys(method: string, route: string): ReadonlySet<string> {
    const key = `${method} ${route}`;
    let keys = this.repeatable.get(key);
    if (!keys) {
      keys = repeatableKeysOf(this.schemas.get(key)?.query ?? null);
      this.repeatable.set(key, keys);
    }
    return keys;
  }

  /**
   * Whether an absent body means `{}` on this route: its body is a JSON object. A route whose fields are all
   * optional then takes no body at all (a mini-app call with its init data in a header), and one with required
   * fields names them ("request_id is required") rather than "body must be an object". Worked out once per route.
   */
  absentBodyIsEmpty(method: string, route: string): boolean {
    const key = `${method} ${route}`;
    let empty = this.emptyBodies.get(key);
    if (empty === undefined) {
      const schema = this.schemas.get(key)?.body as { type?: string } | undefined;
      empty = schema?.type === "object";
      this.emptyBodies.set(key, empty);
    }
    return empty;
  }

  /**
   * A compiled checker of the route's body schema (compiled on first use), or null when it takes no body. A JSON
   * body is checked with numbers as JSON numbers only (src/http/json-numbers.ts); a form body, whose fields are
   * text, against the schema as declared.
   */
  bodyCheckOf(method: string, route: string): TypeCheck<TSchema> | null {
    const key = `${method} ${route}`;
    const cached = this.bodyChecks.get(key);
    if (cached) return cached;
    const schema = this.schemas.get(key)?.body;
    if (!schema) return null;
    const check = TypeCompiler.Compile(this.forms.has(key) ? schema : strictJsonNumbers(schema));
    this.bodyChecks.set(key, check);
    return check;
  }
}
