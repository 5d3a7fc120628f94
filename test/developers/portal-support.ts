// Reading the developer portal's pages the way its tests need: a real HTML parser (Bun's HTMLRewriter, lol-html) for
// the ids, links, headings and code blocks of a page, and a real Markdown parser (micromark with GFM, through
// mdast-util-from-markdown) for what the repository's docs hold, independent of the library the portal renders with.
import type { Code, Heading, Root, RootContent } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { toString as mdString } from "mdast-util-to-string";
import { gfm } from "micromark-extension-gfm";

export interface ParsedPage {
  ids: string[];
  links: string[];
  headings: Array<{ level: number; text: string }>;
  /** The text of every <pre>, entities decoded. */
  code: string[];
  /** The text of <main>, entities decoded, whitespace collapsed. */
  text: string;
  scripts: number;
}

const decode = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
export const squash = (s: string) => s.replace(/\s+/g, " ").trim();

export async function parsePage(html: string): Promise<ParsedPage> {
  const page: ParsedPage = { ids: [], links: [], headings: [], code: [], text: "", scripts: 0 };
  let heading: { level: number; text: string } | null = null;
  let pre: number | null = null;
  let inMain = false;
  const rewriter = new HTMLRewriter()
    .on("[id]", {
      element(e) {
        page.ids.push(e.getAttribute("id")!);
      },
    })
    .on("a[href]", {
      element(e) {
        page.links.push(e.getAttribute("href")!);
      },
    })
    .on("script", {
      element() {
        page.scripts++;
      },
    })
    .on("main", {
      element(e) {
        inMain = true;
        e.onEndTag(() => {
          inMain = false;
        });
      },
    })
    .on("h1, h2, h3, h4, h5, h6", {
      element(e) {
        heading = { level: Number(e.tagName.slice(1)), text: "" };
        page.headings.push(heading);
        e.onEndTag(() => {
          heading = null;
        });
      },
    })
    .on("pre", {
      element(e) {
        pre = page.code.push("") - 1;
        e.onEndTag(() => {
          pre = null;
        });
      },
    })
    .onDocument({
      text(t) {
        if (heading) heading.text += t.text;
        if (pre !== null) page.code[pre] += t.text;
        if (inMain) page.text += t.text;
      },
    });
  await rewriter.transform(new Response(html)).text();
  for (const h of page.headings) h.text = squash(decode(h.text));
  page.code = page.code.map(decode);
  page.text = squash(decode(page.text));
  return page;
}

export const markdownTree = (text: string): Root => fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });

/** A doc's `##` sections as a Markdown parser sees them: each heading and code block under its `##` heading's text. */
export function docSections(text: string): Array<{ title: string; headings: string[]; code: string[] }> {
  const sections = [{ title: "", headings: [] as string[], code: [] as string[] }];
  const codeIn = (node: RootContent): string[] =>
    node.type === "code" ? [(node as Code).value] : "children" in node ? (node.children as RootContent[]).flatMap(codeIn) : [];
  for (const node of markdownTree(text).children) {
    if (node.type === "heading") {
      const h = node as Heading;
      if (h.depth === 2) sections.push({ title: mdString(h), headings: [], code: [] });
      if (h.depth >= 2) sections.at(-1)!.headings.push(squash(mdString(h)));
    } else sections.at(-1)!.code.push(...codeIn(node));
  }
  return sections;
}
