// Printed next-step commands keep the store they were given: a folder made absolute, a shared store's
// URL as a URL without its password.
import { describe, expect, it } from 'vitest';
import type { CliContext } from './context.js';
import { commandHint } from './hint.js';

const ctx = (store?: string): CliContext => ({ io: { cwd: '/work/proj', invokedAs: 'ckpt' }, flags: { store } }) as unknown as CliContext;

describe('commandHint', () => {
  it('makes a store folder absolute', () => {
    expect(commandHint(ctx('st'), ['restore', '2.1'])).toBe('ckpt --store /work/proj/st restore 2.1');
  });

  it('keeps a shared store URL as a URL (it read /cwd/postgres:/…), its password hidden', () => {
    const hint = commandHint(ctx('postgres://ckpt:s3cret@db.internal:5432/ckpt?blobs=s3://team-ckpt'), ['restore', '2.1']);
    expect(hint).toBe("ckpt --store 'postgres://ckpt:***@db.internal:5432/ckpt?blobs=s3://team-ckpt' restore 2.1");
    expect(hint).not.toContain('s3cret');
  });
});
