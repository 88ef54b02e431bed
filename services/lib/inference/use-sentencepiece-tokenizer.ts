/** One vocabulary entry of a sentencepiece unigram model: the piece and its log-probability score. */
export type VocabularyEntry = [piece: string, score: number];

const WORD_SEPARATOR = '\u2581';
/** The first ids are control symbols (unk, <s>, </s>, extras) that never match text. */
const RESERVED_SYMBOLS = 6;
const UNKNOWN_ID = 0;

interface TrieNode {
  children: Map<string, TrieNode>;
  id: number;
  score: number;
  length: number;
}

function newNode(): TrieNode {
  return { children: new Map(), id: -1, score: 0, length: 0 };
}

/**
 * Sentencepiece unigram tokenizer as used by Universal Sentence Encoder lite: NFKC, spaces become "▁", then the
 * Viterbi segmentation with the highest total score. A port of `@energetic-ai/embeddings@0.2.0` (itself from
 * tfjs-models), with piece lengths counted in code points rather than UTF-16 units.
 */
export class UseSentencePieceTokenizer {
  private readonly root = newNode();
  private readonly pieceLengths: Int32Array;
  /** Id used for text that yields no piece at all, so every sentence keeps a row in the batch. */
  readonly emptyTextId: number;

  constructor(vocabulary: VocabularyEntry[]) {
    this.pieceLengths = new Int32Array(vocabulary.length);
    this.pieceLengths[UNKNOWN_ID] = 1;
    for (let id = RESERVED_SYMBOLS; id < vocabulary.length; id++) {
      const [piece, score] = vocabulary[id];
      let node = this.root;
      let length = 0;
      for (const symbol of piece) {
        let child = node.children.get(symbol);
        if (!child) {
          child = newNode();
          node.children.set(symbol, child);
        }
        node = child;
        length++;
      }
      node.id = id;
      node.score = score;
      node.length = length;
      this.pieceLengths[id] = length;
    }
    this.emptyTextId = this.root.children.get(WORD_SEPARATOR)?.id ?? UNKNOWN_ID;
  }

  /** Token ids of one text; consecutive unknown symbols collapse into one unknown id. */
  encode(text: string): number[] {
    const normalized = text.normalize('NFKC');
    if (normalized.length === 0) return [];
    const symbols = Array.from(WORD_SEPARATOR + normalized.replace(/ /g, WORD_SEPARATOR));
    const n = symbols.length;
    // Candidates ending at each position, in ascending start order (the order the reference visits them).
    const ending: { start: number; id: number; score: number }[][] = Array.from({ length: n + 1 }, () => []);
    for (let start = 0; start < n; start++) {
      let node = this.root.children.get(symbols[start]);
      let matched = false;
      for (let end = start + 1; node; end++) {
        if (node.id >= 0) {
          ending[end].push({ start, id: node.id, score: node.score });
          matched = true;
        }
        node = end < n ? node.children.get(symbols[end]) : undefined;
      }
      if (!matched) ending[start + 1].push({ start, id: UNKNOWN_ID, score: 0 });
    }
    const best = new Float64Array(n + 1);
    const chosen = new Int32Array(n + 1);
    for (let end = 1; end <= n; end++) {
      for (const candidate of ending[end]) {
        const score = candidate.score + best[candidate.start];
        // `best === 0` means "unset" in the reference; kept so ties and zero scores resolve identically.
        if (best[end] === 0 || score >= best[end]) {
          best[end] = score;
          chosen[end] = candidate.id;
        }
      }
    }
    const reversed: number[] = [];
    for (let position = n; position > 0; position -= this.pieceLengths[chosen[position]]) {
      reversed.push(chosen[position]);
    }
    const ids: number[] = [];
    for (let i = reversed.length - 1; i >= 0; i--) {
      const id = reversed[i];
      if (id === UNKNOWN_ID && ids.length > 0 && ids[ids.length - 1] === UNKNOWN_ID) continue;
      ids.push(id);
    }
    return ids;
  }
}
