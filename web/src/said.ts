// What the services write in English, in the customer's language. A code (a cancellation's or a failure's
// reason) is translated by its code; a sentence the services compose from data (an end warning, an
// extension's terms) by its known form, its figures formatted here; anything else (an operator's answer, a
// form not known here) is shown as written.
import { dateTime, t, tKnown, usd } from "./i18n";

type Form = [RegExp, (m: RegExpExecArray) => string | null];

// Kinds whose translated name says it all: their detail is not shown.
const SAID_BY_KIND = new Set(["created", "awaiting_payment", "payment_reported", "paid", "provisioning", "ready"]);

const DETAILS: Record<string, Form> = {
  cancelled: [/^(\w+)$/, ([, code]) => tKnown(`timeline.because.${code}`)],
  failed: [
    /^(\w+): [^]*?(; the payment is refunded to the balance)?$/,
    ([, code, refunded]) => {
      const because = tKnown(`timeline.because.${code}`);
      return because && (refunded ? `${because}; ${t("timeline.refunded")}` : because);
    },
  ],
  ended: [/^the node was reclaimed and wiped$/, () => t("timeline.detail.ended")],
  rental_ending: [
    /^the rental ends in (\d+) h \((\S+)\): export your results now$/,
    ([, hours, at]) => t("timeline.detail.rental_ending", { hours, date: dateTime(at) }),
  ],
  rental_extended: [/^the term now ends (\S+)$/, ([, at]) => t("timeline.detail.rental_extended", { date: dateTime(at) })],
  support_request: [/^(incident|extension|question) request \S+ sent to support$/, ([, kind]) => tKnown(`support.kind.${kind}`)],
  support_answered: [/^[^]*$/, ([text]) => answerText(text)],
  extension_confirmed: [
    /^extension \S+ confirmed: (\d+) more days for (\d+\.\d{2}) USD, to pay by (\S+); the end moves once paid$/,
    ([, days, price, at]) => t("timeline.detail.extension_confirmed", { days, price: usd(price), date: dateTime(at) }),
  ],
  extension_paid: [
    /^extension \S+ paid: the node is being extended by (\d+) days$/,
    ([, days]) => t("timeline.detail.extension_paid", { days }),
  ],
};

/** A timeline entry's detail in the customer's language; null when its kind's name says it all. */
export function timelineDetail({ kind, detail }: { kind: string; detail: string }): string | null {
  if (!detail || SAID_BY_KIND.has(kind)) return null;
  const [form, render] = DETAILS[kind] ?? [];
  const match = form?.exec(detail);
  return (match && render?.(match)) || detail;
}

// Support's answer to a confirmed extension starts with its terms; the operator's note, if any, follows.
const CONFIRMED =
  /^Confirmed: (\d+) more days for (\d+\.\d{2}) USD, to pay on the order page before (\S+)\. The new end counts once it is paid\.(\n[^]*)?$/;

/** An answer's text, its confirmation terms (support's own sentence) translated, the operator's words as written. */
export function answerText(text: string): string {
  const match = CONFIRMED.exec(text);
  if (!match) return text;
  const [, days, price, at, note] = match;
  return t("support.confirmed", { days, price: usd(price), date: dateTime(at) }) + (note ?? "");
}
