import type { ReplayResult } from '../replay/replay';
import { duration, moment, percent, thousands } from './format';
import { visible } from './visible';

/** Keys named per policy in "refused most". */
const KEYS_NAMED = 5;

/**
 * The replay's summary for a terminal: what was replayed, then per policy the admitted, delayed
 * and limited requests, the worst second, the keys refused most, and what to know about the
 * input (lines that did not parse, empty keys, lines out of order, a store that filled up). Text
 * from the log (the source name, keys, unreadable lines) is shown through {@link visible}, so an
 * escape sequence in a User-Agent is printed, not run by the terminal.
 */
export function textReport(result: ReplayResult): string {
  const relative = result.format === undefined;
  const start = result.firstMs ?? 0;
  const at = (ms: number): string => moment(ms, start, relative);
  const lines: string[] = [`sluice replay: ${visible(result.source)}`];
  const span =
    result.firstMs === undefined || result.lastMs === undefined
      ? ''
      : relative
        ? `, over ${duration(result.lastMs - result.firstMs)}`
        : `, ${at(result.firstMs)} to ${at(result.lastMs)} (${duration(result.lastMs - result.firstMs)})`;
  lines.push(`${thousands(result.requests)} requests${span}, replayed in ${duration(result.elapsedMs)}`);
  lines.push(...inputNotes(result), '');

  const header = ['policy', 'admitted', 'delayed', 'limited', 'worst second (most limited)'];
  const rows = result.policies.map((policy) => {
    const decided = policy.admitted + policy.delayed + policy.limited;
    const worst = policy.worstSecond;
    return [
      visible(policy.label),
      `${thousands(policy.admitted)}  ${percent(policy.admitted, decided)}`,
      policy.delayed === 0
        ? '0'
        : `${thousands(policy.delayed)}  ${percent(policy.delayed, decided)}, ≤ ${duration(policy.maxDelayMs)}`,
      `${thousands(policy.limited)}  ${percent(policy.limited, decided)}`,
      worst === undefined
        ? 'none limited'
        : `${at(worst.startMs)}: ${thousands(worst.limited)} of ${thousands(worst.requests)} limited`,
    ];
  });
  lines.push(...columns([header, ...rows]));

  const limited = result.policies.filter((policy) => policy.limitedKeys.length > 0);
  if (limited.length > 0) {
    lines.push('', 'Keys limited most');
    const named = limited.map((policy) => [
      `  ${visible(policy.label)}`,
      policy.limitedKeys
        .slice(0, KEYS_NAMED)
        .map(
          ({ key, limited: count, error }) =>
            `${visible(key) || '""'} (${error > 0 ? '≤ ' : ''}${thousands(count)})`,
        )
        .join(' · '),
    ]);
    lines.push(...columns(named));
  }
  for (const policy of result.policies) {
    if (policy.forgotten > 0) {
      lines.push(
        '',
        `${visible(policy.label)}: its store reached --max-keys (${thousands(policy.maxKeys)} keys), so ${thousands(policy.forgotten)} keys idle longest were forgotten while their state was live and started afresh, as in a server with that bound; raise --max-keys to replay without forgetting`,
      );
    }
  }
  if (result.lineErrors.length > 0) {
    lines.push('', 'Lines that could not be read');
    for (const error of result.lineErrors)
      lines.push(`  line ${error.line}: ${visible(error.reason)}: ${visible(error.text)}`);
    const more = result.unparsed - result.lineErrors.length;
    if (more > 0) lines.push(`  … and ${thousands(more)} more`);
  }
  return `${lines.join('\n')}\n`;
}

function inputNotes(result: ReplayResult): string[] {
  const notes: string[] = [];
  if (result.unparsed > 0) {
    notes.push(
      `${thousands(result.unparsed)} of ${thousands(result.lines)} lines could not be read and were skipped (listed below)`,
    );
  }
  if (result.noKey > 0) {
    notes.push(`${thousands(result.noKey)} requests had an empty key: not limited (as in nginx)`);
  }
  if (result.outOfOrder > 0) {
    notes.push(
      `${thousands(result.outOfOrder)} lines were earlier than the line before them and were replayed at that line's time`,
    );
  }
  return notes;
}

/** Left-aligned columns two spaces apart. */
function columns(rows: ReadonlyArray<readonly string[]>): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  return rows.map((row) =>
    row
      .map((cell, i) =>
        i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length),
      )
      .join('   ')
      .trimEnd(),
  );
}
