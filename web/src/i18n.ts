// Messages, the chosen language and the formats that go with it (amounts, dates, durations).
import { signal } from "@preact/signals";
import { en, type Key } from "./messages/en";
import { id } from "./messages/id";
import { vi } from "./messages/vi";

export const LANGUAGES = { en, vi, id } as const;
export type Language = keyof typeof LANGUAGES;
export type { Key };

const STORED = "kd_language";
const LOCALES: Record<Language, string> = { en: "en-US", vi: "vi-VN", id: "id-ID" };

/** The stored choice, else the first of the browser's languages that we have, else English. */
export function initialLanguage(): Language {
  const stored = localStorage.getItem(STORED);
  if (stored && stored in LANGUAGES) return stored as Language;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = tag.split("-")[0].toLowerCase();
    if (base in LANGUAGES) return base as Language;
  }
  return "en";
}

export const language = signal<Language>(initialLanguage());

export function setLanguage(next: Language): void {
  localStorage.setItem(STORED, next);
  document.documentElement.lang = next;
  language.value = next;
}

export function t(key: Key, vars: Record<string, string | number> = {}): string {
  const text: string = LANGUAGES[language.value][key];
  return text.replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name] ?? `{${name}}`));
}

/** A key the API decides (a status, a timeline kind): its message when there is one, else the raw text. */
export function tOr(key: string, fallback: string): string {
  return key in en ? t(key as Key) : fallback;
}

/** A code's message when there is one, else null. */
export function tKnown(key: string): string | null {
  return key in en ? t(key as Key) : null;
}

/** "1234.50" (the API's USD text) as money in the current language. */
export function usd(text: string): string {
  return new Intl.NumberFormat(LOCALES[language.value], { style: "currency", currency: "USD" }).format(Number(text));
}

export function dateTime(rfc3339: string): string {
  return new Intl.DateTimeFormat(LOCALES[language.value], { dateStyle: "medium", timeStyle: "short" }).format(
    new Date(rfc3339),
  );
}

export function integer(n: number): string {
  return new Intl.NumberFormat(LOCALES[language.value]).format(n);
}

/** 3725 s -> "1:02:05" (hours only when there are some). */
export function countdown(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const two = (n: number) => String(n).padStart(2, "0");
  const h = Math.floor(s / 3600);
  const rest = `${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
  return h ? `${h}:${rest}` : rest;
}
