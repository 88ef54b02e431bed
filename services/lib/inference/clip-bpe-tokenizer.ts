/** CLIP's byte→printable-character table (GPT-2 style), so BPE works on any UTF-8 text without unknown tokens. */
function bytesToUnicode(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const table: string[] = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    table[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  }
  return table;
}

const BYTE_CHARS = bytesToUnicode();
const WORD_PATTERN = /<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+/giu;
const START = '<|startoftext|>';
const END = '<|endoftext|>';

/**
 * CLIP's byte-level BPE tokenizer (OpenAI `simple_tokenizer`, as in Hugging Face `CLIPTokenizer`): lower-cased,
 * whitespace-collapsed text, split by CLIP's pattern, merged by rank, wrapped in start/end tokens and padded.
 * ftfy's mojibake repair is not reproduced (it only matters for broken input text).
 */
export class ClipBpeTokenizer {
  private readonly ranks = new Map<string, number>();
  private readonly cache = new Map<string, string[]>();
  readonly startId: number;
  readonly endId: number;

  /**
   * @param vocabulary token → id (Hugging Face `vocab.json`)
   * @param merges the merges file text (`merges.txt`: one "a b" pair per line, best first; `#` lines ignored)
   */
  constructor(
    private readonly vocabulary: Record<string, number>,
    merges: string,
    readonly maxLength = 77,
  ) {
    let rank = 0;
    for (const line of merges.split('\n')) {
      const pair = line.trim();
      if (pair.length === 0 || pair.startsWith('#')) continue;
      this.ranks.set(pair, rank++);
    }
    const startId = vocabulary[START];
    const endId = vocabulary[END];
    if (startId === undefined || endId === undefined) throw new Error(`CLIP vocabulary lacks ${START} or ${END}`);
    this.startId = startId;
    this.endId = endId;
  }

  /** Token ids: start, the text's tokens (truncated to fit), end; `maxLength` long in total at most. */
  encode(text: string): number[] {
    const cleaned = text.replace(/\s+/g, ' ').trim().toLowerCase();
    const ids = [this.startId];
    for (const match of cleaned.matchAll(WORD_PATTERN)) {
      const word = Array.from(new TextEncoder().encode(match[0]), (b) => BYTE_CHARS[b]).join('');
      for (const piece of this.bpe(word)) {
        const id = this.vocabulary[piece];
        if (id !== undefined) ids.push(id);
      }
    }
    ids.length = Math.min(ids.length, this.maxLength - 1);
    ids.push(this.endId);
    return ids;
  }

  private bpe(word: string): string[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    const chars = Array.from(word);
    let parts = [...chars.slice(0, -1), `${chars[chars.length - 1]}</w>`];
    while (parts.length > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i < parts.length - 1; i++) {
        const rank = this.ranks.get(`${parts[i]} ${parts[i + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = i;
        }
      }
      if (best < 0) break;
      const first = parts[best];
      const second = parts[best + 1];
      // Merge every occurrence of the best pair, left to right, as the reference does.
      const merged: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        if (i < parts.length - 1 && parts[i] === first && parts[i + 1] === second) {
          merged.push(first + second);
          i++;
        } else {
          merged.push(parts[i]);
        }
      }
      parts = merged;
    }
    if (this.cache.size < 10_000) this.cache.set(word, parts);
    return parts;
  }
}
