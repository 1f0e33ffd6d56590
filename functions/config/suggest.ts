/** "Did you mean" suggestions for misspelt keys and property names. */

/** Edit distance between two strings (Levenshtein; case-insensitive). */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[y.length] ?? 0;
}

/** The closest candidate to `word`, if one is close enough to be a likely typo. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // A third of the word's length (at least 1, at most 3) separates typos from different words.
  const allowed = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}

/** ` (did you mean "x"?)` or the empty string. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const suggestion = closest(word, candidates);
  return suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
}
