import { getTableColumns, type Table } from "drizzle-orm";
import type { RowOf } from "../../db/rows";

/** A table's column names but `except`, in the table's order: the columns an INSERT of a new row names. */
export const columnsOf = <T extends Table, K extends keyof RowOf<T>>(table: T, except: readonly K[]) =>
  Object.values(getTableColumns(table))
    .map((c) => c.name)
    .filter((name) => !(except as readonly string[]).includes(name)) as Array<Exclude<keyof RowOf<T>, K> & string>;
