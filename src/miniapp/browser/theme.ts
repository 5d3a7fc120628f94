// Light or dark, and the colours: Telegram's colour scheme and theme, else the system's with the page's palettes. A
// client's theme can pair colours too close to read (a grey hint on white is common): each text colour is moved
// toward black or white until it reaches WCAG AA contrast (4.5:1) on the page and its cards, the button's until its
// text does.

type Rgb = [number, number, number];

function parse(color: string): Rgb | null {
  const c = color.trim();
  let m = /^#([0-9a-f]{3})$/i.exec(c);
  if (m) return [...m[1]!].map((x) => Number.parseInt(x + x, 16)) as Rgb;
  m = /^#([0-9a-f]{6})$/i.exec(c);
  if (m) return [0, 2, 4].map((i) => Number.parseInt(m![1]!.slice(i, i + 2), 16)) as Rgb;
  m = /^rgba?\((\d+),\s*(\d+),\s*(\d+)/i.exec(c);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

const hex = (c: Rgb) => `#${c.map((x) => Math.round(x).toString(16).padStart(2, "0")).join("")}`;

function luminance(c: Rgb): number {
  const [r, g, b] = c.map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a: Rgb, b: Rgb): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p) as [number, number];
  return (x + 0.05) / (y + 0.05);
}

/** `fg` moved toward black or white (whichever the backgrounds leave room for) until it reaches `min` on each. */
export function readable(fg: Rgb, backgrounds: Rgb[], min = 4.5): Rgb {
  const ok = (c: Rgb) => backgrounds.every((bg) => contrast(c, bg) >= min);
  if (ok(fg)) return fg;
  const dark = backgrounds.reduce((s, bg) => s + luminance(bg), 0) / backgrounds.length > 0.3;
  const target: Rgb = dark ? [0, 0, 0] : [255, 255, 255];
  for (let step = 1; step <= 20; step++) {
    const f = step / 20;
    const c = fg.map((v, i) => v + (target[i]! - v) * f) as Rgb;
    if (ok(c)) return c;
  }
  return target;
}

const VARS = ["--text", "--hint", "--link", "--danger", "--good", "--button"] as const;

/** Telegram's theme parameters as CSS variables (what its script does), then the contrast guard. */
export function applyTheme(tg: { colorScheme?: "light" | "dark"; themeParams?: Record<string, string> } | undefined): void {
  const root = document.documentElement;
  const scheme = tg?.colorScheme ?? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  root.dataset.theme = scheme;
  for (const [key, value] of Object.entries(tg?.themeParams ?? {})) {
    if (/^[a-z_]{1,40}$/.test(key) && parse(value)) root.style.setProperty(`--tg-theme-${key.replace(/_/g, "-")}`, value);
  }
  for (const v of VARS) root.style.removeProperty(v);
  const css = getComputedStyle(root);
  const color = (name: string) => parse(css.getPropertyValue(name));
  const bg = color("--bg");
  const card = color("--card");
  if (!bg || !card) return;
  for (const name of ["--text", "--hint", "--link", "--danger", "--good"] as const) {
    const fg = color(name);
    if (fg) {
      const fixed = readable(fg, [bg, card]);
      if (fixed !== fg) root.style.setProperty(name, hex(fixed));
    }
  }
  const button = color("--button");
  const buttonText = color("--button-text");
  if (button && buttonText) {
    const fixed = readable(button, [buttonText]);
    if (fixed !== button) root.style.setProperty("--button", hex(fixed));
  }
}

/** Without Telegram, the page follows the system's scheme as it changes. */
export function followSystemScheme(): void {
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    if (!window.Telegram?.WebApp) applyTheme(undefined);
  });
}
