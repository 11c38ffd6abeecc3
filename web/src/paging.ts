// A list the API pages ({items, next_cursor}): its first page, then each next page appended on demand.
import { useEffect, useRef, useState } from "preact/hooks";
import type { Problem } from "./api/client";

/** Items per page the pages ask for. */
export const PAGE_SIZE = 20;

export type PageQuery = { limit: number; cursor?: string };
type Page<T> = { items: T[]; next_cursor: string | null };

export type Paged<T> = {
  items: T[] | null; // null until the first page is in
  more: (() => void) | null; // null when there is no next page
  busy: boolean;
  reload: () => Promise<void>;
};

export function usePaged<T>(load: (query: PageQuery) => Promise<Page<T>>, onProblem: (p: Problem) => void): Paged<T> {
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // A reload starts the list over: a next page asked for before it must not be appended after it.
  const generation = useRef(0);

  const loadPage = async (after: string | null, append: boolean) => {
    const mine = ++generation.current;
    setBusy(true);
    try {
      const page = await load(after ? { limit: PAGE_SIZE, cursor: after } : { limit: PAGE_SIZE });
      if (mine !== generation.current) return;
      setItems((shown) => (append && shown ? [...shown, ...page.items] : page.items));
      setCursor(page.next_cursor);
    } catch (problem) {
      if (mine === generation.current) onProblem(problem as Problem);
    } finally {
      if (mine === generation.current) setBusy(false);
    }
  };
  const reload = () => loadPage(null, false);
  useEffect(() => {
    reload();
  }, []);
  return { items, busy, reload, more: cursor ? () => loadPage(cursor, true) : null };
}
