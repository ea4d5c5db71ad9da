// File content over MCP: valid UTF-8 without NUL bytes is text, anything else base64; long content is
// cut to a byte budget (at a character boundary for text) and says so.
const decoder = new TextDecoder('utf-8', { fatal: true });

export interface EncodedContent {
  encoding: 'utf8' | 'base64';
  content: string;
  truncated?: true;
}

export function encodeContent(data: Buffer, maxBytes: number): EncodedContent {
  const truncated = data.length > maxBytes;
  const slice = truncated ? data.subarray(0, maxBytes) : data;
  const text = asText(slice, truncated);
  if (text !== undefined) return { encoding: 'utf8', content: text, ...(truncated ? { truncated: true } : {}) };
  return { encoding: 'base64', content: slice.toString('base64'), ...(truncated ? { truncated: true } : {}) };
}

/** The text of `data`, or undefined when it is binary; a cut slice may end inside a character. */
export function asText(data: Buffer, cut = false): string | undefined {
  if (data.includes(0)) return undefined;
  for (let drop = 0; drop <= (cut ? 3 : 0) && drop <= data.length; drop++) {
    try {
      return decoder.decode(data.subarray(0, data.length - drop));
    } catch {
      // try a shorter slice: the cut may have split a multi-byte character
    }
  }
  return undefined;
}
