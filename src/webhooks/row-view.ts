/**
 * A row's fields that an answer's schema declares, in the schema's order (the order the answer has): the schema is
 * then the one list of the view's fields, and a field it declares that the row lacks does not typecheck.
 */
export const schemaKeys = <P extends object>(schema: { properties: P }) => Object.keys(schema.properties) as Array<keyof P & string>;

/** The `keys` of `row`, in that order. */
export const pickFields = <R, K extends keyof R>(row: R, keys: readonly K[]): Pick<R, K> => Object.fromEntries(keys.map((k) => [k, row[k]])) as Pick<R, K>;
