// The fuzz suite (issue 16, item 3): every decoder of store bytes and of hook input, fed arbitrary bytes
// and mutations of valid input (fuzz-decoders.ts), and every file of a real store mutated in place then
// read by the operations that use it (fuzz-store.ts). Cases run and any defect go to `fuzz.json` under
// CKPT_RELIABILITY_OUT; CKPT_RELIABILITY_FULL=1 runs the full size.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bySize, writeFigures } from './figures.js';
import { createTally } from './fuzz-run.js';
import { registerDecoderFuzz } from './fuzz-decoders.js';
import { registerStoreFuzz } from './fuzz-store.js';

const tally = createTally();

describe('fuzz: decoders of store bytes and hook input', () => {
  registerDecoderFuzz(tally, bySize(150, 20_000));
});

describe('fuzz: store files read in place', () => {
  let base = '';
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'ckpt-fuzz-store-'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));
  registerStoreFuzz(tally, bySize(2, 60), () => base, bySize(0, 10));
});

describe('fuzz: summary', () => {
  it('found no defect', () => {
    expect(tally.defects).toEqual([]);
  });
});

afterAll(async () => {
  const figures: Record<string, number> = {};
  let total = 0;
  for (const [target, n] of Object.entries(tally.cases)) {
    figures[`cases.${target}`] = n;
    total += n;
  }
  figures['cases.total'] = total;
  figures.targets = Object.keys(tally.cases).length;
  figures.defects = tally.defects.length;
  await writeFigures({ suite: 'fuzz', figures, defects: tally.defects });
});
