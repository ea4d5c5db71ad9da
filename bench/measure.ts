// Timing: warm-up iterations, then measured runs, reported as the median. An iteration returns the
// milliseconds of its timed part only, so untimed setup (writing the next change) stays out.
import { performance } from 'node:perf_hooks';
import { flushIo } from './proc.js';

export interface Sample {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export interface RunPlan {
  warmup: number;
  runs: number;
  /** Flush dirty pages (`sync`, untimed) before every call, so no run pays for an earlier one's writeback. */
  flush?: boolean;
}

/** Milliseconds taken by `fn`. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function summarize(values: number[]): Sample {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), runs: values.length };
}

/** Runs `iteration(i)` warmup + runs times (i counts from 0 across both) and summarizes the measured ones. */
export async function measure(plan: RunPlan, iteration: (i: number) => Promise<number>): Promise<Sample> {
  const values: number[] = [];
  for (let i = 0; i < plan.warmup + plan.runs; i++) {
    if (plan.flush) await flushIo();
    const ms = await iteration(i);
    if (i >= plan.warmup) values.push(ms);
  }
  return summarize(values);
}

/**
 * Several series measured interleaved (run i of each series back to back), so slow drift of the
 * machine (page cache, writeback) hits every series alike; `before(i)` prepares run i (untimed). Series in `noWarmup` skip the warm-up
 * iterations (when the others have warmed the page cache for them). A series that throws stops; its error is
 * returned in place of its sample and the others go on.
 */
export async function measureInterleaved<K extends string>(
  plan: RunPlan,
  series: Record<K, ((i: number) => Promise<number>) | undefined>,
  before?: (i: number) => Promise<void>,
  noWarmup: NoInfer<K>[] = [],
): Promise<Record<K, Sample | Error | undefined>> {
  const keys = Object.keys(series) as K[];
  const values = new Map<K, number[]>(keys.map((k) => [k, []]));
  const failed = new Map<K, Error>();
  for (let i = 0; i < plan.warmup + plan.runs; i++) {
    if (before) await before(i);
    for (const k of keys) {
      const fn = series[k];
      if (!fn || failed.has(k) || (i < plan.warmup && noWarmup.includes(k))) continue;
      try {
        if (plan.flush) await flushIo();
        const ms = await fn(i);
        if (i >= plan.warmup) values.get(k)?.push(ms);
      } catch (err) {
        failed.set(k, err instanceof Error ? err : new Error(String(err)));
      }
    }
  }
  const out = {} as Record<K, Sample | Error | undefined>;
  for (const k of keys) {
    const v = values.get(k) ?? [];
    out[k] = failed.get(k) ?? (series[k] && v.length ? summarize(v) : undefined);
  }
  return out;
}
