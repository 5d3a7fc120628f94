// Files the API reference embeds in the binary. `with { type: "file" }` resolves to a path (inside the compiled
// binary: an embedded file); `with { type: "text" }` to the file's text.
declare module "*/@scalar/api-reference/dist/browser/standalone.js" {
  const path: string;
  export default path;
}
declare module "*.py" {
  const text: string;
  export default text;
}
