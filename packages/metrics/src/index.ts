export { prometheus } from './prometheus/prometheus';
export type { PrometheusOptions } from './prometheus/prometheus';
export { SluiceMetrics } from './counting/sluice-metrics';
export type { CountingOptions } from './counting/sluice-metrics';
export type { HotKey } from './hot-keys/space-saving';
export { dashboard } from './dashboard/dashboard';
export type { Dashboard, DashboardAuthorize, DashboardOptions } from './dashboard/dashboard';
export { isLoopbackRequest } from './dashboard/loopback';
export { openTelemetry } from './opentelemetry/opentelemetry';
export type {
  OpenTelemetryOptions,
  OtelAttributes,
  OtelInstrumentOptions,
  OtelMeter,
  OtelObservable,
} from './opentelemetry/opentelemetry';
