// Markdown files imported `with { type: "text" }` are their text (embedded in the compiled binary): the developer
// portal renders the repository's docs/ (src/developers/portal-pages.ts).
declare module "*.md" {
  const text: string;
  export default text;
}
