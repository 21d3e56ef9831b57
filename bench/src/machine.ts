import { spawnSync } from 'node:child_process';
import { availableParallelism, cpus, release, totalmem, type } from 'node:os';

/** What the numbers were measured on. */
export interface Machine {
  readonly cpu: string;
  /** Cores this process may use. */
  readonly cores: number;
  readonly node: string;
  readonly os: string;
  readonly memoryGiB: number;
  /** `taskset` exists and there are two cores or more: HTTP server and load generator get a core each. */
  readonly pinning: boolean;
}

/** Whether `taskset` runs here. */
export function hasTaskset(): boolean {
  const probe = spawnSync('taskset', ['--version'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

/** The machine this process runs on. */
export function describeMachine(): Machine {
  const cores = availableParallelism();
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
    cores,
    node: process.version,
    os: `${type()} ${release()}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    pinning: cores >= 2 && hasTaskset(),
  };
}

/** One line naming the machine. */
export function machineLine(machine: Machine): string {
  return `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.os}`;
}
