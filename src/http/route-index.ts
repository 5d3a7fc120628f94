/**
 * Which methods exist for a path, from the app's route table: lets an unmatched request say 405 (with Allow)
 * instead of 404 when the path is right and the method wrong. Built once, after every route is registered.
 */
export class RouteIndex {
  private patterns: Array<{ re: RegExp; method: string }> = [];

  load(routes: ReadonlyArray<{ method: string; path: string }>): void {
    this.patterns = routes
      .filter((r) => r.method !== "ALL")
      .map((r) => ({
        method: r.method,
        re: new RegExp("^" + r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+").replace(/\*/g, ".*") + "/?$"),
      }));
  }

  methodsFor(pathname: string): string[] {
    const methods = new Set<string>();
    for (const p of this.patterns) if (p.re.test(pathname)) methods.add(p.method);
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods];
  }
}
