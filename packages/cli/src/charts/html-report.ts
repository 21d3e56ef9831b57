import type { ReplayResult } from '../replay/replay';
import { duration, moment, percent, thousands } from '../report/format';
import { outcomeChart } from './outcome-chart';
import { policySvg, sharedScales, sustainedRate } from './policy-svg';
import { clip, escapeXml, FONT } from './svg';

const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; color: #222; margin: 24px; max-width: 1400px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
p.source { color: #555; margin: 0 0 12px; }
table { border-collapse: collapse; } th, td { padding: 4px 10px; text-align: left; border-bottom: 1px solid #e4e4e4; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(640px, 1fr)); gap: 16px; }
.charts svg { max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
.keys td { padding: 2px 6px; } .keys svg { display: block; } .keys td.key { white-space: nowrap; }
code { background: #f4f4f4; padding: 0 3px; } ul { margin: 4px 0; }
`;

/**
 * The replay as one self-contained HTML page (`--out`): the summary table, each policy's chart
 * side by side on one scale, the hottest keys under every policy, the keys limited most and the
 * lines that could not be read. Styles and charts are inline (SVG): the page loads nothing, so it
 * opens offline and can be mailed or attached to a ticket.
 *
 * @param result - the replay
 * @param topKeys - hottest keys charted one by one
 */
export function htmlReport(result: ReplayResult, topKeys: number): string {
  const scales = sharedScales(result, topKeys);
  const relative = result.format === undefined;
  const start = result.firstMs ?? 0;
  const at = (ms: number): string => escapeXml(moment(ms, start, relative));
  const body: string[] = [
    `<h1>sluice replay</h1>`,
    `<p class="source">${escapeXml(result.source)}: ${thousands(result.requests)} requests${
      result.firstMs !== undefined && result.lastMs !== undefined
        ? `, ${relative ? 'over' : `${at(result.firstMs)} to ${at(result.lastMs)},`} ${duration(result.lastMs - result.firstMs)}`
        : ''
    }. Each policy ran through <code>@sluice/core</code> with a memory store and the log's clock.</p>`,
  ];
  const notes: string[] = [];
  if (result.unparsed > 0)
    notes.push(`${thousands(result.unparsed)} lines could not be read and were skipped (listed below).`);
  if (result.noKey > 0)
    notes.push(`${thousands(result.noKey)} requests had an empty key: not limited, as in nginx.`);
  if (result.outOfOrder > 0)
    notes.push(
      `${thousands(result.outOfOrder)} lines were earlier than the line before them and were replayed at that line's time.`,
    );
  for (const policy of result.policies) {
    if (policy.forgotten > 0) {
      notes.push(
        `${escapeXml(policy.label)}: its store reached its bound of ${thousands(policy.maxKeys)} keys; ${thousands(policy.forgotten)} keys idle longest were forgotten while their state was live (raise <code>--max-keys</code>).`,
      );
    }
  }
  if (notes.length > 0) body.push(`<ul>${notes.map((note) => `<li>${note}</li>`).join('')}</ul>`);

  body.push(
    '<table><tr><th>policy</th><th>admitted</th><th>delayed</th><th>limited</th><th>worst second (most limited)</th><th>keys limited most</th></tr>',
    ...result.policies.map((policy) => {
      const decided = policy.admitted + policy.delayed + policy.limited;
      const worst = policy.worstSecond;
      return `<tr><td>${escapeXml(policy.label)}</td><td class="n">${thousands(policy.admitted)} (${percent(policy.admitted, decided)})</td><td class="n">${thousands(policy.delayed)} (${percent(policy.delayed, decided)})${policy.delayed > 0 ? `<br>up to ${duration(policy.maxDelayMs)}` : ''}</td><td class="n">${thousands(policy.limited)} (${percent(policy.limited, decided)})</td><td>${
        worst === undefined
          ? 'none limited'
          : `${at(worst.startMs)}: ${thousands(worst.limited)} of ${thousands(worst.requests)} limited`
      }</td><td>${policy.limitedKeys
        .slice(0, 5)
        .map(
          ({ key, limited, error }) =>
            `${escapeXml(key || '""')} (${error > 0 ? '≤ ' : ''}${thousands(limited)})`,
        )
        .join('<br>')}</td></tr>`;
    }),
    '</table>',
  );

  if (scales !== undefined) {
    body.push(
      '<h2>Requests per second over time, by policy (one scale)</h2><div class="charts">',
      ...result.policies.map((_, i) =>
        policySvg(result, i, scales, 0).replace(/^<svg xmlns="[^"]*" /, '<svg '),
      ),
      '</div>',
    );
    const keys = result.hotKeys.length > 1 ? result.hotKeys.slice(0, topKeys) : [];
    if (keys.length > 0) {
      body.push(
        '<h2>Hottest keys under each policy (requests per second; dashed: the sustained rate)</h2><table class="keys"><tr><th>key</th>',
        ...result.policies.map((policy) => `<th>${escapeXml(policy.label)}</th>`),
        '</tr>',
      );
      keys.forEach((key, k) => {
        body.push(
          `<tr><td class="key" title="${escapeXml(key.key)}">${escapeXml(clip(key.key, 40))}<br><small>${key.error > 0 ? '≤ ' : ''}${thousands(key.requests)} requests</small></td>`,
          ...result.policies.map(
            (policy, i) =>
              `<td><svg width="420" height="64" viewBox="0 0 420 64" ${FONT}>${outcomeChart({
                series: key.series[i] as (typeof key.series)[number],
                frame: scales.frame,
                peak: scales.keyPeaks[k] ?? 0,
                x: 0,
                y: 0,
                width: 420,
                height: 64,
                rateLine: sustainedRate(policy),
                compact: true,
              })}</svg></td>`,
          ),
          '</tr>',
        );
      });
      body.push('</table>');
    }
  }
  if (result.lineErrors.length > 0) {
    body.push(
      '<h2>Lines that could not be read</h2><ul>',
      ...result.lineErrors.map(
        (error) =>
          `<li>line ${error.line}: ${escapeXml(error.reason)}: <code>${escapeXml(error.text)}</code></li>`,
      ),
      result.unparsed > result.lineErrors.length
        ? `<li>… and ${thousands(result.unparsed - result.lineErrors.length)} more</li>`
        : '',
      '</ul>',
    );
  }
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sluice replay: ${escapeXml(result.source)}</title>
<style>${STYLE}</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`;
}
