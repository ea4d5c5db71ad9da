// Runs fast-check properties for the fuzz suite and keeps its figures: cases run per target, and
// every failing property as a defect (its target, the shrunk counterexample and the error). A failure
// does not stop the other targets: the suite reports them all, then fails.
import fc from 'fast-check';
import { CkptError } from '../../src/index.js';

export interface FuzzTally {
  cases: Record<string, number>;
  defects: string[];
}

export function createTally(): FuzzTally {
  return { cases: {}, defects: [] };
}

function record(tally: FuzzTally, target: string, details: fc.RunDetails<unknown>): void {
  tally.cases[target] = (tally.cases[target] ?? 0) + details.numRuns;
  if (details.failed) {
    const err = details.errorInstance as Error | undefined;
    const example = JSON.stringify(details.counterexample, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v))?.slice(0, 600);
    tally.defects.push(`${target}: ${(err?.message ?? String(err)).split('\n')[0]!.slice(0, 400)} — counterexample ${example} (seed ${details.seed})`);
  }
}

export function checkSync<Ts extends [unknown, ...unknown[]]>(tally: FuzzTally, target: string, prop: fc.IProperty<Ts>, numRuns: number): void {
  record(tally, target, fc.check(prop, { numRuns }) as fc.RunDetails<unknown>);
}

export async function checkAsync<Ts extends [unknown, ...unknown[]]>(tally: FuzzTally, target: string, prop: fc.IAsyncProperty<Ts>, numRuns: number): Promise<void> {
  record(tally, target, (await fc.check(prop, { numRuns })) as fc.RunDetails<unknown>);
}

/**
 * Runs `fn`: returns 'ok' or the CkptError code when the code is one of `allowed`; throws on anything
 * else (a raw TypeError, INTERNAL, an unexpected code), so the property fails with the reason.
 */
export function expectCode<T>(what: string, allowed: readonly string[], fn: () => T): T | string {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof CkptError)) throw new Error(`${what}: not a CkptError: ${(err as Error)?.stack ?? String(err)}`);
    if (!allowed.includes(err.code)) throw new Error(`${what}: code ${err.code} (expected ${allowed.join('/')}): ${err.message}`);
    return err.code;
  }
}

export async function expectCodeAsync<T>(what: string, allowed: readonly string[] | 'any-but-internal', fn: () => Promise<T>): Promise<T | string> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof CkptError)) throw new Error(`${what}: not a CkptError: ${(err as Error)?.stack ?? String(err)}`);
    if (allowed === 'any-but-internal' ? err.code === 'INTERNAL' : !allowed.includes(err.code)) {
      throw new Error(`${what}: code ${err.code}: ${err.message}`);
    }
    return err.code;
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: hung for ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}
