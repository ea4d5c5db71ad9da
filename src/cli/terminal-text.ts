// Text for a person's terminal (SECURITY promise 7): file names, prompts, titles and diffs come from
// the workspace and the agent and may carry control characters: escape codes that retitle the window,
// clear the screen or move the cursor to forge lines. Human output shows each one visibly (`\x1b`,
// C1 controls as `\u009b`). Line breaks and tabs stay, and so does a carriage return that ends a
// line (CRLF text). The colour codes ckpt itself writes stay too, when colours are on.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const OWN_COLOURS = /^\x1b\[(?:1|2|4|22|24|31|32|33|36|39|90)m/;

export function terminalText(text: string, colours: boolean): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (ch: string, at: number) => {
    if (ch === '\r' && text[at + 1] === '\n') return ch;
    if (ch === '\x1b' && colours && OWN_COLOURS.test(text.slice(at, at + 6))) return ch;
    const code = ch.charCodeAt(0);
    return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
