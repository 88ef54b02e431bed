const rules = new Intl.PluralRules('en');

/** A count with its noun in the matching number: `counted(1, 'embedding')` → "1 embedding", 2 → "2 embeddings". */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${rules.select(count) === 'one' ? noun : plural}`;
}
