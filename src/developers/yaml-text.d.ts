// YAML files imported `with { type: "text" }` are their text (embedded in the compiled binary).
declare module "*.yaml" {
  const text: string;
  export default text;
}
