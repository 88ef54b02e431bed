const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** Index of the quote closing the string opened at `open`, or -1 when the text ends first. */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    for (let j = at - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/**
 * Whether JSON text nests objects and arrays deeper than `maxDepth`, found by one linear scan without recursion, so
 * that a hostile body is refused before JSON.parse and the code after it (validation, logging, copying — much of it
 * recursive) ever see it. Brackets inside strings do not count; malformed text is left for JSON.parse to refuse.
 */
export function exceedsJsonDepth(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Strings (base64 payloads, mostly) are skipped with indexOf rather than scanned character by character.
      i = closingQuote(text, i);
      if (i < 0) return false;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}
