import { t, type Key } from "../i18n";

const GUIDANCE: Key[] = ["guide.memory", "guide.several", "guide.checkpoints", "guide.export"];

export function Resources() {
  return (
    <section aria-labelledby="resources-title">
      <h1 id="resources-title">{t("resources.title")}</h1>
      <section class="card" aria-labelledby="guide-title">
        <h2 id="guide-title">{t("guide.title")}</h2>
        <ul>
          {GUIDANCE.map((key) => (
            <li key={key}>{t(key)}</li>
          ))}
        </ul>
      </section>
    </section>
  );
}
