// Live data without a reload: poll, quickly while something is about to change, backing off while nothing does.
import { useEffect, useRef, useState } from "preact/hooks";

export const FAST_MS = 1000;
export const SLOW_MAX_MS = 8000;

/**
 * `load` again and again until `done(value)`; every FAST_MS while `urgent(value)` (a transfer is on its way),
 * else backing off (x1.5, up to SLOW_MAX_MS) for as long as the answer does not change.
 */
export function useLive<T>(load: () => Promise<T>, urgent: (v: T) => boolean, done: (v: T) => boolean, key: unknown) {
  const [value, setValue] = useState<T | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const poke = useRef<() => void>(() => {});
  useEffect(() => {
    let stopped = false;
    let timer = 0;
    let delay = FAST_MS;
    let last = "";
    const tick = async () => {
      window.clearTimeout(timer);
      let next: T | null = null;
      try {
        next = await load();
        setFailure(null);
      } catch (error) {
        setFailure(error);
      }
      if (stopped) return;
      if (next !== null) {
        const text = JSON.stringify(next);
        delay = text !== last || urgent(next) ? FAST_MS : Math.min(delay * 1.5, SLOW_MAX_MS);
        last = text;
        setValue(next);
        if (done(next)) return;
      } else {
        delay = Math.min(delay * 2, SLOW_MAX_MS);
      }
      timer = window.setTimeout(tick, delay);
    };
    poke.current = () => {
      delay = FAST_MS;
      tick();
    };
    tick();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [key]);
  return { value, failure, refresh: () => poke.current() };
}

/** Seconds until `at`, once a second. */
export function useSecondsUntil(at: string): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [at]);
  return (new Date(at).getTime() - now) / 1000;
}
