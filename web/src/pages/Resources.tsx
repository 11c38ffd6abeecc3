import { useEffect, useState } from "preact/hooks";
import { api, must, type Problem, type Schemas } from "../api/client";
import { ProblemNotice } from "../components/ProblemNotice";
import { t, tOr, type Key } from "../i18n";

// The seeds' guidance, in the order a job meets it.
const GUIDANCE: Key[] = [
  "guide.measure",
  "guide.several",
  "guide.lot",
  "guide.duration",
  "guide.oom",
  "guide.resume",
  "guide.monitor",
  "guide.export",
  "guide.decision",
];

export function Resources() {
  const [resources, setResources] = useState<Schemas["Resource"][]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    must(api.GET("/api/v1/resources")).then(setResources, setProblem);
  }, []);
  return (
    <section aria-labelledby="resources-title">
      <h1 id="resources-title">{t("resources.title")}</h1>
      <ProblemNotice problem={problem} />
      <ul class="list">
        {resources.map((resource) => {
          const name = tOr(`resource.${resource.id}.name`, resource.name);
          return (
            <li key={resource.id} class="card" data-resource={resource.id}>
              <h2>{name}</h2>
              <p>{tOr(`resource.${resource.id}.description`, resource.description)}</p>
              <p>
                <a href={resource.url} download>
                  {t("resources.download", { name })}
                </a>{" "}
                <small>{t("resources.version", { version: resource.version })}</small>
              </p>
            </li>
          );
        })}
      </ul>
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
