/**
 * JSONata, loaded on first use. An ingest whose `when` rules are all plain comparisons never evaluates JSONata
 * (functions/mapping/native-when.ts), and its module is a few ms of every cold start; `require()` keeps it in
 * the bundle but unevaluated until an expression is compiled.
 */
import type jsonata from 'jsonata';

let loaded: typeof jsonata | undefined;

/** The jsonata function, its module evaluated on the first call. */
export function loadJsonata(): typeof jsonata {
  loaded ??= require('jsonata') as typeof jsonata;
  return loaded;
}
