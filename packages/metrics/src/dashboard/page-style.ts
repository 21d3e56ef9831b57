/** The page's stylesheet (inline, allowed by its hash in the Content-Security-Policy). */
export const PAGE_STYLE = `
:root { --fg: #1d2330; --muted: #667085; --line: #e4e7ec; --bg: #f5f6f8; --card: #fff;
  --admitted: #2f9e44; --delayed: #f08c00; --limited: #e03131; --down: #e03131; --up: #2f9e44; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: baseline; gap: 16px; padding: 14px 24px; background: var(--card); border-bottom: 1px solid var(--line); }
header h1 { margin: 0; font-size: 18px; }
header .status { color: var(--muted); font-size: 13px; }
header .status.offline { color: var(--limited); }
main { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 16px; padding: 16px 24px; }
.empty { color: var(--muted); padding: 24px; }
.limiter { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
.limiter h2 { margin: 0; font-size: 16px; display: flex; align-items: center; gap: 8px; }
.badge { font-size: 11px; font-weight: 500; color: var(--muted); border: 1px solid var(--line); border-radius: 10px; padding: 1px 8px; }
.badge.down { color: #fff; background: var(--down); border-color: var(--down); }
.badge.up { color: var(--up); border-color: var(--up); }
.rates { display: flex; gap: 18px; margin: 8px 0 4px; font-size: 13px; }
.rates b { font-size: 18px; font-variant-numeric: tabular-nums; }
.dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; margin-right: 5px; }
.dot.admitted { background: var(--admitted); } .dot.delayed { background: var(--delayed); } .dot.limited { background: var(--limited); }
svg.chart { width: 100%; height: 150px; display: block; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .axis { fill: var(--muted); font-size: 10px; }
svg.chart polyline { fill: none; stroke-width: 1.6; vector-effect: non-scaling-stroke; stroke-linejoin: round; }
svg.chart .limit { stroke: #1971c2; stroke-dasharray: 4 2; } svg.chart .admitted { stroke: var(--admitted); } svg.chart .delayed { stroke: var(--delayed); } svg.chart .limited { stroke: var(--limited); }
.facts { display: grid; grid-template-columns: repeat(3, 1fr); gap: 6px 16px; margin: 10px 0; }
.facts div { font-size: 12px; color: var(--muted); }
.facts span { display: block; font-size: 15px; color: var(--fg); font-variant-numeric: tabular-nums; }
h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 12px 0 4px; }
table { width: 100%; border-collapse: collapse; font-size: 12px; font-variant-numeric: tabular-nums; }
th { text-align: right; color: var(--muted); font-weight: 500; border-bottom: 1px solid var(--line); padding: 3px 4px; }
td { text-align: right; padding: 3px 4px; border-bottom: 1px solid var(--line); }
th:first-child, td:first-child { text-align: left; }
td.key { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; max-width: 260px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar { display: inline-block; height: 6px; background: var(--limited); border-radius: 3px; vertical-align: middle; }
.note { color: var(--muted); font-size: 11px; margin-top: 6px; }
`;
