import { useEffect, useState } from "preact/hooks";
import { api, must, type Problem, type Schemas } from "../api/client";
import { Field, fieldError } from "../components/Field";
import { ProblemNotice } from "../components/ProblemNotice";
import { integer, t, tOr, usd } from "../i18n";
import { go } from "../router";
import { account } from "../session";

type Configuration = Schemas["NewOrder"];
const KEPT = "kd_configuration"; // kept while the customer registers or logs in
const NEEDS_KEY = { type: "about:blank", title: "", status: 422, detail: "", code: "validation_error" };

function keptConfiguration(): Partial<Configuration> {
  try {
    return JSON.parse(sessionStorage.getItem(KEPT) ?? "{}");
  } catch {
    return {};
  }
}

export function Configurator() {
  const [catalog, setCatalog] = useState<Schemas["Catalog"] | null>(null);
  const [config, setConfig] = useState<Configuration | null>(null);
  const [quote, setQuote] = useState<Schemas["Quote"] | null>(null);
  const [accountKey, setAccountKey] = useState<string | null>(null);
  // What the catalog or the quote answered, and why the order was refused: two states, so that a quote
  // arriving after the customer pressed the button does not wipe the refusal off the form.
  const [quoteProblem, setQuoteProblem] = useState<Problem | null>(null);
  const [refusal, setRefusal] = useState<Problem | null>(null);
  const problem = refusal ?? quoteProblem;
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    must(api.GET("/api/v1/catalog")).then((listing) => {
      setCatalog(listing);
      const kept = keptConfiguration();
      setConfig({
        model: listing.models[0].id,
        duration_days: 7,
        lots: 1,
        preparation: listing.preparations[0].id,
        ...kept,
      });
    }, setQuoteProblem);
  }, []);

  useEffect(() => {
    if (account.value) api.GET("/api/v1/me/ssh-key").then(({ data }) => setAccountKey(data?.ssh_public_key ?? null));
  }, [account.value]);

  useEffect(() => {
    if (config) sessionStorage.setItem(KEPT, JSON.stringify(config));
  }, [config]);

  useEffect(() => {
    if (!config) return;
    const { model, duration_days, lots, preparation } = config;
    const timer = setTimeout(() => {
      must(api.POST("/api/v1/quotes", { body: { model, duration_days, lots, preparation } })).then(
        (q) => (setQuote(q), setQuoteProblem(null)),
        (p: Problem) => (setQuote(null), setQuoteProblem(p)),
      );
    }, 120);
    return () => clearTimeout(timer);
  }, [config?.model, config?.duration_days, config?.lots, config?.preparation]);

  if (!catalog || !config) return problem ? <ProblemNotice problem={problem} /> : <p>{t("common.loading")}</p>;
  const model = catalog.models.find((m) => m.id === config.model) ?? catalog.models[0];
  const update = (change: Partial<Configuration>) => (setConfig({ ...config, ...change }), setRefusal(null));

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!account.value) return go("/register?next=/");
    const body: Configuration = { ...config, ssh_public_key: config.ssh_public_key?.trim() || undefined };
    if (!body.ssh_public_key && !accountKey) {
      // Without a key the machine cannot be delivered: ask for it before anything is recorded.
      return setRefusal({ ...NEEDS_KEY, errors: [{ field: "ssh_public_key", message: t("config.sshKeyNeeded") }] });
    }
    setBusy(true);
    if (config.preparation !== "custom") delete body.preparation_note;
    try {
      const order = await must(api.POST("/api/v1/orders", { body }));
      sessionStorage.removeItem(KEPT);
      go(`/orders/${order.id}`);
    } catch (p) {
      setRefusal(p as Problem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="catalog-title">
      <h1 id="catalog-title">{t("catalog.title")}</h1>
      <p>{t("catalog.intro")}</p>
      <div class="columns">
        <form class="card" onSubmit={submit} noValidate>
          <Field id="model" label={t("config.model")} error={fieldError(problem, "model")}>
            {(d) => (
              <select id="model" aria-describedby={d} value={config.model} onChange={(e) => update({ model: e.currentTarget.value })}>
                {catalog.models.map((m) => (
                  <option value={m.id} key={m.id}>
                    {t("config.modelOption", {
                      name: m.name,
                      backend: m.backend.toUpperCase(),
                      memory: m.memory_gb_per_gpu,
                      gpus: m.gpus_per_lot,
                      free: [
                        t("catalog.lotsFree", { n: m.available_lots }),
                        ...(m.held_lots ? [t("catalog.lotsHeld", { n: m.held_lots })] : []),
                      ].join(", "),
                    })}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <fieldset class="field">
            <legend>{t("config.duration")}</legend>
            <div class="choices">
              {catalog.durations_days.map((days) => (
                <label key={days} class="choice">
                  <input
                    type="radio"
                    name="duration"
                    value={days}
                    checked={config.duration_days === days}
                    onChange={() => update({ duration_days: days as Configuration["duration_days"] })}
                  />
                  <span>{t("config.days", { n: days })}</span>
                  <small>{usd(model.lot_prices_usd[String(days)])}</small>
                </label>
              ))}
            </div>
          </fieldset>
          <Field id="lots" label={t("config.lots")} hint={t("config.lotsHint")} error={fieldError(problem, "lots")}>
            {(d, invalid) => (
              <input
                id="lots"
                type="number"
                inputMode="numeric"
                min={catalog.lots.min}
                max={catalog.lots.max}
                value={config.lots}
                aria-describedby={d}
                aria-invalid={invalid}
                onInput={(e) => update({ lots: Number(e.currentTarget.value) })}
              />
            )}
          </Field>
          <Field
            id="preparation"
            label={t("config.preparation")}
            hint={`${preparationText(catalog, config.preparation)} ${t("config.preparationHint")}`}
            error={fieldError(problem, "preparation")}
          >
            {(d) => (
              <select
                id="preparation"
                aria-describedby={d}
                value={config.preparation}
                onChange={(e) => update({ preparation: e.currentTarget.value })}
              >
                {catalog.preparations.map((p) => (
                  <option value={p.id} key={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {config.preparation === "custom" && (
            <Field id="note" label={t("config.note")} error={fieldError(problem, "preparation_note")}>
              {(d, invalid) => (
                <textarea
                  id="note"
                  maxLength={2000}
                  aria-describedby={d}
                  aria-invalid={invalid}
                  value={config.preparation_note ?? ""}
                  onInput={(e) => update({ preparation_note: e.currentTarget.value })}
                />
              )}
            </Field>
          )}
          <Field
            id="ssh-key"
            label={t("config.sshKey")}
            hint={`${t("config.sshKeyHint")}${accountKey ? ` ${t("config.sshKeyAccount")}` : ""}`}
            error={fieldError(problem, "ssh_public_key")}
          >
            {(d, invalid) => (
              <textarea
                id="ssh-key"
                rows={3}
                spellcheck={false}
                placeholder="ssh-ed25519 AAAA… you@laptop"
                aria-describedby={d}
                aria-invalid={invalid}
                value={config.ssh_public_key ?? ""}
                onInput={(e) => update({ ssh_public_key: e.currentTarget.value })}
              />
            )}
          </Field>
          {!account.value && <p class="notice">{t("config.loginFirst")}</p>}
          <ProblemNotice problem={problem} />
          <button type="submit" class="primary" disabled={busy}>
            {account.value ? t("config.submit") : t("nav.register")}
          </button>
        </form>
        <Summary quote={quote} model={model} catalog={catalog} />
      </div>
    </section>
  );
}

/** A preparation's description in the page's language; the catalog's own words for one the page does not know. */
function preparationText(catalog: Schemas["Catalog"], id: string): string {
  return tOr(`preparation.${id}`, catalog.preparations.find((p) => p.id === id)?.description ?? "");
}

function Summary({ quote, model, catalog }: { quote: Schemas["Quote"] | null; model: Schemas["GpuModel"]; catalog: Schemas["Catalog"] }) {
  if (!quote) return <aside class="card summary" aria-live="polite" />;
  const preparation = catalog.preparations.find((p) => p.id === quote.preparation)?.name ?? quote.preparation;
  return (
    <aside class="card summary" aria-labelledby="summary-title" aria-live="polite" data-testid="summary">
      <h2 id="summary-title">{t("summary.title")}</h2>
      <dl>
        <dt>{t("summary.model")}</dt>
        <dd>{quote.model_name}</dd>
        <dt>{t("summary.backend")}</dt>
        <dd>{quote.backend.toUpperCase()}</dd>
        <dt>{t("summary.duration")}</dt>
        <dd>{t("config.days", { n: quote.duration_days })}</dd>
        <dt>{t("summary.lots")}</dt>
        <dd>{integer(quote.lots)}</dd>
        <dt>{t("summary.totalCards")}</dt>
        <dd data-testid="total-gpus">
          {t("summary.cards", { total: quote.total_gpus, lots: quote.lots, per: quote.gpus_per_lot })}
        </dd>
        <dt>{t("summary.preparation")}</dt>
        <dd>{preparation}</dd>
        <dt>{t("summary.lotPrice")}</dt>
        <dd>{usd(quote.lot_price_usd)}</dd>
        <dt>{t("summary.total")}</dt>
        <dd class="total" data-testid="total-usd">
          {usd(quote.total_usd)}
        </dd>
        <dt>{t("summary.availability")}</dt>
        <dd>{quote.available ? t("summary.available") : t("summary.unavailable")}</dd>
      </dl>
      <p class="hint">{t("summary.lotHolds", { model: quote.model_name, per: quote.gpus_per_lot })}</p>
      <p class="hint">{t("summary.noPooling", { memory: model.memory_gb_per_gpu })}</p>
    </aside>
  );
}
