import type { ReplayResult } from '../replay/replay';

/**
 * The replay's summary as JSON (`--json`), for scripts: everything the text report says, numbers
 * as numbers and times as epoch ms; the chart series are left out.
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
  )}\n`;
}
