import { useState } from "preact/hooks";
import { t } from "../i18n";

/** A value shown in full with a button that copies it. */
export function Copyable({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // No clipboard permission (plain HTTP, an old browser): the value stays selectable on the page.
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <div class="copyable">
      <dt>{label}</dt>
      <dd>
        <code>{value}</code>
        <button type="button" class="small" onClick={copy} aria-label={t("common.copy", { what: label })}>
          {copied ? t("common.copied") : t("common.copy", { what: "" }).trim()}
        </button>
      </dd>
    </div>
  );
}
