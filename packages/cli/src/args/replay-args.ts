import { parseArgs } from 'node:util';
import { parseDuration, SluiceConfigError } from '@sluice/core';
import { ReplayInputError } from '../errors';
import { LOG_FORMATS, type LogFormat } from '../input/log-formats';
import { PATTERNS, type PatternName } from '../patterns/patterns';
import type { LogInput, PatternInput, ReplayOptions } from '../replay/replay';

/** What `sluice replay …` asks for: the replay, and where its results go. */
export interface ReplayCommand {
  readonly replay: ReplayOptions;
  /** `--out`: the HTML report's path. */
  readonly html: string | undefined;
  /** `--svg`: the directory of the per-policy charts. */
  readonly svgDir: string | undefined;
  /** `--json`: the summary as JSON. */
  readonly json: boolean;
  /** `--top`: hottest keys charted one by one. */
  readonly topKeys: number;
}

const OPTIONS = {
  policy: { type: 'string', short: 'p', multiple: true },
  pattern: { type: 'string' },
  format: { type: 'string' },
  key: { type: 'string', short: 'k' },
  'key-field': { type: 'string' },
  'time-field': { type: 'string' },
  spread: { type: 'string' },
  'ipv6-subnet': { type: 'string' },
  'trust-proxy': { type: 'string' },
  duration: { type: 'string' },
  rps: { type: 'string' },
  keys: { type: 'string' },
  window: { type: 'string' },
  seed: { type: 'string' },
  'max-keys': { type: 'string' },
  out: { type: 'string', short: 'o' },
  svg: { type: 'string' },
  top: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/**
 * An option that takes one value given twice: `parseArgs` keeps the last without a word, and a
 * later error would then speak of the value the user did not mean (`--format json --format csv`).
 */
function refuseRepeated(
  tokens: ReadonlyArray<{ kind: string; name?: string; value?: string | undefined }>,
): void {
  const seen = new Map<string, string | undefined>();
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    const { name } = token;
    if ((OPTIONS as Record<string, { multiple?: boolean }>)[name]?.multiple === true) continue;
    if (seen.has(name)) {
      const values = [seen.get(name), token.value].filter((v) => v !== undefined);
      const shown = values.length === 0 ? '' : ` (${values.map((v) => JSON.stringify(v)).join(', ')})`;
      throw new ReplayInputError(`--${name} given twice${shown}: give it once`);
    }
    seen.set(name, token.value);
  }
}

/** The parsed command line: a command to run, or a request for help or the version. */
export type ParsedArgs =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'replay'; readonly command: ReplayCommand };

/**
 * Reads the command line (after `sluice`) with Node's `util.parseArgs`.
 *
 * @param argv - e.g. `['replay', 'access.log', '--policy', 'gcra 10r/s']`
 * @throws {@link ReplayInputError} naming the option for anything it cannot use
 */
export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw new ReplayInputError(
      `${(error as Error).message.split('\n')[0] ?? ''} (sluice --help lists the options)`,
    );
  }
  refuseRepeated(parsed.tokens);
  const { values, positionals } = parsed;
  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version' };
  const [command, ...rest] = positionals;
  if (command === undefined) return { kind: 'help' };
  if (command !== 'replay')
    throw new ReplayInputError(`unknown command "${command}"; the command is: sluice replay`);
  if (rest.length > 1)
    throw new ReplayInputError(`one log at a time (got ${rest.map((p) => JSON.stringify(p)).join(', ')})`);
  const path = rest[0];

  let input: LogInput | PatternInput;
  if (values.pattern !== undefined) {
    if (path !== undefined) throw new ReplayInputError(`a log (${path}) or --pattern, not both`);
    forbid(
      values,
      ['format', 'key', 'key-field', 'time-field', 'spread', 'ipv6-subnet', 'trust-proxy'],
      '--pattern',
    );
    if (!(PATTERNS as readonly string[]).includes(values.pattern)) {
      throw new ReplayInputError(
        `--pattern ${JSON.stringify(values.pattern)}: expected ${PATTERNS.join(', ')}`,
      );
    }
    input = {
      kind: 'pattern',
      name: values.pattern as PatternName,
      ...optional('durationMs', values.duration, (text) => durationOption('duration', text)),
      ...optional('rps', values.rps, (text) => numberOption('rps', text, { min: 0.001, max: 1_000_000 })),
      ...optional('keys', values.keys, (text) =>
        numberOption('keys', text, { min: 1, max: 100_000, whole: true }),
      ),
      ...optional('windowMs', values.window, (text) => durationOption('window', text)),
      ...optional('seed', values.seed, (text) =>
        numberOption('seed', text, { min: 0, max: 2 ** 32 - 1, whole: true }),
      ),
    };
  } else {
    if (path === undefined)
      throw new ReplayInputError(
        'name a log file (or - for standard input), or generate traffic with --pattern',
      );
    forbid(values, ['duration', 'rps', 'keys', 'window', 'seed'], 'a log');
    const format = values.format;
    if (format !== undefined && format !== 'auto' && !(LOG_FORMATS as readonly string[]).includes(format)) {
      throw new ReplayInputError(
        `--format ${JSON.stringify(format)}: expected auto, ${LOG_FORMATS.join(', ')}`,
      );
    }
    const spread = values.spread;
    if (spread !== undefined && spread !== 'even' && spread !== 'none') {
      throw new ReplayInputError(`--spread ${JSON.stringify(spread)}: expected even or none`);
    }
    input = {
      kind: 'log',
      path,
      ...optional('format', format, (text) => text as LogFormat | 'auto'),
      ...optional('key', values.key, (text) => text),
      ...optional('keyField', values['key-field'], (text) => text),
      ...optional('timeField', values['time-field'], (text) => text),
      ...optional('spread', spread, (text) => text === 'even'),
      ...optional('trustProxy', values['trust-proxy'], trustProxyOption),
      ...optional('ipv6Subnet', values['ipv6-subnet'], (text) =>
        numberOption('ipv6-subnet', text, { min: 1, max: 128, whole: true }),
      ),
    };
  }
  const policies = values.policy ?? [];
  if (policies.length === 0)
    throw new ReplayInputError('give at least one --policy, e.g. --policy "gcra 10r/s burst=20"');
  return {
    kind: 'replay',
    command: {
      replay: {
        input,
        policies,
        ...optional('maxKeys', values['max-keys'], (text) =>
          numberOption('max-keys', text, { min: 1, max: 2 ** 30, whole: true }),
        ),
      },
      html: values.out,
      svgDir: values.svg,
      json: values.json === true,
      topKeys:
        values.top === undefined ? 4 : numberOption('top', values.top, { min: 0, max: 10, whole: true }),
    },
  };
}

/** `{ [name]: read(text) }` when the option was given, `{}` otherwise (no `undefined` values). */
function optional<K extends string, T>(
  name: K,
  text: string | undefined,
  read: (text: string) => T,
): { [P in K]?: T } {
  return (text === undefined ? {} : { [name]: read(text) }) as { [P in K]?: T };
}

function forbid(values: Record<string, unknown>, names: readonly string[], context: string): void {
  const given = names.find((name) => values[name] !== undefined);
  if (given !== undefined) throw new ReplayInputError(`--${given} does not apply to ${context}`);
}

function numberOption(
  name: string,
  text: string,
  { min, max, whole = false }: { min: number; max: number; whole?: boolean },
): number {
  const value = Number(text);
  if (
    text.trim() === '' ||
    !Number.isFinite(value) ||
    value < min ||
    value > max ||
    (whole && !Number.isInteger(value))
  ) {
    throw new ReplayInputError(
      `--${name} ${JSON.stringify(text)}: expected a ${whole ? 'whole ' : ''}number from ${min} to ${max}`,
    );
  }
  return value;
}

function durationOption(name: string, text: string): number {
  if (/^\d+(\.\d+)?$/.test(text))
    throw new ReplayInputError(`--${name} ${JSON.stringify(text)}: give a unit, e.g. ${text}s`);
  try {
    return parseDuration(name, text);
  } catch (error) {
    if (error instanceof SluiceConfigError) throw new ReplayInputError(`--${error.message}`);
    throw error;
  }
}

/** `--trust-proxy`: `true`, a hop count, or addresses and subnets (`10.0.0.0/8,loopback`), as the adapters' `trustProxy`. */
function trustProxyOption(text: string): boolean | number | string {
  if (text === 'true' || text === 'false') return text === 'true';
  return /^\d+$/.test(text) ? Number(text) : text;
}
