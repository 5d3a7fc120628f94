// The mini-app pages' CSS. Colours: Telegram's theme (--tg-theme-*, set by its script, and by the page's own from
// themeParams) with the page's palettes as fallbacks, light or dark by data-theme (the page's script sets it from
// Telegram's colorScheme, or the system's prefers-color-scheme, which also applies before the script runs). Every
// fallback pair meets WCAG AA (4.5:1); src/miniapp/browser/theme.ts moves a client's colours until they do too.
// Safe areas: Telegram's --tg-safe-area-inset-* and --tg-content-safe-area-inset-*, else the browser's env().

const LIGHT = `--bg: var(--tg-theme-bg-color, #fff); --text: var(--tg-theme-text-color, #1f2328); --hint: var(--tg-theme-hint-color, #59636e);
  --link: var(--tg-theme-link-color, #0969da); --button: var(--tg-theme-button-color, #0969da); --button-text: var(--tg-theme-button-text-color, #fff);
  --card: var(--tg-theme-secondary-bg-color, #f6f8fa); --danger: var(--tg-theme-destructive-text-color, #cf222e); --good: #1a7f37;`;
const DARK = `--bg: var(--tg-theme-bg-color, #0d1117); --text: var(--tg-theme-text-color, #e6edf3); --hint: var(--tg-theme-hint-color, #9198a1);
  --link: var(--tg-theme-link-color, #4493f8); --button: var(--tg-theme-button-color, #1f6feb); --button-text: var(--tg-theme-button-text-color, #fff);
  --card: var(--tg-theme-secondary-bg-color, #161b22); --danger: var(--tg-theme-destructive-text-color, #ff7b72); --good: #3fb950;`;

const inset = (side: "top" | "right" | "bottom" | "left", base: number) =>
  `calc(${base}px + max(env(safe-area-inset-${side}, 0px), var(--tg-safe-area-inset-${side}, 0px)) + var(--tg-content-safe-area-inset-${side}, 0px))`;

export const CSS = `
:root { color-scheme: light dark; ${LIGHT} }
:root[data-theme="dark"] { color-scheme: dark; ${DARK} }
@media (prefers-color-scheme: dark) { :root:not([data-theme]) { ${DARK} } }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
#app { max-width: 480px; margin: 0 auto; padding: ${inset("top", 8)} ${inset("right", 16)} ${inset("bottom", 32)} ${inset("left", 16)}; }
p, li { overflow-wrap: anywhere; }
h1 { font-size: 20px; margin: 0; } h2 { font-size: 17px; margin: 0 0 8px; }
a { color: var(--link); }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.top { position: sticky; top: 0; z-index: 2; background: var(--bg); display: flex; align-items: center; justify-content: space-between; gap: 8px; padding: 6px 0; }
dl.balances { display: flex; gap: 6px; margin: 0; }
dl.balances div { background: var(--card); border-radius: 10px; padding: 2px 10px; text-align: center; min-width: 62px; }
dl.balances dt { color: var(--hint); font-size: 12px; } dl.balances dd { margin: 0; font-size: 18px; font-weight: 700; font-variant-numeric: tabular-nums; }
.card { background: var(--card); border-radius: 14px; padding: 12px 14px; margin: 10px 0; }
.gift { border: 2px solid var(--button); }
button { font: inherit; border: 0; border-radius: 10px; padding: 12px 16px; width: 100%; min-height: 44px; background: var(--button); color: var(--button-text); font-weight: 600; cursor: pointer; touch-action: manipulation; }
button:disabled { opacity: .55; cursor: default; }
button:not(:disabled):active { transform: scale(.98); }
button.secondary { background: transparent; color: var(--link); border: 1px solid var(--link); margin-top: 8px; }
:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
.hint, .note { color: var(--hint); font-size: 14px; } .note { margin: 8px 0; }
.mono { font-family: ui-monospace, monospace; font-size: 13px; overflow-wrap: anywhere; }
.msg { margin: 8px 0 0; font-weight: 600; scroll-margin: 72px 0 16px; } .msg:empty { margin: 0; }
.good { color: var(--good); } .bad { color: var(--danger); }
.wheel { display: flex; justify-content: center; margin: 4px 0; }
#wheel { width: min(100%, 280px); height: auto; aspect-ratio: 1; }
#rotor { transform-box: fill-box; transform-origin: center; will-change: transform; }
#rotor text { font-family: system-ui, sans-serif; font-weight: 700; }
ul.odds { margin: 6px 0; padding-left: 20px; font-size: 14px; }
details summary { cursor: pointer; color: var(--link); padding: 8px 0; min-height: 44px; display: flex; align-items: center; }
.board { display: grid; grid-template-columns: repeat(5, 1fr); gap: 6px; margin: 8px 0; }
.board button { padding: 0; min-height: 0; aspect-ratio: 1; font-size: 12px; line-height: 1.15; border-radius: 10px; overflow-wrap: anywhere; }
.board button:not(.prize):not(.empty) { font-size: 20px; }
.board button:disabled { opacity: 1; }
.board button:disabled:not(.prize):not(.empty) { opacity: .55; }
.board button.prize { background: var(--bg); color: var(--good); border: 2px solid var(--good); }
.board button.empty { background: var(--bg); color: var(--hint); border: 1px solid var(--hint); }
.board button.fresh { animation: reveal .45s ease-out; }
@keyframes reveal { from { transform: rotateY(90deg) scale(.8); } to { transform: none; } }
input, textarea, select { font: inherit; width: 100%; padding: 10px; border-radius: 8px; border: 1px solid var(--hint); background: var(--bg); color: var(--text); margin: 6px 0; }
textarea { min-height: 80px; font: 13px ui-monospace, monospace; }
label { display: block; margin: 10px 0 0; font-weight: 600; }
ul.missions { list-style: none; padding: 0; margin: 0; } li.mission { border-bottom: 1px solid var(--hint); padding: 8px 0; }
li.mission p { margin: 4px 0; }
ol.history { padding-left: 20px; font-size: 14px; margin: 0; } ol.history li { margin: 3px 0; }
progress { width: 100%; height: 10px; accent-color: var(--button); }
/* The verdict's place, kept from the first paint (the check lands after it): the page below does not move. */
#result { min-height: 15rem; }
.verdict { font-size: 26px; margin: 0 0 6px; } .outcome { font-size: 19px; font-weight: 700; margin: 4px 0; }
ol.grid { display: grid; grid-template-columns: repeat(5, 1fr); gap: 4px; padding: 0; list-style: none; font-size: 12px; margin: 0; }
ol.grid li { border: 1px solid var(--hint); border-radius: 6px; padding: 6px 2px; text-align: center; overflow-wrap: anywhere; }
ol.grid li.prize { background: var(--bg); color: var(--good); font-weight: 700; }
@media (prefers-reduced-motion: reduce) { * { animation: none !important; transition: none !important; } }
`;
