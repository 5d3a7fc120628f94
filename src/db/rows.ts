import type { InferSelectModel, Table } from "drizzle-orm";

/**
 * A row of `T` as the storage port returns it: keyed by column name (`user_id`, not `userId`), as the SQL each
 * store writes names them, with the types drizzle derives from the table definition — except booleans, which
 * both engines store and return as 0/1 integers (docs/design.md §8a). Stores select what they need from it:
 * `Pick<RowOf<typeof salutesLedger>, "id" | "delta_minor">`.
 */
export type RowOf<T extends Table> = { [K in keyof InferSelectModel<T, { dbColumnNames: true }>]: ZeroOne<InferSelectModel<T, { dbColumnNames: true }>[K]> };

type ZeroOne<V> = V extends boolean ? number : V;
