/** The cameras and runs captions have come from, by their stored names. */
export interface KnownSources {
  cameras: readonly string[];
  runs: readonly string[];
}

/** The sources a question names, by their stored names. */
export interface SourceMentions {
  cameras: string[];
  runs: string[];
}

/** Lower case, every run of non-alphanumerics one space: "Front-Door_Cam" and "front door cam" compare equal. */
export function normalizeName(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Names found in the question as whole words, longest first; a name inside a longer found name is not counted. */
function mentioned(question: string, names: readonly string[]): string[] {
  const found: string[] = [];
  const taken: string[] = [];
  const keyed = names.map((name) => ({ name, key: normalizeName(name) }));
  for (const { name, key } of keyed.sort((a, b) => b.key.length - a.key.length)) {
    if (key.length === 0 || !` ${question} `.includes(` ${key} `)) continue;
    if (taken.some((longer) => ` ${longer} `.includes(` ${key} `))) continue;
    taken.push(key);
    found.push(name);
  }
  return found;
}

/**
 * The known cameras and runs a question names, matched as whole words, case and punctuation ignored ("what did the
 * front door camera see" names camera `front-door`). Only known names count: a word after "camera" is not guessed.
 */
export function findSourceMentions(question: string, known: KnownSources): SourceMentions {
  const text = normalizeName(question);
  return { cameras: mentioned(text, known.cameras), runs: mentioned(text, known.runs) };
}
