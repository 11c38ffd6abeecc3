import { useEffect, useState } from "preact/hooks";
import { api, must, type Problem, type Schemas } from "../api/client";
import { Field, fieldError } from "../components/Field";
import { More } from "../components/More";
import { ProblemNotice } from "../components/ProblemNotice";
import { dateTime, t, type Key } from "../i18n";
import { usePaged } from "../paging";
import { path } from "../router";
import { answerText } from "../said";
import { describe } from "./Orders";

type NewRequest = Schemas["NewSupportRequest"];
type Kind = NewRequest["kind"];
const KINDS: Kind[] = ["incident", "extension", "question"];
const INCIDENT_TEXTS = ["launch_command", "versions", "first_error", "minimal_example"] as const;
// The orders to choose from: the API's largest page of the newest ones.
const ORDERS_TO_CHOOSE = 200;

export function Support() {
  const [orders, setOrders] = useState<Schemas["Order"][]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const requests = usePaged((query) => must(api.GET("/api/v1/support-requests", { params: { query } })), setProblem);
  useEffect(() => {
    const query = { limit: ORDERS_TO_CHOOSE };
    must(api.GET("/api/v1/orders", { params: { query } })).then((page) => setOrders(page.items), setProblem);
  }, []);
  return (
    <section aria-labelledby="support-title">
      <h1 id="support-title">{t("support.title")}</h1>
      <p>{t("support.intro")}</p>
      <ProblemNotice problem={problem} />
      {orders.length > 0 && <RequestForm orders={orders} onSent={requests.reload} />}
      <section class="card" aria-labelledby="requests-title">
        <h2 id="requests-title">{t("support.mine")}</h2>
        {requests.items?.length === 0 && <p>{t("support.none")}</p>}
        <ul class="list" data-testid="requests">
          {requests.items?.map((request) => (
            <li key={request.id} class="request" data-request={request.id}>
              <p>
                <strong>{t(`support.kind.${request.kind}`)}</strong> · <code>{request.order_id}</code> ·{" "}
                <span class="badge">{t(`support.status.${request.status}`)}</span>
                {request.decision && <> · <span class="badge">{t(`support.decision.${request.decision}`)}</span></>}
              </p>
              <p class="text">{request.message}</p>
              {request.answers.map((answer) => (
                <blockquote key={answer.at}>
                  <p class="hint">{t("support.answer", { date: dateTime(answer.at) })}</p>
                  <p class="text">{answerText(answer.text)}</p>
                </blockquote>
              ))}
            </li>
          ))}
        </ul>
        <More list={requests} />
      </section>
    </section>
  );
}

function RequestForm({ orders, onSent }: { orders: Schemas["Order"][]; onSent: () => void }) {
  const asked = new URLSearchParams(path.value.split("?")[1] ?? "").get("order");
  const blank = { order_id: asked ?? orders[0].id, kind: "question" as Kind, message: "" };
  const [request, setRequest] = useState<NewRequest>(blank);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [sent, setSent] = useState(false);
  const update = (change: Partial<NewRequest>) => (setRequest({ ...request, ...change }), setSent(false));
  const send = async (event: Event) => {
    event.preventDefault();
    try {
      await must(api.POST("/api/v1/support-requests", { body: request }));
      setRequest(blank);
      setProblem(null);
      setSent(true);
      onSent();
    } catch (p) {
      setProblem(p as Problem);
    }
  };
  const text = (name: "message" | (typeof INCIDENT_TEXTS)[number], rows: number) => (
    <Field id={`support-${name}`} label={t(`support.${name}` as Key)} error={fieldError(problem, name)} key={name}>
      {(d, invalid) => (
        <textarea
          id={`support-${name}`}
          rows={rows}
          value={request[name] ?? ""}
          aria-describedby={d}
          aria-invalid={invalid}
          onInput={(e) => update({ [name]: e.currentTarget.value || undefined })}
        />
      )}
    </Field>
  );
  // A local date and time typed in the browser, sent as RFC 3339 UTC.
  const moment = (name: "failed_at" | "due_by") => (
    <Field id={`support-${name}`} label={t(`support.${name}`)} error={fieldError(problem, name)}>
      {(d, invalid) => (
        <input
          id={`support-${name}`}
          type="datetime-local"
          aria-describedby={d}
          aria-invalid={invalid}
          onInput={(e) => update({ [name]: e.currentTarget.value ? new Date(e.currentTarget.value).toISOString() : undefined })}
        />
      )}
    </Field>
  );
  return (
    <form class="card" onSubmit={send} aria-labelledby="new-request-title" noValidate>
      <h2 id="new-request-title">{t("support.new")}</h2>
      <Field id="support-order" label={t("support.order")} error={fieldError(problem, "order_id")}>
        {(d) => (
          <select id="support-order" aria-describedby={d} value={request.order_id} onChange={(e) => update({ order_id: e.currentTarget.value })}>
            {orders.map((order) => (
              <option key={order.id} value={order.id}>
                {describe(order.summary)} · {t(`status.${order.status}`)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <fieldset class="field">
        <legend>{t("support.kind")}</legend>
        <div class="choices">
          {KINDS.map((kind) => (
            <label key={kind} class="choice">
              <input type="radio" name="kind" checked={request.kind === kind} onChange={() => update({ kind })} />
              <span>{t(`support.kind.${kind}`)}</span>
            </label>
          ))}
        </div>
      </fieldset>
      {text("message", 4)}
      {request.kind === "incident" && (
        <>
          {moment("failed_at")}
          {INCIDENT_TEXTS.map((name) => text(name, 2))}
        </>
      )}
      {request.kind === "extension" && (
        <fieldset class="field">
          <legend>{t("support.extra_days")}</legend>
          <div class="choices">
            {([3, 7, 30] as const).map((days) => (
              <label key={days} class="choice">
                <input type="radio" name="extra-days" checked={request.extra_days === days} onChange={() => update({ extra_days: days })} />
                <span>{t("config.days", { n: days })}</span>
              </label>
            ))}
          </div>
          {fieldError(problem, "extra_days") && <p class="error" role="alert">{fieldError(problem, "extra_days")}</p>}
        </fieldset>
      )}
      {request.kind === "extension" && moment("due_by")}
      {sent && <p role="status">{t("support.sent")}</p>}
      <ProblemNotice problem={problem} />
      <button type="submit" class="primary">{t("support.send")}</button>
    </form>
  );
}
