// Messages, the chosen language and the formats that go with it (amounts, dates, durations, plurals).
//
// Two catalogues per language make one: the page's own words (messages/<language>.ts) and the services' sentences
// (libs/contracts' texts/<language>.json: payment statuses, ledger reasons, timeline entries, network names),
// which notify sends to Telegram and orders writes as the timeline's English `detail`, in the same words.
import { signal } from "@preact/signals";
import enServices from "../../libs/contracts/kernodeck_contracts/texts/en.json";
import idServices from "../../libs/contracts/kernodeck_contracts/texts/id.json";
import viServices from "../../libs/contracts/kernodeck_contracts/texts/vi.json";
import { en, type PageKey, type Text } from "./messages/en";
import { id } from "./messages/id";
import { vi } from "./messages/vi";

export type Key = PageKey | keyof typeof enServices;
export type Vars = Record<string, string | number>;
export type { Text };

export const LANGUAGES: Record<"en" | "vi" | "id", Record<Key, Text>> = {
  en: { ...en, ...enServices },
  vi: { ...vi, ...viServices },
  id: { ...id, ...idServices },
};
export type Language = keyof typeof LANGUAGES;

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

/** A message with its values put in; a plural takes the form the language's rule gives its count. */
export function t(key: Key, vars: Vars = {}): string {
  const text = LANGUAGES[language.value][key];
  const form =
    typeof text === "string"
      ? text
      : (text as Record<string, string>)[new Intl.PluralRules(LOCALES[language.value]).select(Number(vars[text.count]))] ??
        text.other;
  return form.replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name] ?? `{${name}}`));
}

/** A key the API decides (an error code, a resource): its message when there is one, else the raw text. */
export function tOr(key: string, fallback: string): string {
  return key in LANGUAGES.en ? t(key as Key) : fallback;
}

/** A code's message when there is one, else null. */
export function tKnown(key: string): string | null {
  return key in LANGUAGES.en ? t(key as Key) : null;
}

/**
 * A services' sentence (a timeline entry, a support answer) with its parameters shown by their names, as the
 * services' catalogue says: `network` by its name, `*_at` and `due_by` as a local time, `*_usd` as money.
 */
export function said(key: Key, params: Vars): string {
  const shown: Vars = {};
  for (const [name, value] of Object.entries(params)) {
    if (name === "network") shown[name] = networkName(String(value));
    else if (name.endsWith("_at") || name === "due_by") shown[name] = dateTime(String(value));
    else if (name.endsWith("_usd")) shown[name] = usd(String(value));
    else shown[name] = value;
  }
  return t(key, shown);
}

export const networkName = (network: string) => tOr(`network.${network}`, network);

/** "USDT on Tron": an asset and the network it is sent on. */
export const methodName = (asset: string, network: string) => t("method", { asset, network: networkName(network) });

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
