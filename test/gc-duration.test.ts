// Durations (`--grace`, `--older-than`, CKPT_KEEP_AGE) parse strictly: every well-formed spelling to
// its exact milliseconds, everything else to INVALID_ARGUMENT.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DURATION_UNITS, formatDuration, parseDuration, type DurationUnit } from '../src/format/duration.js';
import { isCkptError } from '../src/errors.js';

const units = Object.keys(DURATION_UNITS) as DurationUnit[];
const WELL_FORMED = /^(0|[1-9][0-9]{0,15})(ms|s|m|h|d|w)$/;

describe('parseDuration', () => {
  it('parses the documented examples', () => {
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('30d')).toBe(2_592_000_000);
    expect(parseDuration('0s')).toBe(0);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1w')).toBe(604_800_000);
  });

  it('maps every number and unit to number x unit', () => {
    fc.assert(
      fc.property(fc.nat({ max: 1_000_000 }), fc.constantFrom(...units), (n, unit) => {
        expect(parseDuration(`${n}${unit}`)).toBe(n * DURATION_UNITS[unit]);
      }),
    );
  });

  it('round-trips through formatDuration', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10 ** 12 }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });

  it('rejects anything else with INVALID_ARGUMENT', () => {
    for (const bad of ['', '15', 'm', '15 m', ' 15m', '15m ', '-1s', '+1s', '1.5h', '015m', '1e3s', '15M', '1h30m', '15min', '0x10s', '١٥m', '99999999999999999d']) {
      expect(() => parseDuration(bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (text) => {
        let ok: boolean;
        try {
          parseDuration(text);
          ok = true;
        } catch (err) {
          expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
          ok = false;
        }
        expect(ok).toBe(WELL_FORMED.test(text));
      }),
    );
  });
});
