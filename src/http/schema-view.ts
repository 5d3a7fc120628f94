import type { Static, TObject } from "@sinclair/typebox";

/**
 * An answer's object made from a row, its fields declared once, by the answer's schema: each field in the schema's
 * order (the order the answer has), `computed`'s value where it gives one, else the row's field of the same name —
 * which the row must have, of the schema's type, or the call does not typecheck. An undefined value (an optional
 * field the row lacks) is left out. Shared by the answers of every room.
 */
export function schemaView<S extends TObject, C extends Partial<Static<S>>, R extends Omit<Static<S>, keyof C>>(schema: S, row: R, computed: C): Static<S> {
  const view: Record<string, unknown> = {};
  for (const k of Object.keys(schema.properties)) {
    const v = k in computed ? computed[k as keyof C] : row[k as keyof R];
    if (v !== undefined) view[k] = v;
  }
  return view as Static<S>;
}
