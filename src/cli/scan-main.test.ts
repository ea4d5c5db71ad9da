import { describe, expect, it } from 'vitest';
import { isScanCall } from './scan-main.js';

describe('isScanCall (bin/ckpt.js routes these to the lean scan entry)', () => {
  it('is true when the command is scan, whatever global flags come before or after it', () => {
    for (const argv of [
      ['scan'],
      ['--json', 'scan'],
      ['--store', '/s', '--workspace', '/w', '--session', 'scan', 'scan', '--tool', 'Bash'],
      ['--store=/s', 'scan', '--json', '--budget', '100'],
      ['--max-file-size', '1M', '--refuse-oversize', 'scan'],
      ['scan', '--bogus'], // commander reports it, exactly as the full CLI does
    ]) {
      expect(isScanCall(argv), argv.join(' ')).toBe(true);
    }
  });

  it('is false for help, the version, other commands, and a scan that is only a flag value', () => {
    for (const argv of [
      [],
      ['scan', '--help'],
      ['-h', 'scan'],
      ['--version', 'scan'],
      ['scan', '-V'],
      ['help', 'scan'],
      ['session', 'new', '--title', 'scan'],
      ['--session', 'scan', 'log'],
      ['--store', 'scan'],
      ['--', 'scan'],
      ['log', 'scan'],
    ]) {
      expect(isScanCall(argv), argv.join(' ')).toBe(false);
    }
  });
});
