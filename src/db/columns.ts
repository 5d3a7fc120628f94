import { integer, text } from "drizzle-orm/sqlite-core";

/** Timestamps are stored as ISO 8601 UTC text ending in Z: sortable, readable in the CLI, what the API returns. */
export const isoTime = (name: string) => text(name);

export const boolInt = (name: string) => integer(name, { mode: "boolean" });
