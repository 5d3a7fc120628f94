// The status page's stylesheet, inlined into the page (one request, nothing to build, nothing from a CDN).
// Colour is never the only signal: every status also appears as a word (OK, WARN, BAD).

export const PAGE_CSS = `
:root { --ok: #1f883d; --warn: #bf8700; --bad: #cf222e; --none: #8c959f; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #f6f8fa; }
header, main, footer { max-width: 1100px; margin: 0 auto; padding: 16px 20px; }
header { border-left: 8px solid var(--none); background: #fff; margin-top: 16px; }
.overall-ok { border-left-color: var(--ok); } .overall-warn { border-left-color: var(--warn); } .overall-bad { border-left-color: var(--bad); }
h1 { margin: 0 0 4px; font-size: 24px; } h2 { font-size: 18px; margin: 24px 0 8px; } h3 { font-size: 15px; margin: 0 0 4px; }
.headline { font-size: 20px; margin: 4px 0; }
.muted { color: var(--muted); font-size: 13px; }
section { background: #fff; padding: 4px 16px 16px; margin-top: 16px; border: 1px solid var(--line); border-radius: 6px; }
table { width: 100%; border-collapse: collapse; font-size: 14px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
.tag { display: inline-block; min-width: 3.6em; text-align: center; font-weight: 700; font-size: 12px; padding: 1px 6px; border-radius: 10px; color: #fff; background: var(--none); }
.tag-ok { background: var(--ok); } .tag-warn { background: var(--warn); } .tag-bad { background: var(--bad); }
tr.row-bad { background: #ffebe9; } tr.row-warn { background: #fff8c5; }
.bars-row { display: flex; align-items: center; gap: 12px; margin: 4px 0; }
.bars-label { width: 240px; flex: none; font-family: ui-monospace, monospace; font-size: 12px; overflow: hidden; text-overflow: ellipsis; }
.bars { display: flex; gap: 2px; list-style: none; margin: 0; padding: 0; flex: 1; }
.bar { flex: 1; height: 24px; border-radius: 2px; background: var(--none); }
.bar-ok { background: var(--ok); } .bar-warn { background: var(--warn); } .bar-bad { background: var(--bad); }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
dl.windows, dl.latency { display: flex; gap: 32px; margin: 8px 0; }
dl div dt { color: var(--muted); font-size: 13px; } dl div dd { margin: 0; font-size: 20px; font-weight: 600; }
.incident { border-left: 4px solid var(--line); padding: 4px 12px; margin: 8px 0; }
code { font-size: 13px; }
`;
