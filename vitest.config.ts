// Test tiers (README "Development"): `npm test` runs the fast, thorough suite (<= 3 minutes on a 2-core
// machine); `npm run test:long` runs only the long suites below (full reliability runs, history walks,
// browsers, crash loops), `npm run test:full` both. Real agent binaries (`test/agents/`) run only in
// `npm run test:agents`, which has its own config.
import { configDefaults, defineConfig } from 'vitest/config';

/** Long suites: run by `npm run test:long` / `test:full` and CI, not by `npm test`. */
export const LONG_SUITES = [
  '**/*.full.test.ts',
  'test/history-oracle.test.ts',
  'test/scan-watched-history.test.ts',
  'test/crash-restore.test.ts',
  'test/http-crash.test.ts',
  'test/store-mutation.fuzz.test.ts',
  'test/web-timeline.browser.test.ts',
  'test/reliability/faults.test.ts',
  'test/reliability/kills.test.ts',
  'test/reliability/fuzz.test.ts',
  'test/reliability/soak.test.ts',
];

// A test file named on the command line always runs, whatever its tier.
const named = process.argv.some((a) => /\.test\.ts$/.test(a));
const tier = process.env.CKPT_TEST_TIER ?? (named ? 'full' : 'fast');
const include = tier === 'long' ? LONG_SUITES : ['src/**/*.test.ts', 'test/**/*.test.ts'];
const exclude = [...configDefaults.exclude, 'test/agents/**', ...(tier === 'fast' ? LONG_SUITES : [])];

export default defineConfig({
  test: {
    include,
    exclude,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The fast suite's files share their workers instead of each importing the library afresh
    // (import time summed over files 102 s of a 209 s run, 2026-12-06); the setup file puts back
    // what a file leaves in process.env, the current folder and the umask. The long suites (kill
    // loops, soaks) stay isolated: few files, and each starts from a clean process.
    isolate: tier !== 'fast',
    setupFiles: ['test/setup/property-replay.ts', ...(tier === 'fast' ? ['test/setup/process-state.ts'] : [])],
    // Most tests wait on child processes and the disk, so more workers than cores keep a 2-core
    // machine busy (vitest's default is one fewer worker than cores: a single worker here). The fast
    // suite took 192 s with two and 160 s with three, back to back on a quiet 2-core machine
    // (2026-12-06); the long suites (kill loops, soaks) keep two, their timings are tighter.
    maxWorkers: tier === 'fast' ? 3 : 2,
  },
});
