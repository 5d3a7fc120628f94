// Finds promises that nothing awaits: an expression statement whose value is a Promise (a call to an async function
// whose result is dropped), outside `void …`. On the storage port most verbs are async, and a dropped promise is a
// check that never runs (an authentication whose refusal nobody sees) or a write nobody waits for. Uses the
// TypeScript compiler over tsconfig.json, so it sees through every import.
import ts from "typescript";
import { dirname, join, relative } from "node:path";

export function floatingPromises(root: string, under = "src/"): string[] {
  const configPath = join(root, "tsconfig.json");
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  const program = ts.createProgram({ rootNames: parsed.fileNames.filter((f) => relative(root, f).startsWith(under)), options: parsed.options });
  const checker = program.getTypeChecker();
  const found: string[] = [];
  const isPromise = (t: ts.Type): boolean => {
    if (t.isUnion()) return t.types.some(isPromise);
    const then = t.getProperty("then");
    return !!then && !!t.getProperty("catch");
  };
  for (const sf of program.getSourceFiles()) {
    const rel = relative(root, sf.fileName);
    if (!rel.startsWith(under) || sf.isDeclarationFile) continue;
    const visit = (node: ts.Node) => {
      if (ts.isExpressionStatement(node)) {
        const e = node.expression;
        // A chain that ends in .catch(…) or .then(ok, failed) handles its rejection.
        const handled =
          ts.isCallExpression(e) &&
          ts.isPropertyAccessExpression(e.expression) &&
          (e.expression.name.text === "catch" || (e.expression.name.text === "then" && e.arguments.length === 2));
        if (!handled && !ts.isVoidExpression(e) && !ts.isAwaitExpression(e) && (ts.isCallExpression(e) || ts.isPropertyAccessExpression(e))) {
          if (isPromise(checker.getTypeAtLocation(e))) {
            const { line } = sf.getLineAndCharacterOfPosition(e.getStart(sf));
            found.push(`${rel}:${line + 1}: ${e.getText(sf).slice(0, 100)}`);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

if (import.meta.main) {
  const root = join(dirname(new URL(import.meta.url).pathname), "..", "..");
  const found = floatingPromises(root, process.argv[2] ?? "src/");
  console.log(found.join("\n") || "no floating promises");
}
