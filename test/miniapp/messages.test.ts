import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LANGUAGES } from "../../src/miniapp/browser/messages";
import { en, type Message } from "../../src/miniapp/browser/messages-en";
import { ru } from "../../src/miniapp/browser/messages-ru";

// The mini-app's message catalog (src/miniapp/browser/messages-*.ts): every language has every English key with the
// same {placeholders}, and the plural forms its language needs (Russian: one, few, many); every key is used by the
// page's code or HTML, so nothing is translated for nothing; each language beyond English is a script the pages serve.

const CATALOGS: Record<string, Record<keyof typeof en, Message>> = { en, ru };

const SOURCES = [join(import.meta.dir, "../../src/miniapp"), join(import.meta.dir, "../../src/miniapp/browser")];
const code = SOURCES.flatMap((dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".ts") && !f.startsWith("messages"))
    .map((f) => readFileSync(join(dir, f), "utf8")),
).join("\n");

const forms = (m: Message) => (typeof m === "string" ? [m] : Object.values(m));
const placeholders = (m: Message) => [...new Set(forms(m).flatMap((f) => [...f.matchAll(/\{(\w+)\}/g)].map((x) => x[1]!)))].sort();

describe("the mini-app's message catalog", () => {
  test("English and at least one more language, each beyond English a script of its own that the pages serve", () => {
    expect([...LANGUAGES].sort() as string[]).toEqual(Object.keys(CATALOGS).sort());
    expect(LANGUAGES.length).toBeGreaterThanOrEqual(2);
    const page = readFileSync(join(import.meta.dir, "../../src/miniapp/page.ts"), "utf8");
    for (const lang of LANGUAGES.filter((l: string) => l !== "en")) {
      expect(existsSync(join(import.meta.dir, `../../src/miniapp/browser/catalog-${lang}.ts`))).toBe(true);
      expect(page).toContain(`browserBundle("catalog-${lang}.ts")`);
    }
  });

  for (const [lang, catalog] of Object.entries(CATALOGS)) {
    test(`${lang}: every key of English, no other, each with English's placeholders and a non-empty text`, () => {
      expect(Object.keys(catalog).sort()).toEqual(Object.keys(en).sort());
      const wrong = Object.keys(en).filter((key) => {
        const m = catalog[key as keyof typeof en];
        const e = en[key as keyof typeof en];
        return JSON.stringify(placeholders(m)) !== JSON.stringify(placeholders(e)) || forms(m).some((f) => f.trim() === "");
      });
      expect(wrong).toEqual([]);
    });
  }

  test("plurals: a message counted by {n} has the forms of each language's rules", () => {
    for (const [lang, catalog] of Object.entries(CATALOGS)) {
      const needed = new Intl.PluralRules(lang).resolvedOptions().pluralCategories.filter((c) => c !== "zero" && c !== "two");
      for (const [key, m] of Object.entries(catalog)) {
        if (typeof m === "string") continue;
        for (const form of needed) expect({ lang, key, form, present: form in m }).toEqual({ lang, key, form, present: true });
      }
    }
  });

  test("every key is used by the page's code or HTML", () => {
    const unused = Object.keys(en).filter((key) => !code.includes(`"${key}"`));
    expect(unused).toEqual([]);
  });
});
