/**
 * A "nice" axis top for `max` (1, 2, 2.5 or 5 times a power of ten) and its ticks, about
 * `count` of them.
 */
export function niceAxis(max: number, count = 4): { top: number; ticks: number[] } {
  if (!(max > 0)) return { top: 1, ticks: [0, 1] };
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 2.5, 5, 10].find((factor) => factor * power >= rough) ?? 10) * power;
  const top = Math.ceil(max / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let tick = 0; tick <= top + step / 2; tick += step) ticks.push(Math.round(tick * 1e6) / 1e6);
  return { top, ticks };
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TIME_STEPS = [
  100,
  200,
  500,
  SECOND,
  2 * SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
  28 * DAY,
];

/** A round step between time ticks so that `spanMs` has at most `count` of them. */
export function timeStep(spanMs: number, count = 7): number {
  return TIME_STEPS.find((step) => spanMs / step <= count) ?? Math.ceil(spanMs / count / DAY) * DAY;
}

/**
 * A time tick's label: from the start for generated traffic (`0 s`, `1:30`), the UTC clock for
 * a log (`12:05`, `12:05:30`, `05-01` for days).
 *
 * @param ms - the tick, epoch ms
 * @param stepMs - the step between ticks (decides the precision)
 * @param startMs - where relative labels count from
 * @param relative - label from the start instead of the clock
 */
export function timeLabel(ms: number, stepMs: number, startMs: number, relative: boolean): string {
  if (relative) {
    const offset = ms - startMs;
    if (stepMs < SECOND) return `${(offset / SECOND).toFixed(1)} s`;
    if (offset < MINUTE || stepMs < 10 * SECOND) return `${Math.round(offset / SECOND)} s`;
    if (offset < HOUR)
      return `${Math.floor(offset / MINUTE)}:${String(Math.round((offset % MINUTE) / SECOND)).padStart(2, '0')}`;
    return `${Math.floor(offset / HOUR)} h${offset % HOUR === 0 ? '' : ` ${Math.round((offset % HOUR) / MINUTE)} min`}`;
  }
  const iso = new Date(ms).toISOString();
  if (stepMs >= DAY) return iso.slice(5, 10);
  if (stepMs >= MINUTE) return iso.slice(11, 16);
  if (stepMs >= SECOND) return iso.slice(11, 19);
  return iso.slice(11, 21);
}
