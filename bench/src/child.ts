import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** The bench package's directory: children resolve `tsx` and the workspace packages from it. */
export const BENCH_DIR = join(__dirname, '..');

/** A message between the bench and one of its children; `id` pairs a request with its reply. */
export interface Message {
  readonly id?: number;
  readonly type: string;
  readonly [field: string]: unknown;
}

/** A TypeScript child process (run by tsx) that answers requests over IPC. */
export interface TsChild {
  readonly pid: number;
  /** The first message of the given type (e.g. `ready`). */
  first(type: string): Promise<Message>;
  /** Sends a request and resolves its reply (the message with the same id). */
  request(message: Message): Promise<Message>;
  /** Ends the child by its PID and waits for it to exit. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Runs `file` (relative to `bench/src`) under tsx with an IPC channel, pinned to `cpu` with
 * `taskset` when one is given.
 */
export function spawnTsChild(
  file: string,
  {
    cpu,
    env = {},
    nodeArgs = [],
  }: { cpu?: number; env?: NodeJS.ProcessEnv; nodeArgs?: readonly string[] } = {},
): TsChild {
  const args = [...nodeArgs, '--import', 'tsx', join(BENCH_DIR, 'src', file)];
  const [command, commandArgs] =
    cpu === undefined
      ? [process.execPath, args]
      : ['taskset', ['-c', String(cpu), process.execPath, ...args]];
  const child = spawn(command, commandArgs, {
    cwd: BENCH_DIR,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  if (child.pid === undefined) throw new Error(`${file}: could not be spawned`);
  running.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => running.delete(child));
  // Replies by request id; unrequested messages (`ready`, `result`, `error`) by type.
  const waiting = new Map<number | string, (message: Message) => void>();
  const early: Message[] = [];
  child.on('message', (message: Message) => {
    const key = message.id ?? (message.type === 'error' ? [...waiting.keys()][0] : message.type);
    const resolve = key === undefined ? undefined : waiting.get(key);
    if (key === undefined || resolve === undefined) early.push(message);
    else {
      waiting.delete(key);
      resolve(message);
    }
  });
  const unwrap = (answer: Message): Message => {
    if (answer.type === 'error') throw new Error(`${file}: ${String(answer.message)}`);
    return answer;
  };
  const failOnExit = <T>(promise: Promise<T>): Promise<T> =>
    Promise.race([
      promise,
      exited.then((code): never => {
        throw new Error(`${file} exited (code ${code}) before answering`);
      }),
    ]);
  let nextId = 1;
  return {
    pid: child.pid,
    first(type) {
      const index = early.findIndex((m) => (m.type === type || m.type === 'error') && m.id === undefined);
      if (index >= 0) return Promise.resolve(early.splice(index, 1)[0] as Message).then(unwrap);
      return failOnExit(new Promise<Message>((resolve) => waiting.set(type, resolve))).then(unwrap);
    },
    request(message) {
      const id = nextId++;
      const reply = new Promise<Message>((resolve) => waiting.set(id, resolve));
      child.send({ ...message, id });
      return failOnExit(reply).then(unwrap);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** In a child: answers each request with `handle`'s result (or an `error` message). */
export function serveRequests(handle: (message: Message) => Promise<Omit<Message, 'id'>>): void {
  process.on('message', (message: Message) => {
    handle(message).then(
      (reply) => process.send?.({ ...reply, id: message.id }),
      (error: unknown) =>
        process.send?.({
          type: 'error',
          id: message.id,
          message: error instanceof Error ? error.stack : String(error),
        }),
    );
  });
  // The bench going away ends the child too.
  process.on('disconnect', () => process.exit(0));
}
