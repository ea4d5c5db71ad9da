import { describe, expect, it } from 'vitest';
import { terminalText } from './terminal-text.js';

describe('terminalText', () => {
  it('shows control characters visibly: OSC titles, screen clears, bells, lone carriage returns, C1 controls', () => {
    expect(terminalText('evil\x1b]0;pwned\x07name', false)).toBe('evil\\x1b]0;pwned\\x07name');
    expect(terminalText('p\x1b[2J', true)).toBe('p\\x1b[2J');
    expect(terminalText('fake\roverwritten\n', false)).toBe('fake\\x0doverwritten\n');
    expect(terminalText('a\u009b31mb\x7f', false)).toBe('a\\u009b31mb\\x7f');
  });

  it('keeps line breaks, tabs, CRLF line ends, non-ASCII text, and its own colour codes only when colours are on', () => {
    expect(terminalText('a\tb\r\nc\nünïcødé ✓', false)).toBe('a\tb\r\nc\nünïcødé ✓');
    expect(terminalText('\x1b[1mbold\x1b[22m \x1b[31mred\x1b[39m', true)).toBe('\x1b[1mbold\x1b[22m \x1b[31mred\x1b[39m');
    expect(terminalText('\x1b[31mred\x1b[39m', false)).toBe('\\x1b[31mred\\x1b[39m');
    // Colours on: an SGR code ckpt never writes (conceal) is still shown.
    expect(terminalText('\x1b[8mhidden', true)).toBe('\\x1b[8mhidden');
  });
});
