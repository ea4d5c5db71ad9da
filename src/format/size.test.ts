import { describe, expect, it } from 'vitest';
import { parseSize } from './size.js';

describe('parseSize', () => {
  it('reads plain bytes and binary units', () => {
    expect(parseSize('1048576')).toBe(1048576);
    expect(parseSize('16M')).toBe(16 * 1024 * 1024);
    expect(parseSize('512k')).toBe(524288);
    expect(parseSize('1.5G')).toBe(1.5 * 1024 ** 3);
    expect(parseSize('2 MiB')).toBe(2 * 1024 ** 2);
  });
  it('refuses what is not a positive size', () => {
    for (const bad of ['', '0', '-1', '12Q', 'M', '1e9', 'abc']) expect(() => parseSize(bad)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
