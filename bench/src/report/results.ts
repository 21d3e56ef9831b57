import type { HttpResult } from '../http/http';
import type { Machine } from '../machine';
import type { MemoryResult } from '../memory/memory';
import type { MetricsResult } from '../metrics/metrics';
import type { MicroResult } from '../micro/micro';
import type { OverloadResult } from '../overload/overload';
import type { RedisResult } from '../redis/redis';
import type { ReplayResult } from '../replay/replay-bench';
import type { Settings } from '../settings';

/** One goal of issue 6, judged on this run. */
export interface Goal {
  readonly id: string;
  readonly goal: string;
  /** The figure, in words (`0.62 × floor`). */
  readonly measured: string;
  readonly target: string;
  /** `null` when its section did not run. */
  readonly met: boolean | null;
}

/** Everything a run wrote to `bench/results/latest.json`. */
export interface Results {
  readonly machine: Machine;
  readonly date: string;
  readonly durationSeconds: number;
  readonly settings: Settings;
  readonly goals: readonly Goal[];
  readonly micro?: MicroResult;
  readonly memory?: MemoryResult;
  readonly http?: HttpResult;
  readonly redis?: RedisResult;
  readonly replay?: ReplayResult;
  readonly metrics?: MetricsResult;
  readonly overload?: OverloadResult;
}

/** `bench/results/overload.json`: the overload section's latest full-size run, on its own. */
export interface OverloadResults {
  readonly machine: Machine;
  readonly date: string;
  readonly durationSeconds: number;
  readonly goals: readonly Goal[];
  readonly overload: OverloadResult;
}
