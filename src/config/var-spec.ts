// How a configuration variable is declared, once: `v("DATABASE_POOL_MAX", { kind, fallback, doc })` at its place in
// the tree of src/config/vars.ts, which has Config's shape. Everything else follows from that one declaration: the
// parse and its refusal (parse.ts), the default, the secret mask and the doc (`herald config`, the console's config
// page, the README table), the field's place in Config and its type (ConfigOf below).

type Env = Record<string, string | undefined>;

export type Kind =
  | { type: "int"; min: number; max: number }
  | { type: "string"; pattern?: RegExp; allowed?: string }
  | { type: "enum"; values: readonly string[] }
  | { type: "bool" }
  | { type: "url" }
  | { type: "list" };

/** The default as the string a user would write, or worked out from other variables (PUBLIC_BASE_URL from PORT). */
type Fallback = string | ((env: Env) => string);

export const int = (min: number, max: number): { type: "int"; min: number; max: number } => ({ type: "int", min, max });
export const bool: { type: "bool" } = { type: "bool" };
/** An absolute http(s) URL, its trailing slashes dropped. */
export const url: { type: "url" } = { type: "url" };
/** A comma-separated list: entries trimmed, empty ones dropped. */
export const list: { type: "list" } = { type: "list" };
export const oneOf = <const V extends string>(...values: V[]): { type: "enum"; values: readonly V[] } => ({ type: "enum", values });
/** Text matching `pattern`; `allowed` says what that is in the refusal and the README. */
export const text = (pattern: RegExp, allowed: string): { type: "string"; pattern: RegExp; allowed: string } => ({ type: "string", pattern, allowed });
export const decimal = text(/^\d{1,15}(\.\d{1,9})?$/, "a non-negative decimal number such as 0.05");
export const CRON = text(/^[0-9*/,?LW#A-Za-z-]+( [0-9*/,?LW#A-Za-z-]+){4,6}$/, "a Croner pattern (seconds first, e.g. 0 */10 * * * *)");
export const HEX_OR_BASE64_KEY = text(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, "32 bytes as 64 hex characters or base64");

/** What parse.ts gives for a kind. */
type Parsed<K extends Kind> = K extends { type: "int" }
  ? number
  : K extends { type: "bool" }
    ? boolean
    : K extends { type: "enum"; values: readonly (infer V)[] }
      ? V
      : K extends { type: "list" }
        ? readonly string[]
        : string;

/** One variable: a leaf of the tree in src/config/vars.ts, its value of type T at that place in Config. */
export class Var<N extends string = string, T = unknown> {
  constructor(
    readonly name: N,
    readonly kind: Kind,
    readonly doc: string,
    /** undefined = unset. */
    readonly fallback: Fallback | undefined,
    /** A default worked out from other variables, as the README states it. */
    readonly fallbackDoc: string | undefined,
    readonly secret: boolean | undefined,
    /** From the parsed value to what Config holds: the value itself unless the declaration gives a map. */
    readonly map: (value: never) => T,
  ) {}

  /** This variable's value in Config, from what parse.ts gave (an object is frozen, as all of Config is). */
  toConfig(parsed: unknown): T {
    const value = parsed === "" && this.fallback === undefined ? undefined : parsed;
    const mapped = (this.map as (value: unknown) => T)(value);
    return typeof mapped === "object" && mapped !== null ? Object.freeze(mapped) : mapped;
  }
}

/** What every declaration says besides its kind, and what its value becomes (`map`, from the parsed value). */
interface Declaration<K extends Kind, V, T> {
  kind: K;
  secret?: boolean;
  doc: string;
  map?: (value: V) => T;
}

/**
 * Declares the variable `name`. Its type in Config follows from its kind (an int is a number, a oneOf the union of
 * its values, a list a readonly string[]) and is `| undefined` without a fallback, where an empty value (`VAR=` in an
 * env file, or only spaces) means unset too; `map` turns the parsed value into a richer one (JOB_SCHEDULES's pairs
 * into a record). A default worked out from other variables also says, in `fallbackDoc`, how the README states it.
 * NoInfer: the type comes from the declaration, never from where the variable is placed.
 */
export function v<const N extends string, K extends Kind, T = Parsed<K>>(
  name: N,
  spec: Declaration<K, Parsed<K>, T> & ({ fallback: string } | { fallback: (env: Env) => string; fallbackDoc: string }),
): Var<N, NoInfer<T>>;
export function v<const N extends string, K extends Kind, T = Parsed<K> | undefined>(
  name: N,
  spec: Declaration<K, Parsed<K> | undefined, T> & { fallback?: undefined },
): Var<N, NoInfer<T>>;
export function v(name: string, spec: Declaration<Kind, unknown, unknown> & { fallback?: Fallback; fallbackDoc?: string }): Var {
  return new Var(name, spec.kind, spec.doc, spec.fallback, spec.fallbackDoc, spec.secret, spec.map ?? ((value: unknown) => value));
}

/** A tree of variables: Config's shape, with a Var at each leaf. */
export interface VarTree {
  readonly [key: string]: Var<string, unknown> | VarTree;
}

/** Config's type from the tree: each leaf replaced by its value's type. */
export type ConfigOf<S> = { readonly [K in keyof S]: S[K] extends Var<string, infer T> ? T : ConfigOf<S[K]> };

/** The environment names of the tree's variables. */
export type VarNameOf<S> = S extends Var<infer N, unknown> ? N : { [K in keyof S]: VarNameOf<S[K]> }[keyof S];

/** The tree's variables in declaration order (depth first): the order of the README table and `herald config`. */
export function varsOf(tree: VarTree): Var[] {
  return Object.values(tree).flatMap((node) => (node instanceof Var ? [node] : varsOf(node)));
}

/** The tree with each variable replaced by `valueOf(it)`, every level frozen. */
export function mapTree<S extends VarTree>(tree: S, valueOf: (leaf: Var) => unknown): ConfigOf<S> {
  const out = Object.fromEntries(Object.entries(tree).map(([key, node]) => [key, node instanceof Var ? valueOf(node) : mapTree(node, valueOf)]));
  return Object.freeze(out) as ConfigOf<S>;
}
