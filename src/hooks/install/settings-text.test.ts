import { describe, expect, it } from 'vitest';
import { formatSettings, parseSettings } from './settings-text.js';

describe('settings files', () => {
  it('says where a file is not JSON, and that comments are the reason when it holds some', () => {
    const gemini = '{\n  // gemini reads comments\n  "tools": {"enableHooks": true}\n}\n';
    expect(() => parseSettings(gemini, 'settings.json')).toThrow(/not valid JSON at line 2, column 3 .*holds comments.*left unchanged/);
    // A url's // is no comment: no hint when the file fails for another reason.
    expect(() => parseSettings('{"url": "http://x",}', 's.json')).toThrow(/^s\.json is not valid JSON at line 1, column 20 \(.*\); it was left unchanged$/);
  });

  it('writes back in the file\'s indentation and line endings', () => {
    const text = '{\r\n    "a": [1, 2]\r\n}';
    const parsed = parseSettings(text, 's.json');
    expect(formatSettings(parsed)).toBe('{\r\n    "a": [\r\n        1,\r\n        2\r\n    ]\r\n}');
  });
});
