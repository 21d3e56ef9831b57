import type { ReplayResult } from '../replay/replay';

/**
 * What `JSON.stringify` leaves raw but a terminal acts on (DEL, C1 controls, bidi overrides and
 * isolates); C0 controls and lone surrogates it already escapes. They can only stand in strings.
 */
const RAW_CONTROLS = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The replay's summary as JSON (`--json`), for scripts: everything the text report says, numbers
 * as numbers and times as epoch ms; the chart series are left out. Every control character is a
 * `\u` escape, so the JSON printed to a terminal is shown, and parses back to the exact keys.
 */
export function jsonReport(result: ReplayResult): string {
  const { policies, hotKeys, ...rest } = result;
  return `${JSON.stringify(
    {
      ...rest,
      elapsedMs: Math.round(result.elapsedMs),
      policies: policies.map(({ series: _series, ...policy }) => policy),
      hotKeys: hotKeys.map(({ series: _series, ...key }) => key),
    },
    null,
    2,
  ).replace(RAW_CONTROLS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
}
