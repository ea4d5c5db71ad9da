// `npm run test:agents` (scripts/test-agents.sh): the real-agent suites under test/agents. They start
// real agent CLIs (minutes in all), so they are not part of `npm test`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/agents/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // The agents mostly wait (on the fake model, hooks, the disk): two files at a time on 2 cores.
    maxWorkers: 2,
  },
});
