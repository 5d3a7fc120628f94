/** Herald partner client, published as `@herald/client` (sdk/, docs/sdk.md): standalone (node:crypto + fetch only), no imports from the server code. */
export * from "./sign.js";
export * from "./client.js";
export * from "./operations.js";
export * from "./standard-webhooks.js";
export * from "./webhooks.js";
export type * from "./api-types.js";
