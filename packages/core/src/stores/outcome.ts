/** Who is told how a store call ended: its answer, or its failure; one of the two, once. */
export interface Outcome<T> {
  answered(value: T): void;
  failed(error: unknown): void;
  /**
   * `performance.now()` when the caller asked, when it keeps one (a guarded call: its deadline
   * starts there); the store then reads no clock of its own for the request's deadline.
   */
  readonly startedAt?: number;
}
