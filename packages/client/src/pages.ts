// Lists as async iterables over every page (keyset pagination: a page never repeats or skips a row).
import type { Page } from './types.js';

export interface PagedList<T> extends AsyncIterable<T> {
  /** The pages themselves, for callers that want `nextCursor`. */
  pages(): AsyncIterable<Page<T>>;
  /** Every item, collected (mind the size of the list). */
  toArray(): Promise<T[]>;
}

export function paged<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
): PagedList<T> {
  async function* pages(): AsyncGenerator<Page<T>> {
    let cursor: string | undefined;
    do {
      const page = await fetchPage(cursor);
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
  async function* items(): AsyncGenerator<T> {
    for await (const page of pages()) yield* page.data;
  }
  return {
    [Symbol.asyncIterator]: items,
    pages,
    async toArray() {
      const all: T[] = [];
      for await (const item of items()) all.push(item);
      return all;
    },
  };
}
