// Deterministic English-like prose of a given size for the text model's bench: sentences of 6 to 18
// words from a few hundred nouns, verbs and adjectives, so the model has real terms, phrases and
// sentence similarities to work on (a repeated paragraph would make every sentence alike).
const NOUNS =
  'harbour boat sea gull net rope lighthouse storm cloud rain deck quay fisherman brother mother sister village street market bread window door lamp road hill field river bridge train station city tower bell clock square church garden tree forest path stone wall roof chimney fire kitchen table letter photograph camera film light shadow night morning evening winter summer wind wave shore sand beach cliff island ship sail engine crew captain map compass coat hat glove shoe bicycle car truck horse dog cat bird fish knife cup plate bottle glass chair bed mirror book song voice face hand eye smile tear'.split(
    ' ',
  );
const VERBS =
  'watches carries pulls throws opens closes finds loses follows leaves crosses climbs waits lights holds drops lifts paints reads writes calls sings builds fixes cleans cooks sells buys counts checks turns'.split(
    ' ',
  );
const ADJS =
  'old grey quiet restless heavy silver small wide narrow bright dark cold warm wet patient tired young distant empty crowded broken new red blue green wooden iron'.split(
    ' ',
  );
const DETS = ['the', 'a', 'her', 'his', 'their'];

/** About `bytes` characters of prose, the same every time. */
export function benchText(bytes: number): string {
  let seed = 12345;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pick = <T>(xs: T[]) => xs[next(xs.length)];
  const out: string[] = [];
  let size = 0;
  while (size < bytes) {
    const words: string[] = [
      pick(DETS),
      pick(ADJS),
      pick(NOUNS),
      pick(VERBS),
      pick(DETS),
      pick(NOUNS),
    ];
    for (let extra = next(4); extra > 0; extra--)
      words.push(pick(['near', 'past', 'under', 'beside']), pick(DETS), pick(ADJS), pick(NOUNS));
    const s = words.join(' ');
    const sentence = `${s[0].toUpperCase()}${s.slice(1)}.`;
    out.push(sentence);
    size += sentence.length + 1;
  }
  return out.join(' ').slice(0, bytes);
}
