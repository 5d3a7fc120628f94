import type { Static, TObject } from "@sinclair/typebox";

/** A CSV twin's columns: its JSON row schema's keys, in their order, so the header cannot drift from the JSON. */
export const columnsOf = <S extends TObject>(schema: S) => Object.keys(schema.properties) as Array<keyof Static<S> & string>;
