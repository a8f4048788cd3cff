import type { Bounds } from '../../fuzz/harness';

/**
 * The fuzzer's bounds for tests: the same memory bound, and a deadline ten times the fuzzer's hang threshold so
 * a loaded test machine does not turn a slow run into a failure (the bound still stops a real hang).
 */
export const TEST_BOUNDS: Bounds = { hangMs: 10_000, memoryBytes: 64 * 1024 * 1024 };
