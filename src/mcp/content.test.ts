import { describe, expect, it } from 'vitest';
import { encodeContent } from './content.js';

describe('encodeContent', () => {
  it('returns UTF-8 text as text, cutting at a character boundary', () => {
    expect(encodeContent(Buffer.from('héllo'), 100)).toEqual({ encoding: 'utf8', content: 'héllo' });
    // 'h' + the first byte of 'é': the cut splits the character, so it is dropped, not base64'd.
    expect(encodeContent(Buffer.from('héllo'), 2)).toEqual({ encoding: 'utf8', content: 'h', truncated: true });
  });

  it('returns binary content (NUL bytes, invalid UTF-8) as base64', () => {
    const bin = Buffer.from([0x41, 0x00, 0x42]);
    expect(encodeContent(bin, 100)).toEqual({ encoding: 'base64', content: bin.toString('base64') });
    const invalid = Buffer.from([0xff, 0xfe, 0x41]);
    expect(encodeContent(invalid, 100).encoding).toBe('base64');
  });
});
