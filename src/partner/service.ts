/**
 * What other domains may use of the partner domain (docs/design.md §1: one domain reaches another only through its
 * service). The verbs live in their own files; this is their public face.
 */
export { getUserOrThrow, requireActiveUser, type UserRow } from "./users";
