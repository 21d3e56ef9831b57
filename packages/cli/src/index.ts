export { main, EXIT } from './main';
export type { CommandIo } from './main';
export { replay, MAX_LINE_ERRORS } from './replay/replay';
export type {
  LineError,
  LogInput,
  PatternInput,
  PolicyResult,
  ReplayOptions,
  ReplayResult,
} from './replay/replay';
export type { WorstSecond } from './replay/policy-tally';
export { policyOptions } from './replay/policy-spec';
export { ReplayInputError } from './errors';
export { PATTERNS, PATTERN_EPOCH_MS } from './patterns/patterns';
export type { PatternName, PatternOptions } from './patterns/patterns';
export { LOG_FORMATS } from './input/log-formats';
export type { LogFormat } from './input/log-formats';
export { htmlReport } from './charts/html-report';
export { policySvgFiles } from './charts/write-charts';
export { textReport } from './report/text-report';
export { jsonReport } from './report/json-report';
export type { Series, Outcome } from './replay/series';
export { OUTCOMES } from './replay/series';
