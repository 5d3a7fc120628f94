/** Each parameter of `defaults`, given in `q` or its default, in the defaults' order; nothing else of `q` (a route's query also holds include_meta). */
export const withDefaults = <P extends object>(defaults: P, q: Partial<P>): P =>
  Object.fromEntries(Object.entries(defaults).map(([k, v]) => [k, q[k as keyof P] ?? v])) as P;
