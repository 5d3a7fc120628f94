// docs/architecture.md is the map a newcomer follows (issue 75, item 2): it must not name code that is gone. Every
// backticked span of the page is read by this rule, and each code name or path it yields must exist in the tree.
//
// Where: every `## ` section, the introduction included; fenced code blocks are skipped. In "Where Herald relies on
// its dependencies' internals" only paths are checked: the names there are Elysia's, Bun's and drizzle's.
//
// What a span is (the first that fits):
// 1. A path: `a/b…` whose first segment is a folder at the repository's root (`src/`, `test/`, `drizzle/`, `.ci/` …).
//    It must exist on disk; `<placeholder>` and `*` stand for any characters of one name, and then at least one
//    file or folder must match.
// 2. A file name without a folder (`guards.ts`, `*-routes.ts`, `package.json`): a file of that name must exist under
//    src/, test/, bench/, docs/, drizzle/, .ci/ or at the root.
// 3. A code name: an identifier, or several joined by dots (`IdempotencyStore.run`), with type arguments
//    (`RowOf<…>`), a call's arguments (`postEntry()`, `emitEvent(t, ctx, …)`) or `new ` before it — and code-shaped:
//    a capital letter, a dot or parentheses. A lone lowercase or snake_case word (`partner`, `salutes_ledger`,
//    `user_id`, a metric) reads as prose, a table, a column or a field and is not checked: cite a function as `name()`.
//    Anything else — a route (`POST /api/…`), a header (`X-Partner-Key`), SQL, a snippet with spaces — is no name.
//
// When a code name exists:
// - SCREAMING_CASE (`ERROR_CATALOG`, `MAX_BODY_BYTES`, `SAVEPOINT`): declared in src (a constant, or a key: how the
//   configuration variables are declared), or a word of a string literal of src (an SQL keyword).
// - lowercase words joined by dots (`salutes.credit`, `t.dialect`): a string literal of src (an event type, an action),
//   or code as below.
// - otherwise its first part is declared in src — before a dot, a parameter will do (`ctx.store.tx()`); each later
//   part is a member of the class, interface or object literal src declares by the capitalised part before it
//   (`IdempotencyStore.run`, `SalutesModel.mutationBody`), or, after a lowercase part or where src declares none by
//   that name (or it has a spread or a base from outside src), declared anywhere in src.
// - cited with parentheses (`nudge()`), its last part must also be callable by its declaration: a function, method or
//   class, a property holding a function, or a const holding a function or the result of a call (which may make one).
// "Declared" is read from the TypeScript syntax tree of src/**/*.ts, so comments and strings do not count: a function,
// class, interface, type, enum or namespace; a `const` (not a `let` or `var`); a named function expression; a method,
// property, accessor or object-literal key. A parameter or a `let` alone does not make a name exist: `commit(…)`, which
// an older version of this page cited, is in src only a parameter, a local `let` and a key holding a statement.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { REPO_ROOT } from "../support/process";

const DOC = "docs/architecture.md";
const NAMES_NOT_CHECKED_IN = /^Where Herald relies on its dependencies' internals/;
const FILE_NAME_ROOTS = ["src", "test", "bench", "docs", "drizzle", ".ci"];

interface SrcIndex {
  declared: Set<string>;
  /** Declared as something one calls: a function, method or class, or a const or property holding a function. */
  callable: Set<string>;
  params: Set<string>;
  /** Members by the name of the class, interface or object-literal const that has them; null: not all are known. */
  members: Map<string, Set<string> | null>;
  bases: Map<string, string[]>;
  /** Words of string literals, and whole string literals. */
  words: Set<string>;
  strings: Set<string>;
}

function walk(dir: string, keep: (path: string) => boolean, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === ".git") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, keep, out);
    else if (keep(path)) out.push(path);
  }
  return out;
}

const nameOf = (n: ts.Node | undefined): string | null =>
  n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isNumericLiteral(n) || ts.isPrivateIdentifier(n)) ? n.text : null;

function bindingNames(n: ts.BindingName, out: (name: string) => void): void {
  if (ts.isIdentifier(n)) out(n.text);
  else for (const e of n.elements) if (!ts.isOmittedExpression(e)) bindingNames(e.name, out);
}

/** Whether a declaration's value is a function (for a const, also a call or class that may make one). */
function holdsFunction(e: ts.Expression | undefined, orMade: boolean): boolean {
  while (e && (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e))) e = e.expression;
  if (!e) return false;
  return ts.isArrowFunction(e) || ts.isFunctionExpression(e) || (orMade && (ts.isCallExpression(e) || ts.isClassExpression(e)));
}

/** The object literal a const is made of, through `as const`, `satisfies` and parentheses. */
function objectLiteralOf(e: ts.Expression | undefined): ts.ObjectLiteralExpression | null {
  while (e && (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e))) e = e.expression;
  return e && ts.isObjectLiteralExpression(e) ? e : null;
}

function indexSource(root: string): SrcIndex {
  const ix: SrcIndex = {
    declared: new Set(),
    callable: new Set(),
    params: new Set(),
    members: new Map(),
    bases: new Map(),
    words: new Set(),
    strings: new Set(),
  };
  const addMembers = (owner: string, names: Array<string | null>, open: boolean) => {
    const had = ix.members.get(owner);
    if (had === null || open) return void ix.members.set(owner, null);
    const set = had ?? new Set<string>();
    for (const n of names) if (n !== null) set.add(n);
    ix.members.set(owner, set);
  };
  for (const file of walk(join(root, "src"), (p) => p.endsWith(".ts"))) {
    const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (n: ts.Node): void => {
      if (ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isClassExpression(n) || ts.isTypeAliasDeclaration(n) || ts.isEnumDeclaration(n)) {
        const name = nameOf(n.name);
        if (name) ix.declared.add(name);
        if (name && !ts.isTypeAliasDeclaration(n) && !ts.isEnumDeclaration(n)) ix.callable.add(name);
      } else if (ts.isModuleDeclaration(n) && ts.isIdentifier(n.name)) {
        ix.declared.add(n.name.text);
      } else if (ts.isClassDeclaration(n) || ts.isInterfaceDeclaration(n)) {
        const name = nameOf(n.name);
        if (name) {
          ix.declared.add(name);
          if (ts.isClassDeclaration(n)) ix.callable.add(name);
          addMembers(
            name,
            n.members.map((m) => nameOf(m.name)),
            false,
          );
          const bases = (n.heritageClauses ?? []).flatMap((h) => h.types.map((t) => t.expression.getText(sf)));
          ix.bases.set(name, [...(ix.bases.get(name) ?? []), ...bases]);
        }
      } else if (ts.isVariableDeclaration(n) && ts.getCombinedNodeFlags(n) & ts.NodeFlags.Const) {
        bindingNames(n.name, (name) => ix.declared.add(name));
        if (ts.isIdentifier(n.name) && holdsFunction(n.initializer, true)) ix.callable.add(n.name.text);
        const literal = objectLiteralOf(n.initializer);
        if (literal && ts.isIdentifier(n.name)) {
          const open = literal.properties.some((p) => ts.isSpreadAssignment(p));
          addMembers(
            n.name.text,
            literal.properties.map((p) => nameOf(p.name)),
            open,
          );
        }
      } else if (ts.isParameter(n)) {
        bindingNames(n.name, (name) => ix.params.add(name));
      } else if (
        ts.isMethodDeclaration(n) ||
        ts.isMethodSignature(n) ||
        ts.isPropertyDeclaration(n) ||
        ts.isPropertySignature(n) ||
        ts.isGetAccessor(n) ||
        ts.isSetAccessor(n) ||
        ts.isPropertyAssignment(n) ||
        ts.isShorthandPropertyAssignment(n) ||
        ts.isEnumMember(n)
      ) {
        const name = nameOf(n.name);
        if (name) ix.declared.add(name);
        const called =
          ts.isMethodDeclaration(n) ||
          ts.isMethodSignature(n) ||
          ((ts.isPropertyDeclaration(n) || ts.isPropertyAssignment(n)) && holdsFunction(n.initializer, false)) ||
          (ts.isPropertySignature(n) && n.type !== undefined && ts.isFunctionTypeNode(n.type));
        if (name && called) ix.callable.add(name);
      } else if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateLiteralToken(n)) {
        ix.strings.add(n.text);
        for (const w of n.text.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) ix.words.add(w);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return ix;
}

/** The members of `owner` and of its bases; null when some are not known (a spread, a base from outside src). */
function membersOf(ix: SrcIndex, owner: string, seen = new Set<string>()): Set<string> | null {
  if (seen.has(owner)) return new Set();
  seen.add(owner);
  const own = ix.members.get(owner);
  if (own === null || own === undefined) return null;
  const all = new Set(own);
  for (const base of ix.bases.get(owner) ?? []) {
    const inherited = ix.members.has(base) ? membersOf(ix, base, seen) : null;
    if (inherited === null) return null;
    for (const m of inherited) all.add(m);
  }
  return all;
}

type Citation = { kind: "path" | "file" | "name"; token: string; subject: string; section: string; called?: boolean };

const PATH = /^[\w.@<>*{}-]+(?:\/[\w.@<>*{}-]*)+$/;
const FILE = /^[\w.<>*-]+\.(?:ts|md|json|yaml|yml|sql)$/;
const NAME = /^([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?:<[^()]*>)?(\(.*\))?$/;

/** The code names and paths a Markdown page cites in backticks, by section, per the rule above. */
function citationsOf(markdown: string, rootDirs: ReadonlySet<string>): Citation[] {
  const out: Citation[] = [];
  const text = markdown.replace(/^\s*(`{3,})[^\n]*\n[\s\S]*?^\s*\1\s*$/gm, "");
  const sections = text.split(/^## /m).map((s, i) => (i === 0 ? { title: "(introduction)", body: s } : { title: s.split("\n")[0]!, body: s }));
  for (const { title, body } of sections) {
    for (const m of body.matchAll(/`([^`]+)`/g)) {
      const token = m[1]!.replace(/\s*\n\s*/g, " ").trim();
      const first = token.split("/")[0]!;
      if (PATH.test(token) && rootDirs.has(first)) out.push({ kind: "path", token, subject: token, section: title });
      else if (!token.includes("/") && FILE.test(token)) out.push({ kind: "file", token, subject: token, section: title });
      else if (!NAMES_NOT_CHECKED_IN.test(title)) {
        const name = NAME.exec(token.replace(/^new /, ""));
        if (name && (/[A-Z]/.test(name[1]!) || name[1]!.includes(".") || name[2] !== undefined)) {
          out.push({ kind: "name", token, subject: name[1]!, section: title, called: name[2] !== undefined });
        }
      }
    }
  }
  return out;
}

const wildcard = (s: string) => new RegExp(`^${s.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/<[^>/]*>|\*/g, "[^/]*")}$`);

/** Whether a cited path exists under `root`: exactly, or, with placeholders, as at least one match. */
function pathExists(root: string, path: string): boolean {
  const clean = path.replace(/\/$/, "");
  if (!/[<*]/.test(clean)) return existsSync(join(root, clean));
  let dirs = [root];
  for (const part of clean.split("/")) {
    const re = wildcard(part);
    dirs = dirs.flatMap((d) =>
      existsSync(d) && statSync(d).isDirectory()
        ? readdirSync(d)
            .filter((n) => re.test(n))
            .map((n) => join(d, n))
        : [],
    );
  }
  return dirs.length > 0;
}

/** Whether `name` (a code name as cited) exists in the index, per the rule above. */
function nameExists(ix: SrcIndex, name: string, called = false): boolean {
  const last = name.split(".").pop()!;
  if (called && !ix.callable.has(last)) return false;
  if (/^[A-Z][A-Z0-9_]*$/.test(name)) return ix.declared.has(name) || ix.words.has(name);
  if (/^[a-z0-9_]+(?:\.[a-z0-9_]+)+$/.test(name) && ix.strings.has(name)) return true;
  const [head, ...rest] = name.split(".");
  if (!ix.declared.has(head!) && !(rest.length > 0 && ix.params.has(head!))) return false;
  let owner = head!;
  for (const part of rest) {
    // A capitalised part names a type or a constant object, whose members src declares; a lowercase one a value.
    const members = /^[A-Z]/.test(owner) ? membersOf(ix, owner) : null;
    if (members ? !members.has(part) : !ix.declared.has(part)) return false;
    owner = part;
  }
  return true;
}

interface Report {
  checked: Citation[];
  missing: Citation[];
}

function checkPage(markdown: string, root: string, ix: SrcIndex): Report {
  const rootDirs = new Set(readdirSync(root).filter((n) => statSync(join(root, n)).isDirectory() && n !== "node_modules" && n !== ".git"));
  const fileNames = new Set<string>(readdirSync(root).filter((n) => statSync(join(root, n)).isFile()));
  for (const dir of FILE_NAME_ROOTS) {
    if (existsSync(join(root, dir))) for (const f of walk(join(root, dir), () => true)) fileNames.add(relative(root, f).split("/").pop()!);
  }
  const checked = citationsOf(markdown, rootDirs);
  const missing = checked.filter((c) => {
    if (c.kind === "path") return !pathExists(root, c.subject);
    if (c.kind === "file") {
      const re = wildcard(c.subject);
      return ![...fileNames].some((f) => re.test(f));
    }
    return !nameExists(ix, c.subject, c.called);
  });
  return { checked, missing };
}

const index = indexSource(REPO_ROOT);
const report = checkPage(readFileSync(join(REPO_ROOT, DOC), "utf8"), REPO_ROOT, index);

describe(DOC, () => {
  test("every code name and path it cites in backticks exists", () => {
    expect(report.missing.map((c) => `${c.section}: \`${c.token}\` (${c.kind})`)).toEqual([]);
  });

  test("the check reads the page: at least 300 code names and 200 paths, 15 names in each flow, the route blocks", () => {
    const names = report.checked.filter((c) => c.kind === "name");
    expect(names.length).toBeGreaterThanOrEqual(300);
    expect(report.checked.filter((c) => c.kind !== "name").length).toBeGreaterThanOrEqual(200);
    const perFlow = new Map<string, number>();
    for (const c of names) if (c.section.startsWith("The flow of")) perFlow.set(c.section, (perFlow.get(c.section) ?? 0) + 1);
    expect(perFlow.size).toBeGreaterThanOrEqual(6);
    for (const [flow, n] of perFlow) expect({ flow, enough: n >= 15 }).toEqual({ flow, enough: true });
    for (const name of ["partnerMutation", "PartnerMount", "exportPair", "ListAnswer", "consoleRoute", "ERROR_CATALOG", "buildOpenApi"]) {
      expect(names.some((c) => c.subject === name && c.section.startsWith("Writing a route"))).toBe(true);
    }
  });
});

describe("the rule, on a page made up for it", () => {
  const page = [
    "Intro `partnerMutation()`.",
    "## The flow of a made-up request",
    "1. `readBodyBytes` and `commit(partner, effect)`, `IdempotencyStore.commitEffect()`, `NO_SUCH_CATALOG_EVER`,",
    "   `webhook.no_such_event`, `src/http/body/read-body.ts`, `test/<room>/nowhere.test.ts`, `nowhere-routes.ts`.",
    "2. `IdempotencyStore.run()`, `ctx.store.tx()`, `t.dialect`, `SalutesModel.mutationBody`, `new AppError(code, message)`,",
    "   `RowOf<typeof salutesLedger>`, `ERROR_CATALOG`, `MAX_BODY_BYTES`, `SAVEPOINT`, `salutes.credit`, `src/app.ts`,",
    "   `src/<room>/jobs.ts`, `drizzle/postgres/`, `*-routes.ts`, `package.json`, `emitEvent(t, ctx,",
    "   owner, type, data)`.",
    "3. Not names: `POST /api/salutes/credit`, `X-Partner-Key`, `salutes_ledger`, `partner`, `INSERT … ON CONFLICT DO NOTHING`,",
    "   `include_meta=1`, `{ success: true }`, `/readyz`.",
    "## Where Herald relies on its dependencies' internals",
    "`app.router.history`, `toOpenAPISchema`, but paths still count: `src/no/such/file.ts`.",
  ].join("\n");
  const r = checkPage(page, REPO_ROOT, index);
  const missing = r.missing.map((c) => c.token);

  test("a name or path that does not exist is reported", () => {
    expect(missing).toEqual([
      "readBodyBytes",
      "commit(partner, effect)",
      "IdempotencyStore.commitEffect()",
      "NO_SUCH_CATALOG_EVER",
      "webhook.no_such_event",
      "src/http/body/read-body.ts",
      "test/<room>/nowhere.test.ts",
      "nowhere-routes.ts",
      "src/no/such/file.ts",
    ]);
  });

  test("names that exist pass, and routes, headers, tables, words and SQL are not read as names", () => {
    const tokens = r.checked.map((c) => c.token);
    for (const t of [
      "partnerMutation()",
      "IdempotencyStore.run()",
      "ctx.store.tx()",
      "RowOf<typeof salutesLedger>",
      "emitEvent(t, ctx, owner, type, data)",
      "src/<room>/jobs.ts",
    ]) {
      expect(tokens).toContain(t);
    }
    for (const t of [
      "POST /api/salutes/credit",
      "X-Partner-Key",
      "salutes_ledger",
      "partner",
      "include_meta=1",
      "/readyz",
      "app.router.history",
      "toOpenAPISchema",
    ]) {
      expect(tokens).not.toContain(t);
    }
    expect(r.checked.length - r.missing.length).toBe(17);
  });
});
