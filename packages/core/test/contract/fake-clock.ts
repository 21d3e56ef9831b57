/** A clock tests move by hand: no test ever sleeps. */
export interface FakeClock {
  (): number;
  /** Moves time forward (or back, with a negative value) by `ms`. */
  advance(ms: number): void;
  /** Sets the time. */
  set(ms: number): void;
}

/** A midnight UTC (2023-11-15): a multiple of every window the tests use, days included. */
export const FAKE_EPOCH = 1_700_006_400_000;

/** A clock starting at {@link FAKE_EPOCH} unless told otherwise. */
export function fakeClock(start = FAKE_EPOCH): FakeClock {
  let now = start;
  const clock = (() => now) as FakeClock;
  clock.advance = (ms) => {
    now += ms;
  };
  clock.set = (ms) => {
    now = ms;
  };
  return clock;
}
