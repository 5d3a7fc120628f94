/** Herald partner client: standalone (node:crypto + fetch only), no imports from the server code. */
export * from "./sign";
export * from "./client";
