// Counts in human text: "1 event", "2 events" (a count of one never reads as a plural).
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
