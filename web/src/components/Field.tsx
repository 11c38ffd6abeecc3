import type { ComponentChildren } from "preact";
import type { Problem } from "../api/client";
import { tKnown } from "../i18n";

/** The message of the problem's error on this field, if any: by the problem's code when it is not a plain
 * validation error (a secret in it) and the code is known, else as the API wrote it. */
export function fieldError(problem: Problem | null, field: string): string | undefined {
  const error = problem?.errors.find((e) => e.field === field || e.field.endsWith(`.${field}`));
  if (!problem || !error) return undefined;
  return (problem.code !== "validation_error" && tKnown(`field.${problem.code}`)) || error.message;
}

type Props = {
  id: string;
  label: string;
  hint?: ComponentChildren;
  error?: string;
  children: (describedBy: string | undefined, invalid: boolean) => ComponentChildren;
};

/** A labelled control with its hint (shown before typing) and its error from the API, next to it. */
export function Field({ id, label, hint, error, children }: Props) {
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div class={`field${error ? " invalid" : ""}`}>
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {children(described, Boolean(error))}
      {error && (
        <p class="error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
