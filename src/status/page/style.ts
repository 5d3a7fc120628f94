// The status page's stylesheet, compiled into the page template (one request, nothing to build, nothing from
// a CDN). Colour is never the only signal: every status also appears as a word (OK, WARN, BAD, NOT
// CONFIGURED). One column of cards, all of the same width (the header is a card like the others, so their
// edges line up); under 640 px tables become stacked rows and only the last 30 daily bars show, so nothing
// is wider than a 390 px phone (test/status/page.browser.test.ts measures it).

export const PAGE_CSS = `
:root { --ok: #1f883d; --warn: #9a6700; --bad: #cf222e; --none: #6e7781; --bar-none: #d0d7de; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #f6f8fa; }
.wrap { max-width: 1100px; margin: 0 auto; padding: 16px; }
.card { background: #fff; padding: 12px 20px 16px; margin: 0 0 16px; border: 1px solid var(--line); border-radius: 6px; }
header.card { border-left: 8px solid var(--none); }
.overall-ok { border-left-color: var(--ok) !important; } .overall-warn { border-left-color: var(--warn) !important; } .overall-bad { border-left-color: var(--bad) !important; }
h1 { margin: 0 0 4px; font-size: 24px; } h2 { font-size: 18px; margin: 4px 0 8px; } h3 { font-size: 15px; margin: 0 0 4px; }
.headline { font-size: 20px; margin: 4px 0; }
.muted { color: var(--muted); font-size: 13px; }
table { width: 100%; border-collapse: collapse; font-size: 14px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
code { font-size: 13px; }
td, p, li { overflow-wrap: anywhere; }
table.checks th[scope="row"], table.checks td.status, table.checks td.uptime, table.checks td.badge, table thead th { white-space: nowrap; }
.cell-label { display: none; color: var(--muted); font-weight: 400; }
.tag { display: inline-block; min-width: 3.6em; text-align: center; font-weight: 700; font-size: 12px; padding: 1px 6px; border-radius: 10px; color: #fff; background: var(--none); white-space: nowrap; }
.tag-ok { background: var(--ok); } .tag-warn { background: var(--warn); } .tag-bad { background: var(--bad); }
tr.row-bad { background: #ffebe9; } tr.row-warn { background: #fff8c5; } tr.row-not-configured { color: var(--muted); }
.component { border-top: 1px solid var(--line); padding: 12px 0 4px; }
.component:first-of-type { border-top: 0; }
.component-head { display: flex; justify-content: space-between; align-items: center; gap: 12px; }
.component p.muted { margin: 2px 0 8px; }
details > summary { cursor: pointer; color: var(--muted); font-size: 13px; margin: 6px 0; }
.bars-row { margin: 6px 0 10px; }
.bars { display: flex; gap: 2px; list-style: none; margin: 0; padding: 0; }
.bars-foot { display: flex; justify-content: space-between; gap: 8px; color: var(--muted); font-size: 12px; margin-top: 2px; }
.bars-uptime { text-align: center; }
.bars-foot > span:first-child, .bars-foot > span:last-child { white-space: nowrap; }
.narrow { display: none; }
.bar { flex: 1 1 0; min-width: 0; height: 28px; border-radius: 2px; background: var(--bar-none); }
.bar-ok { background: var(--ok); } .bar-warn { background: #d4a72c; } .bar-bad { background: var(--bad); }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
dl.windows { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 12px 24px; margin: 8px 0 12px; }
dl.latency { display: flex; flex-wrap: wrap; gap: 12px 32px; margin: 8px 0; }
dl div dt { color: var(--muted); font-size: 13px; } dl div dd { margin: 0; font-size: 20px; font-weight: 600; }
dl div dd.since { font-size: 12px; font-weight: 400; color: var(--muted); }
.incident { border-left: 4px solid var(--line); padding: 4px 12px; margin: 12px 0; }
.incident-open { border-left-color: var(--warn); }
.updates { list-style: none; margin: 8px 0 0; padding: 0; }
.update { margin: 0 0 8px; }
.update .state { text-transform: capitalize; }
.update p { margin: 2px 0 0; white-space: pre-line; }
.update time { color: var(--muted); font-size: 13px; }
footer { padding: 0 4px; color: var(--muted); font-size: 13px; }
@media (max-width: 640px) {
  .wrap { padding: 8px; }
  .card { padding: 10px 12px 12px; }
  .bar-old, .wide { display: none; }
  .narrow { display: inline; }
  /* Tables become one block per row: the name on its line, the short cells side by side, the text below. */
  table, thead, tbody, tr { display: block; }
  thead { display: none; }
  tr { border-bottom: 1px solid var(--line); padding: 6px 0; }
  th, td { display: inline-block; border: 0; padding: 2px 8px 2px 4px; white-space: normal !important; }
  td.details { display: block; }
  th code { overflow-wrap: anywhere; }
  .cell-label { display: inline; }
  dl.windows { grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px 16px; }
}
`;
