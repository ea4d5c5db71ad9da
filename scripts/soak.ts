// `npm run soak -- --procs 8 --seconds 60 [--seed N] [--gc-grace-ms MS] [--keep]`: the soak of
// issue 16 (test/reliability/soak-run.ts) from the command line. Prints operations per kind, errors
// per code and the checks; exits 1 on any failure. With CKPT_RELIABILITY_OUT it also writes soak.json.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runSoak, soakFigures } from '../test/reliability/soak-run.js';
import { writeFigures } from '../test/reliability/figures.js';

const { values } = parseArgs({
  options: {
    procs: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string' },
    'gc-grace-ms': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const dir = await mkdtemp(join(tmpdir(), 'ckpt-soak-'));
const report = await runSoak({
  dir,
  procs: Number(values.procs),
  seconds: Number(values.seconds),
  ...(values.seed ? { seed: Number(values.seed) } : {}),
  ...(values['gc-grace-ms'] ? { gcGraceMs: Number(values['gc-grace-ms']) } : {}),
});
const table = (title: string, rows: Record<string, number>): void => {
  console.log(title);
  for (const [k, n] of Object.entries(rows).sort()) console.log(`  ${k.padEnd(34)} ${n}`);
};
console.log(`soak: ${report.procs} processes x ${report.seconds} s, seed ${report.seed}, store ${dir}`);
table('operations', report.ops);
table('errors (operation.code)', report.errors);
table('effects', report.effects);
table('checks', report.checks);
console.log(report.failures.length === 0 ? 'no failure' : `${report.failures.length} FAILURES:`);
for (const f of report.failures) console.log(`  - ${f}`);
await writeFigures(soakFigures(report));
if (!values.keep) await rm(dir, { recursive: true, force: true });
process.exit(report.failures.length === 0 ? 0 : 1);
