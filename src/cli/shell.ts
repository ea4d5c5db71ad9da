// Shell quoting for commands the CLI prints for people to paste (undo hints): POSIX sh single quotes,
// only where a word needs them.

export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export function shellCommand(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
