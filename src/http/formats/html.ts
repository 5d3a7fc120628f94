import { Eta } from "eta/core";

/**
 * HTML pages of the house: Eta templates (eta 4, pinned) with auto-escaping, behind three rules.
 *
 * 1. Every `<%= value %>` is HTML-escaped (& < > " '), so data never becomes markup. Interpolate into text
 *    or into QUOTED attribute values only; a URL in href/src must be built by our code, never taken whole
 *    from input (escaping does not stop `javascript:`).
 * 2. Raw output (`<%~ … %>`) is refused when a template is compiled. The one way to insert markup is a
 *    `SafeHtml` value, which only `compileHtml` templates (and `joinHtml` of them) produce: a page is
 *    composed from partials, each one escaped in turn, and a `SafeHtml` passes through unescaped.
 * 3. `undefined` in an interpolation throws (a misspelt field is a bug the tests must see); `null` renders
 *    as nothing, so optional values need no ceremony.
 *
 * Templates live as TypeScript string constants beside the page that uses them (nothing is read from disk,
 * so the compiled binary carries them), and are compiled once, when their module loads: a syntax error
 * fails at start and in the tests, not at the first request. Data is typed at the call site
 * (`compileHtml<PageData>(…)` returns `(data: PageData) => SafeHtml`). No JavaScript is sent unless a page
 * truly needs it; styles are inlined. Later pages (operator console, mini-app) use the same helper.
 */

/** Markup that is already safe: the output of a compiled template, never a string from input. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (value === undefined) throw new Error("html template: an interpolated value is undefined (a missing field?)");
  if (value === null) return "";
  const s = String(value);
  return /[&<>"']/.test(s) ? s.replace(/[&<>"']/g, (c) => ESCAPES[c]!) : s;
}

// One configured engine, used only to compile; it caches nothing (no named templates are loaded into it).
const engine = new Eta({ autoEscape: true, escapeFunction: escapeHtml, autoTrim: false, cache: false, useWith: false, varName: "it" });

/** Compiles a template once; the returned function renders it with typed data. */
export function compileHtml<T extends object>(name: string, source: string): (data: T) => SafeHtml {
  if (/<%~/.test(source)) throw new Error(`html template ${name}: raw output (<%~) is not allowed; pass SafeHtml values instead`);
  let fn: ReturnType<typeof engine.compile>;
  try {
    fn = engine.compile(source);
  } catch (err) {
    throw new Error(`html template ${name}: ${(err as Error).message}`);
  }
  return (data: T) => new SafeHtml(fn.call(engine, data));
}

/** Joins rendered partials (for lists): the result is still safe. */
export const joinHtml = (parts: readonly SafeHtml[], separator = "\n"): SafeHtml => new SafeHtml(parts.map((p) => p.value).join(separator));

/** "2026-03-01 12:00 UTC": a time as people read it on a page, to the minute (a <time> element can keep the ISO value). */
export const minuteText = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** A complete HTML response. Pages are short-lived views of live data: callers choose the cache policy. */
export function htmlResponse(page: SafeHtml, cacheControl: string, status = 200): Response {
  return new Response(page.value, { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": cacheControl } });
}
