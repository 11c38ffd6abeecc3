import type { Problem } from "../api/client";
import { tOr, t } from "../i18n";

/** What went wrong, in the customer's language, with what to do next when the code says it. */
export function problemText(problem: Problem): string {
  if (problem.code === "network_error") return t("error.network");
  if (problem.code === "validation_error") return t("error.validation");
  return tOr(`error.${problem.code}`, t("error.generic", { detail: problem.detail || problem.title }));
}

export function ProblemNotice({ problem }: { problem: Problem | null }) {
  if (!problem) return null;
  return (
    <p class="notice problem" role="alert" data-code={problem.code}>
      {problemText(problem)}
    </p>
  );
}
