/** A clock tests move by hand: no test ever sleeps. */
export interface FakeClock {
  (): number;
  /** Moves time forward (or back, with a negative value) by `ms`. */
  advance(ms: number): void;
  /** Sets the time. */
  set(ms: number): void;
}

/** Starts at a round epoch time (a multiple of every window used in tests) unless told otherwise. */
export function fakeClock(start = 1_700_000_000_000): FakeClock {
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
