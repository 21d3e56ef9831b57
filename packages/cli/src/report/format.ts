/** `1234567` → `'1,234,567'`: the same on every machine, whatever its locale. */
export function thousands(value: number): string {
  const [whole, fraction] = String(Math.round(value * 10) / 10).split('.');
  return `${(whole as string).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** A share as a percentage with one decimal: `0.953` → `'95.3 %'`. */
export function percent(part: number, whole: number): string {
  return whole === 0 ? '0.0 %' : `${((part / whole) * 100).toFixed(1)} %`;
}

/** A duration in words: `950` → `'950 ms'`, `61_000` → `'1 min 1 s'`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.round(ms / 100) / 10).toString()} s`;
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return [
    hours > 0 ? `${hours} h` : '',
    minutes > 0 ? `${minutes} min` : '',
    seconds > 0 ? `${seconds} s` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** An epoch time as UTC, `2024-05-01 12:03:17Z` (with `.250` when not a whole second). */
export function utc(ms: number): string {
  const iso = new Date(ms).toISOString();
  const text = `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
  return `${text.endsWith('.000') ? text.slice(0, -4) : text}Z`;
}

/**
 * Where a time lies, for people: UTC for a log, seconds from the start for generated traffic
 * (whose date is made up).
 */
export function moment(ms: number, startMs: number, relative: boolean): string {
  if (!relative) return utc(ms);
  const seconds = (ms - startMs) / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
