import { describe, expect, it } from 'vitest';
import { pathText } from './path-text.js';

describe('pathText', () => {
  it('shows plain names as they are, and quotes a name with a line break, a control character, a quote or a backslash', () => {
    expect(pathText('src/main.ts')).toBe('src/main.ts');
    expect(pathText('dir with spaces/ünïcødé.txt')).toBe('dir with spaces/ünïcødé.txt');
    expect(pathText('x\n  delete src/main.ts')).toBe('"x\\n  delete src/main.ts"');
    expect(pathText('a\rb\tc')).toBe('"a\\rb\\tc"');
    expect(pathText('c\x1b[31mred')).toBe('"c\\u001b[31mred"');
    expect(pathText('c\u009bx\u2028y')).toBe('"c\\u009bx\\u2028y"');
    expect(pathText('say "hi"')).toBe('"say \\"hi\\""');
    expect(pathText('back\\slash')).toBe('"back\\\\slash"');
    // Never a line break in what it returns, whatever the name.
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    for (let c = 0; c < 0x3000; c++) expect(pathText(`a${String.fromCharCode(c)}b`)).not.toMatch(/[\n\r\u2028\u2029\x1b\x9b]/);
  });
});
