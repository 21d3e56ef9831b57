import type { a } from './a';

export const b = (): number => 1;
export type A = typeof a;
