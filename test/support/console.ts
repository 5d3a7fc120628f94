// What the console page tests share: a signed-in session cookie (through the real sign-in form and its
// double-submit CSRF cookie), the CSRF token a page printed into its forms, the links of a page's exports list,
// and a form post as a browser sends it.
import { expect } from "bun:test";
import type { TestApp } from "./app";

export async function signedInCookie(app: TestApp, adminToken: string): Promise<string> {
  const form = await app.request("/admin/sign-in");
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await app.request("/admin/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: `herald_signin_csrf=${csrf}` },
    body: new URLSearchParams({ token: adminToken, csrf_token: csrf }).toString(),
  });
  expect(res.status).toBe(303);
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith("herald_admin_session="))!
    .split(";")[0]!;
}

/** The CSRF token a page printed into its forms. */
export const csrfOf = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;

/** The hrefs of the page's exports list (section id="exports"), HTML entities decoded. */
export function exportLinksOf(html: string): string[] {
  const section = /<section id="exports">([\s\S]*?)<\/section>/.exec(html)?.[1] ?? "";
  return [...section.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));
}

/** What a browser's form post and navigation say they accept (pages for a browser, JSON for a script). */
export const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** A urlencoded form post with the session cookie, as the browser sends it (`accept: null`: as a script, no Accept). */
export const formPost = (app: TestApp, path: string, cookie: string, fields: Record<string, string>, accept: string | null = BROWSER_ACCEPT) =>
  app.request(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...(accept === null ? {} : { accept }) },
    body: new URLSearchParams(fields).toString(),
  });

/** GET a page with the session cookie: status and HTML. */
export async function pageAs(app: TestApp, path: string, cookie: string) {
  const res = await app.request(path, { headers: { cookie, accept: BROWSER_ACCEPT } });
  return { status: res.status, html: await res.text(), headers: res.headers };
}

// Reading a page as a person does: its heading, the result and refusal lines, a table's cells by column, an
// element's text — so that a test asserts what is shown, not how the markup spells it.

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };

/** The text of a piece of HTML: tags dropped, entities decoded, white space folded. */
export const textOf = (html: string) =>
  html
    .replace(/<(style|script)[\s\S]*?<\/\1>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!)
    .replace(/\s+/g, " ")
    .trim();

/** The outer HTML of the element with this id (nested elements of its own kind included), or null. */
export function elementById(html: string, id: string): string | null {
  const open = new RegExp(`<([a-z][a-z0-9]*)\\b[^>]*\\bid="${id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"[^>]*>`).exec(html);
  if (!open) return null;
  const tag = open[1]!;
  const re = new RegExp(`<(/?)${tag}\\b[^>]*>`, "g");
  re.lastIndex = open.index + open[0].length;
  let depth = 1;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    depth += m[1] ? -1 : 1;
    if (depth === 0) return html.slice(open.index, m.index + m[0].length);
  }
  return html.slice(open.index);
}

/** The text of the element with this id ("" when there is none). */
export const textById = (html: string, id: string) => textOf(elementById(html, id) ?? "");

/** The page's heading (its h1 in main). */
export const headingOf = (html: string) => textOf(/<main>[\s\S]*?<h1[^>]*>([\s\S]*?)<\/h1>/.exec(html)?.[1] ?? "");

/** The result line a form's redirect shows, or null. */
export const doneLineOf = (html: string) => {
  const m = /<[a-z]+[^>]*role="status"[^>]*>([\s\S]*?)<\/(section|p)>/.exec(html);
  return m ? textOf(m[1]!) : null;
};

/** The refusal shown on the page (role="alert"), or null. */
export const errorLineOf = (html: string) => {
  const m = /<p[^>]*role="alert"[^>]*>([\s\S]*?)<\/p>/.exec(html);
  return m ? textOf(m[1]!) : null;
};

export interface TableRow {
  /** The row's id attribute, or "". */
  id: string;
  /** Header → the cell's text. */
  cells: Record<string, string>;
  html: string;
}

/** The rows of the table with this id ([] when there is no such table), each cell by its column's header. */
export function tableOf(html: string, id: string): TableRow[] {
  const table = elementById(html, id);
  if (!table) return [];
  const heads = [...table.matchAll(/<th\b[^>]*>([\s\S]*?)<\/th>/g)].map((m) => textOf(m[1]!));
  const body = /<tbody>([\s\S]*)<\/tbody>/.exec(table)?.[1] ?? "";
  return [...body.matchAll(/<tr\b([^>]*)>([\s\S]*?)<\/tr>/g)].map((m) => {
    const cells = [...m[2]!.matchAll(/<td\b[^>]*>([\s\S]*?)<\/td>/g)].map((c) => textOf(c[1]!));
    return { id: /\bid="([^"]*)"/.exec(m[1]!)?.[1] ?? "", cells: Object.fromEntries(heads.map((h, i) => [h, cells[i] ?? ""])), html: m[0] };
  });
}

/** One column of a table, top to bottom. */
export const columnOf = (html: string, id: string, header: string) => tableOf(html, id).map((r) => r.cells[header]);

/** The href of the link whose text is `text` (entities decoded), or null. */
export function hrefOf(html: string, text: string): string | null {
  for (const m of html.matchAll(/<a\b[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/g)) if (textOf(m[2]!) === text) return m[1]!.replaceAll("&amp;", "&");
  return null;
}

/** The page's title (what the browser tab shows). */
export const titleOf = (html: string) => textOf(/<title>([\s\S]*?)<\/title>/.exec(html)?.[1] ?? "");

/** The class attribute of the element with this id (how it is coloured or hidden), or null. */
export const classOf = (html: string, id: string) => /^<[^>]*\bclass="([^"]*)"/.exec(elementById(html, id) ?? "")?.[1] ?? null;

/** The terms of the description lists inside the element with this id (or the whole page): dt → its dd texts joined by a space. */
export function factsOf(html: string, id?: string): Record<string, string> {
  const chunks = ((id === undefined ? html : elementById(html, id)) ?? "").split(/<dt\b[^>]*>/).slice(1);
  return Object.fromEntries(
    chunks.map((c) => {
      const [term, rest] = c.split("</dt>");
      return [textOf(term!), [...(rest ?? "").matchAll(/<dd\b[^>]*>([\s\S]*?)<\/dd>/g)].map((d) => textOf(d[1]!)).join(" ")];
    }),
  );
}

// Tables whose rows open with a row header (`<th scope="row">`): every cell, the header cell included, by the
// header of its column in the table's thead.
const headsOf = (table: string) =>
  [...(/<thead>([\s\S]*?)<\/thead>/.exec(table)?.[1] ?? "").matchAll(/<th\b[^>]*>([\s\S]*?)<\/th>/g)].map((m) => textOf(m[1]!));
const cellsByHead = (heads: string[], row: string) => {
  const cells = [...row.matchAll(/<(th|td)\b[^>]*>([\s\S]*?)<\/\1>/g)].map((c) => textOf(c[2]!));
  return Object.fromEntries(heads.map((h, i) => [h, cells[i] ?? ""]));
};

/** The body rows of the first table inside the element with this id, row headers included ([] when none). */
export function rowsOf(html: string, id: string): Record<string, string>[] {
  const table = elementById(html, id) ?? "";
  const heads = headsOf(table);
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? "";
  return [...body.matchAll(/<tr\b[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => cellsByHead(heads, m[1]!));
}

/** The row with this id, row header included, by the headers of the table it is in; null when there is none. */
export function rowById(html: string, id: string): Record<string, string> | null {
  const row = elementById(html, id);
  if (!row) return null;
  const at = html.indexOf(row);
  return cellsByHead(headsOf(html.slice(html.lastIndexOf("<table", at), at)), row);
}

/** The href of the console header's link marked as the current page, or null. */
export const currentNavOf = (html: string) => /<a href="([^"]*)" aria-current="page">/.exec(html)?.[1] ?? null;

/** The badges in a piece of HTML as a person sees them: their colour (kind) and text. */
export const badgesOf = (html: string) =>
  [...html.matchAll(/<span class="badge(?: ([^"]*))?">([\s\S]*?)<\/span>/g)].map((m) => ({ kind: m[1] ?? "", text: textOf(m[2]!) }));

const decoded = (value: string) => value.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!);

/**
 * What the form with this action would send as the page drew it — each named input's value (a checkbox or
 * radio only when checked), each select's selected option, each textarea's text — or null when there is no such form.
 */
export function formOf(html: string, action: string): Record<string, string> | null {
  const at = html.search(new RegExp(`<form\\b[^>]*\\baction="${action.replaceAll("&", "&amp;").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"`));
  if (at < 0) return null;
  const form = html.slice(at, html.indexOf("</form>", at));
  const attr = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
  const fields: Record<string, string> = {};
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const name = attr(tag, "name");
    if (name === undefined || (/type="(checkbox|radio)"/.test(tag) && !/\schecked\b/.test(tag))) continue;
    fields[name] = decoded(attr(tag, "value") ?? "");
  }
  for (const [, name, options] of form.matchAll(/<select\b[^>]*name="([^"]*)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const all = [...options!.matchAll(/<option\b([^>]*)>([\s\S]*?)<\/option>/g)];
    const chosen = all.find((o) => /\sselected\b/.test(o[1]!)) ?? all[0];
    if (chosen) fields[name!] = decoded(/\svalue="([^"]*)"/.exec(chosen[1]!)?.[1] ?? textOf(chosen[2]!));
  }
  for (const [, name, text] of form.matchAll(/<textarea\b[^>]*name="([^"]*)"[^>]*>([\s\S]*?)<\/textarea>/g)) fields[name!] = decoded(text!);
  return fields;
}

/** The texts of the list items inside the element with this id, in order ([] when there is none). */
export const itemsOf = (html: string, id: string) => [...(elementById(html, id) ?? "").matchAll(/<li\b[^>]*>([\s\S]*?)<\/li>/g)].map((m) => textOf(m[1]!));
