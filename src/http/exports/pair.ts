import type { AnyElysia, Static, TSchema } from "elysia";

/** A JSON export and its CSV twin, declared once: one builder, one query, one guard; each answer only shapes it. */
export interface ExportPair<Q extends TSchema, R extends object> {
  paths: readonly [json: string, csv: string];
  /** The query of both, unless `csvQuery` gives the twin its own (null: none). */
  query?: Q;
  csvQuery?: TSchema | null;
  /** Options both routes carry: the guard's macro (`{ operator: "api" }`). */
  guard?: Record<string, unknown>;
  build: (query: Static<Q>) => Promise<R>;
  /** The JSON answer: `{ success: true, ...body(r) }` (r itself by default), checked against `response`. */
  response: Record<number, TSchema>;
  body?: (r: R, headers: Record<string, unknown>) => object;
  csv: (r: R, query: Static<Q>) => Response;
  detail: { json: object; csv: object };
}

// Elysia's route types cannot follow a schema known here only as a type parameter: the handlers are typed by Q.
interface Routes<Q extends TSchema> {
  get(path: string, handler: (c: { query: Static<Q>; set: { headers: Record<string, unknown> } }) => Promise<unknown>, hook: object): Routes<Q>;
}

/** Both routes, for `.use(exportPair({…}))`: the twin cannot drift from its JSON (the same builder, query and guard). */
export const exportPair =
  <Q extends TSchema, R extends object>(p: ExportPair<Q, R>) =>
  <A extends AnyElysia>(app: A): A => {
    (app as unknown as Routes<Q>)
      .get(p.paths[0], async ({ query, set }) => ({ success: true as const, ...(p.body ?? ((r) => r))(await p.build(query), set.headers) }), {
        ...p.guard,
        query: p.query,
        response: p.response,
        detail: p.detail.json,
      })
      .get(p.paths[1], async ({ query }) => p.csv(await p.build(query), query), {
        ...p.guard,
        query: p.csvQuery === undefined ? p.query : (p.csvQuery ?? undefined),
        detail: p.detail.csv,
      });
    return app;
  };
