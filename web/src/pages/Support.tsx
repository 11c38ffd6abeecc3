import { useEffect, useState } from "preact/hooks";
import { api, must, type Problem, type Schemas } from "../api/client";
import { Field, fieldError } from "../components/Field";
import { More } from "../components/More";
import { ProblemNotice } from "../components/ProblemNotice";
import { dateTime, methodName, t, usd, type Key } from "../i18n";
import { usePaged } from "../paging";
import { path } from "../router";
import { entryText } from "./Order";
import { describe } from "./Orders";

type NewRequest = Schemas["NewSupportRequest"];
type Kind = NewRequest["kind"];
type Subject = "order" | "topup" | "account";
const SUBJECTS: Subject[] = ["order", "topup", "account"];
const INCIDENT_TEXTS = ["launch_command", "versions", "first_error", "minimal_example"] as const;
// The orders and top-ups to choose from: the API's largest page of the newest ones.
const NEWEST = { limit: 200 };

export function Support() {
  const [orders, setOrders] = useState<Schemas["Order"][] | null>(null);
  const [topups, setTopups] = useState<Schemas["Topup"][] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const requests = usePaged((query) => must(api.GET("/api/v1/support-requests", { params: { query } })), setProblem);
  useEffect(() => {
    must(api.GET("/api/v1/orders", { params: { query: NEWEST } })).then((page) => setOrders(page.items), setProblem);
    must(api.GET("/api/v1/topups", { params: { query: NEWEST } })).then((page) => setTopups(page.items), setProblem);
  }, []);
  return (
    <section aria-labelledby="support-title">
      <h1 id="support-title">{t("support.title")}</h1>
      <p>{t("support.intro")}</p>
      <ProblemNotice problem={problem} />
      {orders && topups && <RequestForm orders={orders} topups={topups} onSent={requests.reload} />}
      <section class="card" aria-labelledby="requests-title">
        <h2 id="requests-title">{t("support.mine")}</h2>
        {requests.items?.length === 0 && <p>{t("support.none")}</p>}
        <ul class="list" data-testid="requests">
          {requests.items?.map((request) => (
            <li key={request.id} class="request" data-request={request.id}>
              <p>
                <strong>{t(`support.kind.${request.kind}`)}</strong> · <About request={request} /> ·{" "}
                <span class="badge">{t(`support.status.${request.status}`)}</span>
                {request.decision && <> · <span class="badge">{t(`support.decision.${request.decision}`)}</span></>}
              </p>
              <p class="text">{request.message}</p>
              {request.answers.map((answer) => (
                <blockquote key={answer.at}>
                  <p class="hint">{t("support.answer", { date: dateTime(answer.at) })}</p>
                  {answer.code && <p data-code={answer.code}>{entryText({ code: answer.code, params: answer.params })}</p>}
                  {answer.code === "configuration_confirmed" && (
                    <p>
                      <a href={`#/orders/${answer.params.new_order_id}`}>{t("support.newOrder")}</a>
                    </p>
                  )}
                  {answer.text && answer.code !== "extension_refused" && <p class="text">{answer.text}</p>}
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

function About({ request }: { request: Schemas["SupportRequest"] }) {
  if (request.order_id) return <a href={`#/orders/${request.order_id}`}>{t("support.aboutOrder", { id: request.order_id })}</a>;
  if (request.topup_id) return <a href={`#/topups/${request.topup_id}`}>{t("support.aboutTopup", { id: request.topup_id })}</a>;
  return <>{t("support.aboutAccount")}</>;
}

function RequestForm({ orders, topups, onSent }: { orders: Schemas["Order"][]; topups: Schemas["Topup"][]; onSent: () => void }) {
  const asked = new URLSearchParams(path.value.split("?")[1] ?? "");
  const subjectAsked: Subject = asked.get("topup") ? "topup" : asked.get("order") || orders.length ? "order" : "account";
  const [subject, setSubject] = useState<Subject>(subjectAsked);
  const blank = { kind: "question" as Kind, message: "" };
  const [request, setRequest] = useState<NewRequest>(blank);
  const [orderId, setOrderId] = useState(asked.get("order") ?? orders[0]?.id ?? "");
  const [topupId, setTopupId] = useState(asked.get("topup") ?? topups[0]?.id ?? "");
  const [problem, setProblem] = useState<Problem | null>(null);
  const [sent, setSent] = useState(false);
  const update = (change: Partial<NewRequest>) => (setRequest({ ...request, ...change }), setSent(false));
  const about = subject === "order" ? { order_id: orderId } : subject === "topup" ? { topup_id: topupId } : {};
  const send = async (event: Event) => {
    event.preventDefault();
    try {
      await must(api.POST("/api/v1/support-requests", { body: { ...request, ...about } }));
      setRequest(blank);
      setProblem(null);
      setSent(true);
      onSent();
    } catch (p) {
      setProblem(p as Problem);
    }
  };
  const text = (name: "message" | "configuration" | (typeof INCIDENT_TEXTS)[number], rows: number) => (
    <Field id={`support-${name}`} label={t(`support.${name}`)} error={fieldError(problem, name)} key={name}>
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
  const subjects = SUBJECTS.filter((s) => (s === "order" ? orders.length : s === "topup" ? topups.length : true));
  const kinds: Kind[] = subject === "order" ? ["incident", "extension", "question"] : ["incident", "question"];
  return (
    <form class="card" onSubmit={send} aria-labelledby="new-request-title" noValidate>
      <h2 id="new-request-title">{t("support.new")}</h2>
      <fieldset class="field">
        <legend>{t("support.subject")}</legend>
        <div class="choices">
          {subjects.map((s) => (
            <label key={s} class="choice">
              <input
                type="radio"
                name="subject"
                checked={subject === s}
                onChange={() => (setSubject(s), s !== "order" && request.kind === "extension" && update({ kind: "question" }))}
              />
              <span>{t(`support.subject.${s}`)}</span>
            </label>
          ))}
        </div>
      </fieldset>
      {subject === "order" && (
        <Field id="support-order" label={t("support.order")} error={fieldError(problem, "order_id")}>
          {(d) => (
            <select id="support-order" aria-describedby={d} value={orderId} onChange={(e) => setOrderId(e.currentTarget.value)}>
              {orders.map((order) => (
                <option key={order.id} value={order.id}>
                  {describe(order.summary)} · {t(`status.${order.status}`)}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      {subject === "topup" && (
        <Field id="support-topup" label={t("support.topup")} error={fieldError(problem, "topup_id")}>
          {(d) => (
            <select id="support-topup" aria-describedby={d} value={topupId} onChange={(e) => setTopupId(e.currentTarget.value)}>
              {topups.map((topup) => (
                <option key={topup.id} value={topup.id}>
                  {t("topups.line", {
                    amount: usd(topup.amount_usd),
                    method: methodName(topup.payment.asset, topup.payment.network),
                    date: dateTime(topup.created_at),
                  })}{" "}
                  · {topup.status === "credited" ? t("topup.credited") : t(`payment.${topup.status}`)}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      <fieldset class="field">
        <legend>{t("support.kind")}</legend>
        <div class="choices">
          {kinds.map((kind) => (
            <label key={kind} class="choice">
              <input type="radio" name="kind" checked={request.kind === kind} onChange={() => update({ kind })} />
              <span>{t(`support.kind.${kind}` as Key)}</span>
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
        <>
          <p class="hint">{t("support.extensionHint")}</p>
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
          {text("configuration", 2)}
          {moment("due_by")}
        </>
      )}
      {sent && <p role="status">{t("support.sent")}</p>}
      <ProblemNotice problem={problem} />
      <button type="submit" class="primary">{t("support.send")}</button>
    </form>
  );
}
